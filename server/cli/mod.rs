//! The operator's commands: what the site keeps, read and changed without
//! SQL. Each uses `DATABASE_URL` like the server, on SQLite and PostgreSQL
//! alike, prints a table for people and JSON (`--json`) for scripts, and on
//! bad input says what is wrong, changes nothing and exits non-zero.
//!
//! - [`team`]: the people on /about.
//! - [`intro`]: the contact form's requests: list, show, export, release, retry.
//! - [`checkouts`]: the checkouts Stripe's webhook recorded.
//! - [`check`]: the start's checks of a configuration, without serving.
//! - [`backup`]: a copy of the SQLite database, and putting one back.
//! - [`tls`]: the fleet's HTTPS identity: status, a new certificate now, new ticket keys.
//! - [`upgrade`]: the running server hands over to a new binary.
//! - [`pack`]: a new binary, this one's engine with a checkout's site.

pub mod backup;
pub mod check;
pub mod checkouts;
pub mod holders;
pub mod intro;
pub mod pack;
pub mod team;
pub mod tls;
pub mod upgrade;

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Subcommand;

pub use crate::config::{redacted, whoami};
use crate::db::Db;

/// The database a command works on: the server's (`DATABASE_URL`).
pub use crate::config::DatabaseArgs as Database;

/// An error already told to the user (the command printed its report):
/// the process exits non-zero and says nothing more.
#[derive(Debug)]
pub struct Reported;

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(reported above)")
    }
}

impl std::error::Error for Reported {}

#[derive(Subcommand, Debug)]
pub enum Operate {
    /// Check the configuration `serve` would start with, without serving
    /// (as `nginx -t`): every setting, the site this binary carries, the
    /// database (read-only), the certificate, the listening addresses.
    /// Lists every problem, naming each setting as it was written, and
    /// exits 1 when there is one.
    Check {
        /// The report as JSON: {"ok", "problems", "warnings", "notes", "checked"}.
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        serve: Box<crate::config::ServeArgs>,
    },
    /// Manage the team shown on /about.
    Team {
        #[command(flatten)]
        db: Database,
        #[command(subcommand)]
        command: team::TeamCommand,
    },
    /// The contact form's intro requests: list, show, export, release, retry.
    Intro {
        #[command(flatten)]
        db: Database,
        #[command(subcommand)]
        command: intro::IntroCommand,
    },
    /// The checkouts Stripe's webhook recorded, and their settled status.
    Checkouts {
        #[command(flatten)]
        db: Database,
        #[command(subcommand)]
        command: checkouts::CheckoutsCommand,
    },
    /// The HTTPS identity every server shares: what each serves, a new
    /// certificate now (the old one retired, or revoked), new ticket keys.
    Tls {
        #[command(flatten)]
        db: Database,
        #[command(subcommand)]
        command: tls::TlsCommand,
    },
    /// Copy the SQLite database to FILE while the server runs (a consistent
    /// snapshot). For PostgreSQL, use pg_dump.
    Backup {
        #[command(flatten)]
        db: Database,
        /// A new file: an existing one is never overwritten.
        file: PathBuf,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Put a backup in place of the SQLite database; the server must be
    /// stopped. The database it replaces is kept beside it.
    Restore {
        #[command(flatten)]
        db: Database,
        /// A backup made by `citizen-site backup`.
        file: PathBuf,
        /// Put the backup where there is no database yet (a new machine):
        /// without it, a missing database is refused, as a mistyped
        /// DATABASE_URL most likely is.
        #[arg(long)]
        create: bool,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write a new binary at OUT: this one's engine with the site of the
    /// checkout it is run in (its front end, posts and communities), built
    /// without the Rust compiler. The new binary renders every page (posts
    /// scheduled for later too) before it is written. Refuses a checkout
    /// whose changes need the engine built again (anything under server/,
    /// Cargo.toml, Cargo.lock, a page's "data" in content/routes.json), a
    /// broken content file, a front end that does not build, a page that
    /// does not render (naming it, its error and the line that threw), an
    /// OUT that exists, and an OUT whose folder takes no new file. Needs
    /// Node.js and the checkout's npm packages.
    Pack {
        /// The new binary: a path that does not exist yet.
        out: PathBuf,
    },
    /// Publish the binary now at this path without dropping a connection:
    /// the running server starts it with its listening sockets, waits until
    /// it is ready, then drains and exits. A new binary that fails to start,
    /// or with a page this one renders and it does not, is stopped, and the
    /// old one serves on. (Under systemd,
    /// `systemctl reload citizen-site` runs it.)
    Upgrade {
        /// The server's process id (default: the one process started from
        /// this binary's path).
        #[arg(long)]
        pid: Option<u32>,
        /// Start the new binary with this command's environment (the unit's
        /// environment file as it is now, under `systemctl reload`) instead
        /// of the running server's, once `check` finds no problem in it.
        #[arg(long)]
        apply_env: bool,
    },
}

impl Operate {
    /// Notes which settings the command line gave (`matches` is this
    /// command's own), so that messages name them as written.
    pub fn note_given(&mut self, matches: &clap::ArgMatches) {
        match self {
            Operate::Team { db, .. }
            | Operate::Intro { db, .. }
            | Operate::Checkouts { db, .. }
            | Operate::Tls { db, .. }
            | Operate::Backup { db, .. }
            | Operate::Restore { db, .. } => db.note_given(matches),
            Operate::Check { .. } | Operate::Pack { .. } | Operate::Upgrade { .. } => {}
        }
    }

    pub async fn run(self) -> anyhow::Result<()> {
        match self {
            Operate::Check { json, serve } => check::run(*serve, json).await,
            Operate::Team { db, command } => team::run(&db, command).await,
            Operate::Intro { db, command } => intro::run(&db, command).await,
            Operate::Checkouts { db, command } => checkouts::run(&db, command).await,
            Operate::Tls { db, command } => tls::run(&db, command).await,
            Operate::Backup { db, file, json } => backup::backup(&db, &file, json).await,
            Operate::Restore {
                db,
                file,
                create,
                json,
            } => backup::restore(&db, &file, create, json).await,
            Operate::Upgrade { pid, apply_env } => {
                upgrade::run(pid, std::time::Duration::from_secs(30), apply_env).await
            }
            Operate::Pack { out } => {
                let root = std::env::current_dir().context("the current directory")?;
                tokio::task::spawn_blocking(move || pack::run(&root, &out)).await?
            }
        }
    }
}

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

/// An error and its causes in one line, each said once: a cause whose
/// text the line already holds is left out (sqlx repeats a database's
/// message in its own).
pub fn said_once(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// Prints `value` as pretty JSON on standard output.
pub fn print_json(value: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).expect("JSON values serialize")
    );
}

/// Text a visitor sent, safe to print on a terminal: control characters
/// (escape sequences among them) become U+FFFD, line breaks a space.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\n' | '\r' | '\t' => ' ',
            c if c.is_control() => '\u{FFFD}',
            c => c,
        })
        .collect()
}

/// At most `max` characters of `text`, an ellipsis marking a cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// Rows under a header, in columns as wide as their widest cell.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len().saturating_sub(1);
        let mut out = String::new();
        for (i, cell) in cells.into_iter().enumerate() {
            out.push_str(cell);
            if i < last {
                out.extend(std::iter::repeat_n(
                    ' ',
                    widths[i] - cell.chars().count() + 2,
                ));
            }
        }
        out.trim_end().to_owned()
    };
    let mut out = line(header.to_vec());
    for row in rows {
        out.push('\n');
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

/// `--since`: a day (`2026-11-25`, from midnight UTC) or an RFC 3339 time
/// (`2026-11-25T09:30:00Z`); Unix milliseconds.
pub fn parse_since(raw: &str) -> Result<i64, String> {
    use time::format_description::well_known::Rfc3339;
    let day = time::macros::format_description!("[year]-[month]-[day]");
    let at = time::Date::parse(raw, day)
        .map(|d| d.midnight().assume_utc())
        .or_else(|_| time::OffsetDateTime::parse(raw, &Rfc3339))
        .map_err(|_| format!("{raw:?} is not a date: use YYYY-MM-DD (2026-11-25) or an RFC 3339 time (2026-11-25T09:30:00Z)"))?;
    Ok((at.unix_timestamp_nanos() / 1_000_000) as i64)
}

fn datetime(ms: i64) -> time::OffsetDateTime {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
}

/// A stored time for a table: `2026-11-25 09:30:12` (UTC).
pub fn utc(ms: i64) -> String {
    datetime(ms)
        .format(time::macros::format_description!(
            "[year]-[month]-[day] [hour]:[minute]:[second]"
        ))
        .unwrap_or_default()
}

/// A stored time for JSON and CSV: RFC 3339 in UTC, to the millisecond.
pub fn rfc3339(ms: i64) -> String {
    datetime(ms)
        .format(time::macros::format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        ))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command of the binary, its subcommands' included.
    fn every_command() -> Vec<clap::Command> {
        use crate::config::{DevArgs, ServeArgs};
        use clap::{Args, Subcommand};
        let root = Operate::augment_subcommands(ServeArgs::augment_args(clap::Command::new(
            "citizen-site",
        )))
        .subcommand(DevArgs::augment_args(clap::Command::new("dev")));
        let mut all = Vec::new();
        let mut todo = vec![root];
        while let Some(c) = todo.pop() {
            todo.extend(c.get_subcommands().cloned());
            all.push(c);
        }
        all
    }

    /// `--help` describes every flag and argument, and a command offers only
    /// what it reads: the database is each command's own flag, not a global
    /// one that `pack` and `upgrade` would list and ignore.
    #[test]
    fn every_flag_and_argument_says_what_it_is_and_only_commands_that_use_one_offer_it() {
        let mut undescribed = Vec::new();
        for command in every_command() {
            for arg in command.get_arguments() {
                assert!(
                    !arg.is_global_set(),
                    "--{} is global: every command would offer it",
                    arg.get_id()
                );
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" || arg.is_hide_set() {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    undescribed.push(format!("{} {id}", command.get_name()));
                }
            }
            if ["pack", "upgrade"].contains(&command.get_name()) {
                assert!(
                    command
                        .get_arguments()
                        .all(|a| a.get_id() != "database_url"),
                    "{} offers --database-url, which it does not use",
                    command.get_name()
                );
            }
        }
        assert!(undescribed.is_empty(), "no description: {undescribed:?}");
    }

    #[test]
    fn since_takes_a_day_or_a_time_and_refuses_anything_else() {
        assert_eq!(parse_since("2026-11-25").unwrap(), 1_795_564_800_000);
        assert_eq!(
            parse_since("2026-11-25T09:30:00Z").unwrap(),
            1_795_564_800_000 + 9 * 3_600_000 + 30 * 60_000
        );
        assert_eq!(
            parse_since("2026-11-25T10:30:00+01:00").unwrap(),
            parse_since("2026-11-25T09:30:00Z").unwrap()
        );
        for bad in ["yesterday", "2026-13-01", "25/11/2026", ""] {
            assert!(
                parse_since(bad).unwrap_err().contains("is not a date"),
                "{bad}"
            );
        }
    }

    #[test]
    fn times_print_in_utc_and_round_trip_through_rfc3339() {
        let ms = parse_since("2026-11-25T09:30:12.345Z").unwrap();
        assert_eq!(utc(ms), "2026-11-25 09:30:12");
        assert_eq!(rfc3339(ms), "2026-11-25T09:30:12.345Z");
        assert_eq!(parse_since(&rfc3339(ms)).unwrap(), ms);
    }

    #[test]
    fn what_a_visitor_typed_cannot_drive_the_terminal() {
        assert_eq!(
            printable("Ana\u{1b}[2J\nLopes\u{7}"),
            "Ana\u{FFFD}[2J Lopes\u{FFFD}"
        );
    }

    #[test]
    fn tables_align_columns_by_characters() {
        let t = table(
            &["ID", "NAME"],
            &[
                vec!["1".into(), "Zoë".into()],
                vec!["22".into(), "Ana".into()],
            ],
        );
        assert_eq!(t, "ID  NAME\n1   Zoë\n22  Ana");
        assert_eq!(clip("Riverbend Mutual Credit", 10), "Riverbend…");
    }

    #[test]
    fn passwords_are_not_printed() {
        assert_eq!(
            redacted("postgres://site:hunter2@db.internal/site"),
            "postgres://site:***@db.internal/site"
        );
        assert_eq!(
            redacted("sqlite://data/citizen-site.db"),
            "sqlite://data/citizen-site.db"
        );
    }
}
