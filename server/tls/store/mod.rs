//! The TLS state's SQL (`migrations/*/20261126000000_tls_state.sql`,
//! `20261127000000_tls_fleet.sql`, `20261128000000_tls_requests.sql` and
//! `20261129000000_tls_served.sql`): the same statements for SQLite and
//! PostgreSQL but where the clock is read ([`clock`]). Every time that
//! members compare (the lease, the challenges' expiry, the fleet's
//! back-off, when a member was last seen) is the database's, never a
//! process's. The order lease gives a generation ([`Hold`]), and every write
//! an order makes is conditional on it still holding. A certificate row is
//! replaced by compare-and-swap on its serial.

mod accounts;
mod certificates;
mod challenges;
mod lease;
mod members;
mod requests;
mod schedule;
mod ticket_keys;

use std::time::Duration;

use sqlx::Row;

use crate::db::{now_ms, Db, Dialect};

pub use accounts::*;
pub use certificates::*;
pub use challenges::*;
pub use lease::*;
pub use members::*;
pub use requests::*;
pub use schedule::*;
pub use ticket_keys::*;

/// The tables whose rows are the HTTPS identity, which a restore keeps
/// from the database it replaces (see `db::sqlite_file::restore`).
pub const TABLES: [&str; 8] = [
    "tls_accounts",
    "tls_certificates",
    "tls_challenges",
    "tls_ticket_keys",
    "tls_leases",
    "tls_orders",
    "tls_members",
    "tls_retired",
];

/// The database's clock, in Unix milliseconds, as SQL: one clock for every
/// member of a fleet, whatever each machine's says. On PostgreSQL the
/// statement's own moment (`clock_timestamp()`, not the transaction's
/// `now()`); a SQLite fleet shares one file on one machine, so one clock.
fn db_now(db: &Db) -> &'static str {
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

type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>;

#[cfg(test)]
mod tests {
    use super::*;

    async fn db() -> (Db, std::path::PathBuf) {
        crate::db::scratch("tls").await
    }

    #[tokio::test]
    async fn the_first_key_of_a_period_and_the_first_account_stay() {
        let (db, dir) = db().await;
        let key = |secret: &str| StoredKey {
            period: 5,
            period_ms: 1000,
            secret: secret.into(),
        };
        put_ticket_key(&db, &key("aa")).await.unwrap();
        put_ticket_key(&db, &key("bb")).await.unwrap();
        assert_eq!(ticket_keys(&db).await.unwrap(), [key("aa")]);
        forget_ticket_keys(&db, 6000).await.unwrap();
        assert_eq!(ticket_keys(&db).await.unwrap().len(), 1, "ends at 6000");
        forget_ticket_keys(&db, 6001).await.unwrap();
        assert!(ticket_keys(&db).await.unwrap().is_empty());
        assert_eq!(put_account(&db, "d", "one").await.unwrap(), "one");
        assert_eq!(put_account(&db, "d", "two").await.unwrap(), "one");
        // A damaged row is replaced once, by whoever comes first.
        assert_eq!(
            replace_account(&db, "d", "one", "three").await.unwrap(),
            "three"
        );
        assert_eq!(
            replace_account(&db, "d", "one", "four").await.unwrap(),
            "three"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
