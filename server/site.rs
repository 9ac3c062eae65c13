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
use crate::content::Content;
use crate::dev::Problem;
use crate::security::SecurityHeaders;
use crate::ssr::SsrPool;

pub struct Site {
    /// A new number for every swap (always 0 in `serve`). Cached pages are
    /// keyed by it, and the dev reload script compares it.
    pub generation: u64,
    pub front: Arc<Frontend>,
    pub content: Arc<Content>,
    /// The security headers for this content (its frames are in the CSP).
    pub security: SecurityHeaders,
    /// `dev` only: what is broken right now. A page that a problem breaks
    /// answers with the problem instead (see [`Site::problems_for`]).
    pub problems: Vec<Problem>,
}

impl Site {
    /// The site compiled into the binary, with its render pool starting.
    pub fn embedded(config: &Config) -> Result<Site, crate::content::ContentError> {
        let manifest = Manifest::embedded();
        let content = Content::embedded(&manifest)?;
        let front = Frontend { pool: SsrPool::start(&config.ssr), manifest, files: AssetFiles::Embedded, source_map: None };
        Ok(Site::new(0, Arc::new(front), Arc::new(content), Vec::new(), config))
    }

    pub fn new(generation: u64, front: Arc<Frontend>, content: Arc<Content>, problems: Vec<Problem>, config: &Config) -> Site {
        let security = SecurityHeaders::new(&config.site_url, &content.frame_origins);
        Site { generation, front, content, security, problems }
    }

    /// The problems that break `page`.
    pub fn problems_for(&self, page: &str) -> Vec<&Problem> {
        self.problems.iter().filter(|p| p.breaks(page)).collect()
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
        let ssr = SsrConfig { workers: 0, ..config.clone() };
        Frontend { pool: SsrPool::start(&ssr), manifest: Manifest::default(), files: AssetFiles::Dir(Default::default()), source_map: None }
    }
}
