//! The team shown on /about: the `team_members` table, its SQL (list,
//! import, the sample for `dev`), and the copy of it pages read
//! ([`refresh`] keeps it current in the background).

use serde::Serialize;

use crate::db::{Db, Dialect};
use crate::live::Live;

/// The table of the team.
pub const TABLE: &str = "team_members";

/// One row of `team_members` as /about receives it: missing values are
/// empty strings. `image_url` is a photo when it starts with http, otherwise
/// text or an emoji.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow, ts_rs::TS)]
pub struct TeamMember {
    pub name: String,
    pub role: String,
    pub bio: String,
    pub linkedin: String,
    pub x_profile: String,
    pub image_url: String,
}

/// Every member, by name ascending (case-insensitive, the same on SQLite and
/// PostgreSQL).
pub async fn list(db: &Db) -> Result<Vec<TeamMember>, sqlx::Error> {
    db.timed(
        sqlx::query_as::<_, TeamMember>(
            "SELECT name, COALESCE(role, '') AS role, COALESCE(bio, '') AS bio, \
         COALESCE(linkedin, '') AS linkedin, COALESCE(x_profile, '') AS x_profile, \
         COALESCE(image_url, '') AS image_url FROM team_members ORDER BY LOWER(name) ASC, name ASC",
        )
        .fetch_all(&db.pool),
    )
    .await
}

/// One member as a maintainer writes it in an import file: only `name` is
/// required.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewMember {
    pub name: String,
    pub role: Option<String>,
    pub bio: Option<String>,
    pub linkedin: Option<String>,
    pub x_profile: Option<String>,
    pub image_url: Option<String>,
}

/// Adds or updates (by name) every member, in one transaction; with
/// `replace`, members not in the list are removed first.
pub async fn import(db: &Db, members: &[NewMember], replace: bool) -> Result<usize, sqlx::Error> {
    let mut tx = db.pool.begin().await?;
    if replace {
        sqlx::query("DELETE FROM team_members")
            .execute(&mut *tx)
            .await?;
    }
    write_members(&mut tx, members).await?;
    tx.commit().await?;
    Ok(members.len())
}

async fn write_members(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    members: &[NewMember],
) -> Result<(), sqlx::Error> {
    for m in members {
        sqlx::query("DELETE FROM team_members WHERE name = $1")
            .bind(&m.name)
            .execute(&mut **tx)
            .await?;
        sqlx::query("INSERT INTO team_members (name, role, bio, linkedin, x_profile, image_url) VALUES ($1, $2, $3, $4, $5, $6)")
            .bind(&m.name)
            .bind(&m.role)
            .bind(&m.bio)
            .bind(&m.linkedin)
            .bind(&m.x_profile)
            .bind(&m.image_url)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// The people `dev` shows on /about while the table is empty, so a new
/// maintainer sees the grid filled; `serve` never adds them (production
/// publishes no invented people) unless `--sample-team` asks.
const SAMPLE: &str = include_str!("sample-team.json");

/// Fills an empty table with the sample team; a table with anyone in it is
/// left alone. Tells how many members were added. The count and the rows
/// are one transaction that holds the table's write lock from its first
/// statement, so two servers starting at once (a handover) add the sample
/// once.
pub async fn seed_sample(db: &Db) -> Result<usize, sqlx::Error> {
    let members: Vec<NewMember> =
        serde_json::from_str(SAMPLE).expect("sample-team.json is checked by a unit test");
    let mut tx = db.pool.begin().await?;
    let lock = match db.dialect {
        // Other writers wait; readers still read.
        Dialect::Postgres => "LOCK TABLE team_members IN EXCLUSIVE MODE",
        // A write (of nothing) takes the database's write lock now, rather
        // than when the first row is written, after the count.
        Dialect::Sqlite => "DELETE FROM team_members WHERE 0 = 1",
    };
    sqlx::query(lock).execute(&mut *tx).await?;
    let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM team_members")
        .fetch_one(&mut *tx)
        .await?;
    if count > 0 {
        return Ok(0);
    }
    write_members(&mut tx, &members).await?;
    tx.commit().await?;
    Ok(members.len())
}

/// Removes the member with that name; tells whether there was one.
pub async fn remove(db: &Db, name: &str) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query("DELETE FROM team_members WHERE name = $1")
        .bind(name)
        .execute(&db.pool)
        .await?
        .rows_affected()
        > 0)
}

/// Reads the table again into `team` (a new version only when it
/// changed). A database that is down or fails gives an empty team, as the
/// spec asks; the failure is logged when it empties the list.
pub async fn refresh(db: &Db, team: &Live<Vec<TeamMember>>) {
    let read = if !db.is_up() {
        Err("the database is down".to_owned())
    } else {
        list(db).await.map_err(|e| e.to_string())
    };
    let members = read.as_ref().map_or(0, Vec::len);
    match (team.set(read.clone().unwrap_or_default()), read) {
        (Some(version), Ok(_)) => tracing::info!(version, members, "team changed"),
        (Some(version), Err(error)) => {
            tracing::error!(version, %error, "team load failed; showing an empty team")
        }
        (None, Err(error)) => {
            tracing::debug!(%error, "team load failed; the team was already empty")
        }
        (None, Ok(_)) => {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_sample_team_is_four_named_people_in_the_import_format() {
        let members: Vec<super::NewMember> = serde_json::from_str(super::SAMPLE).unwrap();
        let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Amina Diallo",
                "Jonas Verbeke",
                "Lea Martens",
                "Tomas Reyes"
            ]
        );
    }
}
