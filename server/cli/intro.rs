//! `citizen-site intro ...`: the contact form's requests, without SQL.

use std::time::Duration;

use anyhow::{bail, Context};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Subcommand, ValueEnum};
use serde_json::{json, Value};

use super::database::{self, Database};
use super::output::{clip, parse_since, print_json, printable, rfc3339, table, utc};
use crate::config::NotionArgs;
use crate::db::{now_ms, Db};
use crate::intake::forwarder;
use crate::intake::notion::NotionClient;
use crate::intake::records::{self, Filter, Record, Released, State};
use crate::intake::store;

#[derive(Subcommand, Debug)]
pub enum IntroCommand {
    /// The stored requests, oldest first.
    List {
        /// Only these: pending, failed (waiting after a failed try), forwarded, spam.
        #[arg(long, value_parser = state_parser())]
        status: Option<State>,
        /// Only those received since DATE (YYYY-MM-DD, UTC, or an RFC 3339 time).
        #[arg(long, value_name = "DATE", value_parser = parse_since)]
        since: Option<i64>,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// One request, every field.
    Show {
        /// The request's id (as `intro list` shows it).
        id: String,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The requests on standard output, for a spreadsheet (CSV) or a script (JSON).
    Export {
        /// CSV for a spreadsheet, or JSON.
        #[arg(long, value_enum, default_value_t = Format::Csv)]
        format: Format,
        /// Only those received since DATE (YYYY-MM-DD, UTC, or an RFC 3339 time).
        #[arg(long, value_name = "DATE", value_parser = parse_since)]
        since: Option<i64>,
    },
    /// Send a request the honeypot held as spam on to Notion after all.
    Release {
        /// The request's id (as `intro list` shows it).
        id: String,
        /// Whether this command could forward it now (`intro retry`).
        #[command(flatten)]
        notion: NotionArgs,
        /// JSON instead of text.
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Forward now: the request ID, or every request that waits. Safe beside
    /// running servers: a request is forwarded once, whoever forwards it.
    Retry {
        /// The request's id; without it, every request that waits.
        id: Option<String>,
        #[command(flatten)]
        notion: NotionArgs,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// RFC 4180: a header row, CRLF line ends, UTF-8 (with a byte-order mark,
    /// for spreadsheets), tags joined by "; ".
    Csv,
    /// One array of objects, as `intro list --json`.
    Json,
}

fn state_parser() -> impl TypedValueParser<Value = State> {
    PossibleValuesParser::new(State::ALL.map(State::as_str))
        .map(|s| s.parse::<State>().expect("one of State::ALL"))
}

pub async fn run(database: &Database, cmd: IntroCommand) -> anyhow::Result<()> {
    if let IntroCommand::Retry { notion, .. } = &cmd {
        // Before the database: without Notion there is nothing to do.
        notion_client(notion)?;
    }
    // list, show and export only read: the database is neither made nor
    // migrated for them.
    let db = match cmd {
        IntroCommand::List { .. } | IntroCommand::Show { .. } | IntroCommand::Export { .. } => {
            database::open_read_only(database).await?
        }
        IntroCommand::Release { .. } | IntroCommand::Retry { .. } => {
            database::open(database).await?
        }
    };
    match cmd {
        IntroCommand::List {
            status,
            since,
            json,
        } => {
            let found = records::list(
                &db,
                Filter {
                    state: status,
                    since,
                },
            )
            .await?;
            if json {
                print_json(&Value::Array(found.iter().map(record_json).collect()));
            } else if found.is_empty() {
                println!("(no intro requests)");
            } else {
                println!("{}", list_table(&found));
                println!("{} request(s)", found.len());
            }
        }
        IntroCommand::Show { id, json } => {
            let Some(r) = records::get(&db, &id).await? else {
                bail!("no intro request has the id {id:?}")
            };
            if json {
                print_json(&record_json(&r));
            } else {
                print!("{}", show(&r));
            }
        }
        IntroCommand::Export { format, since } => {
            let found = records::list(&db, Filter { state: None, since }).await?;
            let out = match format {
                Format::Csv => to_csv(&found)?,
                Format::Json => {
                    serde_json::to_string_pretty(&Value::Array(
                        found.iter().map(record_json).collect(),
                    ))? + "\n"
                }
            };
            use std::io::Write;
            std::io::stdout()
                .write_all(out.as_bytes())
                .context("writing the export")?;
        }
        IntroCommand::Release { id, notion, json } => match records::release(&db, &id).await? {
            Released::Done => {
                if json {
                    print_json(&json!({ "id": id, "status": "pending" }));
                } else {
                    println!("released {id}: it is pending, and a running server with Notion forwarding forwards it within seconds");
                    if notion.is_on() {
                        println!("(or forward it now: citizen-site intro retry {id})");
                    } else {
                        println!("(this command has no NOTION_TOKEN and NOTION_DATABASE_ID, so it cannot forward it itself: run it with the server's settings to use citizen-site intro retry {id})");
                    }
                }
            }
            Released::NotFound => bail!("no intro request has the id {id:?}"),
            Released::NotHeld(state) => {
                bail!("{id} is {state}, not held as spam: nothing to release")
            }
        },
        IntroCommand::Retry { id, notion, json } => {
            let notion = notion_client(&notion)?;
            let outcomes = retry(&db, &notion, id.as_deref()).await?;
            let failed = outcomes
                .iter()
                .filter(|o| matches!(o.1, Outcome::Failed { .. }))
                .count();
            if json {
                print_json(&Value::Array(
                    outcomes.iter().map(|(id, o)| o.json(id)).collect(),
                ));
            } else if outcomes.is_empty() {
                println!("no intro request waits for Notion");
            } else {
                let rows: Vec<Vec<String>> = outcomes
                    .iter()
                    .map(|(id, o)| vec![id.clone(), o.name().into(), printable(&o.detail())])
                    .collect();
                println!("{}", table(&["ID", "OUTCOME", "DETAIL"], &rows));
            }
            if failed > 0 {
                bail!("{failed} request(s) could not be forwarded; each is tried again later");
            }
        }
    }
    Ok(())
}

fn notion_client(args: &NotionArgs) -> anyhow::Result<NotionClient> {
    match (
        args.notion_token
            .as_deref()
            .filter(|t| !t.trim().is_empty()),
        args.notion_database_id
            .as_deref()
            .filter(|d| !d.trim().is_empty()),
    ) {
        (Some(token), Some(database)) => Ok(NotionClient::new(args.api_base(), token, database)),
        _ => bail!(
            "Notion forwarding is off: set NOTION_TOKEN and NOTION_DATABASE_ID, as for the server"
        ),
    }
}

/// What a retry did with one request.
enum Outcome {
    Forwarded {
        page: String,
    },
    Failed {
        error: String,
        next: Option<i64>,
    },
    AlreadyForwarded {
        page: Option<String>,
    },
    /// Another process holds it: it is being forwarded now.
    Elsewhere {
        worker: String,
    },
}

impl Outcome {
    fn name(&self) -> &'static str {
        match self {
            Outcome::Forwarded { .. } => "forwarded",
            Outcome::Failed { .. } => "failed",
            Outcome::AlreadyForwarded { .. } => "already_forwarded",
            Outcome::Elsewhere { .. } => "in_progress_elsewhere",
        }
    }

    fn detail(&self) -> String {
        match self {
            Outcome::Forwarded { page } => format!("Notion page {page}"),
            Outcome::Failed { error, next } => match next {
                Some(t) => format!("{error} (next try {} UTC)", utc(*t)),
                None => error.clone(),
            },
            Outcome::AlreadyForwarded { page } => {
                format!("Notion page {}", page.as_deref().unwrap_or("?"))
            }
            Outcome::Elsewhere { worker } => format!("being forwarded by {worker}"),
        }
    }

    fn json(&self, id: &str) -> Value {
        let mut v = json!({ "id": id, "outcome": self.name() });
        match self {
            Outcome::Forwarded { page } => v["notion_page_id"] = json!(page),
            Outcome::AlreadyForwarded { page } => v["notion_page_id"] = json!(page),
            Outcome::Failed { error, next } => {
                v["error"] = json!(error);
                v["next_attempt_at"] = json!(next.map(rfc3339));
            }
            Outcome::Elsewhere { worker } => v["claimed_by"] = json!(worker),
        }
        v
    }
}

/// Forwards `id`, or every waiting request, claiming each the way the
/// background forwarder does (a lease in the database), so a server running
/// beside this command never forwards the same request too.
async fn retry(
    db: &Db,
    notion: &NotionClient,
    id: Option<&str>,
) -> anyhow::Result<Vec<(String, Outcome)>> {
    let ids: Vec<String> = match id {
        Some(id) => vec![id.to_owned()],
        None => records::list(db, Filter::default())
            .await?
            .into_iter()
            .filter(|r| matches!(r.state, State::Pending | State::Failed))
            .map(|r| r.id)
            .collect(),
    };
    let worker = format!("cli-{}-{}", std::process::id(), uuid::Uuid::new_v4());
    let mut outcomes = Vec::new();
    for id in ids {
        let outcome = forward_or_explain(db, notion, &worker, &id).await?;
        outcomes.push((id, outcome));
    }
    Ok(outcomes)
}

/// Claims `id` and forwards it; when another process has it, says so. A
/// claim can end between our try and our look (a server's failed try), so
/// an unclaimed pending request is tried again, for a second at most.
async fn forward_or_explain(
    db: &Db,
    notion: &NotionClient,
    worker: &str,
    id: &str,
) -> anyhow::Result<Outcome> {
    for _ in 0..50 {
        if let Some(claimed) = store::claim_id(db, id, worker, forwarder::LEASE).await? {
            return Ok(
                match forwarder::forward_one(db, notion, worker, claimed).await {
                    Ok(page) => Outcome::Forwarded { page },
                    Err(error) => Outcome::Failed {
                        error,
                        next: records::get(db, id).await?.and_then(|r| r.next_attempt_at),
                    },
                },
            );
        }
        let Some(r) = records::get(db, id).await? else {
            bail!("no intro request has the id {id:?}")
        };
        match r.state {
            State::Forwarded => {
                return Ok(Outcome::AlreadyForwarded {
                    page: r.notion_page_id,
                })
            }
            State::Spam => {
                bail!("{id} is held as spam: release it first (citizen-site intro release {id})")
            }
            State::Pending | State::Failed => {
                if let Some(worker) = r.claimed_at(now_ms()) {
                    return Ok(Outcome::Elsewhere {
                        worker: worker.to_owned(),
                    });
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    bail!("intro request {id} could not be claimed")
}

fn list_table(found: &[Record]) -> String {
    let rows: Vec<Vec<String>> = found
        .iter()
        .map(|r| {
            vec![
                r.id.clone(),
                utc(r.received_at),
                r.state.to_string(),
                r.attempts.to_string(),
                clip(&printable(&r.name), 32),
                clip(&printable(&r.email), 40),
            ]
        })
        .collect();
    table(
        &["ID", "RECEIVED (UTC)", "STATUS", "TRIES", "NAME", "EMAIL"],
        &rows,
    )
}

fn show(r: &Record) -> String {
    let or_none = |v: &Option<String>| v.as_deref().map(printable).unwrap_or_else(|| "-".into());
    let status = match (r.state, r.next_attempt_at) {
        (State::Pending | State::Failed, Some(next)) if r.attempts > 0 => {
            format!(
                "{} ({} failed tries; next {} UTC)",
                r.state,
                r.attempts,
                utc(next)
            )
        }
        (State::Forwarded, _) => format!(
            "forwarded {} UTC",
            r.forwarded_at.map(utc).unwrap_or_default()
        ),
        (state, _) => state.to_string(),
    };
    let mut out = String::new();
    for (label, value) in [
        ("id", r.id.clone()),
        ("received", format!("{} UTC", utc(r.received_at))),
        ("status", status),
        ("name", printable(&r.name)),
        ("contact person", printable(&r.contact_person)),
        ("email", printable(&r.email)),
        ("website", printable(&r.website)),
        ("tags", printable(&r.tags.join("; "))),
        ("notion page", or_none(&r.notion_page_id)),
        ("last error", or_none(&r.last_error)),
    ] {
        out.push_str(&format!("{:<16}{}\n", format!("{label}:"), value));
    }
    out.push_str("description:\n");
    for line in r.description.lines() {
        out.push_str(&format!("  {}\n", printable(line)));
    }
    out
}

/// A stored field of a record, for scripts and spreadsheets: its name, and
/// its value (times in RFC 3339, UTC).
type Field = (&'static str, fn(&Record) -> Value);

/// Every stored field, in order: what `--json` and the exports carry.
const FIELDS: [Field; 14] = [
    ("id", |r| json!(r.id)),
    ("received_at", |r| json!(rfc3339(r.received_at))),
    ("status", |r| json!(r.state.as_str())),
    ("name", |r| json!(r.name)),
    ("contact_person", |r| json!(r.contact_person)),
    ("email", |r| json!(r.email)),
    ("website", |r| json!(r.website)),
    ("description", |r| json!(r.description)),
    ("tags", |r| json!(r.tags)),
    ("attempts", |r| json!(r.attempts)),
    ("next_attempt_at", |r| json!(r.next_attempt_at.map(rfc3339))),
    ("last_error", |r| json!(r.last_error)),
    ("notion_page_id", |r| json!(r.notion_page_id)),
    ("forwarded_at", |r| json!(r.forwarded_at.map(rfc3339))),
];

/// A record for scripts: every stored field.
fn record_json(r: &Record) -> Value {
    Value::Object(
        FIELDS
            .iter()
            .map(|(name, value)| (name.to_string(), value(r)))
            .collect(),
    )
}

/// The fields a spreadsheet gets: all but when the next try is due (the
/// forwarder's schedule, not the request's).
fn csv_fields() -> impl Iterator<Item = &'static Field> {
    FIELDS.iter().filter(|(name, _)| *name != "next_attempt_at")
}

/// The records as RFC 4180 CSV for a spreadsheet: text as it is, tags
/// joined with `; `, an absent value empty. A cell a spreadsheet would run
/// as a formula (one starting with `=`, `+`, `-` or `@`) is written with a
/// leading `'`, which shows it as text.
fn to_csv(found: &[Record]) -> anyhow::Result<String> {
    let mut out = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(Vec::new());
    out.write_record(csv_fields().map(|(name, _)| name))?;
    for r in found {
        let cells = csv_fields().map(|(_, value)| match value(r) {
            Value::String(s) => s,
            Value::Null => String::new(),
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("; "),
            other => other.to_string(),
        });
        out.write_record(cells.map(|c| not_a_formula(&c)))?;
    }
    let bytes = out
        .into_inner()
        .map_err(|e| anyhow::anyhow!("writing CSV: {e}"))?;
    Ok(format!("\u{FEFF}{}", String::from_utf8(bytes)?))
}

fn not_a_formula(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@']) {
        format!("'{cell}")
    } else {
        cell.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &str, description: &str) -> Record {
        Record {
            id: "3f1c".into(),
            received_at: 1_795_564_800_000,
            state: State::Pending,
            name: name.into(),
            contact_person: "Zoë Ødegård".into(),
            email: "z@example.org".into(),
            website: String::new(),
            description: description.into(),
            tags: vec!["Local currency".into(), "Loyalty".into()],
            attempts: 0,
            next_attempt_at: Some(1_795_564_800_000),
            last_error: None,
            claimed_by: None,
            claimed_until: None,
            notion_page_id: None,
            forwarded_at: None,
        }
    }

    #[test]
    fn csv_quotes_what_needs_quoting_and_ends_lines_with_crlf() {
        let out = to_csv(&[record("Shops, \"united\"", "line one\nline two")]).unwrap();
        assert!(out.starts_with("\u{FEFF}id,received_at,status,"), "{out}");
        assert!(
            out.contains(
                "\r\n3f1c,2026-11-25T00:00:00.000Z,pending,\"Shops, \"\"united\"\"\",Zoë Ødegård,"
            ),
            "{out}"
        );
        assert!(
            out.contains(",\"line one\nline two\",Local currency; Loyalty,0,,,\r\n"),
            "{out}"
        );
    }

    #[test]
    fn a_cell_a_spreadsheet_would_run_is_written_as_text() {
        let out = to_csv(&[record("=HYPERLINK(\"http://evil.example\")", "@SUM(1)")]).unwrap();
        assert!(
            out.contains(",\"'=HYPERLINK(\"\"http://evil.example\"\")\","),
            "{out}"
        );
        assert!(out.contains(",'@SUM(1),"), "{out}");
    }
}
