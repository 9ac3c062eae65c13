//! Running the site without SQL: the operator's commands (`citizen-site
//! intro`, `checkouts`, `backup`, `restore`) against a real server process
//! on SQLite and PostgreSQL, and the forwarding health a stalled forwarder
//! shows in `/metrics`, `/readyz` and the log.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use citizen_site::db::Db;
use citizen_site::intake::{store, IntroForm, IntroRequest};
use serde_json::{json, Value};

use crate::api::fake_notion::{FakeNotion, DB_ID};
use crate::api::helpers::{eventually, fresh_databases, operate, tempdir::TempDir, SiteProcess};
use crate::api::stripe_fixtures::{checkout_session, event, sign, WEBHOOK_SECRET};

/// A request as a visitor types it: every kind of character a CSV must keep.
fn awkward() -> Value {
    json!({
        "name": "Shops, \"united\" of Zoë's street",
        "contactPerson": "Zoë Ødegård-Nakamura 中村",
        "email": "zoe@riverbend.example",
        "website": "https://riverbend.example/a?b=1,2",
        "description": "Line one, with a comma.\nLine two \"quoted\";\r\nthird: ünïcödé ✓ — done",
        "tags": ["Loyalty", "Local currency"],
        "submissionId": uuid::Uuid::new_v4().to_string(),
    })
}

/// Whether the operator's guide (docs/operate.md, "The commands") shows
/// `line` as a command prints it (runs of spaces aside: a table's columns
/// are as wide as its data).
fn readme_shows(line: &str) -> bool {
    let readme = include_str!("../../docs/operate.md");
    let start = readme
        .find("\n## The commands\n")
        .expect("the operator guide's section on the commands");
    let end = start + readme[start + 1..].find("\n## ").unwrap();
    let squeeze = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let wanted = squeeze(line);
    readme[start..end].lines().any(|l| squeeze(l) == wanted)
}

async fn post_json(base: &str, body: &Value) -> reqwest::StatusCode {
    reqwest::Client::new()
        .post(format!("{base}/api/save-to-notion"))
        .json(body)
        .send()
        .await
        .unwrap()
        .status()
}

/// A server on `database_url`; one test client posts many times, so the
/// per-client limit is off.
fn server_env(database_url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("DATABASE_URL", database_url.to_owned()),
        ("RATE_LIMIT_PER_MINUTE", "0".into()),
    ]
}

fn notion_env(server: &wiremock::MockServer) -> Vec<(&'static str, String)> {
    vec![
        ("NOTION_TOKEN", "secret_test".into()),
        ("NOTION_DATABASE_ID", DB_ID.into()),
        ("NOTION_API_BASE", server.uri()),
    ]
}

#[tokio::test]
async fn intro_list_show_and_export_give_back_what_visitors_sent() {
    for (kind, fresh) in fresh_databases(TempDir::new().path()).await {
        let url = fresh.url.as_str();
        let site = SiteProcess::start(&server_env(url)).await;
        let sent = awkward();
        assert_eq!(post_json(&site.base, &sent).await, 200);
        // Apart in time, so "oldest first" is this order.
        tokio::time::sleep(Duration::from_millis(20)).await;
        // A plain form post (no JavaScript), and a bot that filled the honeypot.
        let form = [
            ("name", "Canal Makers"),
            ("email", "jo@canal.example"),
            ("tags", "Smart money"),
        ];
        let res = reqwest::Client::new()
            .post(format!("{}/api/save-to-notion", site.base))
            .form(&form)
            .send()
            .await
            .unwrap();
        assert!(
            res.status().is_success() || res.status().is_redirection(),
            "{kind}: {}",
            res.status()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(
            post_json(
                &site.base,
                &json!({ "name": "Cheap pills", "email": "bot@spam.example", "fax": "1" })
            )
            .await,
            200
        );

        let listed = operate(url, &["intro", "list", "--json"], &[]).await.json();
        let listed = listed.as_array().unwrap().clone();
        assert_eq!(listed.len(), 3, "{kind}: {listed:?}");
        let first = &listed[0];
        assert_eq!(
            first["id"], sent["submissionId"],
            "{kind}: oldest first, under the page's submission id"
        );
        for (column, field) in [
            ("name", "name"),
            ("contact_person", "contactPerson"),
            ("email", "email"),
            ("website", "website"),
            ("description", "description"),
            ("tags", "tags"),
        ] {
            assert_eq!(first[column], sent[field], "{kind}: {column}");
        }
        let statuses: Vec<&str> = listed
            .iter()
            .map(|r| r["status"].as_str().unwrap())
            .collect();
        assert_eq!(statuses, ["pending", "pending", "spam"], "{kind}");
        assert_eq!(listed[1]["name"], "Canal Makers");

        // For people: a table, one line per request, the visitor's line breaks kept out of it.
        let table = operate(url, &["intro", "list"], &[]).await;
        assert_eq!(table.code, 0, "{kind}: {table:?}");
        let lines: Vec<&str> = table.stdout.lines().collect();
        assert!(
            lines[0].starts_with("ID")
                && lines[0].contains("RECEIVED (UTC)")
                && lines[0].contains("STATUS"),
            "{kind}: {}",
            table.stdout
        );
        assert_eq!(
            lines.len(),
            5,
            "{kind}: header, three requests, a count: {}",
            table.stdout
        );
        assert!(
            lines[1].contains("Shops, \"united\"") && lines[3].contains("spam"),
            "{kind}: {}",
            table.stdout
        );
        assert_eq!(lines[4], "3 request(s)");
        assert!(
            readme_shows(lines[0]),
            "the guide's sample has another header: {}",
            lines[0]
        );

        // Filters.
        let count = |args: &'static [&'static str]| async move {
            operate(url, args, &[])
                .await
                .json()
                .as_array()
                .unwrap()
                .len()
        };
        assert_eq!(
            count(&["intro", "list", "--status", "spam", "--json"]).await,
            1,
            "{kind}"
        );
        assert_eq!(
            count(&["intro", "list", "--status", "pending", "--json"]).await,
            2,
            "{kind}"
        );
        assert_eq!(
            count(&["intro", "list", "--status", "forwarded", "--json"]).await,
            0,
            "{kind}"
        );
        assert_eq!(
            count(&["intro", "list", "--since", "2999-01-01", "--json"]).await,
            0,
            "{kind}"
        );
        assert_eq!(
            count(&["intro", "list", "--since", "2020-01-01T00:00:00Z", "--json"]).await,
            3,
            "{kind}"
        );

        // One request, every field.
        let id = first["id"].as_str().unwrap();
        assert_eq!(
            operate(url, &["intro", "show", id, "--json"], &[])
                .await
                .json(),
            *first,
            "{kind}"
        );
        let shown = operate(url, &["intro", "show", id], &[]).await;
        assert_eq!(shown.code, 0);
        assert!(
            shown
                .stdout
                .contains("contact person: Zoë Ødegård-Nakamura 中村"),
            "{kind}: {}",
            shown.stdout
        );
        assert!(
            shown
                .stdout
                .contains("tags:           Loyalty; Local currency"),
            "{kind}: {}",
            shown.stdout
        );
        assert!(
            shown
                .stdout
                .contains("\n  Line one, with a comma.\n  Line two \"quoted\";\n"),
            "{kind}: {}",
            shown.stdout
        );
        for label in shown
            .stdout
            .lines()
            .filter_map(|l| l.split_once(':').map(|(label, _)| label))
            .filter(|l| !l.starts_with(' '))
            .take(11)
        {
            let sample = format!("{label}:");
            assert!(
                include_str!("../../docs/operate.md").contains(&format!("\n{sample}")),
                "the guide's show sample lacks {sample:?}"
            );
        }

        // The CSV, parsed back, is what was sent.
        let csv_out = operate(url, &["intro", "export", "--format", "csv"], &[]).await;
        assert_eq!(csv_out.code, 0, "{kind}: {csv_out:?}");
        let body = csv_out
            .stdout
            .strip_prefix('\u{FEFF}')
            .expect("a byte-order mark for spreadsheets");
        assert!(body.contains("\r\n"), "RFC 4180 line ends");
        assert!(
            readme_shows(body.lines().next().unwrap()),
            "the guide's CSV sample has another header"
        );
        let mut reader = csv::Reader::from_reader(body.as_bytes());
        let header: Vec<String> = reader
            .headers()
            .unwrap()
            .iter()
            .map(str::to_owned)
            .collect();
        let rows: Vec<HashMap<String, String>> = reader
            .records()
            .map(|r| {
                header
                    .iter()
                    .cloned()
                    .zip(r.unwrap().iter().map(str::to_owned))
                    .collect()
            })
            .collect();
        assert_eq!(rows.len(), 3, "{kind}");
        for (column, field) in [
            ("id", "submissionId"),
            ("name", "name"),
            ("contact_person", "contactPerson"),
            ("email", "email"),
            ("website", "website"),
            ("description", "description"),
        ] {
            assert_eq!(
                rows[0][column],
                sent[field].as_str().unwrap(),
                "{kind}: CSV {column}"
            );
        }
        assert_eq!(rows[0]["tags"], "Loyalty; Local currency");
        assert_eq!(
            rows[0]["received_at"],
            first["received_at"].as_str().unwrap()
        );
        assert_eq!(rows[2]["status"], "spam");
        // The JSON export is the list.
        let exported: Value = serde_json::from_str(
            &operate(url, &["intro", "export", "--format", "json"], &[])
                .await
                .stdout,
        )
        .unwrap();
        assert_eq!(exported, Value::Array(listed.clone()), "{kind}");

        // Bad input: a clear message, a non-zero exit, nothing changed.
        for (args, code, says) in [
            (
                &["intro", "show", "no-such-id"][..],
                1,
                "no intro request has the id \"no-such-id\"",
            ),
            (
                &["intro", "list", "--status", "held"],
                2,
                "invalid value 'held'",
            ),
            (
                &["intro", "list", "--since", "yesterday"],
                2,
                "\"yesterday\" is not a date",
            ),
            (
                &["intro", "export", "--format", "xlsx"],
                2,
                "invalid value 'xlsx'",
            ),
            (&["intro", "release", id], 1, "is pending, not held as spam"),
            (
                &["intro", "release", "no-such-id"],
                1,
                "no intro request has the id",
            ),
        ] {
            let ran = operate(url, args, &[]).await;
            assert_eq!(ran.code, code, "{kind}: {args:?}: {ran:?}");
            assert!(
                ran.stderr.contains(says),
                "{kind}: {args:?}: {}",
                ran.stderr
            );
            assert!(!ran.stderr.contains("backtrace"), "{}", ran.stderr);
        }
        assert_eq!(
            operate(url, &["intro", "list", "--json"], &[]).await.json(),
            Value::Array(listed),
            "{kind}: nothing changed"
        );
        site.stop().await;
    }
}

#[tokio::test]
async fn commands_refuse_a_database_that_is_missing_unreachable_or_not_the_sites() {
    let dir = TempDir::new();
    let missing = dir.path().join("typo.db");
    let ran = operate(
        &format!("sqlite://{}", missing.display()),
        &["intro", "list"],
        &[],
    )
    .await;
    assert_eq!(ran.code, 1);
    assert!(
        ran.stderr
            .contains(&format!("no database at {}", missing.display())),
        "{}",
        ran.stderr
    );
    assert!(!missing.exists(), "no database is made by a typo");

    let ran = operate(
        "postgres://site:hunter2@127.0.0.1:1/site",
        &["checkouts", "list"],
        &[],
    )
    .await;
    assert_eq!(ran.code, 1);
    assert!(
        ran.stderr
            .contains("cannot reach the database at postgres://site:***@127.0.0.1:1/site"),
        "{}",
        ran.stderr
    );
    assert!(
        !ran.stderr.contains("hunter2"),
        "the password is not printed"
    );

    // A database, but someone else's: refused, and left without the site's tables.
    let Some(other) = crate::api::helpers::fresh_postgres().await else {
        return;
    };
    let ran = operate(&other.url, &["intro", "list"], &[]).await;
    assert_eq!(ran.code, 1);
    assert!(
        ran.stderr.contains("is not this site's database"),
        "{}",
        ran.stderr
    );
    let db = Db::connect_lazy(&other.url).unwrap();
    let tables: i64 = sqlx::Row::get(
        &sqlx::query(
            "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = 'public'",
        )
        .fetch_one(&db.pool)
        .await
        .unwrap(),
        "n",
    );
    assert_eq!(tables, 0, "nothing was made in it");
}

#[tokio::test]
async fn a_released_request_reaches_notion_exactly_once_while_a_server_also_forwards() {
    for (kind, fresh) in fresh_databases(TempDir::new().path()).await {
        let url = fresh.url.as_str();
        // Each page takes Notion a moment: the server is still forwarding
        // when the command starts, and both take from the same requests.
        // (150 ms each was 1.8 s for the twelve: a command that took longer
        // to start, beside the fleet's tests, found one left in CI.)
        let (notion, notion_server) = FakeNotion::start_with(0, Duration::from_millis(600)).await;
        let mut env = server_env(url);
        env.extend(notion_env(&notion_server));
        let site = SiteProcess::start(&env).await;
        let mut held = Vec::new();
        for i in 0..12 {
            let id = uuid::Uuid::new_v4().to_string();
            let body = json!({ "name": format!("Held community {i}"), "email": format!("held{i}@example.org"), "fax": "x", "submissionId": id });
            assert_eq!(post_json(&site.base, &body).await, 200);
            held.push(id);
        }
        // The honeypot's catches are kept and never forwarded.
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert!(
            notion.request_ids().is_empty(),
            "{kind}: a held request reached Notion"
        );
        let listed = operate(url, &["intro", "list", "--status", "spam", "--json"], &[])
            .await
            .json();
        assert_eq!(listed.as_array().unwrap().len(), 12, "{kind}");

        // Retrying a held request is refused: it must be released first.
        let notion_cli: Vec<(&str, String)> = notion_env(&notion_server);
        let notion_cli: Vec<(&str, &str)> =
            notion_cli.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let ran = operate(url, &["intro", "retry", &held[0]], &notion_cli).await;
        assert_eq!(ran.code, 1, "{kind}: {ran:?}");
        assert!(
            ran.stderr.contains("is held as spam: release it first"),
            "{kind}: {}",
            ran.stderr
        );
        let ran = operate(url, &["intro", "retry"], &[]).await;
        assert_eq!(ran.code, 1);
        assert!(
            ran.stderr
                .contains("Notion forwarding is off: set NOTION_TOKEN and NOTION_DATABASE_ID"),
            "{}",
            ran.stderr
        );

        // Release them all; then forward from the command line while the
        // server's forwarder takes the same requests.
        for id in &held {
            let ran = operate(url, &["intro", "release", id, "--json"], &[]).await;
            assert_eq!(
                ran.json(),
                json!({ "id": id, "status": "pending" }),
                "{kind}"
            );
        }
        let server_started = || async { *notion.creates.lock().unwrap() > 0 };
        assert!(
            eventually(10, server_started).await,
            "{kind}: the server's forwarder took a released request"
        );
        let retried = operate(url, &["intro", "retry", "--json"], &notion_cli).await;
        let outcomes = retried.json();
        for o in outcomes.as_array().unwrap() {
            assert!(
                ["forwarded", "already_forwarded", "in_progress_elsewhere"]
                    .contains(&o["outcome"].as_str().unwrap()),
                "{kind}: {o}"
            );
        }
        let by_command = outcomes
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["outcome"] == "forwarded")
            .count();
        assert!(
            by_command > 0 && by_command < held.len(),
            "{kind}: the command and the server each forwarded some: {outcomes}"
        );
        let forwarded = || async {
            operate(
                url,
                &["intro", "list", "--status", "forwarded", "--json"],
                &[],
            )
            .await
            .json()
            .as_array()
            .unwrap()
            .len()
                == held.len()
        };
        assert!(
            eventually(30, forwarded).await,
            "{kind}: every released request forwarded"
        );
        let mut created = notion.request_ids();
        created.sort();
        let mut expected = held.clone();
        expected.sort();
        assert_eq!(
            created, expected,
            "{kind}: each released request became exactly one Notion page"
        );

        // Again, for one that is done: nothing new in Notion.
        let again = operate(url, &["intro", "retry", &held[3], "--json"], &notion_cli)
            .await
            .json();
        assert_eq!(again[0]["outcome"], "already_forwarded", "{kind}: {again}");
        assert_eq!(notion.request_ids().len(), held.len(), "{kind}");
        let shown = operate(url, &["intro", "show", &held[3], "--json"], &[])
            .await
            .json();
        assert_eq!(shown["status"], "forwarded");
        assert!(
            shown["notion_page_id"]
                .as_str()
                .unwrap()
                .starts_with("page-"),
            "{shown}"
        );
        site.stop().await;
    }
}

#[tokio::test]
async fn a_failed_forward_from_the_command_line_says_so_and_waits_for_its_next_try() {
    for (kind, fresh) in fresh_databases(TempDir::new().path()).await {
        let url = fresh.url.as_str();
        // Notion answers 500 to the first page creation.
        let (notion, notion_server) = FakeNotion::start(1).await;
        let site = SiteProcess::start(&server_env(url)).await;
        assert_eq!(post_json(&site.base, &awkward()).await, 200);
        let id = operate(url, &["intro", "list", "--json"], &[]).await.json()[0]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let env: Vec<(&str, String)> = notion_env(&notion_server);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let ran = operate(url, &["intro", "retry", &id], &env).await;
        assert_eq!(ran.code, 1, "{kind}: {ran:?}");
        assert!(
            ran.stdout.contains("failed") && ran.stdout.contains("Notion answered 500"),
            "{kind}: {}",
            ran.stdout
        );
        assert!(
            readme_shows(ran.stdout.lines().next().unwrap()),
            "{}",
            ran.stdout
        );
        assert!(
            ran.stderr.contains("1 request(s) could not be forwarded"),
            "{kind}: {}",
            ran.stderr
        );
        let failed = operate(url, &["intro", "list", "--status", "failed", "--json"], &[])
            .await
            .json();
        assert_eq!(failed[0]["id"], id.as_str(), "{kind}: {failed}");
        assert_eq!(failed[0]["attempts"], 1);
        // The next try works: one page.
        let ran = operate(url, &["intro", "retry", &id, "--json"], &env).await;
        assert_eq!(ran.json()[0]["outcome"], "forwarded", "{kind}");
        assert_eq!(notion.request_ids(), vec![id.clone()], "{kind}");
        site.stop().await;
    }
}

#[tokio::test]
async fn a_backup_taken_under_a_stream_of_posts_restores_every_request_acknowledged_before_it() {
    let dir = TempDir::new();
    let url = format!("sqlite://{}", dir.path().join("site.db").display());
    let site = SiteProcess::start(&server_env(&url)).await;

    // Visitors keep posting throughout; each acknowledged request is noted with when.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let base = site.base.clone();
    let visitors = tokio::spawn(async move {
        let client = reqwest::Client::new();
        let mut acknowledged: Vec<(Instant, String)> = Vec::new();
        let mut n = 0;
        while !*stop_rx.borrow() {
            let id = uuid::Uuid::new_v4().to_string();
            let body = json!({ "name": format!("Stream {n}"), "email": "s@example.org", "submissionId": id });
            n += 1;
            if let Ok(res) = client
                .post(format!("{base}/api/save-to-notion"))
                .json(&body)
                .send()
                .await
            {
                if res.status() == 200 {
                    acknowledged.push((Instant::now(), id));
                }
            }
        }
        acknowledged
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let backup = dir.path().join("backup.db");
    let began = Instant::now();
    let ran = operate(&url, &["backup", backup.to_str().unwrap(), "--json"], &[]).await;
    let report = ran.json();
    tokio::time::sleep(Duration::from_millis(800)).await;
    stop_tx.send(true).unwrap();
    let acknowledged = visitors.await.unwrap();
    let before: HashSet<String> = acknowledged
        .iter()
        .filter(|(at, _)| *at < began)
        .map(|(_, id)| id.clone())
        .collect();
    let all: HashSet<String> = acknowledged.iter().map(|(_, id)| id.clone()).collect();
    assert!(
        before.len() > 10 && all.len() > before.len(),
        "a steady stream around the backup: {} then {}",
        before.len(),
        all.len()
    );
    assert!(
        report["counts"]["intro_requests"].as_i64().unwrap() >= before.len() as i64,
        "{report}"
    );
    assert_eq!(
        report["bytes"].as_u64().unwrap(),
        std::fs::metadata(&backup).unwrap().len()
    );

    // A backup never overwrites, and needs a folder that exists.
    let written = std::fs::read(&backup).unwrap();
    let ran = operate(&url, &["backup", backup.to_str().unwrap()], &[]).await;
    assert_eq!(ran.code, 1);
    assert!(
        ran.stderr
            .contains("exists: a backup never overwrites a file"),
        "{}",
        ran.stderr
    );
    assert_eq!(
        std::fs::read(&backup).unwrap(),
        written,
        "the first backup is untouched"
    );
    let nowhere = dir.path().join("no-such-folder/backup.db");
    let ran = operate(&url, &["backup", nowhere.to_str().unwrap()], &[]).await;
    assert_eq!(ran.code, 1);
    assert!(
        ran.stderr.contains("the folder") && ran.stderr.contains("does not exist"),
        "{}",
        ran.stderr
    );

    // Not while the server runs: it would go on writing to the replaced file.
    let ran = operate(&url, &["restore", backup.to_str().unwrap()], &[]).await;
    assert_eq!(ran.code, 1);
    assert!(
        ran.stderr.contains("a server is running on") && ran.stderr.contains("nothing was changed"),
        "{}",
        ran.stderr
    );
    let live = operate(&url, &["intro", "list", "--json"], &[])
        .await
        .json();
    assert_eq!(
        live.as_array().unwrap().len(),
        all.len(),
        "every acknowledged request is in the live database, no more"
    );
    site.stop().await;
    let wal = dir.path().join("site.db-wal");
    assert!(
        !wal.exists(),
        "a stopped server leaves its data in the database file alone, no write-ahead log beside it"
    );

    // Files that are not a backup of this site.
    let text = dir.path().join("notes.txt");
    std::fs::write(
        &text,
        "not a database at all, but long enough to have a header",
    )
    .unwrap();
    let foreign = dir.path().join("foreign.db");
    let other = Db::connect_lazy(&format!("sqlite://{}", foreign.display())).unwrap();
    sqlx::query("CREATE TABLE recipes (name TEXT)")
        .execute(&other.pool)
        .await
        .unwrap();
    other.close().await;
    let db_file = dir.path().join("site.db");
    let untouched = std::fs::read(&db_file).unwrap();
    for (file, says) in [
        (
            &text,
            "is not a database of this site: it is not an SQLite database",
        ),
        (
            &foreign,
            "is not a database of this site: it has no _sqlx_migrations table",
        ),
        (&dir.path().join("missing.db"), "cannot read the backup"),
    ] {
        let ran = operate(&url, &["restore", file.to_str().unwrap()], &[]).await;
        assert_eq!(ran.code, 1, "{file:?}: {ran:?}");
        assert!(ran.stderr.contains(says), "{file:?}: {}", ran.stderr);
        assert_eq!(
            std::fs::read(&db_file).unwrap(),
            untouched,
            "{file:?}: the database is unchanged"
        );
    }

    // Restored (the server stopped): every request acknowledged before the backup began.
    let ran = operate(&url, &["restore", backup.to_str().unwrap(), "--json"], &[]).await;
    let restored = ran.json();
    let aside = restored["replaced"]
        .as_str()
        .expect("the replaced database is kept")
        .to_owned();
    assert!(std::path::Path::new(&aside).exists(), "{aside}");
    let ids: HashSet<String> = operate(&url, &["intro", "list", "--json"], &[])
        .await
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    let lost: Vec<&String> = before.difference(&ids).collect();
    assert!(
        lost.is_empty(),
        "acknowledged before the backup but not restored: {lost:?}"
    );
    assert!(
        ids.is_subset(&all),
        "the restore holds only what visitors sent"
    );
    assert_eq!(restored["counts"]["intro_requests"], ids.len());
    // The kept database still has everything, should the restore have been a mistake.
    let kept = operate(
        &format!("sqlite://{aside}"),
        &["intro", "list", "--json"],
        &[],
    )
    .await
    .json();
    assert_eq!(kept.as_array().unwrap().len(), all.len());

    // The site runs on the restored database and takes new requests.
    let site = SiteProcess::start(&server_env(&url)).await;
    assert_eq!(post_json(&site.base, &awkward()).await, 200);
    assert_eq!(
        operate(&url, &["intro", "list", "--json"], &[])
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        ids.len() + 1
    );
    site.stop().await;
}

#[tokio::test]
async fn backup_and_restore_of_postgresql_point_to_its_own_tools() {
    let Some(pg) = crate::api::helpers::fresh_postgres().await else {
        return;
    };
    let dir = TempDir::new();
    let file = dir.path().join("site.dump");
    let ran = operate(&pg.url, &["backup", file.to_str().unwrap()], &[]).await;
    assert_eq!(ran.code, 1);
    assert!(ran.stderr.contains("pg_dump"), "{}", ran.stderr);
    let ran = operate(&pg.url, &["restore", file.to_str().unwrap()], &[]).await;
    assert_eq!(ran.code, 1);
    assert!(ran.stderr.contains("pg_restore"), "{}", ran.stderr);
    assert!(!file.exists());
}

#[tokio::test]
async fn checkouts_list_shows_what_the_webhook_recorded_and_its_settled_status() {
    for (kind, fresh) in fresh_databases(TempDir::new().path()).await {
        let url = fresh.url.as_str();
        let mut env = server_env(url);
        env.push(("STRIPE_WEBHOOK_SECRET", WEBHOOK_SECRET.into()));
        let site = SiteProcess::start(&env).await;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let deliver = |id: &str, kind: &str, session: Value| {
            let payload = event(id, kind, session).to_string();
            reqwest::Client::new()
                .post(format!("{}/api/stripe-webhook", site.base))
                .header("stripe-signature", sign(&payload, now))
                .header("content-type", "application/json")
                .body(payload)
                .send()
        };
        assert_eq!(
            deliver(
                "evt_1",
                "checkout.session.completed",
                checkout_session("cs_test_paid", "paid", Some("jenny@example.com"))
            )
            .await
            .unwrap()
            .status(),
            200
        );
        assert_eq!(
            deliver(
                "evt_2",
                "checkout.session.completed",
                checkout_session("cs_test_sepa", "unpaid", Some("lea@asbl.example"))
            )
            .await
            .unwrap()
            .status(),
            200
        );
        assert_eq!(
            deliver(
                "evt_3",
                "checkout.session.async_payment_failed",
                checkout_session("cs_test_sepa", "unpaid", None)
            )
            .await
            .unwrap()
            .status(),
            200
        );

        let listed = operate(url, &["checkouts", "list", "--json"], &[])
            .await
            .json();
        let rows = listed.as_array().unwrap();
        assert_eq!(rows.len(), 2, "{kind}: {listed}");
        let by_id: HashMap<&str, &Value> = rows
            .iter()
            .map(|r| (r["session_id"].as_str().unwrap(), r))
            .collect();
        assert_eq!(by_id["cs_test_paid"]["status"], "paid");
        assert_eq!(by_id["cs_test_paid"]["customer_email"], "jenny@example.com");
        assert_eq!(
            by_id["cs_test_sepa"]["status"], "failed",
            "{kind}: the delayed payment settled as failed"
        );
        assert!(by_id["cs_test_sepa"]["updated_at"].is_string());
        let paid = operate(
            url,
            &["checkouts", "list", "--status", "paid", "--json"],
            &[],
        )
        .await
        .json();
        assert_eq!(paid.as_array().unwrap().len(), 1);
        let table = operate(url, &["checkouts", "list"], &[]).await;
        assert!(
            readme_shows(table.stdout.lines().next().unwrap()),
            "{}",
            table.stdout
        );
        assert!(
            table.stdout.starts_with("SESSION")
                && table.stdout.contains("cs_test_sepa")
                && table.stdout.contains("2 checkout(s)"),
            "{kind}: {}",
            table.stdout
        );
        let amount = by_id["cs_test_paid"]["amount_total"].as_i64().unwrap();
        let currency = by_id["cs_test_paid"]["currency"]
            .as_str()
            .unwrap()
            .to_ascii_uppercase();
        assert!(
            table
                .stdout
                .contains(&format!("{}.{:02} {currency}", amount / 100, amount % 100)),
            "{kind}: {}",
            table.stdout
        );
        let ran = operate(url, &["checkouts", "list", "--status", "refunded"], &[]).await;
        assert_eq!(ran.code, 2);
        assert!(
            ran.stderr
                .contains("[possible values: paid, unpaid, no_payment_required, failed]"),
            "{}",
            ran.stderr
        );
        site.stop().await;
    }
}

#[tokio::test]
async fn a_stalled_forwarder_shows_in_the_metrics_the_readiness_and_the_log() {
    for (kind, fresh) in fresh_databases(TempDir::new().path()).await {
        let url = fresh.url.as_str();
        // A request that has waited two hours already.
        let db = Db::connect_lazy(url).unwrap();
        db.migrate().await.unwrap();
        let form = IntroForm {
            name: "Old Town".into(),
            email: "old@example.org".into(),
            ..Default::default()
        };
        let old = store::insert(&db, &IntroRequest::parse(form, &[]).unwrap())
            .await
            .unwrap();
        let two_hours_ago = citizen_site::db::now_ms() - 2 * 3600 * 1000;
        sqlx::query("UPDATE intro_requests SET created_at = $1 WHERE id = $2")
            .bind(two_hours_ago)
            .bind(&old)
            .execute(&db.pool)
            .await
            .unwrap();
        // Notion fails every page creation.
        let (_notion, notion_server) = FakeNotion::start(usize::MAX).await;
        let mut env = server_env(url);
        env.extend(notion_env(&notion_server));
        let site = SiteProcess::start(&env).await;
        assert_eq!(post_json(&site.base, &awkward()).await, 200);

        let metrics = reqwest::get(format!("{}/metrics", site.base))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            metrics.contains("\nintro_requests_pending 2\n"),
            "{kind}: {metrics}"
        );
        let age = metrics
            .lines()
            .find_map(|l| l.strip_prefix("intro_requests_oldest_pending_age_seconds "))
            .and_then(|v| v.parse::<i64>().ok())
            .expect("the age gauge");
        assert!((7200..7300).contains(&age), "{kind}: {age}");

        let res = reqwest::get(format!("{}/readyz", site.base)).await.unwrap();
        assert_eq!(
            res.status(),
            200,
            "{kind}: a stalled forwarder keeps the site ready (requests are kept)"
        );
        let ready: Value = res.json().await.unwrap();
        assert_eq!(ready["ready"], true);
        assert_eq!(ready["intro_requests"]["pending"], 2, "{kind}: {ready}");
        assert_eq!(ready["intro_requests"]["forwarding"], true);
        assert!(
            ready["intro_requests"]["oldest_pending_seconds"]
                .as_i64()
                .unwrap()
                >= 7200,
            "{ready}"
        );

        let warned = || {
            site.logged().iter().any(|l| {
                l["level"] == "WARN"
                    && l["fields"]["message"].as_str().is_some_and(|m| {
                        m.contains(
                            "intro requests are waiting for Notion: the oldest has waited 120 min",
                        )
                    })
                    && l["fields"]["pending"].as_i64().is_some_and(|n| n >= 1)
            })
        };
        assert!(
            eventually(10, || async { warned() }).await,
            "{kind}: no warning in {:?}",
            site.logs.lock().unwrap()
        );
        // The failed tries show for the operator.
        assert!(
            eventually(10, || async {
                operate(url, &["intro", "list", "--status", "failed", "--json"], &[])
                    .await
                    .json()
                    .as_array()
                    .unwrap()
                    .len()
                    == 2
            })
            .await,
            "{kind}"
        );
        site.stop().await;
    }
}

/// The HTTPS identity (certificate, ticket keys, account) is not the site's
/// data: a restore of an older backup keeps the one of the database it
/// replaces, so it never goes back to an older certificate or key.
#[tokio::test]
async fn a_restore_keeps_the_https_identity_of_the_database_it_replaces() {
    use citizen_site::tls::store as tls;
    let dir = TempDir::new();
    let url = format!("sqlite://{}", dir.path().join("site.db").display());
    let cert = |serial: &str, not_after: i64| tls::StoredCert {
        pem: format!("pem of {serial}"),
        serial: serial.into(),
        not_before: 0,
        not_after,
    };
    let key = |period: i64| tls::StoredKey {
        period,
        period_ms: 1000,
        secret: format!("{period:064}"),
    };
    let db = Db::connect_lazy(&url).unwrap();
    db.migrate().await.unwrap();
    tls::put_certificate(&db, "dir", "site.example", &cert("01", 1_000), None, None)
        .await
        .unwrap();
    tls::put_ticket_key(&db, &key(5)).await.unwrap();
    tls::put_account(&db, "dir", "the account").await.unwrap();
    let form = IntroForm {
        name: "Before the backup".into(),
        email: "b@example.org".into(),
        ..Default::default()
    };
    store::insert(&db, &IntroRequest::parse(form, &[]).unwrap())
        .await
        .unwrap();
    db.close().await;

    let backup = dir.path().join("backup.db");
    let ran = operate(&url, &["backup", backup.to_str().unwrap()], &[]).await;
    assert_eq!(ran.code, 0, "{}", ran.stderr);

    // After the backup: a renewal, the next ticket key, and the data moves on.
    let db = Db::connect_lazy(&url).unwrap();
    tls::put_certificate(
        &db,
        "dir",
        "site.example",
        &cert("02", 2_000),
        Some("01"),
        None,
    )
    .await
    .unwrap();
    tls::put_ticket_key(&db, &key(6)).await.unwrap();
    sqlx::query("DELETE FROM intro_requests")
        .execute(&db.pool)
        .await
        .unwrap();
    db.close().await;

    let ran = operate(&url, &["restore", backup.to_str().unwrap(), "--json"], &[]).await;
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.json()["tls_kept"], json!(true), "{}", ran.stdout);
    let ran = operate(&url, &["restore", backup.to_str().unwrap()], &[]).await;
    assert!(
        ran.stdout.contains("it never goes back in time"),
        "the operator is told: {}",
        ran.stdout
    );

    let db = Db::connect_lazy(&url).unwrap();
    assert_eq!(
        tls::certificate(&db, "dir", "site.example").await.unwrap(),
        Some(cert("02", 2_000)),
        "the renewed certificate, not the backup's"
    );
    let periods: Vec<i64> = tls::ticket_keys(&db)
        .await
        .unwrap()
        .iter()
        .map(|k| k.period)
        .collect();
    assert_eq!(periods, [5, 6], "the newer ticket key is kept");
    assert_eq!(
        tls::account(&db, "dir").await.unwrap().as_deref(),
        Some("the account")
    );
    let restored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM intro_requests")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(restored, 1, "the site's data is the backup's");
    db.close().await;
    let leftovers: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".restoring-"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "the restore's working copy is gone: {leftovers:?}"
    );
}
