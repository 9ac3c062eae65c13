//! The Stripe server functions (spec section 7) and the webhook.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::json;
use sqlx::Row;

use super::body::{self, Kind, Submission};
use super::{rate_limit, ApiError};
use crate::client_ip::ClientIp;
use crate::intro::store::now_ms;
use crate::payments::PaymentsError;
use crate::state::SharedState;

pub const PRICES_FAILED: &str = "Failed to load pricing information";
pub const VERIFY_FAILED: &str = "Failed to verify payment session";
pub const NO_SESSION_ID: &str = "No session ID provided";

/// `get-stripe-prices`: `{ prices }`.
pub async fn prices(State(state): State<SharedState>) -> Response {
    match state.payments.prices().await {
        Ok(prices) => Json(json!({ "prices": *prices })).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "Error fetching prices");
            ApiError::new(StatusCode::BAD_GATEWAY, PRICES_FAILED).into_response()
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CheckoutBody {
    price_id: String,
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
            Ok(pairs) => pairs.into_iter().find(|(k, _)| k == "priceId").map(|(_, v)| v),
            Err(e) => return e.into_response(),
        },
        Kind::Json => match body::json::<CheckoutBody>(&submission.bytes) {
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
        Ok(url) => Json(json!({ "url": url })).into_response(),
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
            ApiError::new(status, "Checkout is not available right now").into_response()
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VerifyBody {
    #[serde(default)]
    session_id: String,
}

/// `verify-checkout-session`: `{ sessionId }` -> `{ session }`.
pub async fn verify(
    State(state): State<SharedState>,
    Extension(client): Extension<ClientIp>,
    submission: Result<Submission, ApiError>,
) -> Response {
    let body = match submission {
        Ok(Submission { kind: Kind::Json, bytes }) => bytes,
        Ok(_) => return ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Send the request as application/json").into_response(),
        Err(e) => return e.into_response(),
    };
    let VerifyBody { session_id } = match body::json::<VerifyBody>(&body) {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    if session_id.trim().is_empty() {
        return ApiError::new(StatusCode::BAD_REQUEST, NO_SESSION_ID).into_response();
    }
    if let Err(e) = rate_limit(&state, client) {
        return e.into_response();
    }
    match state.payments.verify(&session_id).await {
        Ok(session) => Json(json!({ "session": session })).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "Error verifying payment session");
            ApiError::new(StatusCode::BAD_GATEWAY, VERIFY_FAILED).into_response()
        }
    }
}

/// `POST /api/stripe-webhook`: signed events; a completed checkout is
/// recorded once per event id (replays change nothing).
pub async fn webhook(State(state): State<SharedState>, headers: HeaderMap, body: Bytes) -> Response {
    if !state.payments.webhooks_on() {
        return (StatusCode::SERVICE_UNAVAILABLE, "webhooks are off: STRIPE_WEBHOOK_SECRET is unset").into_response();
    }
    if body::kind_of(&headers) != Some(Kind::Json) {
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, "Stripe sends events as application/json").into_response();
    }
    let Ok(payload) = std::str::from_utf8(&body) else {
        return (StatusCode::BAD_REQUEST, "payload is not UTF-8").into_response();
    };
    let signature = headers.get("stripe-signature").and_then(|v| v.to_str().ok()).unwrap_or("");
    let event = match state.payments.verify_webhook(payload, signature) {
        None => return (StatusCode::SERVICE_UNAVAILABLE, "webhooks are off: STRIPE_WEBHOOK_SECRET is unset").into_response(),
        Some(Err(e)) => {
            tracing::warn!(error = %e, "rejected a Stripe webhook");
            return (StatusCode::BAD_REQUEST, "invalid or stale signature").into_response();
        }
        Some(Ok(event)) => event,
    };
    match state.db.timed(record_event(&state, &event, payload)).await {
        Ok(new) => Json(json!({ "received": true, "duplicate": !new })).into_response(),
        Err(e) => {
            // 5xx: Stripe retries the delivery later.
            tracing::error!(event = %event.id, error = %e, "could not record a Stripe event");
            (StatusCode::SERVICE_UNAVAILABLE, "try again later").into_response()
        }
    }
}

/// Records the event; true when it was new.
async fn record_event(state: &SharedState, event: &crate::integrations::stripe::WebhookEvent, payload: &str) -> Result<bool, sqlx::Error> {
    let mut tx = state.db.pool.begin().await?;
    let inserted = sqlx::query(
        "INSERT INTO stripe_events (event_id, event_type, received_at) VALUES ($1, $2, $3) ON CONFLICT (event_id) DO NOTHING",
    )
    .bind(&event.id)
    .bind(&event.event_type)
    .bind(now_ms())
    .execute(&mut *tx)
    .await?
    .rows_affected()
        == 1;
    if inserted && event.event_type == "checkout.session.completed" {
        if let Some(session_id) = &event.checkout_session_id {
            let obj: serde_json::Value = serde_json::from_str(payload).unwrap_or_default();
            let s = &obj["data"]["object"];
            sqlx::query(
                "INSERT INTO completed_checkouts (session_id, event_id, customer_email, amount_total, currency, payment_status, completed_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (session_id) DO NOTHING",
            )
            .bind(session_id)
            .bind(&event.id)
            .bind(s["customer_details"]["email"].as_str().or(s["customer_email"].as_str()).map(str::to_owned))
            .bind(s["amount_total"].as_i64())
            .bind(s["currency"].as_str().map(str::to_owned))
            .bind(s["payment_status"].as_str().map(str::to_owned))
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
            tracing::info!(session = %session_id, "checkout completed");
        }
    }
    tx.commit().await?;
    Ok(inserted)
}

/// How many completed checkouts are recorded (operators, tests).
pub async fn completed_checkouts(state: &SharedState) -> Result<i64, sqlx::Error> {
    sqlx::query("SELECT COUNT(*) AS n FROM completed_checkouts").fetch_one(&state.db.pool).await?.try_get("n")
}
