//! Reading what a visitor's browser (or anyone else) posts: the body within
//! its size limit, in one of the two content types the endpoints take, and
//! parsed so that every refusal names the field at fault.

use std::time::Duration;

use axum::body::{BodyDataStream, Bytes};
use axum::extract::{FromRequest, Request};
use axum::http::{header, HeaderMap, StatusCode};
use bytes::BytesMut;
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use super::ApiError;

/// Largest body the form and checkout endpoints read. The longest valid intro
/// request (5,000 characters of description, percent-encoded) fits well.
pub const MAX_BODY: usize = 64 * 1024;
/// Largest Stripe webhook delivery read.
pub const MAX_WEBHOOK_BODY: usize = 512 * 1024;
/// After a body over the limit, up to this much more of it is read and
/// thrown away before the 413 is sent, as nginx's lingering close does: a
/// client that sends its whole body before reading the answer (Python's
/// http.client, curl without `Expect`) would otherwise have its upload cut
/// by a connection reset and never see the 413. Beyond this, or after
/// [`DRAIN_TIME`], the connection is closed.
pub const DRAIN_MAX: usize = 16 * 1024 * 1024;
pub const DRAIN_TIME: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Json,
    Form,
}

/// A POST body: JSON or `application/x-www-form-urlencoded`, at most
/// [`MAX_BODY`]. Anything else is refused before the handler runs: 415 for
/// another content type, 413 for a body too large.
pub struct Submission {
    pub kind: Kind,
    pub bytes: Bytes,
}

pub fn kind_of(headers: &HeaderMap) -> Option<Kind> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let mime = value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match mime.as_str() {
        "application/json" => Some(Kind::Json),
        "application/x-www-form-urlencoded" => Some(Kind::Form),
        _ => None,
    }
}

impl<S: Send + Sync> FromRequest<S> for Submission {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Submission, ApiError> {
        let Some(kind) = kind_of(req.headers()) else {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Send the request as application/json or application/x-www-form-urlencoded",
            ));
        };
        let bytes = read_limited(req, MAX_BODY).await?;
        Ok(Submission { kind, bytes })
    }
}

/// The body, if it is at most `limit` bytes; 413 otherwise, once the rest
/// has been drained (see [`DRAIN_MAX`]). A client that announced a body too
/// large and waits for `100 Continue` is answered at once: it has sent
/// nothing yet, and reading would invite the upload.
pub async fn read_limited(req: Request, limit: usize) -> Result<Bytes, ApiError> {
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "The request body is too large",
        )
    };
    let headers = req.headers();
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let waits_for_continue = headers
        .get(header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    let body = req.into_body();
    if let Some(n) = declared.filter(|n| *n > limit as u64) {
        if !waits_for_continue && n <= DRAIN_MAX as u64 {
            drain(body.into_data_stream(), DRAIN_MAX).await;
        }
        return Err(too_large());
    }
    let mut stream = body.into_data_stream();
    let mut buf = BytesMut::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "The request body could not be read",
            )
        })?;
        if buf.len() + chunk.len() > limit {
            drain(stream, DRAIN_MAX).await;
            return Err(too_large());
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf.freeze())
}

/// Reads and drops at most `max` bytes, for at most [`DRAIN_TIME`].
async fn drain(mut stream: BodyDataStream, max: usize) {
    let mut read = 0;
    let _ = tokio::time::timeout(DRAIN_TIME, async {
        while read <= max {
            match stream.next().await {
                Some(Ok(chunk)) => read += chunk.len(),
                _ => return,
            }
        }
    })
    .await;
}

/// JSON into `T`. A value of the wrong type names its field
/// (`tags[0]: invalid type: ...`); broken JSON says where it broke.
pub fn json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        // Broken JSON has no field to name; a wrong value does.
        let message =
            if inner.is_syntax() || inner.is_eof() || path.is_empty() || path == "." || path == "?"
            {
                format!("Invalid JSON: {inner}")
            } else {
                format!("{path}: {inner}")
            };
        ApiError::new(StatusCode::BAD_REQUEST, message)
    })?;
    de.end()
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, format!("Invalid JSON: {e}")))?;
    Ok(value)
}

/// `application/x-www-form-urlencoded` pairs, decoded strictly: a value that
/// is not UTF-8 once decoded is refused by its field's name instead of being
/// mangled into replacement characters.
pub fn form_pairs(bytes: &[u8]) -> Result<Vec<(String, String)>, ApiError> {
    let mut out = Vec::new();
    for pair in bytes.split(|b| *b == b'&').filter(|p| !p.is_empty()) {
        let (k, v) = match pair.iter().position(|b| *b == b'=') {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => (pair, &pair[..0]),
        };
        let bad =
            |what: &str| ApiError::new(StatusCode::BAD_REQUEST, format!("{what}: not valid UTF-8"));
        let key = decode(k).ok_or_else(|| bad("a field name"))?;
        let value = decode(v).ok_or_else(|| bad(&key))?;
        out.push((key, value));
    }
    Ok(out)
}

fn decode(raw: &[u8]) -> Option<String> {
    let plus_as_space: Vec<u8> = raw
        .iter()
        .map(|b| if *b == b'+' { b' ' } else { *b })
        .collect();
    let bytes: Vec<u8> = percent_encoding::percent_decode(&plus_as_space).collect();
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Sample {
        name: String,
        #[serde(default)]
        tags: Vec<String>,
    }

    #[test]
    fn json_errors_name_the_field() {
        assert_eq!(
            json::<Sample>(br#"{"name": 5}"#).unwrap_err().message,
            "name: invalid type: integer `5`, expected a string at line 1 column 10"
        );
        assert!(json::<Sample>(br#"{"name": "a", "tags": ["x", 1]}"#)
            .unwrap_err()
            .message
            .starts_with("tags[1]: invalid type"));
        assert!(json::<Sample>(br#"{"tags": []}"#)
            .unwrap_err()
            .message
            .contains("missing field `name`"));
        assert!(json::<Sample>(b"{not json")
            .unwrap_err()
            .message
            .starts_with("Invalid JSON: "));
        assert!(json::<Sample>(br#"{"name": "a"} trailing"#)
            .unwrap_err()
            .message
            .starts_with("Invalid JSON: trailing characters"));
        assert_eq!(json::<Sample>(br#"{"name": "a"}"#).unwrap().name, "a");
    }

    #[test]
    fn form_pairs_decode_and_refuse_broken_utf8_by_field() {
        let pairs = form_pairs(b"name=Caf%C3%A9+Bar&tags=A&tags=B&empty&&x=%3Cb%3E").unwrap();
        assert_eq!(pairs[0], ("name".into(), "Café Bar".into()));
        assert_eq!(pairs.iter().filter(|(k, _)| k == "tags").count(), 2);
        assert!(
            pairs.contains(&("empty".into(), "".into()))
                && pairs.contains(&("x".into(), "<b>".into()))
        );
        assert_eq!(
            form_pairs(b"name=ok&email=%FF%FE").unwrap_err().message,
            "email: not valid UTF-8"
        );
        // A lone % is kept as is (as browsers do), not an error.
        assert_eq!(form_pairs(b"name=100%").unwrap()[0].1, "100%");
    }
}
