//! The Stripe server functions (spec section 7) and the webhook, translated
//! to and from HTTP; what they do is `crate::payments`'.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::json;

use super::body::{self, Kind, Submission};
use super::{rate_limit, ApiError, PlainError};
use crate::client_ip::ClientIp;
use crate::contract::{CheckoutCreated, CheckoutRequest};
use crate::messages::messages;
use crate::payments::sessions::Miss;
use crate::payments::{checkouts, PaymentsError, Returns};
use crate::state::SharedState;

/// `get-stripe-prices`: `{ prices }`.
pub async fn prices(State(state): State<SharedState>) -> Result<Json<serde_json::Value>, ApiError> {
    let prices = state.payments.prices().await.map_err(|e| {
        tracing::error!(error = %e, "Error fetching prices");
        ApiError::new(StatusCode::BAD_GATEWAY, &messages().prices_failed)
    })?;
    Ok(Json(json!({ "prices": *prices })))
}

/// `create-checkout-session`: JSON `{ priceId }` -> `{ url }`; the plain form
/// post (no JavaScript) is answered with a 303 to Checkout.
pub async fn create_checkout(
    State(state): State<SharedState>,
    Extension(client): Extension<ClientIp>,
    submission: Result<Submission, ApiError>,
) -> Result<Response, ApiError> {
    let submission = submission?;
    let form_post = submission.kind == Kind::Form;
    let price_id = match submission.kind {
        Kind::Form => body::form_pairs(&submission.bytes)?
            .into_iter()
            .find(|(k, _)| k == "priceId")
            .map(|(_, v)| v),
        Kind::Json => Some(body::json::<CheckoutRequest>(&submission.bytes)?.price_id),
    };
    let price_id = price_id
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| ApiError::new(StatusCode::BAD_REQUEST, "priceId: required"))?;
    rate_limit(&state, client)?;
    let site = state.site();
    let links = &site.content.links;
    let returns = Returns {
        success: format!(
            "{}{}{{CHECKOUT_SESSION_ID}}",
            state.config.site_url, links.checkout_success
        ),
        cancel: format!("{}{}", state.config.site_url, links.checkout_cancel),
    };
    match state.payments.checkout(&price_id, &returns).await {
        Ok(url) if form_post => Ok(Redirect::to(&url).into_response()),
        Ok(url) => Ok(Json(CheckoutCreated { url }).into_response()),
        Err(e) => {
            // Spec section 8: only logged, no message for the visitor.
            tracing::error!(price_id = %price_id, error = %e, "Error creating checkout session");
            if form_post {
                return Ok(Redirect::to(&links.pricing).into_response());
            }
            let status = match e {
                PaymentsError::UnknownPrice(_) => StatusCode::BAD_REQUEST,
                PaymentsError::Off => StatusCode::SERVICE_UNAVAILABLE,
                _ => StatusCode::BAD_GATEWAY,
            };
            Err(ApiError::new(status, &messages().checkout_unavailable))
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VerifyBody {
    #[serde(default)]
    session_id: String,
}

/// `verify-checkout-session`: `{ sessionId }` -> `{ session, state }`
/// (state: paid, processing or failed); a session Stripe does not have is
/// 404, one over the client's lookup limit 429.
pub async fn verify(
    State(state): State<SharedState>,
    Extension(client): Extension<ClientIp>,
    submission: Result<Submission, ApiError>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let Submission {
        kind: Kind::Json,
        bytes,
    } = submission?
    else {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Send the request as application/json",
        ));
    };
    let VerifyBody { session_id } = body::json::<VerifyBody>(&bytes)?;
    if session_id.trim().is_empty() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            &messages().no_session_id,
        ));
    }
    rate_limit(&state, client)?;
    let verdict = state
        .payments
        .verdict(&state.db, &session_id, client.0)
        .await;
    if verdict.retry_after().is_some() {
        state.metrics.rate_limited.inc();
    }
    match (&verdict.session, verdict.miss) {
        (Some(session), None) => Ok(Json(
            json!({ "session": session, "state": verdict.state_name() }),
        )),
        (_, miss) => Err(ApiError {
            retry_after: verdict.retry_after(),
            ..ApiError::new(miss_status(miss), messages().verify_failed.clone())
        }),
    }
}

/// The verify endpoint's status for a lookup without a session to show.
fn miss_status(miss: Option<Miss>) -> StatusCode {
    match miss {
        None => StatusCode::OK,
        Some(Miss::Unknown) => StatusCode::NOT_FOUND,
        Some(Miss::RateLimited(_)) => StatusCode::TOO_MANY_REQUESTS,
        Some(Miss::Off) => StatusCode::SERVICE_UNAVAILABLE,
        Some(Miss::Upstream) => StatusCode::BAD_GATEWAY,
    }
}

/// `POST /api/stripe-webhook`: signed events, each recorded once by its id
/// (replays change nothing). A checkout that completes, and a delayed
/// payment that later succeeds or fails, set the checkout's stored status.
pub async fn webhook(
    State(state): State<SharedState>,
    req: Request,
) -> Result<Json<serde_json::Value>, PlainError> {
    const OFF: &str = "webhooks are off: STRIPE_WEBHOOK_SECRET is unset";
    if !state.payments.webhooks_on() {
        return Err(PlainError::new(StatusCode::SERVICE_UNAVAILABLE, OFF));
    }
    if body::kind_of(req.headers()) != Some(Kind::Json) {
        return Err(PlainError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Stripe sends events as application/json",
        ));
    }
    let signature = req
        .headers()
        .get("stripe-signature")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body = body::read_limited(req, body::MAX_WEBHOOK_BODY)
        .await
        .map_err(|e| PlainError::new(e.status, e.message))?;
    let payload = std::str::from_utf8(&body)
        .map_err(|_| PlainError::new(StatusCode::BAD_REQUEST, "payload is not UTF-8"))?;
    let event = match state.payments.verify_webhook(payload, &signature) {
        None => return Err(PlainError::new(StatusCode::SERVICE_UNAVAILABLE, OFF)),
        Some(Err(e)) => {
            tracing::warn!(error = %e, "rejected a Stripe webhook");
            return Err(PlainError::new(
                StatusCode::BAD_REQUEST,
                "invalid or stale signature",
            ));
        }
        Some(Ok(event)) => event,
    };
    let new = checkouts::record_event(&state.db, &event, payload)
        .await
        .map_err(|e| {
            // 5xx: Stripe retries the delivery later.
            tracing::error!(event = %event.id, error = %e, "could not record a Stripe event");
            PlainError::new(StatusCode::SERVICE_UNAVAILABLE, "try again later")
        })?;
    if let (true, Some(id)) = (new, &event.checkout_session_id) {
        // The success page asks Stripe again rather than show a stale state.
        state.payments.forget_session(id).await;
    }
    Ok(Json(json!({ "received": true, "duplicate": !new })))
}
