//! For load balancers and monitoring: `/healthz` (the process is alive),
//! `/readyz` (it should get traffic) and `/metrics` (Prometheus).

use std::sync::atomic::Ordering;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::json;

use crate::client_ip::ClientIp;
use crate::db::now_ms;
use crate::intake::store;
use crate::state::SharedState;

/// 200 while the process serves at all.
pub async fn healthz() -> (StatusCode, &'static str) {
    (StatusCode::OK, "ok")
}

/// 200 when every SSR isolate has loaded the bundle, the static pages are
/// prerendered, the database answered its last check and no shutdown has
/// begun; 503 otherwise. The body says which check failed, and how many
/// intro requests wait for Notion (`intro_requests`, null while the
/// database is away): a stalled forwarder shows there, but the site stays
/// ready, as visitors' requests are kept.
pub async fn readyz(State(state): State<SharedState>) -> Response {
    let isolates = state.site().front.pool.is_ready();
    let prerendered = state.prerendered.is_set();
    let database = state.db.is_up();
    let draining = state.draining.load(Ordering::Acquire);
    let ready = isolates && prerendered && database && !draining;
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let intro = match backlog(&state).await {
        Some(b) => json!({
            "pending": b.pending,
            "oldest_pending_seconds": b.oldest_age_secs(now_ms()),
            "forwarding": state.forwarder.is_some(),
        }),
        None => serde_json::Value::Null,
    };
    let body = json!({
        "ready": ready, "isolates": isolates, "prerendered": prerendered, "database": database, "draining": draining,
        "intro_requests": intro,
    });
    (status, [(header::CACHE_CONTROL, "no-store")], Json(body)).into_response()
}

/// The requests waiting for Notion, unless the database is known to be away.
async fn backlog(state: &SharedState) -> Option<store::Backlog> {
    if !state.db.is_up() {
        return None;
    }
    store::backlog(&state.db).await.ok()
}

/// The Prometheus metrics, for clients in `METRICS_ALLOW` (loopback and
/// private networks by default); anyone else gets a plain-text 404 ("Not
/// found"), which says nothing of what is there.
pub async fn metrics(
    State(state): State<SharedState>,
    Extension(client): Extension<ClientIp>,
) -> Response {
    if !state.config.metrics_allow.contains(client.0) {
        return (StatusCode::NOT_FOUND, "Not found").into_response();
    }
    let m = &state.metrics;
    m.render_queue_depth
        .set(state.site().front.pool.queue_depth() as i64);
    m.database_up.set(i64::from(state.db.is_up()));
    // A database that is away keeps the last reading.
    if let Some(b) = backlog(&state).await {
        m.intro_pending.set(b.pending);
        m.intro_oldest_pending_age.set(b.oldest_age_secs(now_ms()));
    }
    (
        [
            (
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            ),
            (header::CACHE_CONTROL, "no-store"),
        ],
        m.encode(),
    )
        .into_response()
}
