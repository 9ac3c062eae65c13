//! The SSR catch-all and the route-data endpoint.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Json;
use serde::Deserialize;

use super::loaders::{self, Loaded};
use crate::ssr::cache::{CachedPage, PageKey};
use crate::ssr::{document, RenderError};
use crate::state::SharedState;

/// Every path that is not an API or asset route: a server-rendered page.
pub async fn page(State(state): State<SharedState>, method: Method, uri: Uri) -> Response {
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
    let loaded = load(&state, path, uri.query()).await;
    render(&state, loaded).await
}

async fn load(state: &SharedState, path: &str, query: Option<&str>) -> Loaded {
    let route = state.routes.find(path);
    if route.is_not_found() {
        tracing::warn!(path, "404: unknown route requested");
    }
    loaders::load(state, path, query, &route).await
}

pub async fn render(state: &SharedState, loaded: Loaded) -> Response {
    let bootstrap = serde_json::to_string(&loaded.route).expect("route data serializes");
    let key = PageKey::new(&loaded.render_url, &bootstrap);
    if loaded.cacheable {
        if let Some(hit) = state.pages.get(&key).await {
            return html_response(hit.status, hit.html.clone());
        }
    }
    match state.pool.render(&loaded.render_url, &bootstrap).await {
        Ok(out) if out.error.is_some() || out.status >= 500 => {
            tracing::error!(url = %loaded.render_url, error = out.error.as_deref().unwrap_or(""), "render error");
            html_response(500, document::page(state.manifest, &out, &error_bootstrap(&loaded)))
        }
        Ok(out) => {
            let html = document::page(state.manifest, &out, &bootstrap);
            if loaded.cacheable {
                state.pages.insert(key, Arc::new(CachedPage { status: out.status, html: html.clone() })).await;
            }
            html_response(out.status, html)
        }
        Err(RenderError::Overloaded) => {
            tracing::warn!(url = %loaded.render_url, "render queue full; shedding");
            let mut res = html_response(503, document::error_page(state.manifest, 503, "Service Unavailable"));
            res.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            res
        }
        Err(e) => {
            tracing::error!(url = %loaded.render_url, error = %e, "render failed");
            html_response(500, document::error_page(state.manifest, 500, "Internal Server Error"))
        }
    }
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
pub async fn route_data(State(state): State<SharedState>, Query(q): Query<RouteDataQuery>) -> Response {
    let Some(rest) = q.url.strip_prefix('/') else {
        return (StatusCode::BAD_REQUEST, "url must be a path starting with /").into_response();
    };
    let (path, query) = match rest.split_once('?') {
        Some((p, q)) => (format!("/{p}"), Some(q)),
        None => (format!("/{rest}"), None),
    };
    let path = if path.len() > 1 { path.trim_end_matches('/').to_owned() } else { path };
    let path = if path.is_empty() { "/".to_owned() } else { path };
    let loaded = load(&state, &path, query).await;
    let status = StatusCode::from_u16(loaded.route.status).unwrap_or(StatusCode::OK);
    (status, [(header::CACHE_CONTROL, "no-cache")], Json(loaded.route)).into_response()
}
