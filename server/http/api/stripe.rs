//! The Stripe server functions (spec section 7) and the webhook, translated
//! to and from HTTP; what they do is `crate::payments`'.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::json;

use super::body::{self, Kind, Submission};
use super::{rate_limit, ApiError};
use crate::client_ip::ClientIp;
use crate::contract::{CheckoutCreated, CheckoutRequest};
use crate::messages::messages;
use crate::payments::sessions::Miss;
use crate::payments::{checkouts, PaymentsError};
use crate::state::SharedState;

/// `get-stripe-prices`: `{ prices }`.
pub async fn prices(State(state): State<SharedState>) -> Response {
    match state.payments.prices().await {
        Ok(prices) => Json(json!({ "prices": *prices })).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "Error fetching prices");
            ApiError::new(StatusCode::BAD_GATEWAY, &messages().prices_failed).into_response()
        }
    }
}

/// `create-checkout-session`: JSON `{ priceId }` -> `{ url }`; the plain form
/// post (no JavaScript) is answered with a 303 to Checkout.
pub async fn create_checkout(
    State(state): State<SharedState>,
    Extension(client): Extension<ClientIp>,
    submission: Result<Submission, ApiError>,
) -> Response {
    let submission = match submission {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    let form_post = submission.kind == Kind::Form;
    let price_id = match submission.kind {
        Kind::Form => match body::form_pairs(&submission.bytes) {
            Ok(pairs) => pairs
                .into_iter()
                .find(|(k, _)| k == "priceId")
                .map(|(_, v)| v),
            Err(e) => return e.into_response(),
        },
        Kind::Json => match body::json::<CheckoutRequest>(&submission.bytes) {
            Ok(b) => Some(b.price_id),
            Err(e) => return e.into_response(),
        },
    };
    let Some(price_id) = price_id.filter(|p| !p.trim().is_empty()) else {
        return ApiError::new(StatusCode::BAD_REQUEST, "priceId: required").into_response();
    };
    if let Err(e) = rate_limit(&state, client) {
        return e.into_response();
    }
    match state.payments.checkout(&price_id).await {
        Ok(url) if form_post => Redirect::to(&url).into_response(),
        Ok(url) => Json(CheckoutCreated { url }).into_response(),
        Err(e) => {
            // Spec section 8: only logged, no message for the visitor.
            tracing::error!(price_id = %price_id, error = %e, "Error creating checkout session");
            if form_post {
                return Redirect::to("/pricing").into_response();
            }
            let status = match e {
                PaymentsError::UnknownPrice(_) => StatusCode::BAD_REQUEST,
                PaymentsError::Off => StatusCode::SERVICE_UNAVAILABLE,
                _ => StatusCode::BAD_GATEWAY,
            };
            ApiError::new(status, &messages().checkout_unavailable).into_response()
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
) -> Response {
    let body = match submission {
        Ok(Submission {
            kind: Kind::Json,
            bytes,
        }) => bytes,
        Ok(_) => {
            return ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Send the request as application/json",
            )
            .into_response()
        }
        Err(e) => return e.into_response(),
    };
    let VerifyBody { session_id } = match body::json::<VerifyBody>(&body) {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    if session_id.trim().is_empty() {
        return ApiError::new(StatusCode::BAD_REQUEST, &messages().no_session_id).into_response();
    }
    if let Err(e) = rate_limit(&state, client) {
        return e.into_response();
    }
    let verdict = state
        .payments
        .verdict(&state.db, &session_id, client.0)
        .await;
    if verdict.retry_after().is_some() {
        state.metrics.rate_limited.inc();
    }
    match (&verdict.session, verdict.miss) {
        (Some(session), None) => {
            Json(json!({ "session": session, "state": verdict.state_name() })).into_response()
        }
        (_, miss) => ApiError {
            status: miss_status(miss),
            message: messages().verify_failed.clone(),
            retry_after: verdict.retry_after(),
        }
        .into_response(),
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
pub async fn webhook(State(state): State<SharedState>, req: Request) -> Response {
    if !state.payments.webhooks_on() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "webhooks are off: STRIPE_WEBHOOK_SECRET is unset",
        )
            .into_response();
    }
    if body::kind_of(req.headers()) != Some(Kind::Json) {
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Stripe sends events as application/json",
        )
            .into_response();
    }
    let signature = req
        .headers()
        .get("stripe-signature")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body = match body::read_limited(req, body::MAX_WEBHOOK_BODY).await {
        Ok(b) => b,
        Err(e) => return (e.status, e.message).into_response(),
    };
    let Ok(payload) = std::str::from_utf8(&body) else {
        return (StatusCode::BAD_REQUEST, "payload is not UTF-8").into_response();
    };
    let event = match state.payments.verify_webhook(payload, &signature) {
        None => {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                "webhooks are off: STRIPE_WEBHOOK_SECRET is unset",
            )
                .into_response()
        }
        Some(Err(e)) => {
            tracing::warn!(error = %e, "rejected a Stripe webhook");
            return (StatusCode::BAD_REQUEST, "invalid or stale signature").into_response();
        }
        Some(Ok(event)) => event,
    };
    match checkouts::record_event(&state.db, &event, payload).await {
        Ok(new) => {
            if let (true, Some(id)) = (new, &event.checkout_session_id) {
                // The success page asks Stripe again rather than show a stale state.
                state.payments.forget_session(id).await;
            }
            Json(json!({ "received": true, "duplicate": !new })).into_response()
        }
        Err(e) => {
            // 5xx: Stripe retries the delivery later.
            tracing::error!(event = %event.id, error = %e, "could not record a Stripe event");
            (StatusCode::SERVICE_UNAVAILABLE, "try again later").into_response()
        }
    }
}
