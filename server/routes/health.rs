use axum::extract::State;
use axum::http::StatusCode;

use crate::state::SharedState;

/// 200 once every SSR isolate has loaded the bundle, 503 before.
pub async fn healthz(State(state): State<SharedState>) -> (StatusCode, &'static str) {
    if state.pool.is_ready() {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "starting")
    }
}
