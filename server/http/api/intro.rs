//! `POST /api/save-to-notion`: store an intro request (then the forwarder
//! sends it to Notion). JSON from the page's script, or a plain form post.
//!
//! Order of checks: the body (415, 413, 400 naming the field), the client's
//! rate limit (429), the honeypot, the spec's rules (422), then the store
//! (503 with the spec's message if the database is away). A plain form post
//! gets the contact page back with the message and everything typed.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Json};

use super::body::{self, Kind, Submission};
use super::{rate_limit, ApiError};
use crate::client_ip::ClientIp;
use crate::contract::IntroStored;
use crate::intake::store::{self, Disposition, Stored};
use crate::intake::{IntroForm, IntroRequest};
use crate::metrics::Metrics;
use crate::state::SharedState;

/// JSON in, JSON out for the page's script. A plain form post is
/// redirected to the contact page's confirmation, or gets the contact page
/// back with the message and what was typed.
pub async fn save(
    State(state): State<SharedState>,
    Extension(client): Extension<ClientIp>,
    submission: Result<Submission, ApiError>,
) -> Result<Response, ApiError> {
    let count = |outcome| Metrics::outcome(&state.metrics.intro_submissions, outcome);
    let submission = submission.inspect_err(|_| count("invalid"))?;
    let kind = submission.kind;
    let form = match kind {
        Kind::Json => body::json::<IntroForm>(&submission.bytes),
        Kind::Form => body::form_pairs(&submission.bytes).and_then(form_from_pairs),
    };
    let (form, result) = match form {
        Ok(form) => {
            let result = match rate_limit(&state, client) {
                Ok(()) => submit(&state, form.clone()).await,
                Err(e) => Err(e),
            };
            (form, result)
        }
        Err(e) => {
            count("invalid");
            (IntroForm::default(), Err(e))
        }
    };
    match kind {
        Kind::Json => result.map(|()| Json(IntroStored { success: true }).into_response()),
        // Post/redirect/get: a reload does not send it twice.
        Kind::Form => Ok(match result {
            Ok(()) => Redirect::to(&state.site().content.links.contact_sent).into_response(),
            Err(e) => contact_with_error(&state, e, form).await,
        }),
    }
}

async fn submit(state: &SharedState, form: IntroForm) -> Result<(), ApiError> {
    let count = |outcome| Metrics::outcome(&state.metrics.intro_submissions, outcome);
    let bot = form.is_bot();
    let request = IntroRequest::parse(form, &state.site().content.intro_tags).map_err(|e| {
        count("invalid");
        ApiError::invalid(e)
    })?;
    // A bot is told it worked (so it learns nothing) and its request is
    // kept aside, never forwarded: a person whose browser filled the hidden
    // field by mistake has lost nothing.
    let disposition = if bot {
        Disposition::Spam
    } else {
        Disposition::Pending
    };
    let (id, stored) = store::insert_as(&state.db, &request, disposition)
        .await
        .map_err(|e| {
            count("failed");
            tracing::error!(error = %e, "could not store an intro request");
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                &crate::messages::messages().submit_failed,
            )
        })?;
    match (stored, bot) {
        (_, true) => {
            count("spam");
            tracing::info!(%id, "intro request caught by the honeypot; kept as spam");
        }
        (Stored::Duplicate, false) => {
            count("duplicate");
            tracing::info!(%id, "intro request sent again; it was stored before");
        }
        (Stored::New, false) => {
            count("stored");
            tracing::info!(%id, "intro request stored");
            if let Some(f) = &state.forwarder {
                f.wake();
            }
        }
    }
    Ok(())
}

/// The form's fields, read by IntroForm's own serde names (the one list of
/// them): `tags` repeats once per checked box; every other field may appear
/// once. Unknown fields are ignored, as in the JSON body.
fn form_from_pairs(pairs: Vec<(String, String)>) -> Result<IntroForm, ApiError> {
    let mut fields = serde_json::Map::new();
    let mut tags = Vec::new();
    for (k, v) in pairs {
        if k == "tags" {
            tags.push(serde_json::Value::String(v));
        } else if fields
            .insert(k.clone(), serde_json::Value::String(v))
            .is_some()
        {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("{k}: sent more than once"),
            ));
        }
    }
    fields.insert("tags".into(), serde_json::Value::Array(tags));
    serde_path_to_error::deserialize(serde_json::Value::Object(fields)).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("{}: {}", e.path(), e.inner()),
        )
    })
}

/// The contact page with the refusal's message and what the visitor typed.
async fn contact_with_error(state: &SharedState, e: ApiError, form: IntroForm) -> Response {
    let site = state.site();
    let path = &site.content.links.contact;
    let loaded = crate::pages::load::contact_refused(
        path,
        e.status.as_u16(),
        e.message,
        e.fields,
        form,
        e.retry_after,
    );
    let route = site.content.routes.find(path);
    crate::http::respond::uncached(state, &site, &route, loaded).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_fields_map_and_single_fields_may_not_repeat() {
        let pairs =
            body::form_pairs(b"name=A&email=a%40b.example&tags=Loyalty&tags=Events&fax=&other=x")
                .unwrap();
        let form = form_from_pairs(pairs).unwrap();
        assert_eq!(
            (form.name.as_str(), form.email.as_str()),
            ("A", "a@b.example")
        );
        assert_eq!(form.tags, vec!["Loyalty", "Events"]);
        assert!(!form.is_bot());
        let err = form_from_pairs(body::form_pairs(b"name=A&name=B").unwrap()).unwrap_err();
        assert_eq!(
            (err.status, err.message.as_str()),
            (StatusCode::BAD_REQUEST, "name: sent more than once")
        );
        assert!(
            form_from_pairs(body::form_pairs(b"name=A&fax=555").unwrap())
                .unwrap()
                .is_bot()
        );
        // Every field by the name the page's inputs carry (IntroForm's).
        let all = form_from_pairs(
            body::form_pairs(
                b"contactPerson=Ana&website=https%3A%2F%2Fa.example&description=D&submissionId=s1",
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            (
                all.contact_person.as_str(),
                all.website.as_str(),
                all.description.as_str(),
                all.submission_id.as_str()
            ),
            ("Ana", "https://a.example", "D", "s1")
        );
    }
}
