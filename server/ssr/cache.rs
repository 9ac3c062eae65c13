//! Rendered pages, cached by everything that changes them: the site they were
//! rendered from (its generation: `dev` swaps in a new one on every change),
//! the URL the page was rendered for (path plus only the query parameters its
//! loader reads) and a hash of the loader data. New data (a new team member,
//! another day for the terms page) is a new key, so nothing needs
//! invalidating.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use moka::future::Cache;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PageKey {
    pub generation: u64,
    pub url: String,
    pub data_hash: u64,
}

impl PageKey {
    pub fn new(generation: u64, url: &str, bootstrap_json: &str) -> PageKey {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        bootstrap_json.hash(&mut h);
        PageKey { generation, url: url.to_owned(), data_hash: h.finish() }
    }
}

/// A finished page, ready to send in any encoding without more work: the
/// document, its brotli and gzip bodies, and an ETag.
#[derive(Debug)]
pub struct CachedPage {
    pub status: u16,
    pub etag: String,
    pub html: bytes::Bytes,
    pub br: bytes::Bytes,
    pub gzip: bytes::Bytes,
}

impl CachedPage {
    /// Compresses once, at insert time. Quality 9 / level 9: nearly the
    /// smallest bodies, at a cost paid once per page rather than per visit.
    pub fn new(status: u16, html: String) -> CachedPage {
        use std::io::Write;
        let mut br = Vec::with_capacity(html.len() / 4);
        {
            let mut w = brotli::CompressorWriter::new(&mut br, 4096, 9, 22);
            w.write_all(html.as_bytes()).expect("compressing into memory");
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::with_capacity(html.len() / 3), flate2::Compression::best());
        gz.write_all(html.as_bytes()).expect("compressing into memory");
        let gzip = gz.finish().expect("compressing into memory");
        let mut h = std::collections::hash_map::DefaultHasher::new();
        html.hash(&mut h);
        CachedPage {
            status,
            etag: format!("W/\"{:016x}\"", h.finish()),
            html: html.into(),
            br: br.into(),
            gzip: gzip.into(),
        }
    }
}

pub type PageCache = Cache<PageKey, Arc<CachedPage>>;

pub fn new_cache(capacity: u64) -> PageCache {
    Cache::builder()
        .max_capacity(capacity)
        .time_to_idle(std::time::Duration::from_secs(60 * 60))
        .build()
}
