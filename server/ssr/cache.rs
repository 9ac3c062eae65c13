//! Rendered pages, cached by everything that changes them: the URL the page
//! was rendered for (path plus only the query parameters its loader reads)
//! and a hash of the loader data. New data (a new team member, another day
//! for the terms page) is a new key, so nothing needs invalidating.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use moka::future::Cache;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PageKey {
    pub url: String,
    pub data_hash: u64,
}

impl PageKey {
    pub fn new(url: &str, bootstrap_json: &str) -> PageKey {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        bootstrap_json.hash(&mut h);
        PageKey { url: url.to_owned(), data_hash: h.finish() }
    }
}

/// A finished page: status and the whole HTML document.
#[derive(Debug)]
pub struct CachedPage {
    pub status: u16,
    pub html: String,
}

pub type PageCache = Cache<PageKey, Arc<CachedPage>>;

pub fn new_cache(capacity: u64) -> PageCache {
    Cache::builder()
        .max_capacity(capacity)
        .time_to_idle(std::time::Duration::from_secs(60 * 60))
        .build()
}
