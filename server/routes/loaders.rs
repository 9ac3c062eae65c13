//! One loader per route: the only source of a page's data. Its JSON is
//! embedded in the server-rendered page and served again by the route-data
//! endpoint for client-side navigation, so the two never disagree.

use std::net::IpAddr;
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value};

use super::table::RouteMatch;
use crate::content::Content;
use crate::db::team;
use crate::integrations::stripe::PaymentState;
use crate::routes::api::stripe::{check_session, NO_SESSION_ID};
use crate::state::AppState;

/// What the client receives (`RouteData` in client/lib/types.ts).
#[derive(Debug, Serialize)]
pub struct RouteData {
    pub page: String,
    pub status: u16,
    pub data: Value,
}

/// A loaded route: its data and the URL to render it for. The render URL
/// keeps only the query parameters the page reads, so `?utm=...` variants
/// share one cached render.
#[derive(Debug)]
pub struct Loaded {
    pub render_url: String,
    pub route: RouteData,
    /// False for pages that carry what a visitor submitted.
    pub cacheable: bool,
    /// Sent as `Retry-After` (a 429 page).
    pub retry_after: Option<Duration>,
}

/// `client` is who asks: the success page's Stripe lookups count against it.
pub async fn load(state: &AppState, content: &Content, path: &str, query: Option<&str>, route: &RouteMatch, client: IpAddr) -> Loaded {
    let params = parse_query(query);
    let param = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let mut kept: Vec<(&str, String)> = Vec::new();
    let mut cacheable = true;
    let mut retry_after = None;

    let (status, data) = match route.page.as_str() {
        "Blog" => {
            let filter = param("type").filter(|t| !t.is_empty() && t != "All");
            if let Some(t) = &filter {
                kept.push(("type", t.clone()));
                // Any string is a filter (it matches no post), but only the
                // real types are worth a place in the cache.
                cacheable = content.blog.has_type(t);
            }
            // An unknown post id shows the list (spec section 2).
            let post = route.params.get("postId").and_then(|id| content.blog.get(id));
            (200, json!({ "posts": content.blog.list(), "post": post, "type": filter }))
        }
        "Wallets" => (200, json!({ "communities": content.communities.featured() })),
        "About" => {
            // A database known to be down is not waited on.
            let team = if !state.db.is_up() {
                tracing::warn!("team load skipped: the database is down; showing an empty team");
                Vec::new()
            } else {
                match team::list(&state.db).await {
                    Ok(team) => team,
                    Err(e) => {
                        tracing::error!(error = %e, "team load failed; showing an empty team");
                        Vec::new()
                    }
                }
            };
            (200, json!({ "team": team }))
        }
        "Success" => {
            // A customer's own payment: never cached.
            cacheable = false;
            match param("session_id").filter(|s| !s.is_empty()) {
                None => (200, json!({ "sessionId": null, "state": "failed", "session": null, "error": NO_SESSION_ID, "retryAfter": null })),
                Some(id) => {
                    let verdict = check_session(state, &id, client).await;
                    kept.push(("session_id", id.clone()));
                    // The failure state is the page's answer (200), except
                    // for a client over its limit, who is told to wait.
                    let status = if verdict.status == axum::http::StatusCode::TOO_MANY_REQUESTS { 429 } else { 200 };
                    retry_after = verdict.retry_after;
                    let session = verdict.session.as_ref().filter(|_| verdict.state != PaymentState::Failed);
                    (status, json!({
                        "sessionId": id,
                        "state": verdict.state_name(),
                        "session": session,
                        "error": verdict.reason,
                        "retryAfter": verdict.retry_after.map(|d| d.as_secs().max(1)),
                    }))
                }
            }
        }
        "Pricing" => {
            if let Some(b) = param("billing").filter(|b| b == "monthly" || b == "yearly") {
                kept.push(("billing", b));
            }
            match state.payments.prices().await {
                Ok(prices) => (200, json!({ "prices": *prices, "error": false })),
                Err(e) => {
                    tracing::error!(error = %e, "Error fetching prices");
                    (200, json!({ "prices": [], "error": true }))
                }
            }
        }
        "Terms" => (200, json!({ "today": today() })),
        "Contact" => {
            let submitted = param("submitted").is_some_and(|v| v == "1");
            if submitted {
                kept.push(("submitted", "1".into()));
            }
            (200, json!({ "submitted": submitted, "error": null, "values": null }))
        }
        "NotFound" => {
            // Every unknown URL is a new page: not kept, so a crawler walking
            // random paths cannot fill the cache.
            cacheable = false;
            (404, json!({}))
        }
        _ => (200, json!({})),
    };

    let mut render_url = path.to_owned();
    if !kept.is_empty() {
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in kept {
            q.append_pair(k, &v);
        }
        render_url.push('?');
        render_url.push_str(&q.finish());
    }
    Loaded { render_url, route: RouteData { page: route.page.clone(), status, data }, cacheable, retry_after }
}

fn parse_query(query: Option<&str>) -> Vec<(String, String)> {
    form_urlencoded::parse(query.unwrap_or("").as_bytes()).into_owned().collect()
}

/// Today's date (UTC) as `YYYY-MM-DD`; the terms page shows it.
fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}
