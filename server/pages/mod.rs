//! What a URL shows, between the HTTP layer and rendering. Every page
//! request goes the same way, whoever asks (the page pipeline of
//! `http::page_handler`, `/api/route-data`, the prerender at start):
//!
//! 1. [`latest_for_path`]: a view of one of the site's own paths is
//!    answered with the page last made for it while its data has not
//!    changed: one lookup by the path, nothing computed.
//! 2. [`resolve`]: method, path and query to the route, its [`Plan`] (the
//!    render URL and the version of its changing data) and its key in the
//!    page cache. String work only: no data is read. A hit in the page
//!    cache ends there.
//! 3. Otherwise [`load`] runs the route's loader (the only source of its
//!    data) and [`make`] renders it and wraps it in the document, once
//!    however many requests for the page arrive together.

pub mod load;
pub mod make;
pub mod plan;

use std::borrow::Cow;
use std::sync::Arc;

use axum::http::Method;

use crate::content::routes::RouteMatch;
use crate::render::cache::{CachedPage, LatestPage, PageKey};
use crate::site::Site;
use crate::state::AppState;
pub use load::Loaded;
pub use plan::Plan;

/// Where a request for a page goes.
#[derive(Debug)]
pub enum Resolved {
    /// A page: its route, its plan, and its key in the page cache (None
    /// when it is not kept there).
    Page {
        route: RouteMatch,
        plan: Plan,
        key: Option<PageKey>,
    },
    /// Another spelling of a page's URL (`/about/`, `/ab%6Fut`): a
    /// permanent redirect to its one form, the query kept.
    Canonical(String),
    /// Pages are read with GET and HEAD only.
    MethodNotAllowed,
}

/// The one resolve step: a request's method, path and query to what it
/// shows. `site` is the site the request is served from.
pub fn resolve(
    state: &AppState,
    site: &Site,
    method: &Method,
    path: &str,
    query: Option<&str>,
) -> Resolved {
    if method != Method::GET && method != Method::HEAD {
        return Resolved::MethodNotAllowed;
    }
    if let Cow::Owned(mut target) = canonical_path(path) {
        // `//host/` is not a spelling of a path of this site: redirecting it
        // to `//host` would send the visitor to another site.
        if !target.starts_with("//") && !target.starts_with("/\\") {
            if let Some(q) = query {
                target.push('?');
                target.push_str(q);
            }
            return Resolved::Canonical(target);
        }
    }
    let route = site.content.routes.find(path);
    let plan = plan::plan(state, &site.content, path, query, &route);
    let kept = plan.cacheable
        && state.config.page_cache_capacity > 0
        && site.dev.as_ref().is_none_or(|dev| dev.caches());
    let key = kept.then(|| PageKey {
        generation: site.generation,
        url: plan.render_url.clone(),
        version: plan.version,
    });
    Resolved::Page { route, plan, key }
}

/// The one form of a page's path: no trailing slash (but `/` itself), and
/// no percent-encoded character that needs none (`%2D` is `-`: letters,
/// digits and `-._~`, RFC 3986 section 2.3). Borrowed when `path` is in
/// that form already.
pub fn canonical_path(path: &str) -> Cow<'_, str> {
    let bytes = path.as_bytes();
    let encoded_at = |i: usize| -> Option<u8> {
        let hex = bytes.get(i + 1..i + 3)?;
        let value = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
        (value.is_ascii_alphanumeric() || b"-._~".contains(&value)).then_some(value)
    };
    let needless = (0..bytes.len()).any(|i| bytes[i] == b'%' && encoded_at(i).is_some());
    let trailing = path.len() > 1 && path.ends_with('/');
    if !needless && !trailing {
        return Cow::Borrowed(path);
    }
    let mut plain = String::with_capacity(path.len());
    let mut i = 0;
    while i < bytes.len() {
        match encoded_at(i).filter(|_| bytes[i] == b'%') {
            Some(value) => {
                plain.push(char::from(value));
                i += 3;
            }
            None => {
                let len = path[i..].chars().next().map_or(1, char::len_utf8);
                plain.push_str(&path[i..i + len]);
                i += len;
            }
        }
    }
    let trimmed = plain.trim_end_matches('/').len();
    plain.truncate(trimmed);
    if plain.is_empty() {
        plain.push('/');
    }
    // `%4%31` is `%41` once decoded: decoded again until nothing changes,
    // so the one form is one redirect away.
    match canonical_path(&plain) {
        Cow::Borrowed(_) => Cow::Owned(plain),
        Cow::Owned(again) => Cow::Owned(again),
    }
}

/// A page view of a path of the site's list ([`crate::content::Content::page_paths`]),
/// answered by the page last made for it, when that is still what the
/// page cache would give: a GET or HEAD, no query, the data of the same
/// version. One lookup by the path: no route match, no plan, no key. None
/// leaves the request to [`resolve`] and the page cache.
pub fn latest_for_path(
    state: &AppState,
    site: &Site,
    method: &Method,
    path: &str,
    query: Option<&str>,
) -> Option<Arc<LatestPage>> {
    if query.is_some()
        || (method != Method::GET && method != Method::HEAD)
        || site.dev.as_ref().is_some_and(|dev| !dev.caches())
    {
        return None;
    }
    let slot = site.by_path.get(path)?;
    let latest = slot.as_ref()?;
    (plan::version_now(state, &site.content, latest.policy) == Some(latest.version))
        .then(|| latest.clone())
}

/// `page`, kept under `key` in the page cache, is what [`latest_for_path`]
/// answers for its URL from now on (when the URL is a path of the site's
/// list).
pub fn remember_for_path(site: &Site, route: &RouteMatch, key: &PageKey, page: &Arc<CachedPage>) {
    site.by_path.remember(
        &key.url,
        LatestPage::new(page.clone(), route.page, route.facts.cache, key.version),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_has_one_form() {
        for plain in [
            "/",
            "/about",
            "/blog/nfc-integration",
            "/blog/a%20b",
            "/a%2Fb",
            "//",
        ] {
            let expected: &str = if plain == "//" { "/" } else { plain };
            assert_eq!(canonical_path(plain), expected, "{plain}");
        }
        assert!(matches!(canonical_path("/about"), Cow::Borrowed(_)));
        assert_eq!(
            canonical_path("/blog/nfc%2Dintegration"),
            "/blog/nfc-integration"
        );
        assert_eq!(canonical_path("/ab%6fut/"), "/about");
        assert_eq!(canonical_path("/%7E%5F%2e"), "/~_.");
        // Reserved and non-ASCII characters stay encoded; a stray % stays.
        assert_eq!(canonical_path("/a%2F%3F%C3%A9"), "/a%2F%3F%C3%A9");
        assert_eq!(canonical_path("/100%/x%2"), "/100%/x%2");
        assert_eq!(canonical_path("/é/"), "/é");
        assert_eq!(canonical_path("/%4%31"), "/A");
    }
}
