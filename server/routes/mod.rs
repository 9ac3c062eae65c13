//! HTTP routes, by concern: pages (the SSR catch-all and the route-data
//! endpoint), the API, embedded assets, SEO files, health and metrics. One
//! middleware ([`observe`]) wraps them all. In front of the router, the
//! [`front`] door answers page views the page cache holds.

pub mod api;
pub mod assets;
pub mod front;
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

#[cfg(test)]
mod tests {
    use super::table::SERVER_SEGMENTS;

    /// The front door answers route-table paths from the page cache before
    /// the router sees them, so the table may not hold a path the router
    /// serves: every route registered here and in `dev` starts with a
    /// segment the table refuses.
    #[test]
    fn every_route_of_the_router_is_refused_to_the_route_table() {
        let mut paths: Vec<&str> = include_str!("mod.rs").split(".route(\"").skip(1).map(|rest| &rest[..rest.find('"').unwrap()]).collect();
        // `dev` names its routes' paths in constants.
        let dev: Vec<&str> = include_str!("../dev/mod.rs").split("_URL: &str = \"").skip(1).map(|rest| &rest[..rest.find('"').unwrap()]).collect();
        assert_eq!(dev.len(), 3, "{dev:?}");
        paths.extend(dev);
        assert!(paths.len() >= 17, "{paths:?}");
        for path in paths {
            let first = path.trim_start_matches('/').split('/').next().unwrap();
            assert!(SERVER_SEGMENTS.contains(&first), "{path} is not in table::SERVER_SEGMENTS");
        }
    }
}
