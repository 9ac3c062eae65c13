//! `/sitemap.xml`, `/robots.txt`, `/feed.xml` and `/site.webmanifest`.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;

use crate::seo;
use crate::state::SharedState;

pub async fn sitemap(State(state): State<SharedState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/xml; charset=utf-8")],
        seo::sitemap(&state.config.site_url, &state.site().content),
    )
}

pub async fn robots(State(state): State<SharedState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        seo::robots(&state.config.site_url),
    )
}

pub async fn feed(State(state): State<SharedState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/rss+xml; charset=utf-8")],
        seo::feed(&state.config.site_url, &state.site().content),
    )
}

pub async fn manifest(State(state): State<SharedState>) -> impl IntoResponse {
    let site = state.site();
    let icon = |name: &str| {
        site.front
            .manifest
            .image_url(name)
            .unwrap_or_default()
            .to_owned()
    };
    let body = serde_json::json!({
        "name": seo::SITE_NAME,
        "short_name": seo::SITE_NAME,
        "start_url": "/",
        "display": "standalone",
        "background_color": "#ffffff",
        "theme_color": seo::THEME_COLOUR,
        "icons": [
            { "src": icon("favicon.svg"), "sizes": "any", "type": "image/svg+xml" },
            { "src": icon("icon-192.png"), "sizes": "192x192", "type": "image/png" },
            { "src": icon("icon-512.png"), "sizes": "512x512", "type": "image/png" },
        ],
    });
    (
        [(header::CONTENT_TYPE, "application/manifest+json")],
        body.to_string(),
    )
}
