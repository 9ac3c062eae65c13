//! Issue 67's frictions of where the site is and how a command answers:
//! the links of a server on another port than 3000, the start's one line
//! naming every socket it serves, and an argument error under `--json`.

use std::path::Path;
use std::process::{Command, Stdio};

use super::{run, site, Server};
use crate::support::{curl, free_port, wait, Dir};

/// A plain server on `ADDR=127.0.0.1:PORT`, no `SITE_URL`, its log in
/// `dir/log`; killed when dropped.
fn plain(dir: &Path) -> Server {
    let log = std::fs::File::create(dir.join("log")).unwrap();
    let mut cmd = site(dir);
    cmd.env("SSR_WORKERS", "1")
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log));
    Server::spawn(cmd)
}

/// `ADDR=127.0.0.1:PORT` alone: the canonical links, the sitemap, robots.txt
/// and `check` all name `http://127.0.0.1:PORT`, the address the server
/// listens on, not port 3000 where nothing listens.
#[test]
fn without_site_url_the_links_point_at_the_address_the_server_listens_on() {
    let dir = Dir::new("site-url-from-addr");
    let server = plain(&dir.0);
    let base = &server.base;
    let home = curl(&["-s", &format!("{base}/")]);
    assert!(
        home.contains(&format!(r#"<link rel="canonical" href="{base}/""#)),
        "the home page's canonical link is not {base}/: {}",
        home.lines()
            .find(|l| l.contains("canonical"))
            .unwrap_or("(no canonical link)")
    );
    let sitemap = curl(&["-s", &format!("{base}/sitemap.xml")]);
    assert!(
        sitemap.contains(&format!("<loc>{base}/about</loc>")),
        "the sitemap does not list {base}/about: {sitemap}"
    );
    assert!(!sitemap.contains(":3000"), "{sitemap}");
    let robots = curl(&["-s", &format!("{base}/robots.txt")]);
    assert!(
        robots.contains(&format!("Sitemap: {base}/sitemap.xml")),
        "{robots}"
    );
    drop(server);

    // check says the same site, and what a wildcard address is read as.
    let port = free_port();
    let (code, out, err) = run(site(&dir.0)
        .args(["check", "--json"])
        .env("ADDR", format!("127.0.0.1:{port}")));
    assert_eq!(code, 0, "{out}{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        report["checked"]["site"],
        format!("http://127.0.0.1:{port}")
    );
    let (code, out, err) = run(site(&dir.0)
        .args(["check", "--json"])
        .env("ADDR", format!("0.0.0.0:{port}")));
    assert_eq!(code, 0, "{out}{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        report["checked"]["site"],
        format!("http://localhost:{port}"),
        "a wildcard address is reached as localhost"
    );
    let (code, out, err) = run(site(&dir.0)
        .args(["check", "--json"])
        .env("ADDR", "[::]:80"));
    // Port 80 may not be bindable here; only the site matters.
    let _ = (code, err);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["checked"]["site"], "http://localhost");
}

/// A `SITE_URL` on another port than the one the server listens on, with
/// no proxy set up and no HTTPS here to explain it, is noted by `check`
/// naming both settings; behind a proxy (`TRUSTED_PROXIES`) it is not.
#[test]
fn check_notes_a_site_url_on_a_port_nothing_here_listens_on() {
    let dir = Dir::new("site-url-port");
    let port = free_port();
    let (code, out, err) = run(site(&dir.0)
        .arg("check")
        .env("ADDR", format!("127.0.0.1:{port}"))
        .env("SITE_URL", "http://127.0.0.1:3000"));
    assert_eq!(code, 0, "a note, not a problem: {out}{err}");
    let note = out
        .lines()
        .find(|l| l.starts_with("note: SITE_URL=http://127.0.0.1:3000"))
        .unwrap_or_else(|| panic!("no note on SITE_URL's port: {out}"));
    assert!(
        note.contains(&format!("ADDR=127.0.0.1:{port}")) && note.contains("3000"),
        "{note}"
    );
    // The port SITE_URL names by default (80 for http) counts too.
    let (_, out, _) = run(site(&dir.0)
        .arg("check")
        .env("ADDR", format!("127.0.0.1:{port}"))
        .env("SITE_URL", "http://example.org"));
    assert!(out.contains("note: SITE_URL=http://example.org"), "{out}");
    // Explained: a proxy in front, or the same port.
    for (name, value) in [
        ("TRUSTED_PROXIES", "10.0.0.1".to_owned()),
        ("SITE_URL", format!("http://localhost:{port}")),
    ] {
        let mut cmd = site(&dir.0);
        cmd.arg("check")
            .env("ADDR", format!("127.0.0.1:{port}"))
            .env("SITE_URL", "http://127.0.0.1:3000")
            .env(name, value);
        let (code, out, err) = run(&mut cmd);
        assert_eq!(code, 0, "{out}{err}");
        assert!(!out.contains("note: SITE_URL"), "{name}: {out}");
    }
}

/// The start's log line names every socket: plain HTTP, why HTTP/3 is not
/// served, where /metrics answers.
#[test]
fn the_starts_log_names_every_socket_it_serves() {
    let dir = Dir::new("start-line");
    let server = plain(&dir.0);
    let log = std::fs::read_to_string(dir.0.join("log")).unwrap();
    let addr = server.base.trim_start_matches("http://");
    let line = log
        .lines()
        .find(|l| l.contains("listening"))
        .unwrap_or_else(|| panic!("no line says where it listens: {log}"));
    for part in [
        format!("HTTP on {addr} (TCP)"),
        "HTTP/3 off".to_owned(),
        "/metrics".to_owned(),
        "METRICS_ALLOW".to_owned(),
    ] {
        assert!(line.contains(&part), "{part:?} not in {line}");
    }
}

/// The argument errors of every command that takes `--json` answer in
/// JSON too (on standard output, an object with the message), exit 2 as
/// clap's do; a command without `--json` answers in text.
#[test]
fn json_covers_argument_errors_of_every_command_that_takes_it() {
    let dir = Dir::new("json-arg-errors");
    let mut with_json = Vec::new();
    let mut todo: Vec<Vec<String>> = vec![Vec::new()];
    while let Some(path) = todo.pop() {
        let (_, help, _) = run(site(&dir.0).args(&path).arg("--help"));
        let mut in_commands = false;
        for line in help.lines() {
            if line == "Commands:" {
                in_commands = true;
                continue;
            }
            if in_commands {
                match line.split_whitespace().next() {
                    Some(name) if line.starts_with("  ") && name != "help" => {
                        let mut sub = path.clone();
                        sub.push(name.to_owned());
                        todo.push(sub);
                    }
                    Some(_) => {}
                    None => in_commands = false,
                }
            }
        }
        if help.contains("  --json") {
            with_json.push(path);
        }
    }
    with_json.sort();
    let listed: Vec<String> = with_json.iter().map(|p| p.join(" ")).collect();
    for expected in ["check", "intro list", "team list", "tls status", "backup"] {
        assert!(
            listed.iter().any(|l| l == expected),
            "{expected}: {listed:?}"
        );
    }
    for path in &with_json {
        let (code, out, err) = run(site(&dir.0).args(path).args(["--json", "--no-such-flag"]));
        let shown = path.join(" ");
        assert_eq!(code, 2, "{shown}: {out}{err}");
        let answer: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|_| {
            panic!("{shown} --json: not JSON on standard output: {out:?} {err:?}")
        });
        let message = answer["error"].as_str().unwrap_or_default();
        assert!(message.contains("--no-such-flag"), "{shown}: {answer}");
        assert!(
            err.is_empty(),
            "{shown}: also said on standard error: {err}"
        );
    }
    // A value clap refuses, as the issue met it.
    let (code, out, _) = run(site(&dir.0).args(["intro", "list", "--json", "--status", "bogus"]));
    assert_eq!(code, 2, "{out}");
    let answer: serde_json::Value = serde_json::from_str(&out).unwrap();
    let message = answer["error"].as_str().unwrap();
    assert!(
        message.contains("bogus") && message.contains("--status") && message.contains("pending"),
        "the message names the value, the flag and the values it takes: {answer}"
    );
    // No --json: clap's own text, on standard error.
    let (code, out, err) =
        run(Command::new(super::BIN).args(["intro", "list", "--status", "bogus"]));
    assert_eq!(code, 2);
    assert!(out.is_empty() && err.contains("bogus"), "{out}{err}");
    // A command that takes no --json answers in text, even if --json is written.
    let (code, out, err) = run(site(&dir.0).args(["upgrade", "--json"]));
    assert_eq!(code, 2);
    assert!(out.is_empty() && err.contains("--json"), "{out}{err}");
}

/// The links name the port the socket has, when it is known only once
/// bound: `ADDR` with port 0, or a socket systemd passed in (its address
/// is the socket unit's, not `ADDR`'s).
#[test]
fn without_site_url_the_links_name_the_bound_socket_port_0_or_passed_in() {
    crate::support::needs("systemd-socket-activate", "systemd");
    let dir = Dir::new("site-url-bound");
    let passed = free_port();
    for (how, command) in [
        ("ADDR with port 0", vec![super::BIN.to_owned()]),
        (
            "a socket systemd passed",
            vec![
                "systemd-socket-activate".to_owned(),
                "-l".to_owned(),
                format!("127.0.0.1:{passed}"),
                super::BIN.to_owned(),
            ],
        ),
    ] {
        let log = dir.0.join("log");
        let mut cmd = Command::new(&command[0]);
        cmd.args(&command[1..])
            .current_dir(&dir.0)
            .env_remove("SITE_URL")
            .env("SSR_WORKERS", "1")
            .env("ADDR", "127.0.0.1:0")
            .stdout(Stdio::from(std::fs::File::create(&log).unwrap()))
            .stderr(Stdio::from(
                std::fs::File::create(dir.0.join("err")).unwrap(),
            ));
        if command.len() > 1 {
            cmd.env("ADDR", "127.0.0.1:3000");
        }
        let mut child = cmd.spawn().unwrap();
        let said = || {
            std::fs::read_to_string(&log).unwrap_or_default()
                + &std::fs::read_to_string(dir.0.join("err")).unwrap_or_default()
        };
        // systemd-socket-activate starts the server at the first connection.
        let poke = format!("http://127.0.0.1:{passed}/readyz");
        let ready = wait(60, || {
            if command.len() > 1 {
                curl(&["-s", "-m", "1", "-o", "/dev/null", &poke]);
            }
            said().contains("ready: http://")
        });
        let text = said();
        let base = text
            .split("ready: ")
            .nth(1)
            .unwrap_or_default()
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned();
        let sitemap = curl(&["-s", &format!("{base}/sitemap.xml")]);
        let _ = child.kill();
        let _ = child.wait();
        assert!(ready, "{how}: not ready: {text}");
        if command.len() > 1 {
            assert_eq!(base, format!("http://127.0.0.1:{passed}"), "{how}");
        } else {
            assert!(!base.ends_with(":0"), "{how}: {base}");
        }
        assert!(
            sitemap.contains(&format!("<loc>{base}/about</loc>")),
            "{how}: the sitemap does not name {base}: {}",
            sitemap.lines().take(3).collect::<Vec<_>>().join(" ")
        );
    }
}

/// No `SITE_URL` on a wildcard address: the links name localhost, which
/// only this machine reaches, and `check` says so, naming both settings.
#[test]
fn check_notes_a_wildcard_addr_without_site_url() {
    let dir = Dir::new("site-url-wildcard");
    let port = free_port();
    let (code, out, err) = run(site(&dir.0)
        .arg("check")
        .env("ADDR", format!("0.0.0.0:{port}")));
    assert_eq!(code, 0, "a note, not a problem: {out}{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("note: SITE_URL is not set")
                && l.contains(&format!("ADDR=0.0.0.0:{port}"))
                && l.contains(&format!("http://localhost:{port}"))),
        "{out}"
    );
    let (_, out, _) = run(site(&dir.0)
        .arg("check")
        .env("ADDR", format!("0.0.0.0:{port}"))
        .env("SITE_URL", "http://example.org"));
    assert!(!out.contains("note: SITE_URL is not set"), "{out}");
}
