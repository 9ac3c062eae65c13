//! HTTP routes, by concern: pages (the SSR catch-all and the route-data
//! endpoint), the API, embedded assets, SEO files, health and metrics. One
//! middleware ([`observe`]) wraps them all.

pub mod api;
pub mod assets;
pub mod health;
pub mod loaders;
pub mod observe;
pub mod pages;
pub mod seo;
pub mod table;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;
use tower_http::compression::CompressionLayer;

use crate::state::SharedState;

pub fn router(state: SharedState) -> Router {
    // `dev` alone has the reload script and its events.
    let dev = if state.dev.is_some() { crate::dev::routes() } else { Router::new() };
    Router::new()
        .merge(dev)
        .route("/sitemap.xml", get(seo::sitemap))
        .route("/robots.txt", get(seo::robots))
        .route("/feed.xml", get(seo::feed))
        .route("/site.webmanifest", get(seo::manifest))
        .route("/api/route-data", get(pages::route_data))
        .route("/api/save-to-notion", post(api::intro::save))
        .route("/api/get-stripe-prices", get(api::stripe::prices).post(api::stripe::prices))
        .route("/api/create-checkout-session", post(api::stripe::create_checkout))
        .route("/api/verify-checkout-session", post(api::stripe::verify))
        // Its own body limit (MAX_WEBHOOK_BODY), read in the handler.
        .route("/api/stripe-webhook", post(api::stripe::webhook))
        .route("/assets/{*path}", get(assets::asset))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(health::metrics))
        .fallback(pages::page)
        .layer(DefaultBodyLimit::max(api::body::MAX_BODY))
        .layer(CompressionLayer::new())
        .layer(axum::middleware::from_fn_with_state(state.clone(), observe::observe))
        .with_state(state)
}
