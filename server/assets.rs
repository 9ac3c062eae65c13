//! The front end, embedded: the SSR bundle, the asset manifest and every
//! hashed file under `/assets/` with its precompressed bodies (see build.rs).

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// One file served under `/assets/`.
#[derive(Debug)]
pub struct EmbeddedFile {
    pub url: &'static str,
    pub content_type: &'static str,
    pub body: &'static [u8],
    pub br: Option<&'static [u8]>,
    pub gzip: Option<&'static [u8]>,
}

include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// What the esbuild script reports about the client build.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// The client entry module.
    pub entry: String,
    /// Chunks the entry imports statically.
    pub entry_imports: Vec<String>,
    /// The one stylesheet.
    pub css: String,
    /// Per page id: its chunk first, then every chunk it imports statically.
    pub pages: HashMap<String, Vec<String>>,
    /// `content/images/PATH` -> its hashed URL.
    pub images: HashMap<String, String>,
}

impl Manifest {
    /// The manifest compiled into this binary.
    pub fn embedded() -> &'static Manifest {
        static M: OnceLock<Manifest> = OnceLock::new();
        M.get_or_init(|| serde_json::from_str(MANIFEST_JSON).expect("build.rs wrote a valid manifest"))
    }

    /// The hashed URL of `content/images/PATH`, if the build has that file.
    pub fn image_url(&self, path: &str) -> Option<&str> {
        self.images.get(path).map(String::as_str)
    }

    /// Every module a page needs on first load, entry first, without repeats.
    pub fn modules_for(&self, page: &str) -> Vec<&str> {
        let mut out: Vec<&str> = vec![&self.entry];
        let page_chunks = self.pages.get(page).into_iter().flatten();
        for m in self.entry_imports.iter().chain(page_chunks) {
            if !out.contains(&m.as_str()) {
                out.push(m);
            }
        }
        out
    }
}

/// Looks an embedded file up by its URL path (`/assets/...`).
pub fn file(url: &str) -> Option<&'static EmbeddedFile> {
    static INDEX: OnceLock<HashMap<&'static str, &'static EmbeddedFile>> = OnceLock::new();
    INDEX.get_or_init(|| FILES.iter().map(|f| (f.url, f)).collect()).get(url).copied()
}
