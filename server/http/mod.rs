//! The HTTP layer: requests translated into calls of the layers below
//! (pages, the domains) and their results into responses; nothing here
//! decides what a page shows or what a payment is. Every request is
//! dispatched once, by its path's first segment ([`dispatch`]): pages to
//! the page pipeline ([`page_handler`]), the rest to the [`router`], by
//! concern: the API, embedded assets, SEO files, health and metrics. One
//! middleware ([`observe`]) wraps both.

pub mod api;
pub mod asset_files;
pub mod dispatch;
pub mod health;
pub mod observe;
pub mod page_handler;
pub mod respond;
pub mod seo_files;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post, MethodRouter};
use axum::Router;

use crate::content::routes::is_the_servers;
use crate::state::SharedState;

/// The router of every path that is not a page; `extra` holds routes of the
/// running mode (`dev`'s reload script and its events), registered with
/// [`ReservedRoutes::reserved_route`] too.
pub fn router(state: SharedState, extra: Router<SharedState>) -> Router {
    let router = Router::new()
        .merge(extra)
        .reserved_route("/sitemap.xml", get(seo_files::sitemap))
        .reserved_route("/robots.txt", get(seo_files::robots))
        .reserved_route("/feed.xml", get(seo_files::feed))
        .reserved_route("/site.webmanifest", get(seo_files::manifest))
        .reserved_route("/api/route-data", get(page_handler::route_data))
        .reserved_route("/api/save-to-notion", post(api::intro::save))
        .reserved_route(
            "/api/get-stripe-prices",
            get(api::stripe::prices).post(api::stripe::prices),
        )
        .reserved_route(
            "/api/create-checkout-session",
            post(api::stripe::create_checkout),
        )
        .reserved_route("/api/verify-checkout-session", post(api::stripe::verify))
        // Its own body limit (MAX_WEBHOOK_BODY), read in the handler.
        .reserved_route("/api/stripe-webhook", post(api::stripe::webhook))
        .reserved_route("/assets/{*path}", get(asset_files::asset))
        .reserved_route("/healthz", get(health::healthz))
        .reserved_route("/readyz", get(health::readyz))
        .reserved_route("/metrics", get(health::metrics))
        .fallback(page_handler::not_found)
        .layer(DefaultBodyLimit::max(api::body::MAX_BODY));
    observe::with_middleware(router, state)
}

/// How every route of the router is registered. The dispatcher sends it
/// only paths whose first segment the route table refuses
/// ([`is_the_servers`]), so a route that starts with another segment could
/// never be reached: registering one stops the start (and every test
/// that starts the server).
pub trait ReservedRoutes {
    fn reserved_route(self, path: &str, handler: MethodRouter<SharedState>) -> Self;
}

impl ReservedRoutes for Router<SharedState> {
    fn reserved_route(self, path: &str, handler: MethodRouter<SharedState>) -> Self {
        assert!(
            is_the_servers(path),
            "the route {path} does not start with a segment of SERVER_SEGMENTS \
             (server/content/routes.rs)"
        );
        self.route(path, handler)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "the route /events does not start with a segment of SERVER_SEGMENTS")]
    fn a_route_the_route_table_could_shadow_is_refused() {
        let _ = Router::<SharedState>::new().reserved_route("/events", get(|| async {}));
    }

    #[test]
    fn routes_under_the_server_segments_are_registered() {
        let _ = Router::<SharedState>::new()
            .reserved_route("/api/x", get(|| async {}))
            .reserved_route("/__dev/y", get(|| async {}));
    }
}
