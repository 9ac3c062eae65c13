//! When the fleet orders (`tls_orders`): its shared back-off after a failure the CA answered, and its renewal time for the certificate in service.

use sqlx::Row;
use std::time::Duration;

use super::clock::db_now;
use super::lease::Hold;
use crate::db::Db;

/// The fleet's back-off for these names: no member orders before
/// `next_try_at` (the database's clock), and the member that failed last
/// not before `retry_ms` (the doubling's last step) after that.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Backoff {
    pub next_try_at: i64,
    pub retry_ms: i64,
    pub failed_by: Option<String>,
    /// What the CA said of the last failed try.
    pub error: Option<String>,
}

pub async fn backoff(db: &Db, directory: &str, names: &str) -> Result<Backoff, sqlx::Error> {
    let row = db
        .timed(
            sqlx::query(
                "SELECT next_try_at, retry_ms, failed_by, error FROM tls_orders WHERE directory = $1 AND names = $2",
            )
            .bind(directory)
            .bind(names)
            .fetch_optional(&db.pool),
        )
        .await?;
    Ok(match row {
        Some(r) => Backoff {
            next_try_at: r.try_get(0)?,
            retry_ms: r.try_get(1)?,
            failed_by: r.try_get(2)?,
            error: r.try_get(3)?,
        },
        None => Backoff::default(),
    })
}

/// Sets the fleet's back-off, by `member`, while `hold` holds the lease: no
/// order before `wait` from now, and `step` the doubling's last step (the
/// member that failed waits one more; Duration::ZERO and no member:
/// cleared, after a success).
pub async fn set_backoff(
    db: &Db,
    directory: &str,
    names: &str,
    (wait, step): (Duration, Duration),
    failed: Option<(&str, &str)>,
    hold: &Hold,
) -> Result<bool, sqlx::Error> {
    let sql = format!(
        "INSERT INTO tls_orders (directory, names, next_try_at, retry_ms, failed_by, error) \
         SELECT $1, $2, {} + $3, $6, $4, $5 WHERE {} \
         ON CONFLICT (directory, names) DO UPDATE SET next_try_at = excluded.next_try_at, \
         retry_ms = excluded.retry_ms, failed_by = excluded.failed_by, error = excluded.error",
        db_now(db),
        hold.condition(db, 7)
    );
    let q = sqlx::query(&sql)
        .bind(directory)
        .bind(names)
        .bind(wait.as_millis() as i64)
        .bind(failed.map(|f| f.0))
        .bind(failed.map(|f| f.1))
        .bind(step.as_millis() as i64);
    let done = db.timed(hold.bind(q).execute(&db.pool)).await?;
    Ok(done.rows_affected() == 1)
}

/// Lifts the fleet's back-off for these names (`tls renew --now`): the next
/// try may come at once. Its step stays, so a next refusal still doubles.
pub async fn lift_backoff(db: &Db, directory: &str, names: &str) -> Result<(), sqlx::Error> {
    let q = sqlx::query(
        "UPDATE tls_orders SET next_try_at = 0, failed_by = NULL WHERE directory = $1 AND names = $2",
    )
    .bind(directory)
    .bind(names);
    db.timed(q.execute(&db.pool)).await?;
    Ok(())
}

/// When the fleet renews the certificate `serial`, and why then.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schedule {
    pub serial: String,
    pub renew_at: i64,
    /// `ari` (the CA's window) or `lifetime` (two thirds of its life).
    pub source: String,
    pub window: Option<(i64, i64)>,
    pub explanation: Option<String>,
    /// When the CA's renewal information is asked next.
    pub poll_at: i64,
}

pub async fn schedule(
    db: &Db,
    directory: &str,
    names: &str,
) -> Result<Option<Schedule>, sqlx::Error> {
    let row = db
        .timed(
            sqlx::query(
                "SELECT renew_serial, renew_at, renew_source, window_start, window_end, explanation, poll_at \
                 FROM tls_orders WHERE directory = $1 AND names = $2 AND renew_serial IS NOT NULL",
            )
            .bind(directory)
            .bind(names)
            .fetch_optional(&db.pool),
        )
        .await?;
    row.map(|r| {
        let start: Option<i64> = r.try_get(3)?;
        let end: Option<i64> = r.try_get(4)?;
        Ok(Schedule {
            serial: r.try_get(0)?,
            renew_at: r.try_get(1)?,
            source: r.try_get(2)?,
            window: start.zip(end),
            explanation: r.try_get(5)?,
            poll_at: r.try_get(6)?,
        })
    })
    .transpose()
}

/// Keeps `s` as the fleet's schedule, while `hold` (the renewal
/// information's lease) holds.
pub async fn set_schedule(
    db: &Db,
    directory: &str,
    names: &str,
    s: &Schedule,
    hold: &Hold,
) -> Result<bool, sqlx::Error> {
    let sql = format!(
        "INSERT INTO tls_orders (directory, names, next_try_at, retry_ms, renew_serial, renew_at, renew_source, \
         window_start, window_end, explanation, poll_at) \
         SELECT $1, $2, 0, 0, $3, $4, $5, $6, $7, $8, $9 WHERE {} \
         ON CONFLICT (directory, names) DO UPDATE SET renew_serial = excluded.renew_serial, \
         renew_at = excluded.renew_at, renew_source = excluded.renew_source, \
         window_start = excluded.window_start, window_end = excluded.window_end, \
         explanation = excluded.explanation, poll_at = excluded.poll_at",
        hold.condition(db, 10)
    );
    let q = sqlx::query(&sql)
        .bind(directory)
        .bind(names)
        .bind(&s.serial)
        .bind(s.renew_at)
        .bind(&s.source)
        .bind(s.window.map(|w| w.0))
        .bind(s.window.map(|w| w.1))
        .bind(&s.explanation)
        .bind(s.poll_at);
    let done = db.timed(hold.bind(q).execute(&db.pool)).await?;
    Ok(done.rows_affected() == 1)
}
