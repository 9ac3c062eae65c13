//! What every request passes through, by the router's middleware
//! ([`observe`]) or, for a page served straight from the page cache, by the
//! front door ([`super::front`]): it works out who the client is
//! (`X-Forwarded-For` only from trusted proxies), gives the request an id
//! (sent back as `X-Request-Id` and carried by every log line written while
//! serving it, see [`crate::telemetry`]), adds the security headers, and
//! records the request in the metrics by route and status.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{Extensions, HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;

use crate::client_ip::{self, ClientIp};
use crate::state::{AppState, SharedState};
use crate::telemetry::{self, REQUEST_ID_HEADER};

/// The metrics label of a response whose route the router cannot name (the
/// page catch-all sets it to the page id).
#[derive(Debug, Clone)]
pub struct RouteLabel(pub String);

/// A request seen: when it arrived, from whom, and its id.
pub struct Seen {
    started: Instant,
    pub client: IpAddr,
    pub id: Arc<str>,
    id_value: HeaderValue,
}

impl Seen {
    /// A request with these extensions (the connection's peer) and headers
    /// arrived at `started`.
    pub fn new(state: &AppState, started: Instant, extensions: &Extensions, headers: &HeaderMap) -> Seen {
        let peer = extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0).unwrap_or_else(|| SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)));
        let trusted = &state.config.trusted_proxies;
        let client = client_ip::resolve(peer, headers, trusted);
        // A proxy we trust may have named the request already; anyone else's
        // id is replaced, so ids in the logs are ours or our proxies'.
        let id: Arc<str> = match headers.get(&REQUEST_ID_HEADER).and_then(|v| v.to_str().ok()) {
            Some(v) if trusted.contains(peer.ip()) && is_plain_id(v) => v.into(),
            _ => uuid::Uuid::new_v4().hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer()).into(),
        };
        let id_value = HeaderValue::from_str(&id).expect("a checked id is a header value");
        Seen { started, client, id, id_value }
    }

    /// Hands the client and the id on to the handlers.
    fn mark(&self, request: &mut Request) {
        request.extensions_mut().insert(ClientIp(self.client));
        request.headers_mut().insert(REQUEST_ID_HEADER, self.id_value.clone());
    }

    /// The response to `method path` is `res`, from `route`: adds the id,
    /// logs it, and counts it. Its security headers are in already.
    pub fn answered(self, state: &AppState, method: &Method, path: &str, route: String, res: &mut Response) {
        res.headers_mut().insert(REQUEST_ID_HEADER, self.id_value);
        let status = res.status().as_u16();
        let seconds = self.started.elapsed().as_secs_f64();
        let took_ms = (seconds * 1000.0) as u64;
        let (id, client, path) = (&self.id, self.client, telemetry::shorten(path));
        if status >= 500 && route != "/readyz" {
            tracing::warn!(request_id = %id, %method, %path, %client, status, %route, took_ms, "request failed");
        } else {
            tracing::debug!(request_id = %id, %method, %path, %client, status, %route, took_ms, "request");
        }
        state.metrics.observe_request(route, status, seconds);
    }
}

/// The router's middleware: every request the front door passes on.
pub async fn observe(State(state): State<SharedState>, mut req: Request, next: Next) -> Response {
    let seen = Seen::new(&state, Instant::now(), req.extensions(), req.headers());
    seen.mark(&mut req);
    // Shared, not copied: every request passes here.
    let uri = req.uri().clone();
    let method = req.method().clone();
    let matched = req.extensions().get::<MatchedPath>().cloned();
    let mut res = telemetry::with_request_id(seen.id.clone(), next.run(req)).await;
    let route = res
        .extensions_mut()
        .remove::<RouteLabel>()
        .map(|l| l.0)
        .or_else(|| matched.map(|m| m.as_str().to_owned()))
        .unwrap_or_else(|| "unmatched".to_owned());
    // A borrow of the current site, not a counted reference. Headers a
    // handler set are kept (a cached page has them all).
    state.site.load().security.apply(uri.path(), res.headers_mut());
    seen.answered(&state, &method, uri.path(), route, &mut res);
    res
}

/// An id a proxy may pass on: short, and nothing but letters, digits and `-_.`.
fn is_plain_id(v: &str) -> bool {
    !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
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
