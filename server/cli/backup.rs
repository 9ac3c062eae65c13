//! `citizen-site backup FILE` and `citizen-site restore FILE`: the embedded
//! SQLite database copied out while the server runs, and put back while it
//! is stopped (see `db::sqlite_file`). PostgreSQL has its own tools.

use std::path::Path;

use anyhow::bail;
use serde_json::json;

use super::database::{self, Database};
use super::output::print_json;
use crate::config::sqlite_path;
use crate::db::sqlite_file::{self, Counts};
use crate::{intake, payments, team, tls};

/// The site's own tables, each named by the domain that owns it: a file
/// without one of them is not a database of this site, and their rows are
/// what a backup and a restore report.
const TABLES: [&str; 3] = [
    intake::store::TABLE,
    payments::checkouts::TABLE,
    team::TABLE,
];

pub async fn backup(database: &Database, file: &Path, json: bool) -> anyhow::Result<()> {
    if sqlite_path(database.url()).is_none() {
        bail!(
            "{} is a PostgreSQL database: back it up with pg_dump \
             (pg_dump --format=custom --file {} \"$DATABASE_URL\"); nothing was written",
            database.setting(),
            file.display()
        );
    }
    // Opened as the server opens it, so the copy is of the site's current tables.
    let db = database::open(database).await?;
    let done = sqlite_file::backup(&db, file, &TABLES).await?;
    if json {
        print_json(
            &json!({ "file": done.file, "bytes": done.bytes, "counts": counts_json(&done.counts) }),
        );
    } else {
        println!(
            "backed up to {} ({} bytes): {}",
            done.file.display(),
            done.bytes,
            counts_text(&done.counts)
        );
    }
    Ok(())
}

/// Puts the backup `file` in place of the database. A database that is
/// not there is made from the backup only with `create` (a new machine):
/// otherwise the setting is most likely mistyped, and nothing is made.
pub async fn restore(
    setting: &Database,
    file: &Path,
    create: bool,
    json: bool,
) -> anyhow::Result<()> {
    let Some(database) = sqlite_path(setting.url()) else {
        bail!("{} is a PostgreSQL database: restore a pg_dump file with pg_restore (pg_restore --clean --dbname \"$DATABASE_URL\" FILE); nothing was changed", setting.setting())
    };
    match database.symlink_metadata() {
        Err(_) if !create => bail!(
            "no database at {} (is {} right?): --create puts the backup there; nothing was changed",
            database.display(),
            setting.setting()
        ),
        Ok(_) if !database.is_file() => bail!(
            "{} is not a database file (is {} right?): name the file the server uses; nothing was changed",
            database.display(),
            setting.setting()
        ),
        _ => {}
    }
    // The HTTPS identity (certificates, ticket keys) never goes back in
    // time: the restored file keeps the one of the database it replaces.
    let done = sqlite_file::restore(&database, file, &TABLES, &tls::store::TABLES).await?;
    if json {
        print_json(
            &json!({ "database": database, "from": file, "counts": counts_json(&done.counts), "replaced": done.replaced, "tls_kept": !done.kept.is_empty() }),
        );
    } else {
        println!(
            "restored {} from {}: {}",
            database.display(),
            file.display(),
            counts_text(&done.counts)
        );
        if let Some(aside) = &done.replaced {
            println!("the database it replaced is kept as {}", aside.display());
        }
        if !done.kept.is_empty() {
            println!("the HTTPS identity (account, certificates, session-ticket keys) is the replaced database's, not the backup's: it never goes back in time");
        }
    }
    Ok(())
}

/// The rows of `table` among `counts`.
fn rows(counts: &Counts, table: &str) -> i64 {
    counts
        .iter()
        .find(|(t, _)| *t == table)
        .map_or(0, |(_, n)| *n)
}

fn counts_json(c: &Counts) -> serde_json::Value {
    json!({
        "intro_requests": rows(c, intake::store::TABLE),
        "checkouts": rows(c, payments::checkouts::TABLE),
        "team_members": rows(c, team::TABLE),
    })
}

fn counts_text(c: &Counts) -> String {
    format!(
        "{} intro request(s), {} checkout(s), {} team member(s)",
        rows(c, intake::store::TABLE),
        rows(c, payments::checkouts::TABLE),
        rows(c, team::TABLE)
    )
}
