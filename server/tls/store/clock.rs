//! The database's clock: the one every member of a fleet compares, in SQL
//! ([`db_now`]) and read ([`clock`]).

use sqlx::Row;

use crate::db::{Db, Dialect};

/// The database's clock, in Unix milliseconds, as SQL: one clock for every
/// member of a fleet, whatever each machine's says. On PostgreSQL the
/// statement's own moment (`clock_timestamp()`, not the transaction's
/// `now()`); a SQLite fleet shares one file on one machine, so one clock.
pub(super) fn db_now(db: &Db) -> &'static str {
    match db.dialect {
        Dialect::Postgres => "(CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT))",
        Dialect::Sqlite => "(CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER))",
    }
}

/// The database's clock now (Unix milliseconds).
pub async fn clock(db: &Db) -> Result<i64, sqlx::Error> {
    let row = db
        .timed(sqlx::query(&format!("SELECT {}", db_now(db))).fetch_one(&db.pool))
        .await?;
    row.try_get(0)
}

pub(super) type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>;
