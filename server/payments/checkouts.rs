//! What Stripe's webhook tells the site, kept in the database: every event
//! once by its id (`stripe_events`: a replay changes nothing), and each
//! checkout's settled status (`completed_checkouts`). The SQL of payments
//! lives here.

use sqlx::Row;

use crate::db::{now_ms, Db};
use crate::payments::stripe::WebhookEvent;

/// The table the completed checkouts are kept in.
pub const TABLE: &str = "completed_checkouts";

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

/// Records a verified event; true when it was new. A checkout's status only
/// moves from "unpaid" to a settled one, so events arriving out of order
/// (Stripe does not promise an order) cannot undo a settlement.
pub async fn record_event(
    db: &Db,
    event: &WebhookEvent,
    payload: &str,
) -> Result<bool, sqlx::Error> {
    db.timed(async {
        let mut tx = db.pool.begin().await?;
        let inserted =
            sqlx::query("INSERT INTO stripe_events (event_id, event_type, received_at) VALUES ($1, $2, $3) ON CONFLICT (event_id) DO NOTHING")
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
    })
    .await
}

/// The stored status of a checkout, if a webhook recorded one.
pub async fn status(db: &Db, session_id: &str) -> Result<Option<String>, sqlx::Error> {
    let query = sqlx::query("SELECT payment_status FROM completed_checkouts WHERE session_id = $1")
        .bind(session_id);
    let row = db.timed(query.fetch_optional(&db.pool)).await?;
    Ok(row.and_then(|r| {
        r.try_get::<Option<String>, _>("payment_status")
            .ok()
            .flatten()
    }))
}

/// How many checkouts are recorded.
pub async fn count(db: &Db) -> Result<i64, sqlx::Error> {
    db.timed(sqlx::query("SELECT COUNT(*) AS n FROM completed_checkouts").fetch_one(&db.pool))
        .await?
        .try_get("n")
}

/// The settled statuses a checkout can have.
pub const STATUSES: [&str; 4] = ["paid", "unpaid", "no_payment_required", "failed"];

/// A checkout the webhook recorded. Times are Unix milliseconds; the amount
/// is in the currency's minor units, as Stripe sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    pub session_id: String,
    pub status: Option<String>,
    pub customer_email: Option<String>,
    pub amount_total: Option<i64>,
    pub currency: Option<String>,
    pub completed_at: i64,
    /// When the status last changed (a delayed payment settling).
    pub updated_at: Option<i64>,
}

/// The recorded checkouts (those in `status` only, when given), oldest first.
pub async fn list(db: &Db, status: Option<&str>) -> Result<Vec<Checkout>, sqlx::Error> {
    let mut sql =
        String::from("SELECT session_id, payment_status, customer_email, amount_total, currency, completed_at, updated_at FROM completed_checkouts");
    if status.is_some() {
        sql.push_str(" WHERE payment_status = $1");
    }
    sql.push_str(" ORDER BY completed_at, session_id");
    let mut query = sqlx::query(&sql);
    if let Some(status) = status {
        query = query.bind(status);
    }
    let rows = db.timed(query.fetch_all(&db.pool)).await?;
    rows.iter()
        .map(|r| {
            Ok(Checkout {
                session_id: r.try_get("session_id")?,
                status: r.try_get("payment_status")?,
                customer_email: r.try_get("customer_email")?,
                amount_total: r.try_get("amount_total")?,
                currency: r.try_get("currency")?,
                completed_at: r.try_get("completed_at")?,
                updated_at: r.try_get("updated_at")?,
            })
        })
        .collect()
}
