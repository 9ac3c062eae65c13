//! The session-ticket keys (`tls_ticket_keys`), one per period.

use super::clock::db_now;
use crate::db::Db;
use sqlx::Row;

/// A session-ticket key as stored: it seals from `period * period_ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredKey {
    pub period: i64,
    pub period_ms: i64,
    /// 32 bytes, hex.
    pub secret: String,
}

pub async fn ticket_keys(db: &Db) -> Result<Vec<StoredKey>, sqlx::Error> {
    let rows = db
        .timed(
            sqlx::query("SELECT period, period_ms, secret FROM tls_ticket_keys ORDER BY period")
                .fetch_all(&db.pool),
        )
        .await?;
    rows.iter()
        .map(|r| {
            Ok(StoredKey {
                period: r.try_get(0)?,
                period_ms: r.try_get(1)?,
                secret: r.try_get(2)?,
            })
        })
        .collect()
}

/// Each stored key with when it was stored (`created_at`, Unix
/// milliseconds, by the database's clock since `put_ticket_key` reads it
/// there): made by a server a period before it seals, or by `citizen-site
/// tls rotate-tickets`; or written back by a server that held it when a
/// restored database lacked it. Only reads.
pub async fn ticket_keys_made(db: &Db) -> Result<Vec<(StoredKey, i64)>, sqlx::Error> {
    let rows = db
        .timed(
            sqlx::query(
                "SELECT period, period_ms, secret, created_at FROM tls_ticket_keys ORDER BY period",
            )
            .fetch_all(&db.pool),
        )
        .await?;
    rows.iter()
        .map(|r| {
            let key = StoredKey {
                period: r.try_get(0)?,
                period_ms: r.try_get(1)?,
                secret: r.try_get(2)?,
            };
            Ok((key, r.try_get(3)?))
        })
        .collect()
}

/// Stores `key` unless its period has one already (whoever stores first,
/// every process then reads the same key), made now by the database's
/// clock.
pub async fn put_ticket_key(db: &Db, key: &StoredKey) -> Result<(), sqlx::Error> {
    let sql = format!(
        "INSERT INTO tls_ticket_keys (period, period_ms, secret, created_at) VALUES ($1, $2, $3, {}) \
         ON CONFLICT (period) DO NOTHING",
        db_now(db)
    );
    db.timed(
        sqlx::query(&sql)
            .bind(key.period)
            .bind(key.period_ms)
            .bind(&key.secret)
            .execute(&db.pool),
    )
    .await?;
    Ok(())
}

/// Forgets the keys whose tickets have all expired: those whose period
/// ended before `ended_before` (Unix milliseconds).
pub async fn forget_ticket_keys(db: &Db, ended_before: i64) -> Result<(), sqlx::Error> {
    db.timed(
        sqlx::query("DELETE FROM tls_ticket_keys WHERE (period + 1) * period_ms < $1")
            .bind(ended_before)
            .execute(&db.pool),
    )
    .await?;
    Ok(())
}

/// How a retired ticket key is named: the first 16 bytes of its secret's
/// SHA-256, hex (the secret itself is not kept).
pub fn key_id(secret_hex: &str) -> String {
    use sha2::Digest;
    super::text::hex(&sha2::Sha256::digest(secret_hex.as_bytes())[..16])
}

/// Every ticket key forgotten and retired, and `fresh` in their place, at
/// once (`citizen-site tls rotate-tickets`).
pub async fn rotate_ticket_keys(db: &Db, fresh: &[StoredKey]) -> Result<usize, sqlx::Error> {
    let retire_sql = format!(
        "INSERT INTO tls_retired (kind, id, retired_at) VALUES ('ticket-key', $1, {}) \
         ON CONFLICT (kind, id) DO NOTHING",
        db_now(db)
    );
    let insert_sql = format!(
        "INSERT INTO tls_ticket_keys (period, period_ms, secret, created_at) VALUES ($1, $2, $3, {})",
        db_now(db)
    );
    let work = async {
        let mut tx = db.pool.begin().await?;
        let old = sqlx::query("SELECT secret FROM tls_ticket_keys")
            .fetch_all(&mut *tx)
            .await?;
        for row in &old {
            let secret: String = row.try_get(0)?;
            sqlx::query(&retire_sql)
                .bind(key_id(&secret))
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query("DELETE FROM tls_ticket_keys")
            .execute(&mut *tx)
            .await?;
        for key in fresh {
            sqlx::query(&insert_sql)
                .bind(key.period)
                .bind(key.period_ms)
                .bind(&key.secret)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(old.len())
    };
    db.timed(work).await
}
