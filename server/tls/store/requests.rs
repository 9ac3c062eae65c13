//! An operator's renewal requests (`tls renew`, kept in `tls_orders`) and what became of each.

use super::clock::db_now;
use super::lease::Hold;
use crate::db::Db;
use sqlx::Row;

/// The first schema that keeps what became of a request
/// (`20261128000000_tls_requests.sql`).
pub const OUTCOME_SCHEMA: i64 = 20261128000000;

/// An operator's request for a new certificate (`citizen-site tls renew`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub requested_at: i64,
    /// The certificate it retires (the one stored when it was made).
    pub serial: Option<String>,
    /// That certificate (PEM, without its key), to revoke it even once
    /// another replaced it.
    pub cert: Option<String>,
    /// Revoke that one with the CA too.
    pub revoke: bool,
}

/// What became of a request, as the member that carried it out found it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// The certificate it named is retired (never served or stored again).
    pub retired: bool,
    /// Revoked with the CA: None when not asked.
    pub revoked: Option<bool>,
    /// In words, the CA's answer included where it gave one.
    pub said: String,
    /// The member that carried it out.
    pub by: String,
}

impl Outcome {
    /// Everything the request asked happened.
    pub fn done(&self) -> bool {
        self.retired && self.revoked != Some(false)
    }
}

/// Records a request for a new certificate now, retiring `serial` (whose
/// certificate, without its key, is `cert`); returns it as stored. A
/// pending request for the same certificate that asked to revoke it keeps
/// asking: a later plain `tls renew` never drops a revocation. The fleet's
/// back-off after a refusal stays as it is: a request is no fresh try at a
/// CA that limits the site.
pub async fn request_renewal(
    db: &Db,
    directory: &str,
    names: &str,
    serial: Option<&str>,
    cert: Option<&str>,
    revoke: bool,
) -> Result<Request, sqlx::Error> {
    let sql = format!(
        "INSERT INTO tls_orders (directory, names, next_try_at, retry_ms, requested_at, requested_serial, requested_cert, revoke) \
         VALUES ($1, $2, 0, 0, {now}, $3, $4, $5) \
         ON CONFLICT (directory, names) DO UPDATE SET requested_at = excluded.requested_at, \
         requested_serial = excluded.requested_serial, requested_cert = excluded.requested_cert, \
         revoke = CASE WHEN tls_orders.requested_at IS NOT NULL \
           AND tls_orders.requested_serial = excluded.requested_serial AND tls_orders.revoke = 1 \
           THEN 1 ELSE excluded.revoke END",
        now = db_now(db)
    );
    db.timed(
        sqlx::query(&sql)
            .bind(directory)
            .bind(names)
            .bind(serial)
            .bind(cert)
            .bind(i64::from(revoke))
            .execute(&db.pool),
    )
    .await?;
    Ok(request(db, directory, names)
        .await?
        .expect("the request was just stored"))
}

/// The pending request for these names, without the copy of the
/// certificate it keeps: what `tls status` reads, from a database a
/// migration behind this binary too.
pub async fn request(
    db: &Db,
    directory: &str,
    names: &str,
) -> Result<Option<Request>, sqlx::Error> {
    let row = db
        .timed(
            sqlx::query(
                "SELECT requested_at, requested_serial, revoke FROM tls_orders \
                 WHERE directory = $1 AND names = $2 AND requested_at IS NOT NULL",
            )
            .bind(directory)
            .bind(names)
            .fetch_optional(&db.pool),
        )
        .await?;
    row.map(|r| {
        let revoke: i64 = r.try_get(2)?;
        Ok(Request {
            requested_at: r.try_get(0)?,
            serial: r.try_get(1)?,
            revoke: revoke != 0,
            cert: None,
        })
    })
    .transpose()
}

/// The pending request for these names with the copy of the certificate
/// it keeps (to revoke it): what the robot carries out.
pub async fn request_with_cert(
    db: &Db,
    directory: &str,
    names: &str,
) -> Result<Option<Request>, sqlx::Error> {
    let Some(mut r) = request(db, directory, names).await? else {
        return Ok(None);
    };
    let row = db
        .timed(
            sqlx::query(
                "SELECT requested_cert FROM tls_orders WHERE directory = $1 AND names = $2 AND requested_at = $3",
            )
            .bind(directory)
            .bind(names)
            .bind(r.requested_at)
            .fetch_optional(&db.pool),
        )
        .await?;
    r.cert = row.map(|row| row.try_get(0)).transpose()?.flatten();
    Ok(Some(r))
}

/// The request `r` is done, with `outcome` kept for the command that made
/// it (a later request stays), while `hold` holds.
pub async fn settle_request(
    db: &Db,
    directory: &str,
    names: &str,
    r: &Request,
    outcome: &Outcome,
    hold: &Hold,
) -> Result<bool, sqlx::Error> {
    let sql = format!(
        "UPDATE tls_orders SET requested_at = NULL, requested_serial = NULL, requested_cert = NULL, revoke = 0, \
         outcome_for = $4, outcome = $5 \
         WHERE directory = $1 AND names = $2 AND requested_at = $3 AND {}",
        hold.condition(db, 6)
    );
    let q = sqlx::query(&sql)
        .bind(directory)
        .bind(names)
        .bind(r.requested_at)
        .bind(r.requested_at)
        .bind(serde_json::to_string(outcome).unwrap_or_default());
    let done = db.timed(hold.bind(q).execute(&db.pool)).await?;
    Ok(done.rows_affected() == 1)
}

/// What became of the request made at `requested_at`, once carried out.
pub async fn outcome(
    db: &Db,
    directory: &str,
    names: &str,
    requested_at: i64,
) -> Result<Option<Outcome>, sqlx::Error> {
    Ok(last_outcome(db, directory, names)
        .await?
        .filter(|(at, _)| *at == requested_at)
        .map(|(_, o)| o))
}

/// The last request carried out for these names: when it was made, and
/// what became of it.
pub async fn last_outcome(
    db: &Db,
    directory: &str,
    names: &str,
) -> Result<Option<(i64, Outcome)>, sqlx::Error> {
    let row = db
        .timed(
            sqlx::query(
                "SELECT outcome_for, outcome FROM tls_orders \
                 WHERE directory = $1 AND names = $2 AND outcome IS NOT NULL",
            )
            .bind(directory)
            .bind(names)
            .fetch_optional(&db.pool),
        )
        .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let at: Option<i64> = row.try_get(0)?;
    let text: String = row.try_get(1)?;
    Ok(at.zip(serde_json::from_str(&text).ok()))
}
