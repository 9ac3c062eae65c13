//! JSON endpoints under `/api/` (the spec's server functions) and the
//! plain-form fallbacks that make them work without JavaScript.

pub mod intro;
pub mod stripe;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// An API failure: the status and the message the visitor's toast shows.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into() }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "success": false, "error": self.message }))).into_response()
    }
}
