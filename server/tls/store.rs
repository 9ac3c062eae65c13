//! The TLS state's SQL (`migrations/*/20261126000000_tls_state.sql` and
//! `20261127000000_tls_fleet.sql`): the same statements for SQLite and
//! PostgreSQL but where the clock is read ([`clock`]). Every time that
//! members compare (the lease, the challenges' expiry, the fleet's
//! back-off, when a member was last seen) is the database's, never a
//! process's. The order lease gives a generation ([`Hold`]), and every write
//! an order makes is conditional on it still holding. A certificate row is
//! replaced by compare-and-swap on its serial.

use std::time::Duration;

use sqlx::Row;

use crate::db::{now_ms, Db, Dialect};

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

/// A hold of the order lease: the fencing token every write of an order
/// carries. Such a write happens only while this holder still holds this
/// generation of the lease, by the database's clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    pub name: String,
    pub holder: String,
    pub generation: i64,
}

impl Hold {
    /// The SQL condition that the lease is still held, its three values
    /// bound from `$first` on ([`Hold::bind`]).
    fn condition(&self, db: &Db, first: usize) -> String {
        format!(
            "EXISTS (SELECT 1 FROM tls_leases WHERE name = ${} AND holder = ${} AND generation = ${} AND expires_at > {})",
            first,
            first + 1,
            first + 2,
            db_now(db)
        )
    }

    fn bind<'q>(&'q self, q: AnyQuery<'q>) -> AnyQuery<'q> {
        q.bind(&self.name).bind(&self.holder).bind(self.generation)
    }
}

type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>;

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

/// Takes the lease `name` for `holder` until `ttl` from now (by the
/// database's clock) if it is free or has expired: its new generation, or
/// None when another holds it. A generation is never given twice.
pub async fn take_lease(
    db: &Db,
    name: &str,
    holder: &str,
    ttl: Duration,
) -> Result<Option<Hold>, sqlx::Error> {
    let now = db_now(db);
    let sql = format!(
                "INSERT INTO tls_leases (name, holder, generation, expires_at) VALUES ($1, $2, 1, {now} + $3) \
                 ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, \
                 generation = tls_leases.generation + 1, expires_at = excluded.expires_at \
                 WHERE tls_leases.expires_at <= {now} \
                 RETURNING generation"
            );
    let row = db
        .timed(
            sqlx::query(&sql)
                .bind(name)
                .bind(holder)
                .bind(ttl.as_millis() as i64)
                .fetch_optional(&db.pool),
        )
        .await?;
    row.map(|r| {
        Ok(Hold {
            name: name.to_owned(),
            holder: holder.to_owned(),
            generation: r.try_get(0)?,
        })
    })
    .transpose()
}

/// Extends `hold` to `ttl` from now, if it still holds (not expired, not
/// taken since). False: it is lost.
pub async fn renew_lease(db: &Db, hold: &Hold, ttl: Duration) -> Result<bool, sqlx::Error> {
    let now = db_now(db);
    let sql = format!(
        "UPDATE tls_leases SET expires_at = {now} + $1 \
         WHERE name = $2 AND holder = $3 AND generation = $4 AND expires_at > {now}"
    );
    let q = sqlx::query(&sql).bind(ttl.as_millis() as i64);
    let done = db.timed(hold.bind(q).execute(&db.pool)).await?;
    Ok(done.rows_affected() == 1)
}

/// Who holds the lease `name` and until when (the database's clock), if
/// anyone does now.
pub async fn lease(db: &Db, name: &str) -> Result<Option<(String, i64, i64)>, sqlx::Error> {
    let sql = format!(
        "SELECT holder, generation, expires_at FROM tls_leases WHERE name = $1 AND expires_at > {}",
        db_now(db)
    );
    let row = db
        .timed(sqlx::query(&sql).bind(name).fetch_optional(&db.pool))
        .await?;
    row.map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
        .transpose()
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

/// Whether `hold` still holds its lease (by the database's clock).
pub async fn holds(db: &Db, hold: &Hold) -> Result<bool, sqlx::Error> {
    let sql = format!("SELECT 1 WHERE {}", hold.condition(db, 1));
    let row = db
        .timed(hold.bind(sqlx::query(&sql)).fetch_optional(&db.pool))
        .await?;
    Ok(row.is_some())
}

/// Gives the lease up, if `hold` still holds it (its generation stays
/// counted, so the next one is new).
pub async fn release_lease(db: &Db, hold: &Hold) -> Result<(), sqlx::Error> {
    let q = sqlx::query(
        "UPDATE tls_leases SET expires_at = 0 WHERE name = $1 AND holder = $2 AND generation = $3",
    );
    db.timed(hold.bind(q).execute(&db.pool)).await?;
    Ok(())
}

/// The fleet's back-off for these names: no member orders before
/// `next_try_at` (the database's clock).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Backoff {
    pub next_try_at: i64,
    pub retry_ms: i64,
    pub failed_by: Option<String>,
    /// What the CA said of the last failed try.
    pub error: Option<String>,
}

pub async fn backoff(db: &Db, directory: &str, names: &str) -> Result<Backoff, sqlx::Error> {
    let row = db
        .timed(
            sqlx::query(
                "SELECT next_try_at, retry_ms, failed_by, error FROM tls_orders WHERE directory = $1 AND names = $2",
            )
            .bind(directory)
            .bind(names)
            .fetch_optional(&db.pool),
        )
        .await?;
    Ok(match row {
        Some(r) => Backoff {
            next_try_at: r.try_get(0)?,
            retry_ms: r.try_get(1)?,
            failed_by: r.try_get(2)?,
            error: r.try_get(3)?,
        },
        None => Backoff::default(),
    })
}

/// Sets the fleet's back-off to `retry` from now, by `member`, while `hold`
/// holds the lease (Duration::ZERO and no member: cleared, after a success).
pub async fn set_backoff(
    db: &Db,
    directory: &str,
    names: &str,
    retry: Duration,
    failed: Option<(&str, &str)>,
    hold: &Hold,
) -> Result<bool, sqlx::Error> {
    let sql = format!(
        "INSERT INTO tls_orders (directory, names, next_try_at, retry_ms, failed_by, error) \
         SELECT $1, $2, {} + $3, $3, $4, $5 WHERE {} \
         ON CONFLICT (directory, names) DO UPDATE SET next_try_at = excluded.next_try_at, \
         retry_ms = excluded.retry_ms, failed_by = excluded.failed_by, error = excluded.error",
        db_now(db),
        hold.condition(db, 6)
    );
    let q = sqlx::query(&sql)
        .bind(directory)
        .bind(names)
        .bind(retry.as_millis() as i64)
        .bind(failed.map(|f| f.0))
        .bind(failed.map(|f| f.1));
    let done = db.timed(hold.bind(q).execute(&db.pool)).await?;
    Ok(done.rows_affected() == 1)
}

/// When the fleet renews the certificate `serial`, and why then.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schedule {
    pub serial: String,
    pub renew_at: i64,
    /// `ari` (the CA's window) or `lifetime` (two thirds of its life).
    pub source: String,
    pub window: Option<(i64, i64)>,
    pub explanation: Option<String>,
    /// When the CA's renewal information is asked next.
    pub poll_at: i64,
}

pub async fn schedule(
    db: &Db,
    directory: &str,
    names: &str,
) -> Result<Option<Schedule>, sqlx::Error> {
    let row = db
        .timed(
            sqlx::query(
                "SELECT renew_serial, renew_at, renew_source, window_start, window_end, explanation, poll_at \
                 FROM tls_orders WHERE directory = $1 AND names = $2 AND renew_serial IS NOT NULL",
            )
            .bind(directory)
            .bind(names)
            .fetch_optional(&db.pool),
        )
        .await?;
    row.map(|r| {
        let start: Option<i64> = r.try_get(3)?;
        let end: Option<i64> = r.try_get(4)?;
        Ok(Schedule {
            serial: r.try_get(0)?,
            renew_at: r.try_get(1)?,
            source: r.try_get(2)?,
            window: start.zip(end),
            explanation: r.try_get(5)?,
            poll_at: r.try_get(6)?,
        })
    })
    .transpose()
}

/// Keeps `s` as the fleet's schedule, while `hold` (the renewal
/// information's lease) holds.
pub async fn set_schedule(
    db: &Db,
    directory: &str,
    names: &str,
    s: &Schedule,
    hold: &Hold,
) -> Result<bool, sqlx::Error> {
    let sql = format!(
        "INSERT INTO tls_orders (directory, names, next_try_at, retry_ms, renew_serial, renew_at, renew_source, \
         window_start, window_end, explanation, poll_at) \
         SELECT $1, $2, 0, 0, $3, $4, $5, $6, $7, $8, $9 WHERE {} \
         ON CONFLICT (directory, names) DO UPDATE SET renew_serial = excluded.renew_serial, \
         renew_at = excluded.renew_at, renew_source = excluded.renew_source, \
         window_start = excluded.window_start, window_end = excluded.window_end, \
         explanation = excluded.explanation, poll_at = excluded.poll_at",
        hold.condition(db, 10)
    );
    let q = sqlx::query(&sql)
        .bind(directory)
        .bind(names)
        .bind(&s.serial)
        .bind(s.renew_at)
        .bind(&s.source)
        .bind(s.window.map(|w| w.0))
        .bind(s.window.map(|w| w.1))
        .bind(&s.explanation)
        .bind(s.poll_at);
    let done = db.timed(hold.bind(q).execute(&db.pool)).await?;
    Ok(done.rows_affected() == 1)
}

/// An operator's request for a new certificate (`citizen-site tls renew`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub requested_at: i64,
    /// The certificate it retires (the one stored when it was made).
    pub serial: Option<String>,
    /// Revoke that one with the CA too.
    pub revoke: bool,
}

/// Records a request for a new certificate now, retiring `serial`; returns
/// it as stored.
pub async fn request_renewal(
    db: &Db,
    directory: &str,
    names: &str,
    serial: Option<&str>,
    revoke: bool,
) -> Result<Request, sqlx::Error> {
    let sql = format!(
        "INSERT INTO tls_orders (directory, names, next_try_at, retry_ms, requested_at, requested_serial, revoke) \
         VALUES ($1, $2, 0, 0, {now}, $3, $4) \
         ON CONFLICT (directory, names) DO UPDATE SET requested_at = excluded.requested_at, \
         requested_serial = excluded.requested_serial, revoke = excluded.revoke, next_try_at = 0, retry_ms = 0",
        now = db_now(db)
    );
    db.timed(
        sqlx::query(&sql)
            .bind(directory)
            .bind(names)
            .bind(serial)
            .bind(i64::from(revoke))
            .execute(&db.pool),
    )
    .await?;
    Ok(request(db, directory, names)
        .await?
        .expect("the request was just stored"))
}

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
        })
    })
    .transpose()
}

/// The request `r` is done (a later one stays), while `hold` holds.
pub async fn settle_request(
    db: &Db,
    directory: &str,
    names: &str,
    r: &Request,
    hold: &Hold,
) -> Result<bool, sqlx::Error> {
    let sql = format!(
        "UPDATE tls_orders SET requested_at = NULL, requested_serial = NULL, revoke = 0 \
         WHERE directory = $1 AND names = $2 AND requested_at = $3 AND {}",
        hold.condition(db, 4)
    );
    let q = sqlx::query(&sql)
        .bind(directory)
        .bind(names)
        .bind(r.requested_at);
    let done = db.timed(hold.bind(q).execute(&db.pool)).await?;
    Ok(done.rows_affected() == 1)
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

/// How a retired ticket key is named: the first 16 bytes of its secret's
/// SHA-256, hex (the secret itself is not kept).
pub fn key_id(secret_hex: &str) -> String {
    use sha2::Digest;
    super::hex(&sha2::Sha256::digest(secret_hex.as_bytes())[..16])
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

/// Every ticket key forgotten and retired, and `fresh` in their place, at
/// once (`citizen-site tls rotate-tickets`).
pub async fn rotate_ticket_keys(db: &Db, fresh: &[StoredKey]) -> Result<usize, sqlx::Error> {
    let retire_sql = format!(
        "INSERT INTO tls_retired (kind, id, retired_at) VALUES ('ticket-key', $1, {}) \
         ON CONFLICT (kind, id) DO NOTHING",
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
            sqlx::query(
                "INSERT INTO tls_ticket_keys (period, period_ms, secret, created_at) VALUES ($1, $2, $3, $4)",
            )
            .bind(key.period)
            .bind(key.period_ms)
            .bind(&key.secret)
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(old.len())
    };
    db.timed(work).await
}

/// What one member says of itself, every time it reads the shared state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub member: String,
    pub serial: Option<String>,
    pub not_after: Option<i64>,
    /// [`Challenge::key`] of every answer it holds.
    pub challenges: Vec<String>,
    pub last_error: Option<String>,
    pub failures: i64,
}

/// Records `m` as seen now (the database's clock).
pub async fn put_member(db: &Db, m: &Member) -> Result<(), sqlx::Error> {
    let sql = format!(
            "INSERT INTO tls_members (member, seen_at, serial, not_after, challenges, last_error, failures) \
             VALUES ($1, {}, $2, $3, $4, $5, $6) \
             ON CONFLICT (member) DO UPDATE SET seen_at = excluded.seen_at, serial = excluded.serial, \
             not_after = excluded.not_after, challenges = excluded.challenges, \
             last_error = excluded.last_error, failures = excluded.failures",
            db_now(db)
        );
    db.timed(
        sqlx::query(&sql)
            .bind(&m.member)
            .bind(&m.serial)
            .bind(m.not_after)
            .bind(m.challenges.join("\n"))
            .bind(&m.last_error)
            .bind(m.failures)
            .execute(&db.pool),
    )
    .await?;
    Ok(())
}

/// Forgets `member` (it stops): no order waits for it.
pub async fn forget_member(db: &Db, member: &str) -> Result<(), sqlx::Error> {
    db.timed(
        sqlx::query("DELETE FROM tls_members WHERE member = $1")
            .bind(member)
            .execute(&db.pool),
    )
    .await?;
    Ok(())
}

/// The members seen within `within` (the database's clock), and forgets
/// those not seen for a day.
pub async fn members(db: &Db, within: Duration) -> Result<Vec<Member>, sqlx::Error> {
    let now = db_now(db);
    let sql2 = format!(
        "SELECT member, serial, not_after, challenges, last_error, failures FROM tls_members \
                 WHERE seen_at > {now} - $1 ORDER BY member"
    );
    let sql = format!("DELETE FROM tls_members WHERE seen_at < {now} - 86400000");
    db.timed(sqlx::query(&sql).execute(&db.pool)).await?;
    let rows = db
        .timed(
            sqlx::query(&sql2)
                .bind(within.as_millis() as i64)
                .fetch_all(&db.pool),
        )
        .await?;
    rows.iter()
        .map(|r| {
            let challenges: String = r.try_get(3)?;
            Ok(Member {
                member: r.try_get(0)?,
                serial: r.try_get(1)?,
                not_after: r.try_get(2)?,
                challenges: challenges.lines().map(str::to_owned).collect(),
                last_error: r.try_get(4)?,
                failures: r.try_get(5)?,
            })
        })
        .collect()
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
