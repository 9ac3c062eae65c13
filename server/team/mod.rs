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

/// One member as a maintainer writes it in an import file, or gives it to
/// `team add`: only `name` is required. A field left out (`None`) keeps
/// the member's value; an empty one (`""`, or `null` in a file) clears it.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewMember {
    pub name: String,
    #[serde(default, deserialize_with = "null_is_empty")]
    pub role: Option<String>,
    #[serde(default, deserialize_with = "null_is_empty")]
    pub bio: Option<String>,
    #[serde(default, deserialize_with = "null_is_empty")]
    pub linkedin: Option<String>,
    #[serde(default, deserialize_with = "null_is_empty")]
    pub x_profile: Option<String>,
    #[serde(default, deserialize_with = "null_is_empty")]
    pub image_url: Option<String>,
}

/// A field's `null` in an import file: given, and empty (a field left out
/// is `None` by `#[serde(default)]`, without reaching this).
fn null_is_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value: Option<String> = serde::Deserialize::deserialize(d)?;
    Ok(Some(value.unwrap_or_default()))
}

/// A member's fields besides the name, as the table and the import file
/// name them, in the order messages list them.
pub const FIELDS: [&str; 5] = ["role", "bio", "linkedin", "x_profile", "image_url"];

impl NewMember {
    /// The given values of [`FIELDS`], in their order.
    fn given(&self) -> [Option<&str>; 5] {
        [
            &self.role,
            &self.bio,
            &self.linkedin,
            &self.x_profile,
            &self.image_url,
        ]
        .map(Option::as_deref)
    }
}

impl TeamMember {
    /// The values of [`FIELDS`], in their order.
    fn values(&self) -> [&str; 5] {
        [
            &self.role,
            &self.bio,
            &self.linkedin,
            &self.x_profile,
            &self.image_url,
        ]
        .map(String::as_str)
    }
}

/// What writing one member did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// There was no member by that name.
    Added,
    /// These fields (of [`FIELDS`]) now hold other values.
    Updated(Vec<&'static str>),
    /// Every field given already held its value.
    Unchanged,
}

/// What an [`import`] did: each member of the list, in its order, with
/// what writing it changed, and how many `replace` removed.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    pub members: Vec<(String, Change)>,
    pub removed: u64,
}

impl Imported {
    /// How many of the members were written with `change`'s kind.
    pub fn count(&self, kind: fn(&Change) -> bool) -> usize {
        self.members.iter().filter(|(_, c)| kind(c)).count()
    }
}

/// Adds or updates (by name) every member, in one transaction: a member
/// already there keeps every field the list leaves out. With `replace`,
/// the members whose names are not in the list are removed.
pub async fn import(
    db: &Db,
    members: &[NewMember],
    replace: bool,
) -> Result<Imported, sqlx::Error> {
    let mut tx = db.pool.begin().await?;
    let mut removed = 0;
    if replace {
        let names: Vec<String> = sqlx::query_scalar("SELECT name FROM team_members")
            .fetch_all(&mut *tx)
            .await?;
        for name in names
            .iter()
            .filter(|n| !members.iter().any(|m| &m.name == *n))
        {
            removed += sqlx::query("DELETE FROM team_members WHERE name = $1")
                .bind(name)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        }
    }
    let members = write_members(&mut tx, members).await?;
    tx.commit().await?;
    Ok(Imported { members, removed })
}

async fn write_members(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    members: &[NewMember],
) -> Result<Vec<(String, Change)>, sqlx::Error> {
    let mut done = Vec::with_capacity(members.len());
    for m in members {
        let current = sqlx::query_as::<_, TeamMember>(
            "SELECT name, COALESCE(role, '') AS role, COALESCE(bio, '') AS bio, \
             COALESCE(linkedin, '') AS linkedin, COALESCE(x_profile, '') AS x_profile, \
             COALESCE(image_url, '') AS image_url FROM team_members WHERE name = $1",
        )
        .bind(&m.name)
        .fetch_optional(&mut **tx)
        .await?;
        let before = current.as_ref().map_or([""; 5], TeamMember::values);
        let after: Vec<&str> = m
            .given()
            .iter()
            .zip(before)
            .map(|(given, was)| given.unwrap_or(was))
            .collect();
        let changed: Vec<&'static str> = FIELDS
            .iter()
            .zip(before.iter().zip(&after))
            .filter(|(_, (was, now))| was != now)
            .map(|(field, _)| *field)
            .collect();
        // An empty value is stored as NULL, as a field never given is.
        let stored = |i: usize| Some(after[i]).filter(|v| !v.is_empty());
        let (sql, change) = match (&current, changed.is_empty()) {
            (None, _) => (
                "INSERT INTO team_members (name, role, bio, linkedin, x_profile, image_url) VALUES ($1, $2, $3, $4, $5, $6)",
                Change::Added,
            ),
            (Some(_), true) => ("", Change::Unchanged),
            (Some(_), false) => (
                "UPDATE team_members SET role = $2, bio = $3, linkedin = $4, x_profile = $5, image_url = $6 WHERE name = $1",
                Change::Updated(changed),
            ),
        };
        if !sql.is_empty() {
            sqlx::query(sql)
                .bind(&m.name)
                .bind(stored(0))
                .bind(stored(1))
                .bind(stored(2))
                .bind(stored(3))
                .bind(stored(4))
                .execute(&mut **tx)
                .await?;
        }
        done.push((m.name.clone(), change));
    }
    Ok(done)
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
    /// In an import file, a field left out keeps the member's value; one
    /// given empty, or as null, clears it.
    #[test]
    fn a_field_left_out_is_not_given_and_null_is_given_empty() {
        let members: Vec<super::NewMember> = serde_json::from_str(
            r#"[{"name": "Ana", "role": null, "bio": "", "linkedin": "https://l.example/ana"}]"#,
        )
        .unwrap();
        assert_eq!(
            members[0].given(),
            [
                Some(""),
                Some(""),
                Some("https://l.example/ana"),
                None,
                None
            ]
        );
    }

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
