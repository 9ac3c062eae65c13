//! HTTP routes, by concern: pages (the SSR catch-all and the route-data
//! endpoint), embedded assets and health.

pub mod api;
pub mod assets;
pub mod health;
pub mod loaders;
pub mod pages;
pub mod seo;
pub mod table;

use axum::routing::{get, post};
use axum::Router;
use tower_http::compression::CompressionLayer;
use tower_http::trace::TraceLayer;

use crate::state::SharedState;

pub fn router(state: SharedState) -> Router {
    Router::new()
        .route("/sitemap.xml", get(seo::sitemap))
        .route("/robots.txt", get(seo::robots))
        .route("/feed.xml", get(seo::feed))
        .route("/site.webmanifest", get(seo::manifest))
        .route("/api/route-data", get(pages::route_data))
        .route("/api/save-to-notion", post(api::intro::save))
        .route("/api/get-stripe-prices", get(api::stripe::prices).post(api::stripe::prices))
        .route("/api/create-checkout-session", post(api::stripe::create_checkout))
        .route("/api/verify-checkout-session", post(api::stripe::verify))
        .route("/api/stripe-webhook", post(api::stripe::webhook))
        .route("/assets/{*path}", get(assets::asset))
        .fallback(pages::page)
        .layer(CompressionLayer::new())
        .layer(TraceLayer::new_for_http())
        // Outside the trace layer: load balancers poll it, and its 503 while
        // starting is not an error worth a log line.
        .route("/healthz", get(health::healthz))
        .with_state(state)
}
