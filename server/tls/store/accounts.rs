//! The ACME account of each directory (instant-acme's credentials, as JSON).

use crate::db::now_ms;
use crate::db::Db;
use sqlx::Row;

/// The ACME account of `directory` (instant-acme's credentials, JSON).
pub async fn account(db: &Db, directory: &str) -> Result<Option<String>, sqlx::Error> {
    let row = db
        .timed(
            sqlx::query("SELECT credentials FROM tls_accounts WHERE directory = $1")
                .bind(directory)
                .fetch_optional(&db.pool),
        )
        .await?;
    row.map(|r| r.try_get(0)).transpose()
}

/// Stores the account of `directory` unless one is there already; returns
/// the one stored (this one, or the one first stored).
pub async fn put_account(
    db: &Db,
    directory: &str,
    credentials: &str,
) -> Result<String, sqlx::Error> {
    db.timed(
        sqlx::query(
            "INSERT INTO tls_accounts (directory, credentials, created_at) VALUES ($1, $2, $3) \
             ON CONFLICT (directory) DO NOTHING",
        )
        .bind(directory)
        .bind(credentials)
        .bind(now_ms())
        .execute(&db.pool),
    )
    .await?;
    Ok(account(db, directory)
        .await?
        .unwrap_or_else(|| credentials.to_owned()))
}

/// Replaces the account of `directory` whose credentials are `damaged`
/// (they cannot be read) with `credentials`; returns the one stored then
/// (another server's, if it replaced the damaged row first).
pub async fn replace_account(
    db: &Db,
    directory: &str,
    damaged: &str,
    credentials: &str,
) -> Result<String, sqlx::Error> {
    db.timed(
        sqlx::query("UPDATE tls_accounts SET credentials = $1, created_at = $2 WHERE directory = $3 AND credentials = $4")
            .bind(credentials)
            .bind(now_ms())
            .bind(directory)
            .bind(damaged)
            .execute(&db.pool),
    )
    .await?;
    put_account(db, directory, credentials).await
}
