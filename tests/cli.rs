//! An operator's first hour, as a new user meets it: the binary run in an
//! empty folder with settings as people write them in an environment file.
//! Each test is a case that once misled (the list of issue 56): the message
//! is checked by its key words (the variable as written, the path, the
//! user, the fix), and that nothing was created or changed.
//!
//! `citizen-site check` on a good configuration exits 0; on one with three
//! problems it exits 1 and names all three, in text and in JSON.
//!
//! The unprivileged case runs as `nobody` (setpriv) when the tests run as
//! root, as CI does: file modes do not stop root.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{curl, free_port, needs, wait, Dir};

const BIN: &str = env!("CARGO_BIN_EXE_citizen-site");

/// The binary, with none of the settings of the shell that runs the tests.
fn site(dir: &Path) -> Command {
    without_the_shells_settings(Command::new(BIN), dir)
}

/// `c` (the binary, or a program that runs it) in `dir`, with none of the
/// site's settings of the shell that runs the tests.
fn without_the_shells_settings(mut c: Command, dir: &Path) -> Command {
    c.current_dir(dir).env("RUST_BACKTRACE", "0");
    for (name, _) in std::env::vars() {
        let ours = name.starts_with("STRIPE_")
            || name.starts_with("NOTION_")
            || name.starts_with("TLS_")
            || name.starts_with("ACME_")
            || [
                "DATABASE_URL",
                "SITE_URL",
                "ADDR",
                "SAMPLE_TEAM",
                "MAX_CONNECTIONS",
                "LOG_FORMAT",
                "RUST_LOG",
            ]
            .contains(&name.as_str());
        if ours {
            c.env_remove(name);
        }
    }
    c
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().unwrap();
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

/// A running server on a database under `dir/data`, stopped when dropped.
struct Server {
    child: std::process::Child,
    base: String,
}

impl Server {
    fn start(dir: &Path) -> Server {
        let mut c = site(dir);
        c.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        Server::spawn(c)
    }

    /// `serve` run by `cmd` (the binary in its folder, its output set), once
    /// it is ready.
    fn spawn(cmd: Command) -> Server {
        Server::spawn_on(cmd, free_port())
    }

    /// [`Server::spawn`] on 127.0.0.1:`port`.
    fn spawn_on(mut cmd: Command, port: u16) -> Server {
        let child = cmd
            .arg("serve")
            .env("ADDR", format!("127.0.0.1:{port}"))
            .env("RATE_LIMIT_PER_MINUTE", "0")
            .spawn()
            .unwrap();
        let base = format!("http://127.0.0.1:{port}");
        let ready = format!("{base}/readyz");
        assert!(
            wait(60, || curl(&[
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                &ready
            ]) == "200"),
            "the server did not become ready"
        );
        Server { child, base }
    }

    fn post(&self, name: &str, spam: bool) {
        let body = serde_json::json!({
            "name": name,
            "contactPerson": "Ana",
            "email": "ana@riverbend.example",
            "website": "https://riverbend.example",
            "description": "A mutual credit network of 40 shops.",
            "tags": ["Loyalty"],
            "fax": if spam { "1" } else { "" },
        });
        let url = format!("{}/api/save-to-notion", self.base);
        let code = curl(&[
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-H",
            "content-type: application/json",
            "--data",
            &body.to_string(),
            &url,
        ]);
        assert_eq!(code, "200", "posting {name}");
    }

    /// SIGTERM, and waits for the process to end (its SQLite files closed).
    fn stop(mut self) {
        // SAFETY: signalling our own child, not yet reaped.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        self.child.wait().unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A site database with `n` intro requests (and a spam one when asked),
/// made by a server as a real start makes it.
fn site_database(dir: &Path, names: &[&str], spam: bool) {
    let server = Server::start(dir);
    for name in names {
        server.post(name, false);
    }
    if spam {
        server.post("Cheap pills", true);
    }
    server.stop();
    // A stopped site's data is the file alone: its write-ahead log folded
    // in, nothing a reader without write access would need beside it.
    let data = dir.join("data");
    let mut left: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["citizen-site.db", "citizen-site.db.lock"],
        "what the stopped server left in data/"
    );
}

/// Every file under `dir`, with its bytes: what a command must leave as it
/// is. SQLite's shared-memory index (`-shm`) and an empty write-ahead log
/// aside: a reader of a database in WAL mode makes them, holding nothing,
/// and the next writer takes them over.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                let name = p.to_string_lossy();
                if name.ends_with("-shm") || (name.ends_with("-wal") && bytes.is_empty()) {
                    continue;
                }
                out.push((p, bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_database_this_user_cannot_write_is_named_with_the_user_and_the_fix_never_called_not_the_sites()
{
    needs("setpriv", "util-linux");
    let dir = Dir::new("cli-readonly");
    site_database(
        &dir.0,
        &["Riverbend", "Canal Makers", "Market Hall", "Lea"],
        false,
    );
    // A copy the user cannot write: folder 555, file 444 (as a restored
    // backup on a read-only mount, or another user's files).
    let data = dir.0.join("data");
    let db = data.join("citizen-site.db");
    let bin = dir.0.join("citizen-site");
    std::fs::copy(BIN, &bin).unwrap();
    use std::os::unix::fs::PermissionsExt;
    let mode =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    mode(&dir.0, 0o777);
    mode(&db, 0o444);
    mode(&data, 0o555);
    let header = std::fs::read(&db).unwrap();
    assert_eq!(
        header[18..20],
        [2, 2],
        "the server left its database in WAL mode"
    );
    let before = snapshot(&data);
    // SAFETY: getuid(2) has no preconditions.
    let root = unsafe { libc::getuid() } == 0;
    let as_user = |args: &[&str]| {
        let mut c = if root {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(&bin);
            c
        } else {
            Command::new(&bin)
        };
        c.current_dir(&dir.0)
            .args(args)
            .env_remove("DATABASE_URL")
            .env("RUST_BACKTRACE", "0");
        run(&mut c)
    };
    let user = if root { "uid 65534" } else { "uid " };

    for command in [
        &["intro", "list"][..],
        &["team", "list"],
        &["checkouts", "list"],
    ] {
        let (code, out, err) = as_user(command);
        assert_eq!(code, 1, "{command:?}: {out}{err}");
        for words in [
            "cannot read the database data/citizen-site.db",
            user,
            "WAL mode",
            "its folder data is not writable",
            "sudo -u",
        ] {
            assert!(err.contains(words), "{command:?}: {words:?} not in {err}");
        }
        assert!(!err.contains("not this site's database"), "{err}");
        assert_eq!(err.matches("error:").count(), 1, "said once: {err}");
        assert_eq!(err.lines().count(), 1, "said once: {err}");
    }
    let (code, _, err) = as_user(&["backup", "bk.db"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("cannot open the database data/citizen-site.db for writing")
            && err.contains(user)
            && err.contains("give"),
        "{err}"
    );
    assert!(!dir.0.join("bk.db").exists());
    assert_eq!(snapshot(&data), before, "nothing under data/ changed");

    // The same files as the server leaves them, its user's alone, read
    // by that user: all there.
    mode(&data, 0o700);
    mode(&db, 0o600);
    let (code, out, err) = run(site(&dir.0).args(["intro", "list"]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("4 request(s)"), "{out}");
}

#[test]
fn serve_lists_every_problem_at_once_naming_each_variable_as_written() {
    let dir = Dir::new("cli-serve");
    // SITE_URL without a scheme, 0 connections, a yes/no in another word.
    let (code, _, err) = run(site(&dir.0)
        .env("SITE_URL", "example.org")
        .env("MAX_CONNECTIONS", "0")
        .env("SAMPLE_TEAM", "maybe"));
    assert_eq!(code, 1, "{err}");
    for words in [
        "error: SITE_URL=example.org: not an absolute URL",
        "error: MAX_CONNECTIONS=0: too small: a whole number from 1 to 1048576",
        "error: SAMPLE_TEAM=maybe: not a yes/no value",
        "citizen-site check",
    ] {
        assert!(err.contains(words), "{words:?} not in {err}");
    }
    // A missing certificate file first, then what follows from it.
    let (code, _, err) = run(site(&dir.0)
        .env("TLS_CERT", "/etc/nowhere/fullchain.pem")
        .env("TLS_KEY", "/etc/nowhere/privkey.pem"));
    assert_eq!(code, 1);
    let at = |needle: &str| {
        err.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in {err}"))
    };
    assert!(
        at("TLS_CERT=/etc/nowhere/fullchain.pem: cannot read the file: no such file")
            < at("SITE_URL: set it to the https address TLS_CERT is for"),
        "{err}"
    );
    at("TLS_KEY=/etc/nowhere/privkey.pem: cannot read the file");
    // Flags are named as flags; a secret is never echoed.
    let (code, _, err) = run(site(&dir.0).args([
        "serve",
        "--max-connections",
        "abc",
        "--stripe-secret-key",
        "pk_live_hunter2",
    ]));
    assert_eq!(code, 1);
    assert!(err.contains("--max-connections=abc: not a number"), "{err}");
    assert!(
        err.contains("--stripe-secret-key: not usable: it is a publishable key"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
    assert!(
        !dir.0.join("data").exists(),
        "a refused start makes nothing"
    );
}

#[test]
fn check_passes_a_good_configuration_and_names_every_problem_of_a_bad_one_in_text_and_json() {
    let dir = Dir::new("cli-check");
    let port = free_port().to_string();
    let addr = format!("127.0.0.1:{port}");
    // As an environment file often has them: empty values, yes/no as 1.
    let good = |c: &mut Command| {
        c.arg("check")
            .env("ADDR", &addr)
            .env("SAMPLE_TEAM", "1")
            .env("TLS_CERT", "")
            .env("LOG_FORMAT", "")
            .env("STRIPE_SECRET_KEY", "");
    };
    let mut c = site(&dir.0);
    good(&mut c);
    let (code, out, err) = run(&mut c);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("ok: citizen-site serve would start with this configuration"),
        "{out}"
    );
    assert!(
        out.contains("no database at data/citizen-site.db yet"),
        "{out}"
    );
    assert!(!dir.0.join("data").exists(), "check makes no database");

    // Three problems: each named, and the address in use.
    let _held = std::net::TcpListener::bind(&addr).unwrap();
    let bad = |c: &mut Command| {
        c.env("ADDR", &addr)
            .env("SITE_URL", "example.org")
            .env("MAX_CONNECTIONS", "abc");
    };
    let mut c = site(&dir.0);
    c.arg("check");
    bad(&mut c);
    let (code, out, _) = run(&mut c);
    assert_eq!(code, 1, "{out}");
    for words in [
        "error: SITE_URL=example.org: not an absolute URL",
        "error: MAX_CONNECTIONS=abc: not a number",
        &format!("error: ADDR={addr}: cannot listen there: the address is in use"),
        "3 problems: citizen-site serve would not start",
    ] {
        assert!(out.contains(words), "{words:?} not in {out}");
    }
    let mut c = site(&dir.0);
    c.args(["check", "--json"]);
    bad(&mut c);
    let (code, out, err) = run(&mut c);
    assert_eq!(code, 1);
    assert!(err.is_empty(), "under --json, all of it is JSON: {err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["ok"], false);
    let problems: Vec<&str> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems
        .iter()
        .any(|p| p.starts_with("SITE_URL=example.org")));
    assert!(problems
        .iter()
        .any(|p| p.starts_with("MAX_CONNECTIONS=abc")));
    assert!(problems
        .iter()
        .any(|p| p.starts_with(&format!("ADDR={addr}"))));
}

#[test]
fn check_on_a_running_host_passes_where_the_sites_own_server_holds_the_address() {
    let dir = Dir::new("cli-check-running");
    let server = Server::start(&dir.0);
    let addr = server.base.trim_start_matches("http://").to_owned();
    let pid = server.child.id();
    // The environment file the server runs with, before a reload.
    let (code, out, err) = run(site(&dir.0).arg("check").env("ADDR", &addr));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!(
            "note: ADDR={addr}: held by this site's running server (pid {pid}), which passes it on at a reload"
        )),
        "{out}"
    );
    assert!(out.contains("ok: citizen-site serve would start"), "{out}");
    // The same address, checked for a site on another database: not ours.
    let (code, out, _) = run(site(&dir.0)
        .arg("check")
        .env("ADDR", &addr)
        .env("DATABASE_URL", "sqlite://other/site.db"));
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "error: ADDR={addr}: cannot listen there: the address is in use by another citizen-site server (pid {pid}) on another database (sqlite://data/citizen-site.db)"
        )),
        "{out}"
    );
    server.stop();
    // Another program: named, with its pid.
    let held = std::net::TcpListener::bind(&addr).unwrap();
    let (code, out, _) = run(site(&dir.0).arg("check").env("ADDR", &addr));
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "error: ADDR={addr}: cannot listen there: the address is in use by "
        )) && out.contains(&format!("(pid {})", std::process::id())),
        "{out}"
    );
    drop(held);
}

/// On a port below 1024 the kernel refuses a bind without the privilege
/// before it says the port is in use: `check`, run without
/// CAP_NET_BIND_SERVICE where the site's own server holds such a port,
/// still asks who holds it, finds that server and passes; with nothing on
/// the port, the refusal is the privilege's.
#[test]
fn check_without_the_privilege_still_finds_the_sites_server_on_a_privileged_port() {
    // Where any user may bind any port (a container's sysctl), there is no
    // privilege to miss.
    let start = std::fs::read_to_string("/proc/sys/net/ipv4/ip_unprivileged_port_start")
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok());
    if start.is_some_and(|s| s < 1000) {
        eprintln!("skipped: ports from {start:?} need no privilege here");
        return;
    }
    let dir = Dir::new("cli-check-privileged");
    let port = (600..1000)
        .find(|p| std::net::TcpListener::bind(("127.0.0.1", *p)).is_ok())
        .expect("a free port below 1024");
    let mut c = site(&dir.0);
    c.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let server = Server::spawn_on(c, port);
    let addr = format!("127.0.0.1:{port}");
    let unprivileged = || {
        let mut c = Command::new("setpriv");
        c.args(["--bounding-set", "-net_bind_service", "--", BIN, "check"]);
        let mut c = without_the_shells_settings(c, &dir.0);
        c.env("ADDR", &addr);
        c
    };
    let (code, out, err) = run(&mut unprivileged());
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!(
            "note: ADDR={addr}: held by this site's running server (pid {}), which passes it on at a reload",
            server.child.id()
        )),
        "{out}"
    );
    server.stop();
    let (code, out, err) = run(&mut unprivileged());
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(&format!(
            "error: ADDR={addr}: cannot listen there: permission denied to "
        )),
        "{out}"
    );
}

#[test]
fn the_database_check_reads_the_schema_and_changes_nothing() {
    let dir = Dir::new("cli-check-db");
    site_database(&dir.0, &["Riverbend"], false);
    let before = snapshot(&dir.0.join("data"));
    let addr = format!("127.0.0.1:{}", free_port());
    let (code, out, err) = run(site(&dir.0).args(["check", "--json"]).env("ADDR", &addr));
    assert_eq!(code, 0, "{out}{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let database = report["checked"]["database"].as_str().unwrap();
    assert!(
        database.starts_with("sqlite://data/citizen-site.db, schema "),
        "{database}"
    );
    assert_eq!(snapshot(&dir.0.join("data")), before, "check only reads");
}

#[test]
fn commands_that_only_read_never_make_or_migrate_a_database_and_ignore_what_only_serve_reads() {
    let dir = Dir::new("cli-typo");
    for command in [
        &["team", "list"][..],
        &["intro", "list"],
        &["checkouts", "list"],
        &["tls", "status"],
    ] {
        let (code, _, err) = run(site(&dir.0)
            .args(command)
            .env("DATABASE_URL", "sqlite://data/typo.db")
            // Read by `serve` alone: no operator command trips on it.
            .env("SAMPLE_TEAM", "1")
            .env("MAX_CONNECTIONS", "abc"));
        assert_eq!(code, 1, "{command:?}");
        assert!(
            err.contains("no database at data/typo.db"),
            "{command:?}: {err}"
        );
        assert!(
            !dir.0.join("data").exists(),
            "{command:?} made {}",
            dir.0.display()
        );
    }
    site_database(&dir.0, &["Riverbend"], false);
    // A database a step behind this binary (as after installing a new
    // binary, before the server restarts): the commands read it as it is.
    sql(
        &dir.0,
        &["DELETE FROM _sqlx_migrations WHERE version = (SELECT MAX(version) FROM _sqlx_migrations)"],
    );
    let before = snapshot(&dir.0.join("data"));
    for command in [
        &["team", "list"][..],
        &["intro", "list"],
        &["intro", "export"],
        &["checkouts", "list"],
        // Read-only too: no migration, no member row forgotten.
        &["tls", "status"],
    ] {
        let (code, _, err) = run(site(&dir.0).args(command).env("SAMPLE_TEAM", "1"));
        assert_eq!(code, 0, "{command:?}: {err}");
    }
    assert_eq!(
        snapshot(&dir.0.join("data")),
        before,
        "reading changed nothing, and migrated nothing"
    );
}

#[test]
fn a_backup_cut_short_is_named_once_with_what_was_checked_and_in_json_under_json() {
    let dir = Dir::new("cli-restore");
    site_database(&dir.0, &["Riverbend", "Canal Makers"], false);
    let (code, _, err) = run(site(&dir.0).args(["backup", "bk.db"]));
    assert_eq!(code, 0, "{err}");
    let whole = std::fs::read(dir.0.join("bk.db")).unwrap();
    std::fs::write(dir.0.join("cut.db"), &whole[..whole.len() / 2]).unwrap();
    let before = snapshot(&dir.0.join("data"));

    let (code, out, err) = run(site(&dir.0).args(["restore", "cut.db"]));
    assert_eq!(code, 1, "{out}");
    assert!(
        err.starts_with("error: cut.db is damaged: SQLite's integrity check (quick_check) found: database disk image is malformed; nothing was changed"),
        "{err}"
    );
    assert_eq!(err.matches("malformed").count(), 1, "said once: {err}");
    let (code, out, err) = run(site(&dir.0).args(["restore", "cut.db", "--json"]));
    assert_eq!(code, 1);
    assert!(err.is_empty(), "{err}");
    let said: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        said["error"]
            .as_str()
            .unwrap()
            .starts_with("cut.db is damaged"),
        "{said}"
    );
    assert_eq!(snapshot(&dir.0.join("data")), before, "nothing was changed");
}

#[test]
fn release_suggests_retry_only_where_this_command_could_forward() {
    let dir = Dir::new("cli-release");
    site_database(&dir.0, &[], true);
    let (_, out, _) = run(site(&dir.0).args(["intro", "list", "--json"]));
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    let id = listed[0]["id"].as_str().unwrap().to_owned();
    let (code, out, err) = run(site(&dir.0).args(["intro", "release", &id]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("released {id}: it is pending")),
        "{out}"
    );
    assert!(
        !out.contains("(or forward it now"),
        "no advice that fails with Notion off: {out}"
    );
    assert!(out.contains("cannot forward it itself"), "{out}");
}

#[test]
fn help_offers_only_what_each_command_reads_and_names_rust_log() {
    let dir = Dir::new("cli-help");
    let help = |args: &[&str]| run(site(&dir.0).args(args)).1;
    let top = help(&["--help"]);
    assert!(top.contains("RUST_LOG"), "{top}");
    assert!(
        top.contains("local copy of the certificate"),
        "ACME_CACHE_DIR: {top}"
    );
    for command in ["pack", "upgrade"] {
        let text = help(&[command, "--help"]);
        assert!(!text.contains("--database-url"), "{command}: {text}");
    }
    assert!(help(&["intro", "list", "--help"]).contains("JSON instead of text"));
}

/// After a move from a staging CA the database holds the same names'
/// certificate from two directories: `tls renew` renews the one the
/// running servers serve, and with none running asks which, naming both.
#[test]
fn tls_renew_after_a_move_from_staging_renews_what_the_servers_serve() {
    let dir = Dir::new("cli-tls-two-directories");
    site_database(&dir.0, &[], false);
    for (directory, serial) in [
        (
            "https://acme-staging-v02.api.letsencrypt.org/directory",
            "5741",
        ),
        ("https://acme-v02.api.letsencrypt.org/directory", "9a01"),
    ] {
        stored_certificate(&dir.0, directory, serial);
    }
    let (code, out, err) = run(site(&dir.0).args(["tls", "renew", "--wait", "1"]));
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains("the database holds several certificates (example.org (from https://acme-staging-v02.api.letsencrypt.org/directory); example.org (from https://acme-v02.api.letsencrypt.org/directory))")
            && err.contains("--directory"),
        "{err}"
    );
    // A server that serves the production one, seen now.
    let now = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";
    sql(
        &dir.0,
        &[&format!(
            "INSERT INTO tls_members (member, seen_at, serial, not_after, challenges, failures) \
             VALUES ('web1:1:a', {now}, '9a01', 2, '', 0)"
        )],
    );
    let (code, out, err) = run(site(&dir.0).args(["tls", "renew", "--wait", "1"]));
    assert_eq!(code, 1, "no server carries it out here: {out}{err}");
    assert!(
        out.contains("requested: a new certificate for example.org, retiring 9a01"),
        "{out}{err}"
    );
    assert!(
        err.contains("no new certificate served everywhere within 1 s"),
        "{err}"
    );
    // Named outright, the staging one is found too.
    let (_, out, err) = run(site(&dir.0).args(["tls", "renew", "--wait", "1"]).env(
        "ACME_DIRECTORY",
        "https://acme-staging-v02.api.letsencrypt.org/directory",
    ));
    assert!(out.contains("retiring 5741"), "{out}{err}");
}

/// `statements` run on the site database under `dir`. One connection,
/// not a pool: its close returns once SQLite has closed the file, folding
/// the write-ahead log in. A pool's close could return first, and the log
/// then change under a snapshot taken next (2 runs in 30 here).
fn sql(dir: &Path, statements: &[&str]) {
    let url = format!("sqlite://{}/data/citizen-site.db", dir.display());
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        use sqlx::Connection;
        let mut db = sqlx::SqliteConnection::connect(&url).await.unwrap();
        for statement in statements {
            sqlx::query(statement).execute(&mut db).await.unwrap();
        }
        db.close().await.unwrap();
    });
}

/// The certificate row of a site, as a server that ordered one keeps it.
fn stored_certificate(dir: &Path, directory: &str, serial: &str) {
    sql(
        dir,
        &[&format!(
            "INSERT INTO tls_certificates (directory, names, pem, serial, not_before, not_after, stored_at) \
             VALUES ('{directory}', 'example.org', 'no pem', '{serial}', 1, 2, 3)"
        )],
    );
}

/// A plain `tls renew` after a `tls renew --revoke` not yet carried out
/// (no server running) keeps the revocation asked: it is never dropped.
#[test]
fn a_later_tls_renew_never_drops_a_pending_revocation() {
    let dir = Dir::new("cli-tls-revoke-kept");
    site_database(&dir.0, &[], false);
    stored_certificate(
        &dir.0,
        "https://acme-v02.api.letsencrypt.org/directory",
        "9a01",
    );
    for args in [&["tls", "renew", "--revoke"][..], &["tls", "renew"]] {
        let (code, _, err) = run(site(&dir.0).args(args));
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("no server of the site is running"), "{err}");
    }
    let (code, out, err) = run(site(&dir.0).args(["tls", "status", "--json"]));
    assert_eq!(code, 0, "{err}");
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        status["certificates"][0]["renewal_requested"], true,
        "{out}"
    );
    assert_eq!(status["certificates"][0]["revoke_requested"], true, "{out}");
    let (_, out, _) = run(site(&dir.0).args(["tls", "status"]));
    assert!(
        out.contains("(tls renew; the old one revoked too)"),
        "{out}"
    );
}

/// `tls status` on a database a migration behind this binary (a new
/// binary installed, the servers not reloaded yet) reads it as it is, a
/// server that ran an older version listed: one migration behind, then
/// two.
#[test]
fn tls_status_reads_a_database_a_migration_behind() {
    let dir = Dir::new("cli-tls-behind");
    site_database(&dir.0, &[], false);
    stored_certificate(
        &dir.0,
        "https://acme-v02.api.letsencrypt.org/directory",
        "9a01",
    );
    let now = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";
    sql(
        &dir.0,
        &[
            "ALTER TABLE tls_members DROP COLUMN names",
            "ALTER TABLE tls_members DROP COLUMN source",
            "DELETE FROM _sqlx_migrations WHERE version = 20261129000000",
            &format!(
                "INSERT INTO tls_members (member, seen_at, serial, not_after, challenges, failures) \
                 VALUES ('web1:1:a', {now}, '9a01', 2, '', 0)"
            ),
        ],
    );
    // The row's source and names are not kept by that schema: not shown,
    // in text as in JSON, rather than guessed.
    let listed = |behind: &str| {
        let (code, out, err) = run(site(&dir.0).args(["tls", "status"]));
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.contains("serial      9a01"), "{out}");
        assert!(
            out.contains(&format!("the database is {behind} behind this binary")),
            "{out}"
        );
        let row = out.lines().find(|l| l.starts_with("web1:1:a"));
        let cells = row.map(|r| r.split_whitespace().collect::<Vec<_>>());
        assert!(
            cells.is_some_and(|c| c[1..4] == ["-", "9a01", "-"]),
            "SERVER SOURCE SERVES NAMES: {out}"
        );
        assert!(!out.contains("acme "), "{out}");
        let (code, json, err) = run(site(&dir.0).args(["tls", "status", "--json"]));
        assert_eq!(code, 0, "{err}");
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        let member = &json["members"][0];
        assert_eq!(member["serial"], "9a01", "{json}");
        assert_eq!(member["source"], serde_json::Value::Null, "{json}");
        assert_eq!(member["names"], serde_json::Value::Null, "{json}");
        out
    };
    let out = listed("a migration");
    assert!(
        out.contains("until then not shown: the names and source of what each server serves)"),
        "{out}"
    );
    sql(
        &dir.0,
        &[
            "ALTER TABLE tls_orders DROP COLUMN requested_cert",
            "ALTER TABLE tls_orders DROP COLUMN outcome_for",
            "ALTER TABLE tls_orders DROP COLUMN outcome",
            "DELETE FROM _sqlx_migrations WHERE version = 20261128000000",
        ],
    );
    let out = listed("2 migrations");
    assert!(
        out.contains("not shown: the last renewal request's outcome and the names and source"),
        "{out}"
    );
}

mod commands_say;
mod private_files;
mod says_where;
mod site_words;
mod tls_says;

/// `tls renew` while the fleet backs off after the CA's refusal leaves the
/// back-off as it is (a request is no fresh try at a CA that limits the
/// site) and says when the servers try again; `--now` lifts it.
#[test]
fn tls_renew_leaves_the_fleets_back_off_and_says_when_the_next_try_is() {
    let dir = Dir::new("cli-tls-renew-backoff");
    site_database(&dir.0, &[], false);
    let directory = "https://acme-v02.api.letsencrypt.org/directory";
    stored_certificate(&dir.0, directory, "9a02");
    // The CA refused the last try; the fleet waits until 2100-01-01.
    let next: i64 = 4_102_444_800_000;
    sql(
        &dir.0,
        &[&format!(
            "INSERT INTO tls_orders (directory, names, next_try_at, retry_ms, failed_by, error) \
             VALUES ('{directory}', 'example.org', {next}, 3600000, 'web1', 'too many new orders')"
        )],
    );
    let (code, _, err) = run(site(&dir.0).args(["tls", "renew"]));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("the CA refused the last try (too many new orders), and the servers try again at 2100-01-01 00:00:00 UTC, not sooner"),
        "{err}"
    );
    let (code, out, err) = run(site(&dir.0).args(["tls", "status", "--json"]));
    assert_eq!(code, 0, "{err}");
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cert = &status["certificates"][0];
    assert_eq!(cert["renewal_requested"], true, "{out}");
    assert!(
        cert["next_try_at"]
            .as_str()
            .is_some_and(|at| at.starts_with("2100-01-01T00:00:00")),
        "the back-off stands: {out}"
    );
    // --now lifts it: the next server to look may order at once.
    let (code, _, err) = run(site(&dir.0).args(["tls", "renew", "--now"]));
    assert_eq!(code, 1, "{err}");
    assert!(!err.contains("not sooner"), "{err}");
    let (_, out, _) = run(site(&dir.0).args(["tls", "status", "--json"]));
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        status["certificates"][0]["next_try_at"],
        serde_json::Value::Null,
        "{out}"
    );
}
