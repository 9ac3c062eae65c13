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
mod clock;
mod lease;
mod members;
mod requests;
mod schedule;
mod text;
mod ticket_keys;

pub use accounts::*;
pub use certificates::*;
pub use challenges::*;
pub use clock::clock;
pub use lease::*;
pub use members::*;
pub use requests::*;
pub use schedule::*;
pub use text::{hex, unhex};
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;

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
