//! docs/operate.md's examples run as a reader runs them: every `console`
//! block of "The commands" (up to its HTTPS identity, which tests/fleet.rs
//! runs) and the team's, in order, in an empty folder with the binary on
//! the PATH. The database is one a server made (three intro requests, one
//! held as spam, two checkouts from Stripe's webhook), with the guide's
//! sample IDs replaced by its own. Each command must succeed and print
//! what the guide shows: as many lines, each opening with the same word.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::api::fake_notion::{FakeNotion, DB_ID};
use crate::api::stripe_fixtures::{checkout_session, event, sign, WEBHOOK_SECRET};
use crate::support::{curl, free_port, wait, Dir};

const BIN: &str = env!("CARGO_BIN_EXE_citizen-site");

/// The `$ ` commands of the guide's console blocks, each with the lines it
/// shows after it.
fn examples(guide: &str) -> Vec<(String, Vec<String>)> {
    let start = guide.find("\n## The commands\n").expect("The commands");
    let end = guide[start..]
        .find("\n### The HTTPS identity")
        .map(|e| start + e)
        .expect("the HTTPS identity's section");
    let team = guide.find("\n**Team.**").expect("the team's paragraph");
    let team_end = team
        + guide[team..]
            .find("\n**API.**")
            .expect("the API's paragraph");
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for part in [&guide[start..end], &guide[team..team_end]] {
        for block in part.split("```console\n").skip(1) {
            let block = block.split("```").next().unwrap();
            for line in block.lines() {
                match line.strip_prefix("$ ") {
                    Some(command) => out.push((command.to_owned(), Vec::new())),
                    None if line.is_empty() => {}
                    None => out.last_mut().unwrap().1.push(line.to_owned()),
                }
            }
        }
    }
    out
}

/// The first word of a line: up to a space or a comma (a CSV row), past a
/// byte-order mark.
fn first_word(line: &str) -> &str {
    line.trim_start_matches('\u{feff}')
        .split([' ', ','])
        .next()
        .unwrap_or("")
}

/// The sample IDs of the guide's first list, in its order.
fn sample_ids(examples: &[(String, Vec<String>)]) -> Vec<String> {
    let (command, shown) = &examples[0];
    assert!(command.starts_with("citizen-site intro list"), "{command}");
    let mut ids: Vec<String> = Vec::new();
    for word in shown.iter().flat_map(|l| l.split_whitespace()) {
        let is_id = word.len() == 36 && word.matches('-').count() == 4;
        if is_id && !ids.iter().any(|i| i == word) {
            ids.push(word.to_owned());
        }
    }
    ids
}

fn post(base: &str, path: &str, body: &str, headers: &[&str]) -> String {
    let url = format!("{base}{path}");
    let mut args = vec!["-o", "/dev/null", "-w", "%{http_code}", "--data", body];
    for h in headers {
        args.extend(["-H", h]);
    }
    args.push(&url);
    curl(&args)
}

#[test]
fn the_operators_command_examples_run_as_written() {
    let guide =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/operate.md"))
            .unwrap();
    let dir = Dir::new("operate-examples");
    let bin = dir.0.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(BIN, bin.join("citizen-site")).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (notion, notion_server) = runtime.block_on(FakeNotion::start(0));

    // The database a server makes; it forwards nothing itself (no Notion),
    // so the requests wait as the guide's do.
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut server = Command::new(BIN)
        .current_dir(&dir.0)
        .env_clear()
        .env("PATH", &path)
        .env("ADDR", format!("127.0.0.1:{port}"))
        .env("RATE_LIMIT_PER_MINUTE", "0")
        .env("STRIPE_WEBHOOK_SECRET", WEBHOOK_SECRET)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ready = format!("{base}/readyz");
    assert!(wait(60, || curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &ready
    ]) == "200"));
    for (name, person, email, tags, spam) in [
        (
            "Riverbend Mutual Credit",
            "Ana Lopes",
            "ana@riverbend.example",
            json!(["Loyalty", "Local currency"]),
            "",
        ),
        (
            "Canal Makers",
            "Jo",
            "jo@canal.example",
            json!(["Loyalty"]),
            "",
        ),
        (
            "Best pills online",
            "Bot",
            "offers@pills.example",
            json!([]),
            "1",
        ),
    ] {
        let body = json!({
            "name": name, "contactPerson": person, "email": email,
            "website": "https://riverbend.example", "tags": tags, "fax": spam,
            "description": "A mutual credit network of 40 shops.\nWe would like NFC cards for the market.",
        });
        let code = post(
            &base,
            "/api/save-to-notion",
            &body.to_string(),
            &["content-type: application/json"],
        );
        assert_eq!(code, "200", "{name}");
        // Received one after the other, as the guide's list orders them.
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for (session, paid) in [("cs_live_a1b2c3", "paid"), ("cs_live_d4e5f6", "unpaid")] {
        let payload = event(
            &format!("evt_{session}"),
            "checkout.session.completed",
            checkout_session(session, paid, Some("ana@riverbend.example")),
        )
        .to_string();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let signature = format!("stripe-signature: {}", sign(&payload, now));
        let code = post(
            &base,
            "/api/stripe-webhook",
            &payload,
            &["content-type: application/json", &signature],
        );
        assert_eq!(code, "200", "the webhook for {session}");
    }

    // The guide's sample IDs stand for these.
    let listed = Command::new(BIN)
        .current_dir(&dir.0)
        .args(["intro", "list", "--json"])
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let ids: Vec<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    let examples = examples(&guide);
    assert!(
        examples.len() >= 13,
        "the guide's examples are read: {examples:?}"
    );
    let samples = sample_ids(&examples);
    assert_eq!(
        samples.len(),
        ids.len(),
        "the guide's IDs {samples:?}, the database's {ids:?}"
    );
    let real = |text: &str| {
        samples
            .iter()
            .zip(&ids)
            .fold(text.to_owned(), |t, (sample, id)| t.replace(sample, id))
    };
    std::fs::write(
        dir.0.join("team.json"),
        r#"[{"name": "Jo", "role": "Engineering", "image_url": "JO"}]"#,
    )
    .unwrap();

    for (command, shown) in examples {
        let command = real(command.split(" #").next().unwrap().trim());
        if command == "systemctl stop citizen-site" {
            // The guide's server is this test's.
            // SAFETY: signalling our own child, not yet reaped.
            unsafe { libc::kill(server.id() as libc::pid_t, libc::SIGTERM) };
            server.wait().unwrap();
            continue;
        }
        let ran = Command::new("bash")
            .arg("-c")
            .arg(&command)
            .current_dir(&dir.0)
            .env_clear()
            .env("PATH", &path)
            .env("RUST_BACKTRACE", "0")
            .env("NOTION_TOKEN", "secret_test")
            .env("NOTION_DATABASE_ID", DB_ID)
            .env("NOTION_API_BASE", notion_server.uri())
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&ran.stdout);
        assert!(
            ran.status.success(),
            "{command}: {out}{}",
            String::from_utf8_lossy(&ran.stderr)
        );
        let got: Vec<&str> = out.lines().collect();
        let shown: Vec<String> = shown.iter().map(|l| real(l)).collect();
        assert_eq!(
            got.len(),
            shown.len(),
            "{command}: the guide shows {shown:#?}, it printed {got:#?}"
        );
        for (g, s) in got.iter().zip(&shown) {
            assert_eq!(
                first_word(g),
                first_word(s),
                "{command}: the guide shows {s:?}, it printed {g:?}"
            );
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(
        notion.request_ids().len(),
        3,
        "intro retry forwarded the three"
    );
}
