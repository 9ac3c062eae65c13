//! `/assets/*`: the content-hashed files of the front end. Embedded ones
//! are served with their build-time brotli or gzip body when the client
//! accepts it; a dev build's are read from its folder. The rules a page
//! may leave out of its inline CSS (crate::assets::RulesFile) are made
//! when the build's manifest is read, and served from memory.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

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
    if req.uri().path() == rules.url {
        return immutable(
            req.headers(),
            "application/json",
            rules.body.clone(),
            Some(rules.br.clone()),
            Some(rules.gzip.clone()),
        );
    }
    if let AssetFiles::Dir(files) = &site.front.files {
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
    immutable(
        req.headers(),
        file.content_type.as_str(),
        Bytes::from_static(file.body),
        file.br.map(Bytes::from_static),
        file.gzip.map(Bytes::from_static),
    )
}

/// A content-hashed file in the encoding the client prefers of those it
/// has: kept for a year by any cache.
fn immutable(
    request: &HeaderMap,
    content_type: &'static str,
    body: Bytes,
    br: Option<Bytes>,
    gzip: Option<Bytes>,
) -> Response {
    let compressed = br.is_some() || gzip.is_some();
    let (body, encoding) = match (preferred_encoding(request), br, gzip) {
        (Encoding::Br, Some(br), _) => (br, Some("br")),
        (Encoding::Br | Encoding::Gzip, _, Some(gzip)) => (gzip, Some("gzip")),
        _ => (body, None),
    };
    let mut res = Response::new(axum::body::Body::from(body));
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    if compressed {
        h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    if let Some(enc) = encoding {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(enc));
    }
    res
}
