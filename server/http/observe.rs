//! What every request passes through, by the middleware of the router and
//! the page pipeline ([`observe`]) or, for a page answered by its path
//! alone, by [`super::page_handler::latest`]: it works out who the client is
//! (`X-Forwarded-For` only from trusted proxies), gives the request an id
//! (sent back as `X-Request-Id` and carried by every log line written while
//! serving it, see [`crate::telemetry`]), adds the security headers, and
//! records the request in the metrics by route and status.

use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use axum::Router;
use tower_http::compression::CompressionLayer;

use crate::client_ip::{self, ClientIp};
use crate::state::{AppState, SharedState};
use crate::telemetry::{self, REQUEST_ID_HEADER};

/// The metrics label of a response whose route the router cannot name (the
/// page pipeline sets it to the page id).
#[derive(Debug, Clone)]
pub struct RouteLabel(pub String);

/// A request being answered: when it arrived and its id.
pub struct RequestTrace {
    started: Instant,
    id: HeaderValue,
}

impl RequestTrace {
    /// A request from `peer` with these headers arrived at `started`.
    pub fn new(
        state: &AppState,
        started: Instant,
        peer: SocketAddr,
        headers: &HeaderMap,
    ) -> RequestTrace {
        // A proxy we trust may have named the request already; anyone else's
        // id is replaced, so ids in the logs are ours or our proxies'.
        let trusted = &state.config.trusted_proxies;
        let theirs = || {
            headers
                .get(REQUEST_ID_HEADER)
                .filter(|v| v.to_str().is_ok_and(is_plain_id))
                .cloned()
        };
        let id = trusted
            .contains(peer.ip())
            .then(theirs)
            .flatten()
            .unwrap_or_else(telemetry::new_request_id);
        RequestTrace { started, id }
    }

    /// The request's id.
    pub fn id(&self) -> &str {
        self.id.to_str().expect("a request id is visible ASCII")
    }

    /// The response to `method path` is `res`, from `route`, for `client`
    /// (worked out only for a log line): adds the id and logs it. Returns
    /// how long the answer took, for the metrics. Its security headers are
    /// in already.
    pub fn finish<B>(
        self,
        method: &Method,
        path: &str,
        route: &str,
        client: impl FnOnce() -> IpAddr,
        res: &mut axum::http::Response<B>,
    ) -> f64 {
        let status = res.status().as_u16();
        let seconds = self.started.elapsed().as_secs_f64();
        let failed = status >= 500 && route != "/readyz";
        if failed || tracing::enabled!(tracing::Level::DEBUG) {
            let (id, client, path, took_ms) = (
                self.id(),
                client(),
                telemetry::shorten(path),
                (seconds * 1000.0) as u64,
            );
            if failed {
                tracing::warn!(request_id = %id, %method, %path, %client, status, %route, took_ms, "request failed");
            } else {
                tracing::debug!(request_id = %id, %method, %path, %client, status, %route, took_ms, "request");
            }
        }
        res.headers_mut().insert(REQUEST_ID_HEADER, self.id);
        seconds
    }
}

/// The middleware of the router and the page pipeline: every request the
/// dispatcher hands on.
/// Every request the dispatcher hands on carries its connection's peer
/// ([`ConnectInfo`]).
pub async fn observe(
    State(state): State<SharedState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    mut req: Request,
    next: Next,
) -> Response {
    let trace = RequestTrace::new(&state, Instant::now(), peer, req.headers());
    let client = client_ip::resolve(peer, req.headers(), &state.config.trusted_proxies);
    // Handed on to the handlers: who asks, and the request's id.
    req.extensions_mut().insert(ClientIp(client));
    req.headers_mut()
        .insert(REQUEST_ID_HEADER, trace.id.clone());
    // Shared, not copied: every request passes here.
    let uri = req.uri().clone();
    let method = req.method().clone();
    let matched = req.extensions().get::<MatchedPath>().cloned();
    let mut res = telemetry::with_request_id(trace.id().into(), next.run(req)).await;
    let label = res.extensions_mut().remove::<RouteLabel>();
    let route = match (&label, &matched) {
        (Some(l), _) => l.0.as_str(),
        (None, Some(m)) => m.as_str(),
        (None, None) => "unmatched",
    };
    // A borrow of the current site, not a counted reference. Headers a
    // handler set are kept (a cached page has them all).
    state
        .site
        .load()
        .security
        .apply(uri.path(), res.headers_mut());
    let seconds = trace.finish(&method, uri.path(), route, || client, &mut res);
    state
        .metrics
        .observe_request(route, res.status().as_u16(), seconds);
    res
}

/// An id a proxy may pass on: short, and nothing but letters, digits and `-_.`.
fn is_plain_id(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 128
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

/// The middleware every response made by a handler goes through, the
/// router's and the page pipeline's alike: compression for a body made for
/// one request, then [`observe`] (request id, log line, metrics, security
/// headers).
pub fn with_middleware(router: Router<SharedState>, state: SharedState) -> Router {
    router
        .layer(CompressionLayer::new())
        .layer(axum::middleware::from_fn_with_state(state.clone(), observe))
        .with_state(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_ids_are_passed_on() {
        assert!(is_plain_id("3f1c2a9e-lb.7"));
        assert!(!is_plain_id("abc\ninjected"));
        assert!(!is_plain_id(&"a".repeat(129)));
        assert!(!is_plain_id(""));
    }
}
