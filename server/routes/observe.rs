//! The middleware every request passes through: it works out who the client
//! is (`X-Forwarded-For` only from trusted proxies), gives the request an id
//! (sent back as `X-Request-Id` and carried by every log line written while
//! serving it, see [`crate::telemetry`]), adds the security headers, and
//! records the request in the metrics by route and status.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Instant;

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

use crate::client_ip::{self, ClientIp};
use crate::telemetry;
use crate::state::SharedState;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The metrics label of a response whose route the router cannot name (the
/// page catch-all sets it to the page id).
#[derive(Debug, Clone)]
pub struct RouteLabel(pub String);

pub async fn observe(State(state): State<SharedState>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0)
        .unwrap_or_else(|| SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)));
    let trusted = &state.config.trusted_proxies;
    let client = client_ip::resolve(peer, req.headers(), trusted);
    req.extensions_mut().insert(ClientIp(client));

    // A proxy we trust may have named the request already; anyone else's id
    // is replaced, so ids in the logs are ours or our proxies'.
    let id: std::sync::Arc<str> = match req.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()) {
        Some(v) if trusted.contains(peer.ip()) && is_plain_id(v) => v.into(),
        _ => uuid::Uuid::new_v4().hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer()).into(),
    };
    let id_value = HeaderValue::from_str(&id).expect("a checked id is a header value");
    req.headers_mut().insert(REQUEST_ID, id_value.clone());

    // Shared, not copied: every request passes here.
    let uri = req.uri().clone();
    let path = uri.path();
    let method = req.method().clone();
    let matched = req.extensions().get::<MatchedPath>().cloned();
    let mut res = telemetry::with_request_id(id.clone(), next.run(req)).await;

    // A borrow of the current site, not a counted reference.
    state.site.load().security.apply(path, res.headers_mut());
    res.headers_mut().insert(REQUEST_ID, id_value);

    let route = res
        .extensions_mut()
        .remove::<RouteLabel>()
        .map(|l| l.0)
        .or_else(|| matched.map(|m| m.as_str().to_owned()))
        .unwrap_or_else(|| "unmatched".to_owned());
    let status = res.status().as_u16();
    let seconds = started.elapsed().as_secs_f64();
    let took_ms = (seconds * 1000.0) as u64;
    if status >= 500 && route != "/readyz" {
        tracing::warn!(request_id = %id, %method, path = %telemetry::shorten(path), %client, status, %route, took_ms, "request failed");
    } else {
        tracing::debug!(request_id = %id, %method, path = %telemetry::shorten(path), %client, status, %route, took_ms, "request");
    }
    state.metrics.observe_request(route, status, seconds);
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
