//! HTTP routes, by concern: pages (the SSR catch-all and the route-data
//! endpoint), embedded assets and health.

pub mod api;
pub mod assets;
pub mod health;
pub mod loaders;
pub mod pages;
pub mod table;

use axum::routing::{get, post};
use axum::Router;
use tower_http::compression::CompressionLayer;
use tower_http::trace::TraceLayer;

use crate::state::SharedState;

pub fn router(state: SharedState) -> Router {
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/api/route-data", get(pages::route_data))
        .route("/api/save-to-notion", post(api::intro::save))
        .route("/assets/{*path}", get(assets::asset))
        .fallback(pages::page)
        .layer(CompressionLayer::new())
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}
