//! For load balancers and monitoring: `/healthz` (the process is alive),
//! `/readyz` (it should get traffic) and `/metrics` (Prometheus).

use std::sync::atomic::Ordering;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::json;

use crate::client_ip::ClientIp;
use crate::intake::store;
use crate::state::SharedState;

/// 200 while the process serves at all.
pub async fn healthz() -> (StatusCode, &'static str) {
    (StatusCode::OK, "ok")
}

/// 200 when every SSR isolate has loaded the bundle, the static pages are
/// prerendered, the database answered its last check and no shutdown has
/// begun; 503 otherwise. The body says which check failed.
pub async fn readyz(State(state): State<SharedState>) -> Response {
    let isolates = state.site().front.pool.is_ready();
    let prerendered = state.ready.load(Ordering::Acquire);
    let database = state.db.is_up();
    let draining = state.draining.load(Ordering::Acquire);
    let ready = isolates && prerendered && database && !draining;
    let status = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    let body = json!({ "ready": ready, "isolates": isolates, "prerendered": prerendered, "database": database, "draining": draining });
    (status, [(header::CACHE_CONTROL, "no-store")], Json(body)).into_response()
}

/// The Prometheus metrics, for clients in `METRICS_ALLOW` (loopback and
/// private networks by default); anyone else gets the 404 any unknown path
/// gets.
pub async fn metrics(State(state): State<SharedState>, Extension(client): Extension<ClientIp>) -> Response {
    if !state.config.metrics_allow.contains(client.0) {
        return (StatusCode::NOT_FOUND, "Not found").into_response();
    }
    let m = &state.metrics;
    m.render_queue_depth.set(state.site().front.pool.queue_depth() as i64);
    let up = state.db.is_up();
    m.database_up.set(i64::from(up));
    if up {
        // A database that went away since its last check keeps the last count.
        if let Ok(n) = store::pending_count(&state.db).await {
            m.intro_pending.set(n);
        }
    }
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], m.encode())
        .into_response()
}
