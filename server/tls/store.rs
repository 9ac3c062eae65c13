//! The TLS state's SQL (`migrations/*/20261126000000_tls_state.sql`): the
//! same statements for SQLite and PostgreSQL. Every write keeps the newer
//! of two states, so a process that knows a newer certificate or ticket key
//! than the database (after a restore, say) puts it back rather than
//! taking the older one.

use std::time::Duration;

use sqlx::Row;

use crate::db::{now_ms, Db};

/// The tables whose rows are the HTTPS identity, which a restore keeps
/// from the database it replaces (see `db::sqlite_file::restore`).
pub const TABLES: [&str; 5] = [
    "tls_accounts",
    "tls_certificates",
    "tls_challenges",
    "tls_ticket_keys",
    "tls_leases",
];

/// A stored certificate: its key and chain (PEM), and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCert {
    pub pem: String,
    pub serial: String,
    pub not_before: i64,
    pub not_after: i64,
}

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

/// The serial and expiry of the certificate stored for these names: what
/// a process compares with the one it serves, every second.
pub async fn certificate_stamp(
    db: &Db,
    directory: &str,
    names: &str,
) -> Result<Option<(String, i64)>, sqlx::Error> {
    let row = db
        .timed(
            sqlx::query(
                "SELECT serial, not_after FROM tls_certificates WHERE directory = $1 AND names = $2",
            )
            .bind(directory)
            .bind(names)
            .fetch_optional(&db.pool),
        )
        .await?;
    row.map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).transpose()
}

pub async fn certificate(
    db: &Db,
    directory: &str,
    names: &str,
) -> Result<Option<StoredCert>, sqlx::Error> {
    let row = db
        .timed(
            sqlx::query(
                "SELECT pem, serial, not_before, not_after FROM tls_certificates \
                 WHERE directory = $1 AND names = $2",
            )
            .bind(directory)
            .bind(names)
            .fetch_optional(&db.pool),
        )
        .await?;
    row.map(|r| {
        Ok(StoredCert {
            pem: r.try_get(0)?,
            serial: r.try_get(1)?,
            not_before: r.try_get(2)?,
            not_after: r.try_get(3)?,
        })
    })
    .transpose()
}

/// Stores `cert` for these names unless the one stored lasts longer (a
/// newer certificate is never replaced by an older one). True when it was
/// stored.
pub async fn put_certificate(
    db: &Db,
    directory: &str,
    names: &str,
    cert: &StoredCert,
) -> Result<bool, sqlx::Error> {
    let done = db
        .timed(
            sqlx::query(
                "INSERT INTO tls_certificates (directory, names, pem, serial, not_before, not_after, stored_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (directory, names) DO UPDATE SET pem = excluded.pem, serial = excluded.serial, \
                 not_before = excluded.not_before, not_after = excluded.not_after, stored_at = excluded.stored_at \
                 WHERE tls_certificates.not_after < excluded.not_after",
            )
            .bind(directory)
            .bind(names)
            .bind(&cert.pem)
            .bind(&cert.serial)
            .bind(cert.not_before)
            .bind(cert.not_after)
            .bind(now_ms())
            .execute(&db.pool),
        )
        .await?;
    Ok(done.rows_affected() == 1)
}

/// A pending challenge's answer, as the CA will ask for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// `http-01` or `tls-alpn-01`.
    pub kind: String,
    /// The token (HTTP-01) or the domain (TLS-ALPN-01).
    pub name: String,
    /// The key authorization (HTTP-01) or its SHA-256 in hex (TLS-ALPN-01).
    pub answer: String,
}

pub async fn put_challenge(db: &Db, c: &Challenge, ttl: Duration) -> Result<(), sqlx::Error> {
    db.timed(
        sqlx::query(
            "INSERT INTO tls_challenges (kind, name, answer, expires_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (kind, name) DO UPDATE SET answer = excluded.answer, expires_at = excluded.expires_at",
        )
        .bind(&c.kind)
        .bind(&c.name)
        .bind(&c.answer)
        .bind(now_ms() + ttl.as_millis() as i64)
        .execute(&db.pool),
    )
    .await?;
    Ok(())
}

/// The challenges pending now (forgotten once they expire).
pub async fn challenges(db: &Db) -> Result<Vec<Challenge>, sqlx::Error> {
    let rows = db
        .timed(
            sqlx::query("SELECT kind, name, answer FROM tls_challenges WHERE expires_at > $1")
                .bind(now_ms())
                .fetch_all(&db.pool),
        )
        .await?;
    rows.iter()
        .map(|r| {
            Ok(Challenge {
                kind: r.try_get(0)?,
                name: r.try_get(1)?,
                answer: r.try_get(2)?,
            })
        })
        .collect()
}

/// Removes these challenges (their order is over), and any expired one.
pub async fn drop_challenges(db: &Db, done: &[Challenge]) -> Result<(), sqlx::Error> {
    for c in done {
        db.timed(
            sqlx::query("DELETE FROM tls_challenges WHERE kind = $1 AND name = $2")
                .bind(&c.kind)
                .bind(&c.name)
                .execute(&db.pool),
        )
        .await?;
    }
    db.timed(
        sqlx::query("DELETE FROM tls_challenges WHERE expires_at <= $1")
            .bind(now_ms())
            .execute(&db.pool),
    )
    .await?;
    Ok(())
}

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

/// Stores `key` unless its period has one already (whoever stores first,
/// every process then reads the same key).
pub async fn put_ticket_key(db: &Db, key: &StoredKey) -> Result<(), sqlx::Error> {
    db.timed(
        sqlx::query(
            "INSERT INTO tls_ticket_keys (period, period_ms, secret, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (period) DO NOTHING",
        )
        .bind(key.period)
        .bind(key.period_ms)
        .bind(&key.secret)
        .bind(now_ms())
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

/// Takes or keeps the lease `name` for `holder` until `ttl` from now:
/// true when `holder` holds it (it was free, had expired, or was its own).
pub async fn take_lease(
    db: &Db,
    name: &str,
    holder: &str,
    ttl: Duration,
) -> Result<bool, sqlx::Error> {
    let now = now_ms();
    let done = db
        .timed(
            sqlx::query(
                "INSERT INTO tls_leases (name, holder, expires_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at \
                 WHERE tls_leases.expires_at < $4 OR tls_leases.holder = excluded.holder",
            )
            .bind(name)
            .bind(holder)
            .bind(now + ttl.as_millis() as i64)
            .bind(now)
            .execute(&db.pool),
        )
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Gives the lease up, if `holder` holds it.
pub async fn release_lease(db: &Db, name: &str, holder: &str) -> Result<(), sqlx::Error> {
    db.timed(
        sqlx::query("DELETE FROM tls_leases WHERE name = $1 AND holder = $2")
            .bind(name)
            .bind(holder)
            .execute(&db.pool),
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn db() -> (Db, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("citizen-tls-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = Db::connect_lazy(&format!("sqlite://{}/t.db", dir.display())).unwrap();
        db.migrate().await.unwrap();
        (db, dir)
    }

    fn cert(serial: &str, not_after: i64) -> StoredCert {
        StoredCert {
            pem: format!("pem {serial}"),
            serial: serial.into(),
            not_before: 0,
            not_after,
        }
    }

    #[tokio::test]
    async fn a_certificate_is_replaced_by_a_longer_lasting_one_only() {
        let (db, dir) = db().await;
        assert!(put_certificate(&db, "d", "a.example", &cert("01", 100))
            .await
            .unwrap());
        assert!(put_certificate(&db, "d", "a.example", &cert("02", 200))
            .await
            .unwrap());
        assert!(!put_certificate(&db, "d", "a.example", &cert("01", 100))
            .await
            .unwrap());
        assert_eq!(
            certificate(&db, "d", "a.example").await.unwrap(),
            Some(cert("02", 200))
        );
        assert_eq!(
            certificate_stamp(&db, "d", "a.example").await.unwrap(),
            Some(("02".into(), 200))
        );
        assert_eq!(certificate(&db, "other", "a.example").await.unwrap(), None);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn one_holder_at_a_time_until_the_lease_expires_or_is_given_up() {
        let (db, dir) = db().await;
        let long = Duration::from_secs(60);
        assert!(take_lease(&db, "order", "a", long).await.unwrap());
        assert!(!take_lease(&db, "order", "b", long).await.unwrap());
        assert!(take_lease(&db, "order", "a", long).await.unwrap(), "kept");
        release_lease(&db, "order", "b").await.unwrap();
        assert!(
            !take_lease(&db, "order", "b", long).await.unwrap(),
            "not b's to give"
        );
        release_lease(&db, "order", "a").await.unwrap();
        assert!(take_lease(&db, "order", "b", Duration::ZERO).await.unwrap());
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert!(
            take_lease(&db, "order", "c", long).await.unwrap(),
            "b's expired"
        );
        std::fs::remove_dir_all(dir).unwrap();
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
        std::fs::remove_dir_all(dir).unwrap();
    }
}
