//! A copy of the SQLite database checked to be a sound database of this
//! site that this version can run, with its tables' rows counted.

use std::path::Path;

use sqlx::Row;

use super::super::Db;
use super::files::suffixed;
use crate::config::sqlite_url;

/// Rows in a database of this site: each table the caller named, with its
/// count, in the caller's order.
pub type Counts = Vec<(&'static str, i64)>;

/// Checks that the SQLite file at `path` (our own copy, named `shown` to
/// the operator) is a sound database of this site that this version can
/// run (it has each of the site's `tables`, which the caller names: this
/// module knows no domain's), and counts their rows. Nothing is written to
/// it.
pub(super) async fn inspect(
    path: &Path,
    shown: &Path,
    tables: &[&'static str],
) -> anyhow::Result<Counts> {
    let db = Db::connect_lazy(&sqlite_url(path, "rw").map_err(anyhow::Error::msg)?)?;
    let not_ours =
        |why: String| anyhow::anyhow!("{} is not a database of this site: {why}", shown.display());
    let result = async {
        // A file cut short fails the check with an error, not a row.
        let damaged = |why: &str| {
            anyhow::anyhow!(
                "{} is damaged: SQLite's integrity check (quick_check) found: {why}; nothing was changed",
                shown.display()
            )
        };
        let check: String = db
            .timed(sqlx::query("PRAGMA quick_check").fetch_one(&db.pool))
            .await
            .map_err(|e| damaged(&super::super::reason(&e)))?
            .try_get(0)?;
        if check != "ok" {
            return Err(damaged(&check));
        }
        let present: Vec<String> = db
            .timed(sqlx::query("SELECT name FROM sqlite_master WHERE type = 'table'").fetch_all(&db.pool))
            .await?
            .iter()
            .map(|r| r.try_get::<String, _>(0))
            .collect::<Result<_, _>>()?;
        for table in std::iter::once(&"_sqlx_migrations").chain(tables) {
            if !present.iter().any(|t| t == table) {
                return Err(not_ours(format!("it has no {table} table")));
            }
        }
        let applied = db.timed(sqlx::query("SELECT version FROM _sqlx_migrations WHERE success").fetch_all(&db.pool)).await?;
        for row in &applied {
            let version: i64 = row.try_get(0)?;
            if !super::super::SQLITE_MIGRATIONS.iter().any(|m| m.version == version) {
                return Err(not_ours(format!("it was made by a newer citizen-site (its migration {version} is unknown to this one)")));
            }
        }
        let count = |table: &'static str| {
            let db = &db;
            async move { db.timed(sqlx::query(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(&db.pool)).await?.try_get::<i64, _>(0) }
        };
        let mut counts = Counts::new();
        for table in tables {
            counts.push((*table, count(table).await?));
        }
        Ok(counts)
    }
    .await;
    db.close().await;
    // Only read: whatever SQLite kept beside the copy holds nothing.
    for sidecar in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(suffixed(path, sidecar));
    }
    result
}
