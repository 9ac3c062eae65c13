//! The SSR catch-all and the route-data endpoint.
//!
//! A page view works out the page's cache key from the URL alone
//! ([`loaders::plan`]: the render URL and the version of its changing data)
//! and looks it up. A hit writes the bytes kept with it and does nothing
//! else: no loader, no JSON, no hashing, no formatting. A miss runs the
//! loader and renders, once however many requests for the page arrive
//! together (the cache's `try_get_with` makes the others wait for that one),
//! and compresses on a blocking thread, off the async workers. The lookup
//! of a page view is done by the front door ([`from_cache`], see
//! [`super::front`]), so the handler here sees the misses.

use std::sync::Arc;

use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Json};
use serde::Deserialize;

use super::api::set_retry_after;
use super::loaders::{self, Loaded, Plan};
use super::observe::RouteLabel;
use super::table::RouteMatch;
use crate::client_ip::ClientIp;
use crate::contract::{Bootstrap, ErrorNotice};
use crate::messages::messages;
use crate::metrics::Metrics;
use crate::site::Site;
use crate::ssr::cache::{CachedPage, PageKey};
use crate::ssr::{document, RenderError};
use crate::state::{AppState, SharedState};

/// Every path that is not an API or asset route: a server-rendered page.
pub async fn page(State(state): State<SharedState>, Extension(client): Extension<ClientIp>, request: Request) -> Response {
    // The request itself, not copies of its URI and headers.
    let (uri, headers) = (request.uri(), request.headers());
    let method = request.method();
    if method != Method::GET && method != Method::HEAD {
        return (StatusCode::METHOD_NOT_ALLOWED, [(header::ALLOW, "GET, HEAD")], "Method not allowed").into_response();
    }
    let path = uri.path();
    if path.len() > 1 && path.ends_with('/') {
        // One URL per page: /about/ -> /about.
        let mut target = path.trim_end_matches('/').to_owned();
        if target.is_empty() {
            target.push('/');
        }
        if let Some(q) = uri.query() {
            target.push('?');
            target.push_str(q);
        }
        return Redirect::permanent(&target).into_response();
    }
    let site = state.site();
    let route = find(&state, &site, path);
    let plan = loaders::plan(&state, &site.content, path, uri.query(), &route);
    let mut res = match cache_key(&state, &site, &plan) {
        // The front door looked the page up already and did not find it (a
        // page inserted since is handed back by `made` without a render).
        Some(key) => {
            state.metrics.page_cache_misses.inc();
            match made(&state, &site, &route, key, plan, client).await {
                Ok(page) => page.page_response(headers),
                Err(failed) => failed.response(),
            }
        }
        None => {
            let loaded = loaders::load(&state, &site.content, &route, plan, client.0).await;
            render(&state, loaded).await
        }
    };
    res.extensions_mut().insert(RouteLabel(route.page.name().to_owned()));
    res
}

/// A page view answered from the page cache: a GET or HEAD of a page of the
/// route table whose finished page is kept. It reads no data and formats
/// nothing (see the module's notes); None leaves the request to the router,
/// whose page handler makes the page (a miss), redirects, or answers the
/// 404 (an unknown path is left to it, to be counted and logged there).
/// Returns the response and the page it showed (the metrics' route label).
pub async fn from_cache(state: &AppState, method: &Method, uri: &Uri, headers: &HeaderMap) -> Option<(Response, String)> {
    if method != Method::GET && method != Method::HEAD {
        return None;
    }
    let (path, query) = (uri.path(), uri.query());
    if path.len() > 1 && path.ends_with('/') {
        return None;
    }
    let (key, page) = {
        let site = state.site.load();
        let route = site.content.routes.find(path);
        if route.is_not_found() {
            return None;
        }
        let plan = loaders::plan(state, &site.content, path, query, &route);
        (cache_key(state, &site, &plan)?, route.page)
    };
    let hit = state.pages.get(&key).await?;
    state.metrics.page_cache_hits.inc();
    Some((hit.page_response(headers), page.name().to_owned()))
}

/// The route of `path`; an unknown one is counted and (sampled) logged.
fn find(state: &AppState, site: &Site, path: &str) -> RouteMatch {
    let route = site.content.routes.find(path);
    if route.is_not_found() {
        // Spec: the unknown route is logged. Crawlers ask for thousands, so
        // at INFO and sampled; /metrics counts every one.
        state.metrics.not_found.inc();
        if let Some(skipped) = state.not_found_log.admit() {
            tracing::info!(path = %crate::telemetry::shorten(path), skipped, "404: unknown route requested");
        }
    }
    route
}

/// The page's key in the page cache; None when it is not kept there.
fn cache_key(state: &AppState, site: &Site, plan: &Plan) -> Option<PageKey> {
    let kept = plan.cacheable && state.config.page_cache_capacity > 0 && site.problems.is_empty();
    kept.then(|| PageKey { generation: site.generation, url: plan.render_url.clone(), version: plan.version })
}

/// The cached page under `key`, made if it is not there yet: loaded,
/// rendered and compressed once, however many requests ask together.
async fn made(
    state: &SharedState,
    site: &Site,
    route: &RouteMatch,
    key: PageKey,
    plan: Plan,
    client: ClientIp,
) -> Result<Arc<CachedPage>, Arc<Failed>> {
    state
        .pages
        .try_get_with(key, async {
            let loaded = loaders::load(state, &site.content, route, plan, client.0).await;
            // One serialisation: embedded in the page and kept for route data.
            let json = serde_json::to_string(&loaded.route).expect("route data serializes");
            let (status, html) = render_document(state, site, &loaded, &json).await?;
            let cache_control = loaded.plan.cache_control;
            let mut security = HeaderMap::new();
            site.security.apply(&loaded.plan.render_url, &mut security);
            let page = tokio::task::spawn_blocking(move || CachedPage::new(status, cache_control, html, json, &security)).await.map_err(|e| {
                tracing::error!(error = %e, "compressing a page failed");
                Failed::internal(&site.front.manifest)
            })?;
            Ok(Arc::new(page))
        })
        .await
}

/// Renders every page of the route table into the cache (done at start,
/// before /readyz says ready). Returns how many pages were rendered.
pub async fn prerender(state: &SharedState) -> usize {
    let site = state.site();
    let paths = site.content.routes.concrete_paths(|param| match param {
        "postId" => site.content.blog.list().into_iter().map(|p| p.id).collect(),
        _ => Vec::new(),
    });
    let mut done = 0;
    // The server itself asks: no visitor's budget is spent.
    let server = ClientIp(std::net::Ipv4Addr::LOCALHOST.into());
    for path in paths {
        let route = find(state, &site, &path);
        let plan = loaders::plan(state, &site.content, &path, None, &route);
        if let Some(key) = cache_key(state, &site, &plan) {
            if made(state, &site, &route, key, plan, server).await.is_ok() {
                done += 1;
            }
        }
    }
    done
}

/// Renders a page that is not cached (it carries what a visitor sent, or
/// the cache is off), uncompressed: the compression layer deals with it.
pub async fn render(state: &SharedState, loaded: Loaded) -> Response {
    let site = state.site();
    let retry_after = loaded.retry_after;
    let bootstrap = serde_json::to_string(&loaded.route).expect("route data serializes");
    let mut res = match render_document(state, &site, &loaded, &bootstrap).await {
        Ok((status, html)) => html_response(status, html, loaded.plan.cache_control),
        Err(failed) => failed.response(),
    };
    set_retry_after(&mut res, retry_after);
    res
}

/// A page that could not be made: the parts of its error response, shared
/// by every request that waited on the same render.
#[derive(Debug)]
pub struct Failed {
    status: u16,
    html: String,
    /// A 503 (the render queue is full) asks to come back in a second.
    retry_soon: bool,
}

impl Failed {
    fn internal(manifest: &crate::assets::Manifest) -> Failed {
        Failed { status: 500, html: document::error_page(manifest, 500, &messages().internal_error), retry_soon: false }
    }

    fn response(&self) -> Response {
        let mut res = html_response(self.status, self.html.clone(), "no-store");
        if self.retry_soon {
            res.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        res
    }
}

/// The page's document and status: rendered in an isolate and wrapped in
/// the document shell. A render that failed (or that a broken file breaks,
/// in `dev`) is the error response instead.
async fn render_document(state: &SharedState, site: &Site, loaded: &Loaded, bootstrap: &str) -> Result<(u16, String), Failed> {
    let problems = site.problems_for(loaded.route.data.page().name());
    if !problems.is_empty() {
        return Err(Failed { status: 500, html: crate::dev::problem_html(site, &problems), retry_soon: false });
    }
    let m = &state.metrics;
    let started = std::time::Instant::now();
    let front = &site.front;
    let url = &loaded.plan.render_url;
    let rendered = front.pool.render(url, bootstrap).await;
    m.render_seconds.observe(started.elapsed().as_secs_f64());
    if let Err(e) = &rendered {
        Metrics::outcome(
            &m.render_failures,
            match e {
                RenderError::Overloaded => "overloaded",
                RenderError::Timeout(_) => "timeout",
                RenderError::HeapLimit => "heap_limit",
                RenderError::Script(_) => "script",
                RenderError::WorkerLost => "panic",
            },
        );
    }
    match rendered {
        Ok(out) if out.error.is_some() || out.status >= 500 => {
            Metrics::outcome(&m.render_failures, "error_screen");
            tracing::error!(%url, error = out.error.as_deref().unwrap_or(""), "render error");
            if let (Some(dev), Some(error)) = (&state.dev, &out.error) {
                let problem = crate::dev::render_problem(error, out.stack.as_deref(), front.source_map.as_ref(), dev.root(), Some(out.page.name()));
                tracing::error!("{problem}");
                return Err(Failed { status: 500, html: crate::dev::problem_html(site, &[&problem]), retry_soon: false });
            }
            let html = document::page(&front.manifest, &out, &head(state, site, loaded, &out), &error_bootstrap(loaded));
            Err(Failed { status: 500, html, retry_soon: false })
        }
        Ok(out) => Ok((out.status, document::page(&front.manifest, &out, &head(state, site, loaded, &out), bootstrap))),
        Err(RenderError::Overloaded) => {
            tracing::warn!(%url, "render queue full; shedding");
            Err(Failed { status: 503, html: document::error_page(&front.manifest, 503, &messages().unavailable), retry_soon: true })
        }
        Err(e) => {
            tracing::error!(%url, error = %e, "render failed");
            Err(Failed::internal(&front.manifest))
        }
    }
}

fn head(state: &SharedState, site: &Site, loaded: &Loaded, out: &crate::ssr::RenderOutput) -> String {
    let mut tags = crate::seo::Head {
        site_url: &state.config.site_url,
        url: &loaded.plan.render_url,
        page: out.page,
        title: &out.title,
        description: &out.description,
        data: &loaded.route.data,
        manifest: &site.front.manifest,
        accounts: &site.content.accounts,
    }
    .tags();
    if state.dev.is_some() {
        tags.push_str(&crate::dev::script_tag(site));
    }
    tags
}

/// The bootstrap of a page whose render threw: the client shows the same
/// error screen instead of re-running the page.
fn error_bootstrap(loaded: &Loaded) -> String {
    let error = ErrorNotice { status: 500, message: messages().internal_error.clone() };
    serde_json::to_string(&Bootstrap { route: &loaded.route, error: Some(error) }).expect("route data serializes")
}

fn html_response(status: u16, html: String, cache_control: &'static str) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = [
        (header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8")),
        (header::CACHE_CONTROL, HeaderValue::from_static(cache_control)),
    ];
    (status, headers, html).into_response()
}

#[derive(Deserialize)]
pub struct RouteDataQuery {
    url: String,
}

/// `GET /api/route-data?url=/path?query`: the loader JSON of a route, for
/// client-side navigation. The HTTP status is the route's (404 for unknown).
pub async fn route_data(
    State(state): State<SharedState>,
    Extension(client): Extension<ClientIp>,
    headers: HeaderMap,
    query: Result<Query<RouteDataQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(q)) = query else {
        return (StatusCode::BAD_REQUEST, "url: required (a path starting with /)").into_response();
    };
    let Some((path, query)) = split_route_url(&q.url) else {
        return (StatusCode::BAD_REQUEST, "url: must be a path starting with /").into_response();
    };
    let site = state.site();
    let route = find(&state, &site, &path);
    let plan = loaders::plan(&state, &site.content, &path, query, &route);
    // A page in the cache carries its route data: a hit reads no data.
    if let Some(key) = cache_key(&state, &site, &plan) {
        if let Some(hit) = state.pages.get(&key).await {
            return hit.data_response(&headers);
        }
    }
    let cache_control = plan.cache_control;
    let loaded = loaders::load(&state, &site.content, &route, plan, client.0).await;
    let status = StatusCode::from_u16(loaded.route.status).unwrap_or(StatusCode::OK);
    let mut res = (status, [(header::CACHE_CONTROL, cache_control)], Json(loaded.route)).into_response();
    set_retry_after(&mut res, loaded.retry_after);
    res
}

/// `/path?query` as the canonical path (no trailing slash) and the query;
/// None unless it is a path on this site (`//host` is another site).
pub fn split_route_url(url: &str) -> Option<(String, Option<&str>)> {
    let rest = url.strip_prefix('/')?;
    if rest.starts_with('/') || rest.starts_with('\\') {
        return None;
    }
    let (path, query) = match rest.split_once('?') {
        Some((p, q)) => (format!("/{p}"), Some(q)),
        None => (format!("/{rest}"), None),
    };
    let path = path.split('#').next().unwrap_or("/").to_owned();
    let path = if path.len() > 1 { path.trim_end_matches('/').to_owned() } else { path };
    Some((if path.is_empty() { "/".to_owned() } else { path }, query))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn table() -> &'static crate::routes::table::RouteTable {
        static T: std::sync::OnceLock<crate::routes::table::RouteTable> = std::sync::OnceLock::new();
        T.get_or_init(|| crate::routes::table::RouteTable::parse(include_str!("../../content/routes.json")).unwrap())
    }

    #[test]
    fn route_urls_split_into_path_and_query() {
        assert_eq!(split_route_url("/blog/?type=Events"), Some(("/blog".to_owned(), Some("type=Events"))));
        assert_eq!(split_route_url("/"), Some(("/".to_owned(), None)));
        assert_eq!(split_route_url("//evil.example/x"), None);
        assert_eq!(split_route_url("https://evil.example/"), None);
        assert_eq!(split_route_url(""), None);
    }

    proptest! {
        /// Whatever a client sends, the result is a path of this site that
        /// the route table can match, and matching it never panics.
        #[test]
        fn any_route_url_is_a_local_path_or_refused(url in ".{0,80}") {
            if let Some((path, _)) = split_route_url(&url) {
                prop_assert!(path.starts_with('/') && !path.starts_with("//"));
                let _ = table().find(&path);
            }
        }
    }
}
