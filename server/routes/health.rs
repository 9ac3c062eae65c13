use axum::extract::State;
use axum::http::StatusCode;

use crate::state::SharedState;

/// 200 once every SSR isolate has loaded the bundle and the static pages
/// are prerendered, 503 before.
pub async fn healthz(State(state): State<SharedState>) -> (StatusCode, &'static str) {
    if state.ready.load(std::sync::atomic::Ordering::Acquire) {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "starting")
    }
}
