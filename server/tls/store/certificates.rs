//! The certificate rows (`tls_certificates`), replaced by compare-and-swap on their serial, and what is retired (`tls_retired`).

use super::clock::db_now;
use super::lease::Hold;
use crate::db::Db;
use sqlx::Row;

/// A stored certificate: its key and chain (PEM), and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCert {
    pub pem: String,
    pub serial: String,
    pub not_before: i64,
    pub not_after: i64,
}

/// The serial and start of the certificate stored for these names: what a
/// process compares with the one it serves, every second.
pub async fn certificate_stamp(
    db: &Db,
    directory: &str,
    names: &str,
) -> Result<Option<(String, i64)>, sqlx::Error> {
    let row = db
        .timed(
            sqlx::query(
                "SELECT serial, not_before FROM tls_certificates WHERE directory = $1 AND names = $2",
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

/// Stores `cert` for these names in place of the row whose serial is
/// `replacing` (None: where there is no row), and only while `hold` holds
/// the order lease when one is given. A compare-and-swap: which of two
/// certificates is the newer, or whether the stored one can be used at
/// all, is the caller's judgement (`tls::Identity::offer`); this only makes
/// sure the row it judged is the row it replaces. True when it was stored.
pub async fn put_certificate(
    db: &Db,
    directory: &str,
    names: &str,
    cert: &StoredCert,
    replacing: Option<&str>,
    hold: Option<&Hold>,
) -> Result<bool, sqlx::Error> {
    let fence = |first| hold.map_or_else(|| "1 = 1".to_owned(), |h| h.condition(db, first));
    let sql = match replacing {
        None => format!(
            "INSERT INTO tls_certificates (directory, names, pem, serial, not_before, not_after, stored_at) \
             SELECT $1, $2, $3, $4, $5, $6, {} WHERE {} \
             ON CONFLICT (directory, names) DO NOTHING",
            db_now(db),
            fence(7)
        ),
        Some(_) => format!(
            "UPDATE tls_certificates SET pem = $3, serial = $4, not_before = $5, not_after = $6, stored_at = {} \
             WHERE directory = $1 AND names = $2 AND serial = $7 AND {}",
            db_now(db),
            fence(8)
        ),
    };
    let q = sqlx::query(&sql);
    let mut q = q
        .bind(directory)
        .bind(names)
        .bind(&cert.pem)
        .bind(&cert.serial)
        .bind(cert.not_before)
        .bind(cert.not_after);
    if let Some(serial) = replacing {
        q = q.bind(serial);
    }
    if let Some(h) = hold {
        q = h.bind(q);
    }
    let done = db.timed(q.execute(&db.pool)).await?;
    Ok(done.rows_affected() == 1)
}

/// When the certificate `serial` was stored for these names (the
/// database's clock), if it is the one stored.
pub async fn stored_at(
    db: &Db,
    directory: &str,
    names: &str,
    serial: &str,
) -> Result<Option<i64>, sqlx::Error> {
    let row = db
        .timed(
            sqlx::query(
                "SELECT stored_at FROM tls_certificates WHERE directory = $1 AND names = $2 AND serial = $3",
            )
            .bind(directory)
            .bind(names)
            .bind(serial)
            .fetch_optional(&db.pool),
        )
        .await?;
    row.map(|r| r.try_get(0)).transpose()
}

/// Every stored certificate: its directory and names, and itself.
pub async fn certificates(db: &Db) -> Result<Vec<(String, String, StoredCert)>, sqlx::Error> {
    let rows = db
        .timed(
            sqlx::query(
                "SELECT directory, names, pem, serial, not_before, not_after FROM tls_certificates \
                 ORDER BY directory, names",
            )
            .fetch_all(&db.pool),
        )
        .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get(0)?,
                r.try_get(1)?,
                StoredCert {
                    pem: r.try_get(2)?,
                    serial: r.try_get(3)?,
                    not_before: r.try_get(4)?,
                    not_after: r.try_get(5)?,
                },
            ))
        })
        .collect()
}

/// What is retired: a certificate (by serial) or a ticket key (by
/// [`key_id`]). Never served, stored or written back again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retired {
    Certificate,
    TicketKey,
}

impl Retired {
    fn kind(self) -> &'static str {
        match self {
            Retired::Certificate => "certificate",
            Retired::TicketKey => "ticket-key",
        }
    }
}

pub async fn retire(db: &Db, what: Retired, id: &str) -> Result<(), sqlx::Error> {
    let sql = format!(
        "INSERT INTO tls_retired (kind, id, retired_at) VALUES ($1, $2, {}) ON CONFLICT (kind, id) DO NOTHING",
        db_now(db)
    );
    db.timed(
        sqlx::query(&sql)
            .bind(what.kind())
            .bind(id)
            .execute(&db.pool),
    )
    .await?;
    Ok(())
}

pub async fn is_retired(db: &Db, what: Retired, id: &str) -> Result<bool, sqlx::Error> {
    let row = db
        .timed(
            sqlx::query("SELECT 1 FROM tls_retired WHERE kind = $1 AND id = $2")
                .bind(what.kind())
                .bind(id)
                .fetch_optional(&db.pool),
        )
        .await?;
    Ok(row.is_some())
}
