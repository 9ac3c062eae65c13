//! The HTTP layer: requests translated into calls of the layers below
//! (pages, the domains) and their results into responses; nothing here
//! decides what a page shows or what a payment is. By concern: pages (the
//! SSR catch-all and the route-data endpoint), the API, embedded assets,
//! SEO files, health and metrics. One middleware ([`observe`]) wraps them
//! all. In front of the router, the [`front`] door answers page views the
//! page cache holds.

pub mod api;
pub mod assets;
pub mod front;
pub mod health;
pub mod observe;
pub mod pages;
pub mod respond;
pub mod seo;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post, MethodRouter};
use axum::Router;
use tower_http::compression::CompressionLayer;

use crate::content::routes::SERVER_SEGMENTS;
use crate::state::SharedState;

/// The router; `extra` holds routes of the running mode (`dev`'s reload
/// script and its events), registered with [`Served::served`] too.
pub fn router(state: SharedState, extra: Router<SharedState>) -> Router {
    Router::new()
        .merge(extra)
        .served("/sitemap.xml", get(seo::sitemap))
        .served("/robots.txt", get(seo::robots))
        .served("/feed.xml", get(seo::feed))
        .served("/site.webmanifest", get(seo::manifest))
        .served("/api/route-data", get(pages::route_data))
        .served("/api/save-to-notion", post(api::intro::save))
        .served(
            "/api/get-stripe-prices",
            get(api::stripe::prices).post(api::stripe::prices),
        )
        .served(
            "/api/create-checkout-session",
            post(api::stripe::create_checkout),
        )
        .served("/api/verify-checkout-session", post(api::stripe::verify))
        // Its own body limit (MAX_WEBHOOK_BODY), read in the handler.
        .served("/api/stripe-webhook", post(api::stripe::webhook))
        .served("/assets/{*path}", get(assets::asset))
        .served("/healthz", get(health::healthz))
        .served("/readyz", get(health::readyz))
        .served("/metrics", get(health::metrics))
        .fallback(pages::page)
        .layer(DefaultBodyLimit::max(api::body::MAX_BODY))
        .layer(CompressionLayer::new())
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            observe::observe,
        ))
        .with_state(state)
}

/// How every route of the server is registered. The front door answers
/// route-table paths from the page cache before the router sees them, so
/// a route of the router must start with a segment the route table refuses
/// ([`SERVER_SEGMENTS`]); one that does not stops the start (and every
/// test that starts the server).
pub trait Served {
    fn served(self, path: &str, handler: MethodRouter<SharedState>) -> Self;
}

impl Served for Router<SharedState> {
    fn served(self, path: &str, handler: MethodRouter<SharedState>) -> Self {
        let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
        assert!(SERVER_SEGMENTS.contains(&first), "the route {path} does not start with a segment of SERVER_SEGMENTS (server/content/routes.rs)");
        self.route(path, handler)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "the route /events does not start with a segment of SERVER_SEGMENTS")]
    fn a_route_the_route_table_could_shadow_is_refused() {
        let _ = Router::<SharedState>::new().served("/events", get(|| async {}));
    }

    #[test]
    fn routes_under_the_server_segments_are_registered() {
        let _ = Router::<SharedState>::new()
            .served("/api/x", get(|| async {}))
            .served("/__dev/y", get(|| async {}));
    }
}
