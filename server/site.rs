//! What the site serves right now: one build of the front end (render
//! isolates, asset manifest, asset files) and the content read with it.
//!
//! `serve` makes one [`Site`] from what is compiled into the binary and keeps
//! it. `dev` makes a new one on every change of the sources and swaps it in
//! whole ([`crate::state::AppState::replace_site`]), so a request sees one
//! consistent version from its start to its end, and a version that failed
//! to build never replaces the last good one.

use std::sync::Arc;

use crate::assets::{AssetFiles, Manifest};
use crate::config::{Config, SsrConfig};
use crate::content::routes::PageId;
use crate::content::Content;
use crate::render::cache::PagesByPath;
use crate::render::SsrPool;
use crate::security::SecurityHeaders;

pub struct Site {
    /// A new number for every swap (always 0 in `serve`). Cached pages are
    /// keyed by it, and the dev reload script compares it.
    pub generation: u64,
    pub front: Arc<Frontend>,
    pub content: Arc<Content>,
    /// The security headers for this content (its frames are in the CSP).
    pub security: SecurityHeaders,
    /// What `dev` adds to the pages of a site it built; None in `serve`.
    pub dev: Option<Arc<dyn DevPages>>,
    /// Its pages as last made, by path (a new site starts with none).
    pub by_path: PagesByPath,
}

/// The one place `dev` changes how pages are made (implemented by
/// [`crate::dev`], which builds the sites that carry it).
pub trait DevPages: Send + Sync {
    /// Pages may be kept in the page cache (nothing is broken).
    fn caches(&self) -> bool;
    /// The problem page shown instead of `page` while a broken file breaks it.
    fn broken(&self, page: PageId) -> Option<String>;
    /// The problem page for a render of `page` that threw `error` (logged).
    fn threw(&self, page: PageId, error: &str, stack: Option<&str>) -> String;
    /// Tags every page's head carries (the reload script).
    fn head_tags(&self) -> String;
}

impl Site {
    /// The site compiled into the binary, with its render pool starting.
    pub fn embedded(config: &Config) -> Result<Site, crate::content::ContentError> {
        let manifest = Manifest::embedded();
        let mut content = Content::embedded(&manifest)?;
        if config.show_scheduled {
            content
                .blog
                .set_scheduled(crate::content::blog::Scheduled::Show);
        }
        let front = Frontend {
            pool: SsrPool::start(&config.ssr),
            manifest,
            files: AssetFiles::Embedded,
            source_map: None,
        };
        Ok(Site::new(
            0,
            Arc::new(front),
            Arc::new(content),
            None,
            config,
        ))
    }

    pub fn new(
        generation: u64,
        front: Arc<Frontend>,
        content: Arc<Content>,
        dev: Option<Arc<dyn DevPages>>,
        config: &Config,
    ) -> Site {
        let security = SecurityHeaders::new(
            &config.site_url,
            &content.frame_origins,
            config.alt_svc_port,
        );
        let by_path = PagesByPath::new(content.page_paths());
        Site {
            generation,
            front,
            content,
            security,
            dev,
            by_path,
        }
    }
}

/// One build of the front end.
pub struct Frontend {
    /// Isolates running this build's server bundle.
    pub pool: SsrPool,
    pub manifest: Manifest,
    pub files: AssetFiles,
    /// Dev builds: maps positions in the server bundle back to the sources.
    pub source_map: Option<sourcemap::SourceMap>,
}

impl Frontend {
    /// A front end with no build yet (a dev server whose first build failed):
    /// no isolates, no files. Every page has a problem to show instead.
    pub fn none(config: &SsrConfig) -> Frontend {
        let ssr = SsrConfig {
            workers: 0,
            ..config.clone()
        };
        Frontend {
            pool: SsrPool::start(&ssr),
            manifest: Manifest::default(),
            files: AssetFiles::Dir(Default::default()),
            source_map: None,
        }
    }
}
