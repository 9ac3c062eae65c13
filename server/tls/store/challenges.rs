//! The answers to pending ACME challenges (`tls_challenges`), each of the order (lease generation) that stored it.

use sqlx::Row;
use std::time::Duration;

use super::clock::db_now;
use super::lease::Hold;
use crate::db::Db;

/// A pending challenge's answer, as the CA will ask for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// `http-01` or `tls-alpn-01`.
    pub kind: String,
    /// The token (HTTP-01) or the domain (TLS-ALPN-01).
    pub name: String,
    /// The key authorization (HTTP-01) or its SHA-256 in hex (TLS-ALPN-01).
    pub answer: String,
    /// The lease generation of the order that stored it.
    pub generation: i64,
}

impl Challenge {
    /// How a member names the answers it holds (`tls_members.challenges`).
    pub fn key(&self) -> String {
        format!("{}:{}:{}", self.generation, self.kind, self.name)
    }
}

/// Stores an order's answer, while `hold` holds the lease. False: the
/// lease is lost, and nothing was written (another order's answer for the
/// same name stays).
pub async fn put_challenge(
    db: &Db,
    c: &Challenge,
    ttl: Duration,
    hold: &Hold,
) -> Result<bool, sqlx::Error> {
    let sql = format!(
        "INSERT INTO tls_challenges (kind, name, answer, expires_at, generation) \
         SELECT $1, $2, $3, {} + $4, $5 WHERE {} \
         ON CONFLICT (kind, name) DO UPDATE SET answer = excluded.answer, \
         expires_at = excluded.expires_at, generation = excluded.generation",
        db_now(db),
        hold.condition(db, 6)
    );
    let q = sqlx::query(&sql)
        .bind(&c.kind)
        .bind(&c.name)
        .bind(&c.answer)
        .bind(ttl.as_millis() as i64)
        .bind(hold.generation);
    let done = db.timed(hold.bind(q).execute(&db.pool)).await?;
    Ok(done.rows_affected() == 1)
}

/// The challenges pending now (forgotten once they expire).
pub async fn challenges(db: &Db) -> Result<Vec<Challenge>, sqlx::Error> {
    let sql = format!(
        "SELECT kind, name, answer, generation FROM tls_challenges WHERE expires_at > {}",
        db_now(db)
    );
    let rows = db.timed(sqlx::query(&sql).fetch_all(&db.pool)).await?;
    rows.iter()
        .map(|r| {
            Ok(Challenge {
                kind: r.try_get(0)?,
                name: r.try_get(1)?,
                answer: r.try_get(2)?,
                generation: r.try_get(3)?,
            })
        })
        .collect()
}

/// Removes the challenges of the order of `generation` (it is over; an
/// answer a later order stored for the same name stays), and any expired
/// one.
pub async fn drop_challenges(db: &Db, generation: i64) -> Result<(), sqlx::Error> {
    let sql = format!(
        "DELETE FROM tls_challenges WHERE generation = $1 OR expires_at <= {}",
        db_now(db)
    );
    db.timed(sqlx::query(&sql).bind(generation).execute(&db.pool))
        .await?;
    Ok(())
}
