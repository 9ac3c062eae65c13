//! The Stripe server functions (spec section 7) and the webhook.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::json;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::Row;

use super::body::{self, Kind, Submission};
use super::{rate_limit, ApiError};
use crate::client_ip::ClientIp;
use crate::contract::{CheckoutCreated, CheckoutRequest};
use crate::integrations::stripe::{PaymentState, VerifiedSession, WebhookEvent};
use crate::intro::store::now_ms;
use crate::messages::messages;
use crate::payments::PaymentsError;
use crate::state::{AppState, SharedState};

/// What the success page and the verify endpoint say about a session.
#[derive(Debug)]
pub struct Verdict {
    pub state: PaymentState,
    /// The session, when Stripe has it.
    pub session: Option<Arc<VerifiedSession>>,
    /// Failed: the line under the heading.
    pub reason: Option<&'static str>,
    /// For the JSON endpoint: 200, 404 (no such session), 429, 502/503.
    pub status: StatusCode,
    pub retry_after: Option<Duration>,
}

impl Verdict {
    fn failed(status: StatusCode, reason: &'static str) -> Verdict {
        Verdict { state: PaymentState::Failed, session: None, reason: Some(reason), status, retry_after: None }
    }

    /// "paid" | "processing" | "failed", as the page's data says it.
    pub fn state_name(&self) -> &'static str {
        match self.state {
            PaymentState::Paid => "paid",
            PaymentState::Processing => "processing",
            PaymentState::Failed => "failed",
        }
    }
}

/// Looks up a Checkout Session for `client` (through the payments cache and
/// its per-client limit) and says where the payment stands. A session that
/// Stripe still calls unpaid but whose delayed payment a webhook reported
/// as failed is failed.
pub async fn check_session(state: &AppState, id: &str, client: IpAddr) -> Verdict {
    let session = match state.payments.session(id, client).await {
        Ok(Some(session)) => session,
        Ok(None) => {
            tracing::info!(session = %crate::telemetry::shorten(id), "no such checkout session");
            return Verdict::failed(StatusCode::NOT_FOUND, &messages().verify_failed);
        }
        Err(PaymentsError::RateLimited(wait)) => {
            state.metrics.rate_limited.inc();
            tracing::warn!(client = %client, retry_after = wait.as_secs(), "session lookup limit reached");
            return Verdict { retry_after: Some(wait), ..Verdict::failed(StatusCode::TOO_MANY_REQUESTS, &messages().verify_failed) };
        }
        Err(e) => {
            tracing::error!(error = %e, "Error verifying payment session");
            let status = if matches!(e, PaymentsError::Off) { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::BAD_GATEWAY };
            return Verdict::failed(status, &messages().verify_failed);
        }
    };
    let mut verdict = Verdict { state: session.state(), session: Some(session), reason: None, status: StatusCode::OK, retry_after: None };
    match verdict.state {
        PaymentState::Failed => verdict.reason = Some(&messages().verify_failed),
        PaymentState::Processing if recorded_status(state, id).await.as_deref() == Some("failed") => {
            verdict.state = PaymentState::Failed;
            verdict.reason = Some(&messages().payment_failed);
        }
        _ => {}
    }
    verdict
}

/// The status a webhook recorded for a session, if any (None too when the
/// database cannot say: the page then tells what Stripe says).
async fn recorded_status(state: &AppState, id: &str) -> Option<String> {
    match checkout_status(state, id).await {
        Ok(status) => status,
        Err(e) => {
            tracing::warn!(error = %e, "could not read a recorded checkout status");
            None
        }
    }
}

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
            Ok(pairs) => pairs.into_iter().find(|(k, _)| k == "priceId").map(|(_, v)| v),
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
pub async fn verify(State(state): State<SharedState>, Extension(client): Extension<ClientIp>, submission: Result<Submission, ApiError>) -> Response {
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
        return ApiError::new(StatusCode::BAD_REQUEST, &messages().no_session_id).into_response();
    }
    if let Err(e) = rate_limit(&state, client) {
        return e.into_response();
    }
    let verdict = check_session(&state, &session_id, client.0).await;
    match (&verdict.session, verdict.status) {
        (Some(session), StatusCode::OK) => Json(json!({ "session": session, "state": verdict.state_name() })).into_response(),
        _ => ApiError { status: verdict.status, message: messages().verify_failed.clone(), retry_after: verdict.retry_after }.into_response(),
    }
}

/// `POST /api/stripe-webhook`: signed events, each recorded once by its id
/// (replays change nothing). A checkout that completes, and a delayed
/// payment that later succeeds or fails, set the checkout's stored status.
pub async fn webhook(State(state): State<SharedState>, req: Request) -> Response {
    if !state.payments.webhooks_on() {
        return (StatusCode::SERVICE_UNAVAILABLE, "webhooks are off: STRIPE_WEBHOOK_SECRET is unset").into_response();
    }
    if body::kind_of(req.headers()) != Some(Kind::Json) {
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, "Stripe sends events as application/json").into_response();
    }
    let signature = req.headers().get("stripe-signature").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let body = match body::read_limited(req, body::MAX_WEBHOOK_BODY).await {
        Ok(b) => b,
        Err(e) => return (e.status, e.message).into_response(),
    };
    let Ok(payload) = std::str::from_utf8(&body) else {
        return (StatusCode::BAD_REQUEST, "payload is not UTF-8").into_response();
    };
    let event = match state.payments.verify_webhook(payload, &signature) {
        None => return (StatusCode::SERVICE_UNAVAILABLE, "webhooks are off: STRIPE_WEBHOOK_SECRET is unset").into_response(),
        Some(Err(e)) => {
            tracing::warn!(error = %e, "rejected a Stripe webhook");
            return (StatusCode::BAD_REQUEST, "invalid or stale signature").into_response();
        }
        Some(Ok(event)) => event,
    };
    match state.db.timed(record_event(&state, &event, payload)).await {
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

/// The status an event gives its checkout: Stripe's `payment_status` when
/// checkout completes ("paid", "unpaid" for a delayed method,
/// "no_payment_required"), then "paid" or "failed" when a delayed payment
/// settles. None for the events that do not settle anything.
fn settles(event_type: &str, session: &serde_json::Value) -> Option<String> {
    match event_type {
        "checkout.session.completed" => session["payment_status"].as_str().map(str::to_owned),
        "checkout.session.async_payment_succeeded" => Some("paid".into()),
        "checkout.session.async_payment_failed" => Some("failed".into()),
        _ => None,
    }
}

/// Records the event; true when it was new. A checkout's status only moves
/// from "unpaid" to a settled one, so events arriving out of order (Stripe
/// does not promise an order) cannot undo a settlement.
async fn record_event(state: &SharedState, event: &WebhookEvent, payload: &str) -> Result<bool, sqlx::Error> {
    let mut tx = state.db.pool.begin().await?;
    let inserted = sqlx::query("INSERT INTO stripe_events (event_id, event_type, received_at) VALUES ($1, $2, $3) ON CONFLICT (event_id) DO NOTHING")
        .bind(&event.id)
        .bind(&event.event_type)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?
        .rows_affected()
        == 1;
    let envelope: serde_json::Value = serde_json::from_str(payload).unwrap_or_default();
    let session = &envelope["data"]["object"];
    if let (true, Some(session_id), Some(status)) = (inserted, &event.checkout_session_id, settles(&event.event_type, session)) {
        let now = now_ms();
        sqlx::query(
            "INSERT INTO completed_checkouts (session_id, event_id, customer_email, amount_total, currency, payment_status, completed_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $7) \
             ON CONFLICT (session_id) DO UPDATE SET payment_status = excluded.payment_status, event_id = excluded.event_id, updated_at = excluded.updated_at \
             WHERE completed_checkouts.payment_status = 'unpaid' AND excluded.payment_status <> 'unpaid'",
        )
        .bind(session_id)
        .bind(&event.id)
        .bind(session["customer_details"]["email"].as_str().or(session["customer_email"].as_str()).map(str::to_owned))
        .bind(session["amount_total"].as_i64())
        .bind(session["currency"].as_str().map(str::to_owned))
        .bind(&status)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        tracing::info!(session = %session_id, event = %event.event_type, status = %status, "checkout status recorded");
    }
    tx.commit().await?;
    Ok(inserted)
}

/// The stored status of a checkout (operators, tests).
pub async fn checkout_status(state: &AppState, session_id: &str) -> Result<Option<String>, sqlx::Error> {
    let query = sqlx::query("SELECT payment_status FROM completed_checkouts WHERE session_id = $1").bind(session_id);
    let row = state.db.timed(query.fetch_optional(&state.db.pool)).await?;
    Ok(row.and_then(|r| r.try_get::<Option<String>, _>("payment_status").ok().flatten()))
}

/// How many completed checkouts are recorded (operators, tests).
pub async fn completed_checkouts(state: &SharedState) -> Result<i64, sqlx::Error> {
    sqlx::query("SELECT COUNT(*) AS n FROM completed_checkouts").fetch_one(&state.db.pool).await?.try_get("n")
}
