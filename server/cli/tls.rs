//! `citizen-site tls ...`: the fleet's HTTPS identity on a bad day, with
//! `DATABASE_URL` alone. What every server serves, from ACME or its own
//! `TLS_CERT` (`status`), a new certificate now with the old one retired
//! everywhere (`renew`, after a key leak or a CA's revocation notice), and
//! new session-ticket keys with every older one forgotten
//! (`rotate-tickets`, after a ticket key leak).
//!
//! The commands change the database; the servers do the rest (a command
//! cannot answer the CA's challenges). Each refuses when the database cannot
//! be reached, and writes in one statement or one transaction.

use std::time::Duration;

use anyhow::Context;
use clap::Subcommand;
use serde_json::json;

use super::database::{self, Database};
use super::output::{clip, print_json, rfc3339, table, utc};
use crate::db::Db;
use crate::tls::robot::LEASE;
use crate::tls::store::{self, Member};
use crate::tls::tickets::{self, TicketSchedule};

mod members;
mod renew;
use members::{member_json, source};
#[cfg(test)]
use renew::gone;
use renew::{renew, Which};

/// Members seen this recently are listed by `status`.
const LISTED: Duration = Duration::from_secs(60);

#[derive(Subcommand, Debug)]
pub enum TlsCommand {
    /// Every server seen in the last minute: the certificate it serves (its
    /// serial, names and end, from ACME or its own TLS_CERT), its own failed
    /// orders; the stored certificate, its renewal time and where that came
    /// from; who holds the order lease; when the ticket key was made.
    Status {
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// A new certificate for the fleet now: a running server orders it, and
    /// the old one is retired (never served or stored again, on any server,
    /// local copies included). Waits until every running server under ACME
    /// serves the new one. Servers serving their own TLS_CERT order
    /// nothing: their files are replaced by hand.
    Renew {
        /// Also revoke the old certificate with the CA (reason
        /// keyCompromise): after its key leaked.
        #[arg(long)]
        revoke: bool,
        /// The certificate's names as stored (`tls status` lists them), when
        /// the database holds more than one.
        #[arg(long)]
        names: Option<String>,
        /// The ACME directory the servers order from, when the database
        /// holds certificates of several (after a move from a staging
        /// CA). Without it, the one the running servers serve.
        #[arg(long, env = "ACME_DIRECTORY")]
        directory: Option<String>,
        /// Try at once, even while the fleet backs off after the CA refused
        /// its last try (a rate limit, a failed validation): the CA's
        /// limits count this try too. Without it, the back-off stands.
        #[arg(long)]
        now: bool,
        /// How long to wait for the new certificate, in seconds.
        #[arg(long, default_value_t = 300)]
        wait: u64,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// New session-ticket keys now, every older key forgotten by every
    /// server: sessions from before no longer resume (a full handshake
    /// instead). The answer to a leaked ticket key.
    RotateTickets {
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(database: &Database, cmd: TlsCommand) -> anyhow::Result<()> {
    // `status` only reads: read-only, never migrated, on a database its
    // user may only read too.
    if let TlsCommand::Status { json } = cmd {
        let db = database::open_read_only(database).await?;
        return status(&db, json).await;
    }
    let db = database::open(database).await?;
    match cmd {
        TlsCommand::Status { .. } => unreachable!("answered above"),
        TlsCommand::Renew {
            revoke,
            now,
            names,
            directory,
            wait,
            json,
        } => {
            let which = Which {
                names: names.as_deref(),
                directory: directory.as_deref().filter(|d| !d.trim().is_empty()),
            };
            renew(&db, revoke, now, which, Duration::from_secs(wait), json).await
        }
        TlsCommand::RotateTickets { json } => rotate_tickets(&db, json).await,
    }
}

async fn status(db: &Db, json: bool) -> anyhow::Result<()> {
    // Read-only, so a database a migration or two behind this binary (a
    // new binary installed, the servers not yet reloaded) is read as it
    // is: what only the newer schema keeps is not shown.
    let schema = db.schema().await?.unwrap_or(0);
    let behind = db.migrations_after(schema);
    let outcomes_kept = schema >= store::OUTCOME_SCHEMA;
    // Rows of a schema older than the served columns say neither the
    // names nor the source: shown as unknown, not guessed.
    let served_kept = schema >= store::SERVED_SCHEMA;
    let now = store::clock(db).await?;
    let members = store::members_of_schema(db, LISTED, schema).await?;
    let lease = store::lease(db, LEASE).await?;
    let mut certificates = Vec::new();
    for (directory, names, cert) in store::certificates(db).await? {
        let schedule = store::schedule(db, &directory, &names)
            .await?
            .filter(|s| s.serial == cert.serial);
        let backoff = store::backoff(db, &directory, &names).await?;
        let request = store::request(db, &directory, &names).await?;
        let done = match outcomes_kept {
            true => store::last_outcome(db, &directory, &names).await?,
            false => None,
        };
        certificates.push((directory, names, cert, schedule, backoff, request, done));
    }
    let key = sealing_key(db, now).await?;
    if json {
        print_json(&json!({
            "certificates": certificates.iter().map(|(directory, names, cert, schedule, backoff, request, done)| json!({
                "directory": directory,
                "names": names,
                "serial": cert.serial,
                "not_after": rfc3339(cert.not_after),
                "renew_at": schedule.as_ref().map(|s| rfc3339(s.renew_at)),
                "renewal_source": schedule.as_ref().map(|s| s.source.clone()),
                "explanation": schedule.as_ref().and_then(|s| s.explanation.clone()),
                "next_try_at": (backoff.next_try_at > now).then(|| rfc3339(backoff.next_try_at)),
                "last_error": backoff.error,
                "renewal_requested": request.is_some(),
                "revoke_requested": request.as_ref().is_some_and(|r| r.revoke),
                "last_renewal_request": done.as_ref().map(|(at, o)| json!({
                    "requested_at": rfc3339(*at), "ok": o.done(), "retired": o.retired,
                    "revoked": o.revoked, "said": o.said, "by": o.by,
                })),
            })).collect::<Vec<_>>(),
            "lease": lease.as_ref().map(|(holder, generation, until)| json!({
                "holder": holder, "generation": generation, "expires_at": rfc3339(*until),
            })),
            "members": members.iter().map(|m| member_json(m, served_kept)).collect::<Vec<_>>(),
            "ticket_key_age_seconds": key.as_ref().map(|k| k.age_ms / 1000),
            "ticket_key_sealing_since": key.as_ref().map(|k| rfc3339(k.sealing_since)),
        }));
        return Ok(());
    }
    if behind > 0 {
        let mut unseen = Vec::new();
        if !outcomes_kept {
            unseen.push("the last renewal request's outcome");
        }
        if !served_kept {
            unseen.push("the names and source of what each server serves");
        }
        let until = match unseen.is_empty() {
            true => String::new(),
            false => format!("; until then not shown: {}", unseen.join(" and ")),
        };
        let migrations = match behind {
            1 => "a migration".to_owned(),
            n => format!("{n} migrations"),
        };
        println!("(the database is {migrations} behind this binary: a server of this version brings it up to date as it starts{until})");
    }
    let own_files = !members.is_empty() && members.iter().all(|m| m.source == store::Source::File);
    match (certificates.is_empty(), own_files) {
        (true, true) => println!("(no certificate stored, and none ordered: the servers serve their own TLS_CERT files, listed below)"),
        (true, false) => println!("(no certificate stored: the servers order one once they run with TLS_DOMAINS)"),
        (false, _) => {}
    }
    for (directory, names, cert, schedule, backoff, request, done) in &certificates {
        println!("certificate   {names} (from {directory})");
        println!("  serial      {}", cert.serial);
        println!("  expires     {} UTC", utc(cert.not_after));
        match schedule {
            Some(s) => println!(
                "  renewal     {} UTC ({}{})",
                utc(s.renew_at),
                if s.source == "ari" {
                    "the CA's window"
                } else {
                    "two thirds of its life"
                },
                s.explanation
                    .as_deref()
                    .map(|u| format!("; {u}"))
                    .unwrap_or_default()
            ),
            None => println!("  renewal     not scheduled yet (two thirds of its life)"),
        }
        if backoff.next_try_at > now {
            println!(
                "  back-off    no order before {} UTC; the CA said: {}",
                utc(backoff.next_try_at),
                backoff.error.as_deref().unwrap_or("-")
            );
        }
        if let Some(r) = request {
            println!(
                "  requested   a new certificate, at {} UTC (tls renew{})",
                utc(r.requested_at),
                if r.revoke {
                    "; the old one revoked too"
                } else {
                    ""
                }
            );
        }
        if let Some((at, o)) = done {
            println!(
                "  last renew  requested {} UTC: {}{} (by {})",
                utc(*at),
                if o.done() { "" } else { "NOT DONE: " },
                o.said,
                o.by
            );
        }
    }
    match &lease {
        Some((holder, generation, until)) => println!(
            "order lease   held by {holder} (generation {generation}) for {} s more",
            (until - now).max(0) / 1000
        ),
        None => println!("order lease   free"),
    }
    match &key {
        Some(k) => println!(
            "ticket key    made {} s ago (sealing new sessions since {} UTC)",
            k.age_ms / 1000,
            utc(k.sealing_since)
        ),
        None => println!("ticket key    none stored yet"),
    }
    println!();
    if members.is_empty() {
        println!("(no server seen in the last minute)");
        return Ok(());
    }
    let renewal = |m: &Member| {
        if m.source == store::Source::File {
            // Nothing orders it: the operator replaces the files.
            return "by hand".to_owned();
        }
        certificates
            .iter()
            .find_map(|(_, _, _, s, _, _, _)| {
                s.as_ref().filter(|s| Some(&s.serial) == m.serial.as_ref())
            })
            .map(|s| format!("{} ({})", utc(s.renew_at), s.source))
            .unwrap_or_else(|| "-".into())
    };
    let rows: Vec<Vec<String>> = members
        .iter()
        .map(|m| {
            vec![
                m.member.clone(),
                source(m, served_kept).unwrap_or("-").to_owned(),
                m.serial.clone().unwrap_or_else(|| "-".into()),
                m.names
                    .as_ref()
                    .filter(|n| !n.is_empty())
                    .map_or_else(|| "-".into(), |n| n.join(", ")),
                m.not_after.map(utc).unwrap_or_else(|| "-".into()),
                renewal(m),
                m.failures.to_string(),
                clip(m.last_error.as_deref().unwrap_or("-"), 60),
            ]
        })
        .collect();
    println!(
        "{}",
        table(
            &[
                "SERVER",
                "SOURCE",
                "SERVES",
                "NAMES",
                "EXPIRES (UTC)",
                "RENEWAL (UTC)",
                "FAILED",
                "LAST ERROR"
            ],
            &rows
        )
    );
    println!("{} server(s) seen in the last minute", members.len());
    Ok(())
}

/// The session-ticket key that seals new sessions now.
struct SealingKey {
    /// How long ago it was made (by a server, a period before it seals,
    /// or by `tls rotate-tickets`), in milliseconds.
    age_ms: i64,
    /// Since when it seals (Unix milliseconds): its period's start, or
    /// when it was made if later (a rotation).
    sealing_since: i64,
}

/// The key whose period has begun last, as of `now` (the database's clock).
async fn sealing_key(db: &Db, now: i64) -> anyhow::Result<Option<SealingKey>> {
    Ok(store::ticket_keys_made(db)
        .await?
        .into_iter()
        .map(|(k, made)| (k.period * k.period_ms, made))
        .filter(|(start, _)| *start <= now)
        .max_by_key(|(start, _)| *start)
        .map(|(start, made)| SealingKey {
            age_ms: (now - made).max(0),
            sealing_since: start.max(made.min(now)),
        }))
}

async fn rotate_tickets(db: &Db, json: bool) -> anyhow::Result<()> {
    let keys = store::ticket_keys(db).await?;
    // The servers' period, as their keys say (6 hours unless a test shortened it).
    let period_ms = keys
        .iter()
        .map(|k| k.period_ms)
        .max()
        .unwrap_or(crate::config::TICKET_PERIOD.as_millis() as i64)
        .max(1);
    let now = store::clock(db).await?;
    let current = now / period_ms;
    let fresh = [current, current + 1]
        .into_iter()
        .map(|period| tickets::new_key(period, period_ms))
        .collect::<Option<Vec<_>>>()
        .context("no random bytes for a session-ticket key")?;
    let retired = store::rotate_ticket_keys(db, &fresh)
        .await
        .context("replacing the session-ticket keys")?;
    let within = TicketSchedule::every(Duration::from_millis(period_ms as u64)).read_every();
    if json {
        print_json(
            &json!({ "retired_keys": retired, "new_keys": fresh.len(), "forgotten_within_seconds": within.as_secs() }),
        );
    } else {
        println!(
            "rotated: {retired} session-ticket key(s) retired, {} new; every running server forgets the old ones within {} s, and sessions from before then make a full handshake",
            fresh.len(),
            within.as_secs()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests;
