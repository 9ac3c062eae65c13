//! Page requests in HTTP: the SSR catch-all, the front door's cache lookup
//! and the route-data endpoint. Each resolves the request
//! ([`pages::resolve`]); a cached page is answered with the bytes kept with
//! it and nothing else (no loader, no JSON, no hashing, no formatting); any
//! other is made by [`pages::make`]. The lookup of a page view is done by
//! the front door ([`from_cache`], see [`super::front`]), so the handler
//! here sees the misses.

use std::sync::Arc;

use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Json};
use serde::Deserialize;

use super::api::set_retry_after;
use super::observe::RouteLabel;
use super::respond::{failed_response, uncached};
use crate::client_ip::ClientIp;
use crate::pages::make;
use crate::pages::{self, load, Resolved};
use crate::render::cache::{HotPage, Kept};
use crate::state::{AppState, SharedState};

/// Every path that is not an API or asset route: a server-rendered page.
pub async fn page(
    State(state): State<SharedState>,
    Extension(client): Extension<ClientIp>,
    request: Request,
) -> Response {
    let (uri, headers) = (request.uri(), request.headers());
    let site = state.site();
    let (route, plan, key) =
        match pages::resolve(&state, &site, request.method(), uri.path(), uri.query()) {
            Resolved::Page { route, plan, key } => (route, plan, key),
            Resolved::Canonical(target) => return Redirect::permanent(&target).into_response(),
            Resolved::MethodNotAllowed => {
                return (
                    StatusCode::METHOD_NOT_ALLOWED,
                    [(header::ALLOW, "GET, HEAD")],
                    "Method not allowed",
                )
                    .into_response();
            }
        };
    note_not_found(&state, &route, uri.path());
    let mut res = match key {
        // The front door looked the page up already and did not find it (a
        // page inserted since is handed back without a render).
        Some(key) => {
            state.metrics.page_cache_misses.inc();
            match make::cached(&state, &site, &route, key, plan, client.0).await {
                Ok(page) => page.page_response(headers),
                Err(failed) => failed_response(&failed),
            }
        }
        None => {
            let loaded = load::load(&state, &site.content, &route, plan, client.0).await;
            uncached(&state, &site, &route, loaded).await
        }
    };
    res.extensions_mut()
        .insert(RouteLabel(route.page.name().to_owned()));
    res
}

/// A page view answered from the page cache: a GET or HEAD of a page of the
/// route table whose finished page is kept. It reads no data and formats
/// nothing (see the module's notes); None leaves the request to the router,
/// whose page handler makes the page (a miss), redirects, or answers the
/// 404 (an unknown path is left to it, to be counted and logged there).
/// Returns the response and the page it showed (the metrics' route label).
pub async fn from_cache(
    state: &AppState,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
) -> Option<(Kept, String)> {
    let site = state.site();
    let Resolved::Page {
        route,
        key: Some(key),
        ..
    } = pages::resolve(state, &site, method, uri.path(), uri.query())
    else {
        return None;
    };
    let hit = state.pages.get(&key).await?;
    pages::keep_hot(&site, &route, &key, &hit);
    state.metrics.page_cache_hits.inc();
    Some((hit.page(headers), route.page.name().to_owned()))
}

/// A page view the front door answers from the site's hot pages
/// ([`pages::hot`]): the same response as [`from_cache`] would give, found
/// by the path alone, without waiting on anything.
pub fn from_hot(
    state: &AppState,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
) -> Option<(Kept, Arc<HotPage>)> {
    let hot = pages::hot(state, &state.site.load(), method, uri.path(), uri.query())?;
    state.metrics.page_cache_hits.inc();
    Some((hot.page.page(headers), hot))
}

/// Spec: an unknown route is logged. Crawlers ask for thousands, so at INFO
/// and sampled; /metrics counts every one.
fn note_not_found(state: &AppState, route: &crate::content::routes::RouteMatch, path: &str) {
    if route.is_not_found() {
        state.metrics.not_found.inc();
        if let Some(skipped) = state.not_found_log.admit() {
            tracing::info!(path = %crate::telemetry::shorten(path), skipped, "404: unknown route requested");
        }
    }
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
        return (
            StatusCode::BAD_REQUEST,
            "url: required (a path starting with /)",
        )
            .into_response();
    };
    let Some((path, query)) = split_route_url(&q.url) else {
        return (
            StatusCode::BAD_REQUEST,
            "url: must be a path starting with /",
        )
            .into_response();
    };
    let site = state.site();
    // split_route_url gives the canonical path: a page, always.
    let Resolved::Page { route, plan, key } =
        pages::resolve(&state, &site, &Method::GET, &path, query)
    else {
        return (
            StatusCode::BAD_REQUEST,
            "url: must be a path starting with /",
        )
            .into_response();
    };
    note_not_found(&state, &route, &path);
    // A page in the cache carries its route data: a hit reads no data.
    if let Some(key) = key {
        if let Some(hit) = state.pages.get(&key).await {
            return hit.data_response(&headers);
        }
    }
    let cache_control = plan.cache_control;
    let loaded = load::load(&state, &site.content, &route, plan, client.0).await;
    let status = StatusCode::from_u16(loaded.route.status).unwrap_or(StatusCode::OK);
    let mut res = (
        status,
        [(header::CACHE_CONTROL, cache_control)],
        Json(loaded.route),
    )
        .into_response();
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
    let path = if path.len() > 1 {
        path.trim_end_matches('/').to_owned()
    } else {
        path
    };
    Some((
        if path.is_empty() {
            "/".to_owned()
        } else {
            path
        },
        query,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn route_urls_split_into_path_and_query() {
        assert_eq!(
            split_route_url("/blog/?type=Events"),
            Some(("/blog".to_owned(), Some("type=Events")))
        );
        assert_eq!(split_route_url("/"), Some(("/".to_owned(), None)));
        assert_eq!(
            split_route_url("/about#team"),
            Some(("/about".to_owned(), None))
        );
        assert_eq!(split_route_url("//evil.example/x"), None);
        assert_eq!(split_route_url("/\\evil.example/x"), None);
        assert_eq!(split_route_url("https://evil.example/"), None);
        assert_eq!(split_route_url(""), None);
    }

    proptest! {
        /// Whatever a client sends, what is accepted is a canonical path of
        /// this site (no other host, no trailing slash, no query or
        /// fragment in it), and splitting it again gives the same parts.
        #[test]
        fn any_route_url_is_a_canonical_local_path_or_refused(url in "[/?#a-z%.\\\\]{0,12}") {
            if let Some((path, query)) = split_route_url(&url) {
                prop_assert!(path.starts_with('/') && !path.starts_with("//"), "{path}");
                prop_assert!(path == "/" || !path.ends_with('/'), "{path}");
                prop_assert!(!path.contains('?') && !path.contains('#'), "{path}");
                let again = match query {
                    Some(q) => format!("{path}?{q}"),
                    None => path.clone(),
                };
                prop_assert_eq!(split_route_url(&again), Some((path.clone(), query)));
            } else {
                prop_assert!(!url.starts_with('/') || url.starts_with("//") || url.starts_with("/\\"), "{url} refused");
            }
        }
    }
}
