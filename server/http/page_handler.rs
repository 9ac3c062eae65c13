//! Pages in HTTP: the page pipeline behind the dispatcher
//! ([`super::dispatch`]) and the route-data endpoint of client-side
//! navigation.
//!
//! The pipeline takes a page request once, in this order:
//!
//! 1. [`latest`]: one of the site's own paths whose latest page shows the
//!    data as it is now ([`pages::latest_for_path`]) is answered at once,
//!    with the bytes and headers kept with the page and nothing else (no
//!    loader, no JSON, no hashing, no formatting).
//! 2. [`page`]: any other is resolved once ([`pages::resolve`]), looked up
//!    in the page cache, and on a miss made ([`make::kept`], or
//!    [`uncached`] for a page that is not kept), in the same call.
//!
//! Both get the same bookkeeping (request id, log line, metrics) and the
//! same security headers (a cached page keeps them with its other header
//! values), so a response does not show which way it came.

use std::net::SocketAddr;
use std::time::Instant;

use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Json, Router};
use serde::Deserialize;

use super::observe::{RequestTrace, RouteLabel};
use super::respond::{set_retry_after, uncached};
use crate::client_ip::{self, ClientIp};
use crate::pages::make;
use crate::pages::{self, load, Resolved};
use crate::render::cache::FullResponse;
use crate::state::{AppState, SharedState};

/// Step 1: the latest page of one of the site's own paths, answered as the
/// request comes off the wire (see [`pages::latest_for_path`]); None hands
/// the request to [`pipeline`].
pub fn latest<B>(
    state: &AppState,
    started: Instant,
    peer: SocketAddr,
    request: &hyper::Request<B>,
) -> Option<FullResponse> {
    let (method, uri, headers) = (request.method(), request.uri(), request.headers());
    let site = state.site.load();
    let latest = pages::latest_for_path(state, &site, method, uri.path(), uri.query())?;
    state.metrics.page_cache_hits.inc();
    let mut res = latest.page.page(headers);
    if method == Method::HEAD {
        head_only(&mut res);
    }
    let trace = RequestTrace::new(state, started, peer, headers);
    let client = || client_ip::resolve(peer, headers, &state.config.trusted_proxies);
    let seconds = trace.finish(method, uri.path(), latest.id.name(), client, &mut res);
    latest.count_view(&state.metrics, res.status(), seconds);
    Some(res)
}

/// A HEAD request's answer from step 1: the GET's headers, its length
/// among them, and no body, as axum's router answers HEAD in step 2. Over
/// HTTP/1.1 hyper would leave the body unsent itself; over HTTP/2 it would
/// send it, and a client takes DATA after a HEAD for a protocol error.
fn head_only(res: &mut FullResponse) {
    use hyper::body::Body as _;
    let len = res.body().size_hint().exact().unwrap_or(0);
    if len > 0 {
        res.headers_mut()
            .insert(header::CONTENT_LENGTH, header::HeaderValue::from(len));
        *res.body_mut() = Default::default();
    }
}

/// Step 2, as a service: [`page`] for every path, under the router's
/// middleware (the request's id, log line, metrics and security headers;
/// compression for a page made for one request).
pub fn pipeline(state: SharedState) -> Router {
    super::observe::with_middleware(Router::new().fallback(page), state)
}

/// A page request that step 1 did not answer: resolved once, then answered
/// from the page cache, or made.
pub async fn page(
    State(state): State<SharedState>,
    Extension(client): Extension<ClientIp>,
    request: Request,
) -> Response {
    let (uri, headers) = (request.uri(), request.headers());
    let site = state.site();
    let resolved = pages::resolve(&state, &site, request.method(), uri.path(), uri.query());
    let (route, plan, key) = match resolved {
        Resolved::Page { route, plan, key } => (route, plan, key),
        Resolved::Canonical(target) => return Redirect::permanent(&target).into_response(),
        Resolved::MethodNotAllowed => {
            let allow = [(header::ALLOW, "GET, HEAD")];
            return (StatusCode::METHOD_NOT_ALLOWED, allow, "Method not allowed").into_response();
        }
    };
    note_not_found(&state, &route, uri.path());
    let mut res = match key {
        Some(key) => match make::kept(&state, &site, &route, key, plan, client.0).await {
            Ok(page) => page.page_response(headers),
            Err(failed) => failed.as_ref().into_response(),
        },
        None => {
            let loaded = load::load(&state, &site.content, &route, plan, client.0).await;
            uncached(&state, &site, &route, loaded).await
        }
    };
    res.extensions_mut()
        .insert(RouteLabel(route.page.name().to_owned()));
    res
}

/// The router's answer to a path under one of its segments that none of
/// its routes takes (`/api/nope`): what the page pipeline answers for a
/// path the route table does not match (the 404 page; a redirect to the
/// path's one form; 405 for a method other than GET and HEAD).
pub async fn not_found(
    state: State<SharedState>,
    client: Extension<ClientIp>,
    request: Request,
) -> Response {
    page(state, client, request).await
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
    // split_route_url gives the path in its one form: a page, always.
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
        if let Some(hit) = state.page_cache.get(&key).await {
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

/// `/path?query` as the path in its one form ([`pages::canonical_path`])
/// and the query; None unless it is a path on this site (`//host` is
/// another site).
pub fn split_route_url(url: &str) -> Option<(String, Option<&str>)> {
    let rest = url.strip_prefix('/')?;
    if rest.starts_with('/') || rest.starts_with('\\') {
        return None;
    }
    let (path, query) = match url.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (url, None),
    };
    let path = path.split('#').next().unwrap_or("/");
    Some((pages::canonical_path(path).into_owned(), query))
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
