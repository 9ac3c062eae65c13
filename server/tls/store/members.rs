//! The members of the fleet (`tls_members`): what each says of itself every time it reads the shared state.

use sqlx::Row;
use std::time::Duration;

use super::clock::db_now;
use crate::db::Db;

/// The first schema whose member rows say the names and the source of what
/// each member serves (`20261129000000_tls_served.sql`).
pub const SERVED_SCHEMA: i64 = 20261129000000;

/// What one member says of itself, every time it reads the shared state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub member: String,
    pub serial: Option<String>,
    pub not_after: Option<i64>,
    /// The names the certificate it serves covers; None when the row does
    /// not say (a database older than [`SERVED_SCHEMA`], or a row of an
    /// older version).
    pub names: Option<Vec<String>>,
    /// Where that certificate comes from.
    pub source: Source,
    /// [`Challenge::key`] of every answer it holds.
    pub challenges: Vec<String>,
    pub last_error: Option<String>,
    pub failures: i64,
}

/// Where a member's certificate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Ordered by the fleet (`TLS_DOMAINS`). The rows of older versions,
    /// which kept rows under ACME alone, say so too.
    Acme,
    /// The operator's own files (`TLS_CERT`, `TLS_KEY`): nothing is
    /// ordered for it, and it answers no challenge.
    File,
}

impl Source {
    /// As the table and `tls status` write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Acme => "acme",
            Source::File => "file",
        }
    }

    fn read(stored: Option<&str>) -> Source {
        match stored {
            Some("file") => Source::File,
            _ => Source::Acme,
        }
    }
}

/// Records `m` as seen now (the database's clock).
pub async fn put_member(db: &Db, m: &Member) -> Result<(), sqlx::Error> {
    let sql = format!(
            "INSERT INTO tls_members (member, seen_at, serial, not_after, challenges, last_error, failures, names, source) \
             VALUES ($1, {}, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (member) DO UPDATE SET seen_at = excluded.seen_at, serial = excluded.serial, \
             not_after = excluded.not_after, challenges = excluded.challenges, \
             last_error = excluded.last_error, failures = excluded.failures, \
             names = excluded.names, source = excluded.source",
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
            .bind(m.names.as_ref().map(|n| n.join(",")))
            .bind(m.source.as_str())
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

/// Forgets the members not seen for a day (a server's, as it orders).
pub async fn forget_gone_members(db: &Db) -> Result<(), sqlx::Error> {
    let sql = format!(
        "DELETE FROM tls_members WHERE seen_at < {} - 86400000",
        db_now(db)
    );
    db.timed(sqlx::query(&sql).execute(&db.pool)).await?;
    Ok(())
}

/// The members seen within `within` (the database's clock). Only reads.
pub async fn members(db: &Db, within: Duration) -> Result<Vec<Member>, sqlx::Error> {
    members_of_schema(db, within, SERVED_SCHEMA).await
}

/// The members whose certificate the fleet orders ([`Source::Acme`]):
/// those an order or a renewal request waits for.
pub async fn acme_members(db: &Db, within: Duration) -> Result<Vec<Member>, sqlx::Error> {
    let mut members = members(db, within).await?;
    members.retain(|m| m.source == Source::Acme);
    Ok(members)
}

/// [`members`] from a database of the schema `schema` (a migration or two
/// behind this binary, read as it is): below [`SERVED_SCHEMA`] the names
/// are None and the source reads as ACME, which the caller shows as not
/// known.
pub async fn members_of_schema(
    db: &Db,
    within: Duration,
    schema: i64,
) -> Result<Vec<Member>, sqlx::Error> {
    let now = db_now(db);
    let served = match schema >= SERVED_SCHEMA {
        true => "names, source",
        false => "CAST(NULL AS TEXT), CAST(NULL AS TEXT)",
    };
    let sql2 = format!(
        "SELECT member, serial, not_after, challenges, last_error, failures, {served} FROM tls_members \
                 WHERE seen_at > {now} - $1 ORDER BY member"
    );
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
            let names: Option<String> = r.try_get(6)?;
            let source: Option<String> = r.try_get(7)?;
            Ok(Member {
                member: r.try_get(0)?,
                serial: r.try_get(1)?,
                not_after: r.try_get(2)?,
                names: names.map(|n| {
                    n.split(',')
                        .filter(|n| !n.is_empty())
                        .map(str::to_owned)
                        .collect()
                }),
                source: Source::read(source.as_deref()),
                challenges: challenges.lines().map(str::to_owned).collect(),
                last_error: r.try_get(4)?,
                failures: r.try_get(5)?,
            })
        })
        .collect()
}
