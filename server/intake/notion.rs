//! Notion: one page per intro request in the configured database.
//!
//! Property mapping (the database must have these properties):
//!
//! | Notion property | Type         | From the form           |
//! |-----------------|--------------|-------------------------|
//! | Name            | title        | name (community name)   |
//! | Contact Person  | rich_text    | contactPerson           |
//! | Email           | email        | email                   |
//! | Website         | url          | website (empty: none)   |
//! | Description     | rich_text    | description             |
//! | Tags            | multi_select | tags                    |
//! | Request ID      | rich_text    | the stored request's id |
//! | Submitted At    | date         | when it was stored      |
//!
//! `Request ID` makes forwarding idempotent: before creating a page the
//! forwarder asks Notion for a page with that id, so a crash between
//! "created" and "recorded" never leads to a second page.

use std::time::Duration;

use serde_json::{json, Value};

use crate::intake::store::StoredRequest;
use crate::metrics::{UpstreamCalls, UpstreamLabels};

const NOTION_VERSION: &str = "2022-06-28";
/// Notion's limit for one rich-text object.
const TEXT_CHUNK: usize = 2_000;

#[derive(Debug, thiserror::Error)]
pub enum NotionError {
    #[error("Notion request failed: {0}")]
    Http(reqwest::Error),
    #[error("Notion timed out: no answer within {0:?}")]
    Timeout(Duration),
    #[error("Notion answered {status}: {body}")]
    Status { status: u16, body: String },
    #[error("Notion answered without a page id")]
    NoId,
}

#[derive(Clone)]
pub struct NotionClient {
    http: reqwest::Client,
    /// The whole-request bound, for error messages.
    timeout: Duration,
    base: String,
    token: String,
    database_id: String,
    /// Each call's operation, outcome and duration (`/metrics`).
    calls: UpstreamCalls,
}

impl NotionClient {
    /// A client with the default timeouts (5 s to connect, 15 s per request).
    pub fn new(base: &str, token: &str, database_id: &str) -> NotionClient {
        let t = crate::config::Timeouts::default();
        NotionClient::with_timeouts(base, token, database_id, t.notion_connect, t.notion_request)
    }

    pub fn with_timeouts(
        base: &str,
        token: &str,
        database_id: &str,
        connect: Duration,
        request: Duration,
    ) -> NotionClient {
        let http = reqwest::Client::builder()
            .connect_timeout(connect)
            .timeout(request)
            .build()
            .expect("building the Notion HTTP client");
        NotionClient {
            http,
            timeout: request,
            base: base.trim_end_matches('/').to_owned(),
            token: token.to_owned(),
            database_id: database_id.to_owned(),
            calls: UpstreamCalls::default(),
        }
    }

    /// The same client, counting its calls in `calls`.
    pub fn counted(self, calls: UpstreamCalls) -> NotionClient {
        NotionClient { calls, ..self }
    }

    /// Creates the request's page unless one exists already; returns its id.
    pub async fn forward(&self, req: &StoredRequest) -> Result<String, NotionError> {
        if let Some(existing) = self.find_page(&req.id).await? {
            return Ok(existing);
        }
        self.create_page(req).await
    }

    async fn find_page(&self, request_id: &str) -> Result<Option<String>, NotionError> {
        let body = json!({
            "filter": { "property": "Request ID", "rich_text": { "equals": request_id } },
            "page_size": 1,
        });
        let res = self
            .post(
                "query",
                &format!("/v1/databases/{}/query", self.database_id),
                &body,
            )
            .await?;
        Ok(res["results"]
            .get(0)
            .and_then(|p| p["id"].as_str())
            .map(str::to_owned))
    }

    async fn create_page(&self, req: &StoredRequest) -> Result<String, NotionError> {
        let res = self
            .post(
                "create_page",
                "/v1/pages",
                &page_body(&self.database_id, req),
            )
            .await?;
        res["id"]
            .as_str()
            .map(str::to_owned)
            .ok_or(NotionError::NoId)
    }

    /// One call, counted as `operation` with its outcome and duration.
    async fn post(
        &self,
        operation: &'static str,
        path: &str,
        body: &Value,
    ) -> Result<Value, NotionError> {
        let started = std::time::Instant::now();
        let result = self.call(path, body).await;
        let outcome = match &result {
            Ok(_) => "ok",
            Err(NotionError::Status { .. }) => "error_status",
            Err(NotionError::Timeout(_)) => "timeout",
            Err(NotionError::Http(e)) if e.is_decode() => "bad_answer",
            Err(NotionError::Http(_)) => "unreachable",
            Err(NotionError::NoId) => "bad_answer",
        };
        let labels = UpstreamLabels {
            upstream: "notion",
            operation,
            outcome,
        };
        self.calls.record(labels, started.elapsed().as_secs_f64());
        result
    }

    async fn call(&self, path: &str, body: &Value) -> Result<Value, NotionError> {
        let res = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .header("Notion-Version", NOTION_VERSION)
            .json(body)
            .send()
            .await
            .map_err(|e| self.error(e))?;
        let status = res.status();
        if !status.is_success() {
            let body = res.text().await.unwrap_or_default();
            return Err(NotionError::Status {
                status: status.as_u16(),
                body: body.chars().take(500).collect(),
            });
        }
        res.json().await.map_err(|e| self.error(e))
    }

    fn error(&self, e: reqwest::Error) -> NotionError {
        if e.is_timeout() {
            NotionError::Timeout(self.timeout)
        } else {
            NotionError::Http(e)
        }
    }
}

/// The page-creation body for a request (see the mapping above).
pub fn page_body(database_id: &str, req: &StoredRequest) -> Value {
    let submitted =
        time::OffsetDateTime::from_unix_timestamp_nanos(req.created_at as i128 * 1_000_000)
            .ok()
            .and_then(|t| {
                t.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            });
    json!({
        "parent": { "database_id": database_id },
        "properties": {
            "Name": { "title": rich_text(&req.name) },
            "Contact Person": { "rich_text": rich_text(&req.contact_person) },
            "Email": { "email": req.email },
            "Website": { "url": if req.website.is_empty() { Value::Null } else { json!(req.website) } },
            "Description": { "rich_text": rich_text(&req.description) },
            "Tags": { "multi_select": req.tags.iter().map(|t| json!({ "name": t })).collect::<Vec<_>>() },
            "Request ID": { "rich_text": rich_text(&req.id) },
            "Submitted At": { "date": submitted.map(|s| json!({ "start": s })).unwrap_or(Value::Null) },
        },
    })
}

/// Plain text as Notion rich text, split into chunks Notion accepts.
fn rich_text(text: &str) -> Vec<Value> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(TEXT_CHUNK)
        .map(|c| json!({ "type": "text", "text": { "content": c.iter().collect::<String>() } }))
        .collect()
}
