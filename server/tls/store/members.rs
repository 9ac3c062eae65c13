//! The members of the fleet (`tls_members`): what each says of itself every time it reads the shared state.

use super::*;

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
    let now = db_now(db);
    let sql2 = format!(
        "SELECT member, serial, not_after, challenges, last_error, failures FROM tls_members \
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
