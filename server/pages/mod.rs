//! What a URL shows, between the HTTP layer and rendering. Every page
//! request goes the same way, whoever asks (the front door, the router's
//! page handler, `/api/route-data`, the prerender at start):
//!
//! 1. [`resolve`]: method, path and query to the route, its [`Plan`] (the
//!    render URL and the version of its changing data) and its key in the
//!    page cache. String work only: no data is read.
//! 2. A hit in the page cache ends there. Before this step, [`hot`] finds
//!    a page of the site's list by its path alone, as its last hit left it.
//! 3. Otherwise [`load`] runs the route's loader (the only source of its
//!    data) and [`make`] renders it and wraps it in the document, once
//!    however many requests for the page arrive together.

pub mod load;
pub mod make;
pub mod plan;

use std::sync::Arc;

use axum::http::Method;

use crate::content::routes::RouteMatch;
use crate::render::cache::{CachedPage, HotPage, PageKey};
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
    /// `/about/` is `/about`: one URL per page (the query is kept).
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
    if path.len() > 1 && path.ends_with('/') {
        let mut target = path.trim_end_matches('/').to_owned();
        if target.is_empty() {
            target.push('/');
        }
        if let Some(q) = query {
            target.push('?');
            target.push_str(q);
        }
        return Resolved::Canonical(target);
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

/// A page view of a path of the site's list ([`crate::content::Content::page_paths`]),
/// answered by what was last kept for it, when that is still what the
/// page cache would give: a GET or HEAD, no query, the data of the same
/// version. One lookup by the path: no route match, no plan, no key. None
/// leaves the request to [`resolve`] and the page cache.
pub fn hot(
    state: &AppState,
    site: &Site,
    method: &Method,
    path: &str,
    query: Option<&str>,
) -> Option<Arc<HotPage>> {
    if query.is_some()
        || (method != Method::GET && method != Method::HEAD)
        || site.dev.as_ref().is_some_and(|dev| !dev.caches())
    {
        return None;
    }
    let slot = site.hot.get(path)?;
    let hot = slot.as_ref()?;
    (plan::version_now(state, hot.policy) == Some(hot.version)).then(|| hot.clone())
}

/// `page`, kept under `key` in the page cache, is what [`hot`] answers for
/// its URL from now on (when the URL is a path of the site's list).
pub fn keep_hot(site: &Site, route: &RouteMatch, key: &PageKey, page: &Arc<CachedPage>) {
    site.hot.keep(
        &key.url,
        HotPage::new(page.clone(), route.page, route.facts.cache, key.version),
    );
}
