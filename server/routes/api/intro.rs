//! `POST /api/save-to-notion`: store an intro request (then the forwarder
//! sends it to Notion). JSON from the page's script, or a plain form post.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Json;
use serde_json::json;

use super::ApiError;
use crate::intro::{store, IntroForm, IntroRequest};
use crate::routes::loaders::{Loaded, RouteData};
use crate::routes::pages;
use crate::state::SharedState;

/// The spec's generic failure text (section 8).
pub const SUBMIT_FAILED: &str = "Failed to submit form. Please try again.";

pub async fn save(State(state): State<SharedState>, headers: HeaderMap, body: Bytes) -> Response {
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let mime = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match mime.as_str() {
        "application/json" => match serde_json::from_slice::<IntroForm>(&body) {
            Ok(form) => match submit(&state, form).await {
                Ok(()) => Json(json!({ "success": true })).into_response(),
                Err(e) => e.into_response(),
            },
            Err(e) => ApiError::new(StatusCode::BAD_REQUEST, format!("Invalid JSON: {e}")).into_response(),
        },
        "application/x-www-form-urlencoded" => {
            let form = parse_form(&body);
            match submit(&state, form.clone()).await {
                // Post/redirect/get: a reload does not send it twice.
                Ok(()) => Redirect::to("/contact?submitted=1").into_response(),
                // The same page again, with the message and everything typed.
                Err(e) => contact_with_error(&state, e, form).await,
            }
        }
        _ => ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Send the form as application/json or application/x-www-form-urlencoded",
        )
        .into_response(),
    }
}

async fn submit(state: &SharedState, form: IntroForm) -> Result<(), ApiError> {
    let request = IntroRequest::try_from(form).map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
    let id = store::insert(&state.db, &request).await.map_err(|e| {
        tracing::error!(error = %e, "could not store an intro request");
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, SUBMIT_FAILED)
    })?;
    tracing::info!(%id, "intro request stored");
    if let Some(f) = &state.forwarder {
        f.wake();
    }
    Ok(())
}

/// Form fields; `tags` repeats once per checked box.
fn parse_form(body: &[u8]) -> IntroForm {
    let mut form = IntroForm::default();
    for (k, v) in form_urlencoded::parse(body) {
        match k.as_ref() {
            "name" => form.name = v.into_owned(),
            "contactPerson" => form.contact_person = v.into_owned(),
            "email" => form.email = v.into_owned(),
            "website" => form.website = v.into_owned(),
            "description" => form.description = v.into_owned(),
            "tags" => form.tags.push(v.into_owned()),
            _ => {}
        }
    }
    form
}

async fn contact_with_error(state: &SharedState, e: ApiError, form: IntroForm) -> Response {
    let loaded = Loaded {
        render_url: "/contact".into(),
        route: RouteData {
            page: "Contact".into(),
            status: e.status.as_u16(),
            data: json!({ "error": e.message, "values": form, "submitted": false }),
        },
        // Holds what the visitor typed: never cached.
        cacheable: false,
    };
    pages::render(state, loaded).await
}
