//! How a command opens the site's database (`DATABASE_URL`, as the server
//! reads it): existing and up to date to change it, read-only to read it,
//! made only when `--create` asks.

use anyhow::{bail, Context};

use crate::config::redacted;
use crate::db::Db;

pub use crate::config::DatabaseArgs as Database;

/// Opens the site's existing database for an operator's command that
/// changes it: it must be there, reachable, writable by this user and the
/// site's (its tables are brought up to date, as a newer server would).
/// Never makes a database of its own.
pub async fn open(database: &Database) -> anyhow::Result<Db> {
    migrated(database, open_as(database, Access::Write).await?).await
}

/// Opens the site's database for a command that offers `--create`: as
/// [`open`] without it (the refusal offers it); with it, a database that
/// is not there yet (an SQLite file, with its folder) or has none of the
/// site's tables (an empty PostgreSQL database) is made, as the server's
/// first start makes it, and that is said on standard error.
pub async fn open_or_create(database: &Database, create: bool) -> anyhow::Result<Db> {
    let access = match create {
        true => Access::Create,
        false => Access::OfferCreate,
    };
    migrated(database, open_as(database, access).await?).await
}

/// Opens the site's existing database for a command that only reads it:
/// read-only, so it is neither made nor migrated (a schema older than
/// this binary's is read as it is).
pub async fn open_read_only(database: &Database) -> anyhow::Result<Db> {
    open_as(database, Access::Read).await
}

/// How a command opens the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
    /// Writes, and offers `--create`, which was not given.
    OfferCreate,
    /// Writes, and makes the database when it is missing (`--create`).
    Create,
}

async fn migrated(database: &Database, db: Db) -> anyhow::Result<Db> {
    db.migrate().await.with_context(|| {
        format!(
            "bringing the tables of {} up to date",
            redacted(database.url())
        )
    })?;
    Ok(db)
}

async fn open_as(database: &Database, access: Access) -> anyhow::Result<Db> {
    let database_url = database.url();
    let setting = database.setting();
    let (offer, offer_tables) = match access {
        Access::OfferCreate => (", or --create makes it now", ", or --create makes them now"),
        _ => ("", ""),
    };
    if let Some(file) = crate::config::sqlite_path(database_url) {
        if !file.is_file() && access == Access::Create && file.symlink_metadata().is_err() {
            crate::db::sqlite_file::make_folder_and_file(database_url)?;
            let db = Db::connect_lazy(database_url)?;
            db.migrate()
                .await
                .with_context(|| format!("making a new database at {}", file.display()))?;
            eprintln!("made a new database at {} (--create)", file.display());
            return Ok(db);
        }
        if !file.is_file() {
            bail!(
                "no database at {}: the server makes it on its first start{offer} (is {setting} right?)",
                file.display()
            );
        }
        if let Some(why) = crate::db::sqlite_file::access_problem(&file, access != Access::Read) {
            bail!(why);
        }
    }
    let shown = redacted(database_url);
    let db = match access {
        Access::Read => Db::connect_read_only(database_url)?,
        _ => Db::connect_lazy(database_url)?,
    };
    let schema = db
        .schema()
        .await
        .map_err(|e| match crate::db::is_unreachable(&e) {
            true => anyhow::anyhow!(
                "cannot reach the database at {shown} ({}): is it running, and {setting} right?",
                crate::db::reason(&e)
            ),
            false => anyhow::anyhow!(
                "cannot read the database at {shown}: {}",
                crate::db::reason(&e)
            ),
        })?;
    match schema {
        None if access == Access::Create => {
            db.migrate()
                .await
                .with_context(|| format!("making the site's tables in {shown}"))?;
            eprintln!("made the site's tables in {shown} (--create)");
            Ok(db)
        }
        None => bail!("{shown} is not this site's database: it has none of the site's tables (the server makes them on its first start{offer_tables})"),
        Some(v) if v > db.latest_schema() => bail!(
            "{shown} was brought up to date by a newer citizen-site (schema {v}; this binary knows up to {}): use the newer binary",
            db.latest_schema()
        ),
        Some(_) => Ok(db),
    }
}
