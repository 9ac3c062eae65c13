//! `/assets/*`: the content-hashed files of the front end. Embedded ones
//! are served with their build-time brotli or gzip body when the client
//! accepts it; a dev build's are read from its folder. The rest of the
//! stylesheet for a page (crate::css) is made from the URL, once, and kept.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::assets::{preferred_encoding, AssetFiles, Encoding};
use crate::render::cache::Encoded;
use crate::site::Frontend;
use crate::state::SharedState;

/// The rest of the stylesheet at this request's path, if the path names
/// one of this build's: compressed on a blocking thread the first time
/// (brotli at quality 9, as pages are), then from [`Frontend::rests`].
async fn rest_of_stylesheet(
    front: Arc<Frontend>,
    path: &str,
    request: &HeaderMap,
) -> Option<Response> {
    if !path.contains(".rest-") {
        return None;
    }
    let made = Arc::clone(&front);
    let url = path.to_owned();
    let sheet = front
        .rests
        .0
        .optionally_get_with(path.to_owned(), async move {
            tokio::task::spawn_blocking(move || {
                let css = made.manifest.rest_at(&url)?;
                let mut headers = HeaderMap::new();
                headers.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                // A dev build's stylesheet changes with each edit, and its
                // URL with it; the other files of a dev build are not kept.
                let cache = match made.files {
                    AssetFiles::Dir(_) => "no-cache",
                    AssetFiles::Embedded => "public, max-age=31536000, immutable",
                };
                headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
                headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
                Some(Arc::new(Encoded::new(css.into_bytes(), &headers)))
            })
            .await
            .ok()
            .flatten()
        })
        .await?;
    Some(sheet.ok_response(request))
}

pub async fn asset(State(state): State<SharedState>, req: Request) -> Response {
    let not_found = || (StatusCode::NOT_FOUND, "Not found").into_response();
    let front = Arc::clone(&state.site().front);
    if let Some(res) = rest_of_stylesheet(front, req.uri().path(), req.headers()).await {
        return res;
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
