//! `team_members`, read for /about.

use serde::Serialize;

use super::Db;

/// One row as the page receives it (`TeamMember` in client/lib/types.ts):
/// missing values are empty strings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct TeamMember {
    pub name: String,
    pub role: String,
    pub bio: String,
    pub linkedin: String,
    pub x_profile: String,
    pub image_url: String,
}

/// Every member, by name ascending.
pub async fn list(db: &Db) -> Result<Vec<TeamMember>, sqlx::Error> {
    sqlx::query_as::<_, TeamMember>(
        "SELECT name, COALESCE(role, '') AS role, COALESCE(bio, '') AS bio, \
         COALESCE(linkedin, '') AS linkedin, COALESCE(x_profile, '') AS x_profile, \
         COALESCE(image_url, '') AS image_url FROM team_members ORDER BY name ASC",
    )
    .fetch_all(&db.pool)
    .await
}
