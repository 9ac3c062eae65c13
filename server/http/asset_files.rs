//! `/assets/*`: the content-hashed files of the front end. Embedded ones
//! are served with their build-time brotli or gzip body when the client
//! accepts it; a dev build's are read from its folder. The rules a page
//! may leave out of its inline CSS (crate::assets::RulesFile) are made
//! when the build's manifest is read, and served from memory.

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::assets::{preferred_encoding, AssetFiles, Encoding};
use crate::state::SharedState;

pub async fn asset(State(state): State<SharedState>, req: Request) -> Response {
    // Not kept: a file missing here may be on another server of the
    // fleet, or in the next build.
    let not_found = || {
        (
            StatusCode::NOT_FOUND,
            [(header::CACHE_CONTROL, "no-store")],
            "Not found",
        )
            .into_response()
    };
    let site = state.site();
    let rules = &site.front.manifest.rules;
    if let Some(body) = rules
        .body
        .as_ref()
        .filter(|_| req.uri().path() == rules.url)
    {
        return body.ok_response(req.headers());
    }
    if let AssetFiles::Dir(files) = &state.site().front.files {
        let Some((path, content_type)) = files.get(req.uri().path()) else {
            return not_found();
        };
        return match tokio::fs::read(path).await {
            // Not cached: a dev build's files come and go with each change.
            Ok(body) => (
                [
                    (header::CONTENT_TYPE, content_type.as_str()),
                    (header::CACHE_CONTROL, "no-cache"),
                ],
                body,
            )
                .into_response(),
            Err(_) => not_found(),
        };
    }
    let Some(file) = crate::assets::file(req.uri().path()) else {
        return not_found();
    };
    let (body, encoding) = match preferred_encoding(req.headers()) {
        Encoding::Br if file.br.is_some() => (file.br.unwrap(), Some("br")),
        Encoding::Br | Encoding::Gzip if file.gzip.is_some() => (file.gzip.unwrap(), Some("gzip")),
        _ => (file.body, None),
    };
    let mut res = Response::new(axum::body::Body::from(body));
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(file.content_type.as_str()),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    if file.br.is_some() || file.gzip.is_some() {
        h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    if let Some(enc) = encoding {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(enc));
    }
    res
}
