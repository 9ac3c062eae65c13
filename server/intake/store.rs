//! The intro_requests table: insert, claim, settle. Times are Unix
//! milliseconds computed here, so SQLite and PostgreSQL share the SQL (only
//! PostgreSQL adds `FOR UPDATE SKIP LOCKED` to the claim).

use std::time::Duration;

use sqlx::Row;

use super::IntroRequest;
use crate::db::{now_ms, Db, Dialect};

/// The table the intro requests are kept in.
pub const TABLE: &str = "intro_requests";

/// A stored request, as the forwarder sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRequest {
    pub id: String,
    pub name: String,
    pub contact_person: String,
    pub email: String,
    pub website: String,
    pub description: String,
    pub tags: Vec<String>,
    pub created_at: i64,
    pub attempts: i64,
    /// The stored tags could not be read back: `tags` is empty, the row
    /// keeps what was stored.
    pub tags_unreadable: bool,
}

/// What became of a stored submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// A new row.
    New,
    /// A row with this submission id was stored before (the visitor's
    /// retry): nothing changed.
    Duplicate,
}

/// Whether a stored request goes to Notion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// Forwarded by the forwarder.
    Pending,
    /// Caught by the form's honeypot: kept, never forwarded.
    Spam,
}

/// Stores a validated request, to be forwarded; returns its id.
pub async fn insert(db: &Db, req: &IntroRequest) -> Result<String, sqlx::Error> {
    Ok(insert_as(db, req, Disposition::Pending).await?.0)
}

/// Stores `req` in one transaction under its submission id (a new id when it
/// has none), unless a request with that id exists already, so a submission
/// sent twice (a retry after a lost answer) is stored once. Returns the id.
pub async fn insert_as(
    db: &Db,
    req: &IntroRequest,
    disposition: Disposition,
) -> Result<(String, Stored), sqlx::Error> {
    let id = req
        .submission_id
        .unwrap_or_else(uuid::Uuid::new_v4)
        .to_string();
    let id = id.as_str();
    let now = now_ms();
    let status = match disposition {
        Disposition::Pending => "pending",
        Disposition::Spam => "spam",
    };
    db.timed(async {
        let mut tx = db.pool.begin().await?;
        let inserted = sqlx::query(
            "INSERT INTO intro_requests (id, name, contact_person, email, website, description, tags, created_at, next_attempt_at, status) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING",
        )
        .bind(id)
        .bind(&req.name)
        .bind(&req.contact_person)
        .bind(req.email.as_str())
        .bind(&req.website)
        .bind(&req.description)
        .bind(serde_json::to_string(&req.tags).expect("tags serialize"))
        .bind(now)
        .bind(now)
        .bind(status)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(if inserted == 1 { Stored::New } else { Stored::Duplicate })
    })
    .await
    .map(|stored| (id.to_owned(), stored))
}

/// Claims the oldest due request for `worker` for `lease`. Several processes
/// sharing one database never hold the same request at once.
pub async fn claim(
    db: &Db,
    worker: &str,
    lease: Duration,
) -> Result<Option<StoredRequest>, sqlx::Error> {
    let now = now_ms();
    let lock = if db.dialect == Dialect::Postgres {
        " FOR UPDATE SKIP LOCKED"
    } else {
        ""
    };
    let sql = format!(
        "UPDATE intro_requests SET claimed_by = $1, claimed_until = $2 \
         WHERE id = (SELECT id FROM intro_requests WHERE status = 'pending' AND next_attempt_at <= $3 \
                     AND (claimed_until IS NULL OR claimed_until < $3) ORDER BY created_at, id LIMIT 1{lock}) \
         AND status = 'pending' AND (claimed_until IS NULL OR claimed_until < $3) \
         RETURNING id, name, contact_person, email, website, description, tags, created_at, attempts"
    );
    let row = db
        .timed(
            sqlx::query(&sql)
                .bind(worker)
                .bind(now + lease.as_millis() as i64)
                .bind(now)
                .fetch_optional(&db.pool),
        )
        .await?;
    row.as_ref().map(claimed).transpose()
}

/// Claims request `id` for `worker` now, due or not (an operator's retry),
/// unless it is not pending or another process holds it: then None.
pub async fn claim_id(
    db: &Db,
    id: &str,
    worker: &str,
    lease: Duration,
) -> Result<Option<StoredRequest>, sqlx::Error> {
    let now = now_ms();
    let row = db
        .timed(
            sqlx::query(
                "UPDATE intro_requests SET claimed_by = $1, claimed_until = $2 \
                 WHERE id = $3 AND status = 'pending' AND (claimed_until IS NULL OR claimed_until < $4) \
                 RETURNING id, name, contact_person, email, website, description, tags, created_at, attempts",
            )
            .bind(worker)
            .bind(now + lease.as_millis() as i64)
            .bind(id)
            .bind(now)
            .fetch_optional(&db.pool),
        )
        .await?;
    row.as_ref().map(claimed).transpose()
}

fn claimed(r: &sqlx::any::AnyRow) -> Result<StoredRequest, sqlx::Error> {
    let id: String = r.try_get("id")?;
    let raw: String = r.try_get("tags")?;
    let (tags, tags_unreadable) = match serde_json::from_str(&raw) {
        Ok(tags) => (tags, false),
        Err(e) => {
            tracing::warn!(id = %id, error = %e, "the stored tags cannot be read; the request goes on without them (the row keeps them)");
            (Vec::new(), true)
        }
    };
    Ok(StoredRequest {
        id,
        name: r.try_get("name")?,
        contact_person: r.try_get("contact_person")?,
        email: r.try_get("email")?,
        website: r.try_get("website")?,
        description: r.try_get("description")?,
        tags,
        tags_unreadable,
        created_at: r.try_get("created_at")?,
        attempts: r.try_get("attempts")?,
    })
}

/// The Notion page exists: the request is done.
pub async fn mark_forwarded(db: &Db, id: &str, page_id: &str) -> Result<(), sqlx::Error> {
    db.timed(
        sqlx::query(
            "UPDATE intro_requests SET status = 'forwarded', notion_page_id = $1, forwarded_at = $2, \
         claimed_by = NULL, claimed_until = NULL, last_error = NULL WHERE id = $3",
        )
        .bind(page_id)
        .bind(now_ms())
        .bind(id)
        .execute(&db.pool),
    )
    .await?;
    Ok(())
}

/// A try failed: count it, release the claim, and come back at `retry_at`.
pub async fn mark_failed(
    db: &Db,
    id: &str,
    worker: &str,
    error: &str,
    retry_at: i64,
) -> Result<(), sqlx::Error> {
    db.timed(
        sqlx::query(
            "UPDATE intro_requests SET attempts = attempts + 1, next_attempt_at = $1, last_error = $2, \
         claimed_by = NULL, claimed_until = NULL WHERE id = $3 AND claimed_by = $4 AND status = 'pending'",
        )
        .bind(retry_at)
        .bind(error)
        .bind(id)
        .bind(worker)
        .execute(&db.pool),
    )
    .await?;
    Ok(())
}

/// How many requests still wait for their Notion page.
pub async fn pending_count(db: &Db) -> Result<i64, sqlx::Error> {
    Ok(backlog(db).await?.pending)
}

/// The requests waiting for their Notion page: how many, and since when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Backlog {
    pub pending: i64,
    /// When the oldest waiting request was stored (Unix ms).
    pub oldest_since: Option<i64>,
}

impl Backlog {
    /// How long the oldest waiting request has waited at `now` (ms), in
    /// whole seconds; 0 when none waits.
    pub fn oldest_age_secs(&self, now: i64) -> i64 {
        self.oldest_since.map_or(0, |t| (now - t).max(0) / 1000)
    }
}

pub async fn backlog(db: &Db) -> Result<Backlog, sqlx::Error> {
    let row = db
        .timed(sqlx::query("SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM intro_requests WHERE status = 'pending'").fetch_one(&db.pool))
        .await?;
    Ok(Backlog {
        pending: row.try_get("n")?,
        oldest_since: row.try_get("oldest")?,
    })
}

/// A request's status and Notion page id, for operators and tests.
pub async fn status(
    db: &Db,
    id: &str,
) -> Result<Option<(String, Option<String>, i64)>, sqlx::Error> {
    let row = db
        .timed(
            sqlx::query(
                "SELECT status, notion_page_id, attempts FROM intro_requests WHERE id = $1",
            )
            .bind(id)
            .fetch_optional(&db.pool),
        )
        .await?;
    row.map(|r| {
        Ok((
            r.try_get("status")?,
            r.try_get("notion_page_id")?,
            r.try_get("attempts")?,
        ))
    })
    .transpose()
}
