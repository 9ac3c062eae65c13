//! What the guides promise an operator sees and runs is what the binary
//! prints and what the service runs with: the journal line for each
//! certificate source (the files' here, ACME's in tests/https.rs), the
//! start's line naming every socket, and every `systemd-run` of an
//! operator's command with the service's settings.

use std::path::Path;

use crate::support::tls_site::{https_server, spawn, TestCa};
use crate::support::{free_port, promised_journal_line, wait, Dir};

/// Each `systemd-run` of the guides that runs a command on the service's
/// database passes the service's environment file, as the service has it:
/// without it, `intro retry` finds Notion forwarding off.
#[test]
fn every_systemd_run_on_the_services_database_passes_its_environment_file() {
    let mut runs = 0;
    for guide in super::guides() {
        let text = std::fs::read_to_string(&guide).unwrap();
        for (n, line) in text.lines().enumerate() {
            if !(line.contains("systemd-run") && line.contains("/usr/local/bin/citizen-site")) {
                continue;
            }
            runs += 1;
            assert!(
                line.contains("-p EnvironmentFile=-/etc/citizen-site/env"),
                "{}:{}: systemd-run without the service's environment file: {line}",
                guide.display(),
                n + 1
            );
        }
    }
    assert!(runs >= 3, "the guides' systemd-run steps were not found");
}

/// A site with its own certificate logs the line docs/deploy.md promises
/// for that source, and its start names the HTTPS socket, HTTP/3's UDP
/// one, the HTTP redirect and where /metrics answers.
#[test]
fn the_journal_lines_the_deploy_guide_promises_are_the_binarys() {
    let dir = Dir::new("promised-lines");
    let ca = TestCa::new();
    let (cert, key) = ca.leaf(&["localhost"], -60, 86400);
    let (cert_file, key_file) = (dir.0.join("cert.pem"), dir.0.join("key.pem"));
    std::fs::write(&cert_file, cert).unwrap();
    std::fs::write(&key_file, key).unwrap();
    let (https, http) = (free_port(), free_port());
    let mut cmd = https_server(https, http);
    cmd.current_dir(&dir.0)
        .env("TLS_CERT", &cert_file)
        .env("TLS_KEY", &key_file)
        .env("SITE_URL", format!("https://localhost:{https}"))
        .env("DATABASE_URL", "sqlite://data/site.db");
    let server = spawn(&mut cmd, dir.0.join("log"));
    assert!(
        wait(60, || server.log().contains("ready: ")),
        "not ready: {}",
        server.log()
    );
    let log = server.stop();
    let promised = promised_journal_line("your own files");
    assert!(
        log.contains(&promised),
        "docs/deploy.md promises {promised:?}; the log says:\n{log}"
    );
    let listening = log
        .lines()
        .find(|l| l.contains("listening: "))
        .unwrap_or_else(|| panic!("no line names the sockets:\n{log}"));
    for part in [
        format!("HTTPS on 127.0.0.1:{https} (TCP)"),
        format!("HTTP/3 on 127.0.0.1:{https} (UDP)"),
        format!("HTTP on 127.0.0.1:{http} (TCP), redirecting to HTTPS"),
        "/metrics".to_owned(),
    ] {
        assert!(listening.contains(&part), "{part:?} not in: {listening}");
    }
    let guide =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/deploy.md"))
            .unwrap();
    assert!(
        guide.contains("\"listening: HTTPS on ...\""),
        "docs/deploy.md no longer shows the start's line"
    );
}
