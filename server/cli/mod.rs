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
//!
//! Below them, [`database`] opens the site's database as each command needs
//! it, and [`output`] prints what they say.

pub mod backup;
pub mod check;
pub mod checkouts;
pub mod database;
pub mod holders;
pub mod intro;
pub mod output;
pub mod pack;
pub mod team;
pub mod tls;
pub mod upgrade;

use std::path::PathBuf;

use anyhow::Context;
use clap::Subcommand;

pub use crate::config::{redacted, whoami};

/// The database a command works on: the server's (`DATABASE_URL`).
use database::Database;

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
