//! What a URL shows, between the HTTP layer and rendering. Every page
//! request goes the same way, whoever asks (the front door, the router's
//! page handler, `/api/route-data`, the prerender at start):
//!
//! 1. [`resolve`]: method, path and query to the route, its [`Plan`] (the
//!    render URL and the version of its changing data) and its key in the
//!    page cache. String work only: no data is read.
//! 2. A hit in the page cache ends there.
//! 3. Otherwise [`load`] runs the route's loader (the only source of its
//!    data) and [`make`] renders it and wraps it in the document, once
//!    however many requests for the page arrive together.

pub mod load;
pub mod make;
pub mod plan;

use axum::http::Method;

use crate::content::routes::RouteMatch;
use crate::render::cache::PageKey;
use crate::site::Site;
use crate::state::AppState;
pub use load::Loaded;
pub use plan::Plan;

/// Where a request for a page goes.
#[derive(Debug)]
pub enum Resolved {
    /// A page: its route, its plan, and its key in the page cache (None
    /// when it is not kept there).
    Page { route: RouteMatch, plan: Plan, key: Option<PageKey> },
    /// `/about/` is `/about`: one URL per page (the query is kept).
    Canonical(String),
    /// Pages are read with GET and HEAD only.
    MethodNotAllowed,
}

/// The one resolve step: a request's method, path and query to what it
/// shows. `site` is the site the request is served from.
pub fn resolve(state: &AppState, site: &Site, method: &Method, path: &str, query: Option<&str>) -> Resolved {
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
    let kept = plan.cacheable && state.config.page_cache_capacity > 0 && site.dev.as_ref().is_none_or(|dev| dev.caches());
    let key = kept.then(|| PageKey { generation: site.generation, url: plan.render_url.clone(), version: plan.version });
    Resolved::Page { route, plan, key }
}
