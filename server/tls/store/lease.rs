//! The leases (`tls_leases`): one holder at a time, by the database's clock, each take a new generation ([`Hold`]), the fencing token every write of an order carries.

use sqlx::Row;
use std::time::Duration;

use super::clock::db_now;
use super::clock::AnyQuery;
use crate::db::Db;

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
    pub(super) fn condition(&self, db: &Db, first: usize) -> String {
        format!(
            "EXISTS (SELECT 1 FROM tls_leases WHERE name = ${} AND holder = ${} AND generation = ${} AND expires_at > {})",
            first,
            first + 1,
            first + 2,
            db_now(db)
        )
    }

    pub(super) fn bind<'q>(&'q self, q: AnyQuery<'q>) -> AnyQuery<'q> {
        q.bind(&self.name).bind(&self.holder).bind(self.generation)
    }
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

/// Gives up every lease `holder` holds (it stops).
pub async fn release_leases_of(db: &Db, holder: &str) -> Result<(), sqlx::Error> {
    let q =
        sqlx::query("UPDATE tls_leases SET expires_at = 0 WHERE holder = $1 AND expires_at > 0")
            .bind(holder);
    db.timed(q.execute(&db.pool)).await?;
    Ok(())
}
