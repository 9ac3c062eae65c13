//! JSON endpoints under `/api/` (the spec's server functions) and the
//! plain-form fallbacks that make them work without JavaScript.

pub mod body;
pub mod intro;
pub mod stripe;

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::respond::set_retry_after;
use crate::client_ip::ClientIp;
use crate::intake::{FieldError, Invalid};
use crate::state::AppState;

/// An API failure: the status and the message the visitor's toast shows.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// Sent as `Retry-After` (429, 503).
    pub retry_after: Option<Duration>,
    /// A refused form's fields to fix.
    pub fields: Vec<FieldError>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            retry_after: None,
            fields: Vec::new(),
        }
    }

    /// A form that breaks the spec's rules (422), with its fields to fix.
    pub fn invalid(invalid: Invalid) -> ApiError {
        ApiError {
            fields: invalid.fields,
            ..ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, invalid.message)
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut res = (
            self.status,
            Json(crate::contract::ApiFailure {
                success: false,
                error: self.message,
                fields: self.fields,
            }),
        )
            .into_response();
        set_retry_after(&mut res, self.retry_after);
        res
    }
}

/// A failure answered in plain text: the webhook's, read by Stripe's
/// dashboard rather than a visitor.
#[derive(Debug)]
pub struct PlainError {
    pub status: StatusCode,
    pub message: std::borrow::Cow<'static, str>,
}

impl PlainError {
    pub fn new(
        status: StatusCode,
        message: impl Into<std::borrow::Cow<'static, str>>,
    ) -> PlainError {
        PlainError {
            status,
            message: message.into(),
        }
    }
}

impl IntoResponse for PlainError {
    fn into_response(self) -> Response {
        (self.status, self.message).into_response()
    }
}

/// Counts a POST from `client` against its rate limit: 429 with
/// `Retry-After` when it is over.
pub fn rate_limit(state: &AppState, client: ClientIp) -> Result<(), ApiError> {
    state.limiter.check(client.0).map_err(|wait| {
        state.metrics.rate_limited.inc();
        tracing::warn!(client = %client.0, retry_after = wait.as_secs(), "rate limit reached");
        ApiError {
            retry_after: Some(wait),
            ..ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                crate::messages::messages().too_many_requests(wait.as_secs().max(1)),
            )
        }
    })
}
