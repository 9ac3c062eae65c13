//! The SSR catch-all and the route-data endpoint.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::Extension;
use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Json;
use serde::Deserialize;

use super::api::set_retry_after;
use super::assets::{preferred_encoding, Encoding};
use super::loaders::{self, Loaded};
use super::observe::RouteLabel;
use crate::client_ip::ClientIp;
use crate::metrics::Metrics;
use crate::site::Site;
use crate::ssr::cache::{CachedPage, PageKey};
use crate::ssr::{document, RenderError};
use crate::state::SharedState;

/// Every path that is not an API or asset route: a server-rendered page.
pub async fn page(State(state): State<SharedState>, Extension(client): Extension<ClientIp>, method: Method, uri: Uri, headers: HeaderMap) -> Response {
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
    let loaded = load(&state, &site, path, uri.query(), client).await;
    let label = RouteLabel(loaded.route.page.clone());
    let retry_after = loaded.retry_after;
    let mut res = match render_page(&state, &site, loaded).await {
        Ok(page) => page.respond(&headers),
        Err(res) => res,
    };
    set_retry_after(&mut res, retry_after);
    res.extensions_mut().insert(label);
    res
}

async fn load(state: &SharedState, site: &Site, path: &str, query: Option<&str>, client: ClientIp) -> Loaded {
    let route = site.content.routes.find(path);
    if route.is_not_found() {
        // Spec: the unknown route is logged. Crawlers ask for thousands, so
        // at INFO and sampled; /metrics counts every one.
        state.metrics.not_found.inc();
        if let Some(skipped) = state.not_found_log.admit() {
            tracing::info!(path = %crate::telemetry::shorten(path), skipped, "404: unknown route requested");
        }
    }
    loaders::load(state, &site.content, path, query, &route, client.0).await
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
        let loaded = load(state, &site, &path, None, server).await;
        if loaded.cacheable && render_page(state, &site, loaded).await.is_ok() {
            done += 1;
        }
    }
    done
}

/// Renders a page that is never cached (it carries what a visitor sent).
pub async fn render(state: &SharedState, loaded: Loaded) -> Response {
    let retry_after = loaded.retry_after;
    let mut res = match render_page(state, &state.site(), loaded).await {
        Ok(page) => page.respond(&HeaderMap::new()),
        Err(res) => res,
    };
    set_retry_after(&mut res, retry_after);
    res
}

/// A rendered page: kept in the cache with its compressed bodies, or made
/// for one response only.
enum Rendered {
    Cached(Arc<CachedPage>),
    Once { status: u16, html: String },
}

impl Rendered {
    fn respond(self, headers: &HeaderMap) -> Response {
        match self {
            Rendered::Cached(page) => cached_response(&page, headers),
            Rendered::Once { status, html } => html_response(status, html),
        }
    }
}

/// The page from the cache, or rendered (and cached when the loader allows).
/// A page that could not be rendered comes back as the finished error
/// response; so does one that a broken file breaks (`dev`).
async fn render_page(state: &SharedState, site: &Site, loaded: Loaded) -> Result<Rendered, Response> {
    let problems = site.problems_for(&loaded.route.page);
    if !problems.is_empty() {
        return Err(crate::dev::problem_page(site, &problems));
    }
    let bootstrap = serde_json::to_string(&loaded.route).expect("route data serializes");
    let key = PageKey::new(site.generation, &loaded.render_url, &bootstrap);
    let m = &state.metrics;
    if loaded.cacheable {
        if let Some(hit) = state.pages.get(&key).await {
            m.page_cache_hits.inc();
            return Ok(Rendered::Cached(hit));
        }
        m.page_cache_misses.inc();
    }
    let started = std::time::Instant::now();
    let front = &site.front;
    let rendered = front.pool.render(&loaded.render_url, &bootstrap).await;
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
            tracing::error!(url = %loaded.render_url, error = out.error.as_deref().unwrap_or(""), "render error");
            if let (Some(dev), Some(error)) = (&state.dev, &out.error) {
                let problem = crate::dev::render_problem(error, out.stack.as_deref(), front.source_map.as_ref(), dev.root(), Some(&out.page));
                tracing::error!("{problem}");
                return Err(crate::dev::problem_page(site, &[&problem]));
            }
            Err(html_response(500, document::page(&front.manifest, &out, &head(state, site, &loaded, &out), &error_bootstrap(&loaded))))
        }
        Ok(out) => {
            let html = document::page(&front.manifest, &out, &head(state, site, &loaded, &out), &bootstrap);
            // Pages that are not kept are not compressed ahead either.
            if !loaded.cacheable || state.config.page_cache_capacity == 0 {
                return Ok(Rendered::Once { status: out.status, html });
            }
            let page = Arc::new(CachedPage::new(out.status, html));
            state.pages.insert(key, page.clone()).await;
            Ok(Rendered::Cached(page))
        }
        Err(RenderError::Overloaded) => {
            tracing::warn!(url = %loaded.render_url, "render queue full; shedding");
            let mut res = html_response(503, document::error_page(&front.manifest, 503, "Service Unavailable"));
            res.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            Err(res)
        }
        Err(e) => {
            tracing::error!(url = %loaded.render_url, error = %e, "render failed");
            Err(html_response(500, document::error_page(&front.manifest, 500, "Internal Server Error")))
        }
    }
}

/// A cached page in the encoding the client prefers, or 304 when its copy
/// is current.
fn cached_response(page: &CachedPage, headers: &HeaderMap) -> Response {
    let not_modified = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == page.etag || t.trim() == "*"));
    let status = if not_modified { StatusCode::NOT_MODIFIED } else { StatusCode::from_u16(page.status).unwrap_or(StatusCode::OK) };
    let (body, encoding) = match preferred_encoding(headers) {
        Encoding::Br => (page.br.clone(), Some("br")),
        Encoding::Gzip => (page.gzip.clone(), Some("gzip")),
        Encoding::Identity => (page.html.clone(), None),
    };
    let mut res = if not_modified { Response::new(Body::empty()) } else { Response::new(Body::from(body)) };
    *res.status_mut() = status;
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    h.insert(header::ETAG, HeaderValue::from_str(&page.etag).expect("an etag is ASCII"));
    if let (Some(enc), false) = (encoding, not_modified) {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(enc));
    }
    res
}

fn head(state: &SharedState, site: &Site, loaded: &Loaded, out: &crate::ssr::RenderOutput) -> String {
    // The preview card made at build time: the post's own, else the page's.
    let post = loaded.route.data["post"]["id"].as_str().filter(|_| out.page == "Blog");
    let card = match post {
        Some(id) => format!("og/post-{id}.png"),
        None => format!("og/{}.png", out.page),
    };
    let manifest = &site.front.manifest;
    let mut tags = crate::seo::Head {
        site_url: &state.config.site_url,
        url: &loaded.render_url,
        page: &out.page,
        title: &out.title,
        description: &out.description,
        data: &loaded.route.data,
        image: manifest.image_url(&card).or_else(|| manifest.image_url("og/Home.png")),
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
    serde_json::json!({
        "page": loaded.route.page,
        "status": 500,
        "data": loaded.route.data,
        "error": { "status": 500, "message": "Internal Server Error" },
    })
    .to_string()
}

fn html_response(status: u16, html: String) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8")),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        html,
    )
        .into_response()
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
    query: Result<Query<RouteDataQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(q)) = query else {
        return (StatusCode::BAD_REQUEST, "url: required (a path starting with /)").into_response();
    };
    let Some((path, query)) = split_route_url(&q.url) else {
        return (StatusCode::BAD_REQUEST, "url: must be a path starting with /").into_response();
    };
    let loaded = load(&state, &state.site(), &path, query, client).await;
    let status = StatusCode::from_u16(loaded.route.status).unwrap_or(StatusCode::OK);
    let mut res = (status, [(header::CACHE_CONTROL, "no-cache")], Json(loaded.route)).into_response();
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
