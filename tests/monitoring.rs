//! The alert rules (deploy/citizen-site.rules.yml), proven two ways:
//!
//! - `promtool check rules` and `promtool test rules` with
//!   tests/monitoring/rules.test.yml, where every alert has a case that
//!   fires and one that stays silent, and a runbook section in
//!   docs/operate.md;
//! - a real Prometheus, configured by docs/operate.md's block (its
//!   intervals cut to a second, its addresses the test's), scraping the
//!   real server over HTTPS and loading the rule file as it is. Three
//!   faults induced through the test's stand-ins become their alerts:
//!   Notion answering 500, the database cut off (a proxy the test cuts;
//!   never the shared cluster), and a certificate two days from its end
//!   (the operator's files). Alerts whose `for:` or window cannot pass in
//!   a test (the backlog's hour) are covered by `promtool test rules`
//!   alone.
//!
//! Needs Debian's `prometheus` (Prometheus and promtool), `curl` and
//! PostgreSQL on 127.0.0.1:5432 (.ci/run installs and starts them).

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use support::pg::{CutProxy, PgDb};
use support::tls_site::{https_server, spawn, Proc, TestCa};
use support::{curl, deploy_step, free_port, needs, stdout_of, wait, Dir};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const RULES: &str = "deploy/citizen-site.rules.yml";
const RULE_TESTS: &str = "tests/monitoring/rules.test.yml";

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(path)).unwrap()
}

/// Runs a promtool command in the repository; what it printed.
fn promtool(args: &[&str]) -> String {
    let out = stdout_of(Command::new("promtool").args(args).current_dir(ROOT));
    String::from_utf8(out).unwrap()
}

/// The alerts of the rule file, with their `runbook_url`.
fn alerts() -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut current = None;
    for line in read(RULES).lines().map(str::trim) {
        if let Some(name) = line.strip_prefix("- alert: ") {
            current = Some(name.to_owned());
        } else if let Some(url) = line.strip_prefix("runbook_url: ") {
            let name = current.take().expect("a runbook_url after its alert");
            found.insert(name, url.trim_matches('"').to_owned());
        }
    }
    found
}

/// GitHub's anchor of a heading: lower case, spaces as hyphens, no
/// punctuation.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn every_alert_passes_promtool_fires_and_stays_silent_in_a_test_and_has_a_runbook() {
    needs("promtool", "prometheus");
    let checked = promtool(&["check", "rules", RULES]);
    let alerts = alerts();
    assert!(
        checked.contains(&format!("SUCCESS: {} rules found", alerts.len())),
        "{checked}"
    );
    promtool(&["test", "rules", RULE_TESTS]);

    // Each alert's cases: one with alerts expected, one with none.
    let mut cases: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let tests = read(RULE_TESTS);
    let mut lines = tests.lines().map(str::trim);
    while let Some(line) = lines.next() {
        let Some(name) = line.strip_prefix("alertname: ") else {
            continue;
        };
        assert!(
            alerts.contains_key(name),
            "{RULE_TESTS} tests {name}, which {RULES} lacks"
        );
        let expected = lines
            .find_map(|l| l.strip_prefix("exp_alerts:"))
            .expect("exp_alerts after alertname");
        let (fires, silent) = cases.entry(name.to_owned()).or_default();
        if expected.trim() == "[]" {
            *silent += 1;
        } else {
            *fires += 1;
        }
    }
    let guide = read("docs/operate.md");
    let runbook = guide
        .split_once("### Runbook\n")
        .expect("docs/operate.md's runbook")
        .1;
    let sections: Vec<String> = runbook
        .lines()
        .filter_map(|l| l.strip_prefix("#### "))
        .map(anchor)
        .collect();
    for (alert, url) in &alerts {
        let (fires, silent) = cases.get(alert).copied().unwrap_or_default();
        assert!(
            fires > 0 && silent > 0,
            "{alert}: {fires} case(s) firing and {silent} silent in {RULE_TESTS}; each alert needs both"
        );
        let section = url
            .strip_prefix("docs/operate.md#")
            .unwrap_or_else(|| panic!("{alert}: its runbook_url {url} is not in docs/operate.md"));
        assert!(
            sections.iter().any(|s| s == section) && section == anchor(alert),
            "{alert}: no runbook section #{section} in docs/operate.md ({sections:?})"
        );
    }
    assert_eq!(
        sections.len(),
        alerts.len(),
        "a runbook section for each alert and no other"
    );
}

/// docs/operate.md's scrape configuration, as a test runs it: every
/// second, the rule file from the repository, the test's server and CA.
fn prometheus_config(target: &str, ca: &Path) -> String {
    let guide = deploy_step(&read("docs/operate.md"), "prometheus");
    let rules = Path::new(ROOT).join(RULES);
    let mut config = String::new();
    let mut changed = 0;
    for line in guide.lines() {
        let indent = &line[..line.len() - line.trim_start().len()];
        let replaced = match line.trim() {
            "scrape_interval: 15s" => format!("{indent}scrape_interval: 1s"),
            "evaluation_interval: 15s" => format!("{indent}evaluation_interval: 1s"),
            "- /etc/prometheus/citizen-site.rules.yml" => {
                format!("{indent}- {}", rules.display())
            }
            "server_name: example.org" => format!(
                "{indent}server_name: localhost\n{indent}ca_file: {}",
                ca.display()
            ),
            "- targets: ['10.0.0.11:443', '10.0.0.12:443']" => {
                format!("{indent}- targets: ['{target}']")
            }
            _ => {
                config.push_str(line);
                config.push('\n');
                continue;
            }
        };
        changed += 1;
        config.push_str(&replaced);
        config.push('\n');
    }
    assert_eq!(changed, 5, "the guide's block changed shape:\n{guide}");
    config
}

/// A Notion that answers 500 to everything, on a port of its own.
fn failing_notion() -> (u16, std::thread::JoinHandle<()>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let serve = std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            std::thread::spawn(move || {
                // The head, then as much body as it says.
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = conn.read(&mut buf) {
                    if n == 0 {
                        return;
                    }
                    got.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&got).to_lowercase();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        if got.len() >= end + 4 + length {
                            break;
                        }
                    }
                }
                let body = r#"{"object":"error","status":500,"code":"internal_server_error"}"#;
                let _ = write!(
                    conn,
                    "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    (port, serve)
}

/// Prometheus's alerts now: (name, labels, state).
fn active_alerts(prometheus: u16) -> Vec<(String, Value, String)> {
    let text = curl(&[&format!("http://127.0.0.1:{prometheus}/api/v1/alerts")]);
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    body["data"]["alerts"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|a| {
            (
                a["labels"]["alertname"].as_str().unwrap_or("").to_owned(),
                a["labels"].clone(),
                a["state"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// Waits until Prometheus has `alert` pending or firing with `labels`.
fn becomes_active(prometheus: u16, alert: &str, label: (&str, &str), server: &Proc) {
    let active = wait(60, || {
        active_alerts(prometheus)
            .iter()
            .any(|(name, labels, state)| {
                name == alert
                    && labels[label.0] == label.1
                    && (state == "pending" || state == "firing")
            })
    });
    assert!(
        active,
        "{alert} ({}={}) never became active: {:?}\nserver log:\n{}",
        label.0,
        label.1,
        active_alerts(prometheus),
        server.log()
    );
}

#[test]
fn a_real_prometheus_turns_three_faults_into_their_alerts() {
    needs("prometheus", "prometheus");
    let dir = Dir::new("monitoring");
    let db = PgDb::new();
    let proxy = CutProxy::start(5432);
    let (notion, _notion) = failing_notion();

    // The operator's certificate for localhost, 90 days long and two days
    // from its end: 28 days past its renewal point (two thirds of its life).
    let ca = TestCa::new();
    let (cert, key) = ca.leaf(&["localhost"], -88 * 86400, 2 * 86400);
    let root = dir.0.join("root.pem");
    std::fs::write(&root, ca.pem()).unwrap();
    std::fs::write(dir.0.join("cert.pem"), cert).unwrap();
    std::fs::write(dir.0.join("key.pem"), key).unwrap();

    let (https, http) = (free_port(), free_port());
    let mut cmd = https_server(https, http);
    cmd.env(
        "DATABASE_URL",
        format!("postgres://postgres@127.0.0.1:{}/{}", proxy.port, db.name),
    )
    .env("TLS_CERT", dir.0.join("cert.pem"))
    .env("TLS_KEY", dir.0.join("key.pem"))
    .env("SITE_URL", format!("https://localhost:{https}"))
    .env("NOTION_TOKEN", "secret_test")
    .env("NOTION_DATABASE_ID", "db123")
    .env("NOTION_API_BASE", format!("http://127.0.0.1:{notion}"));
    let server = spawn(&mut cmd, dir.0.join("server.log"));
    // The status of a request to the site (`args` added to curl's).
    let site = |path: &str, args: &[&str]| {
        let resolve = format!("localhost:{https}:127.0.0.1");
        let url = format!("https://localhost:{https}{path}");
        let mut all = vec![
            "--cacert",
            root.to_str().unwrap(),
            "--resolve",
            &resolve,
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
        ];
        all.extend_from_slice(args);
        all.push(&url);
        curl(&all)
    };
    assert!(
        wait(60, || site("/readyz", &[]) == "200"),
        "the server never became ready:\n{}",
        server.log()
    );

    let config = prometheus_config(&format!("127.0.0.1:{https}"), &root);
    std::fs::write(dir.0.join("prometheus.yml"), &config).unwrap();
    let prometheus = free_port();
    let data = dir.0.join("data");
    let mut cmd = Command::new("prometheus");
    cmd.arg(format!(
        "--config.file={}",
        dir.0.join("prometheus.yml").display()
    ))
    .arg(format!("--storage.tsdb.path={}", data.display()))
    .arg(format!("--web.listen-address=127.0.0.1:{prometheus}"));
    let prom = spawn(&mut cmd, dir.0.join("prometheus.log"));
    let api = |path: &str| -> Value {
        serde_json::from_str(&curl(&[&format!("http://127.0.0.1:{prometheus}{path}")]))
            .unwrap_or(Value::Null)
    };
    // The rules load without error, and the server is scraped over HTTPS.
    let loaded = wait(30, || {
        api("/api/v1/rules")["data"]["groups"][0]["rules"]
            .as_array()
            .is_some_and(|rules| {
                rules.len() == alerts().len() && rules.iter().all(|r| r["health"] != "err")
            })
    });
    assert!(loaded, "the rules did not load:\n{}", prom.log());
    let scraped = wait(30, || {
        api("/api/v1/query?query=server_ready")["data"]["result"][0]["value"][1] == "1"
    });
    assert!(
        scraped,
        "no scrape of the server: {}\n{}",
        api("/api/v1/targets"),
        prom.log()
    );

    // The certificate two days from its end is an alert already; nothing
    // else is, before its fault.
    becomes_active(
        prometheus,
        "CertificateExpiresSoon",
        ("names", "localhost"),
        &server,
    );
    let before = active_alerts(prometheus);
    for quiet in ["UpstreamFailing", "DatabaseUnreachable"] {
        assert!(
            before.iter().all(|(name, _, _)| name != quiet),
            "{quiet} before its fault: {before:?}"
        );
    }

    // Notion answers 500: a visitor's request is kept, and its forwarding
    // fails.
    let sent = site(
        "/api/save-to-notion",
        &[
            "-H",
            "content-type: application/json",
            "--data",
            r#"{"name":"Ada","email":"ada@example.org"}"#,
        ],
    );
    assert_eq!(sent, "200", "{}", server.log());
    becomes_active(
        prometheus,
        "UpstreamFailing",
        ("upstream", "notion"),
        &server,
    );

    // The database cut off.
    proxy.cut();
    becomes_active(
        prometheus,
        "DatabaseUnreachable",
        ("job", "citizen-site"),
        &server,
    );
    drop(prom);
    drop(server);
}
