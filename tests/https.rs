//! The binary facing the internet by itself: certificates from a real ACME
//! server (Debian's `pebble`, the Let's Encrypt test server), HTTPS with
//! HTTP/2 and HSTS to curl, the HTTP port's redirect, a restart that reuses
//! the stored certificate, a renewal while the server runs, the operator's
//! own certificate files reloaded when they change, the start refused with
//! the variable named when the settings are wrong, and a returning visitor
//! resuming its session however many others came between.
//!
//! Needs `pebble` and `curl` with HTTP/2 (Debian packages `pebble curl`;
//! .ci/run installs them). Each test runs the server binary as a process,
//! as an operator would, on ports of its own.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support;

use support::tls_site::{
    https_server, served_serial, spawn, tls_client, visit, Pebble, Proc, TestCa,
};
use support::{curl, free_port, wait, Dir};

/// The site's settings for one test: its ports, database and logs.
struct Site {
    dir: Dir,
    https: u16,
    http: u16,
}

impl Site {
    fn new() -> Site {
        Site {
            dir: Dir::new("https-site"),
            https: free_port(),
            http: free_port(),
        }
    }

    fn command(&self, env: &[(&str, &str)]) -> Command {
        let mut cmd = https_server(self.https, self.http);
        cmd.env(
            "DATABASE_URL",
            format!("sqlite://{}/site.db", self.dir.0.display()),
        )
        .envs(env.iter().copied());
        cmd
    }

    fn start(&self, env: &[(&str, &str)]) -> Proc {
        spawn(
            &mut self.command(env),
            self.dir
                .0
                .join(format!("server-{}.log", uuid::Uuid::new_v4())),
        )
    }

    fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.https)
    }

    /// The operator's certificate for localhost, signed by `ca`, written
    /// to files in the site's folder with the CA's root beside them:
    /// (root, cert, key).
    fn own_certificate(&self, ca: &TestCa) -> (PathBuf, PathBuf, PathBuf) {
        let root = self.dir.0.join("root.pem");
        std::fs::write(&root, ca.pem()).unwrap();
        let (cert_file, key_file) = (self.dir.0.join("cert.pem"), self.dir.0.join("key.pem"));
        let (cert, key) = ca.leaf(&["localhost"], -60, 86400);
        std::fs::write(&cert_file, &cert).unwrap();
        std::fs::write(&key_file, &key).unwrap();
        (root, cert_file, key_file)
    }
}

fn assert_no_key_in(log: &str) {
    assert!(
        !log.contains("PRIVATE KEY") && !log.contains("\"d\":"),
        "a log line holds key material:\n{log}"
    );
}

#[test]
fn a_certificate_from_acme_serves_every_page_over_http2_and_a_restart_reuses_it() {
    let site = Site::new();
    let pebble = Pebble::start(site.http, site.https);
    let (ca, directory) = (
        pebble.listener_ca.to_str().unwrap().to_owned(),
        pebble.directory(),
    );
    let env = [
        ("TLS_DOMAINS", "localhost"),
        ("ACME_DIRECTORY", directory.as_str()),
        ("ACME_DIRECTORY_CA", ca.as_str()),
        ("ACME_EMAIL", "ops@example.org"),
    ];
    let mut server = site.start(&env);
    let root = pebble.issuing_root();
    let issued = wait(90, || {
        served_serial(site.https, "localhost", &root).is_some()
    });
    assert!(
        issued,
        "no certificate from pebble (tls-alpn-01):\n{}",
        server.log()
    );
    assert!(server.running());
    let serial = served_serial(site.https, "localhost", &root).unwrap();
    let ready = wait(60, || {
        curl(&[
            "--cacert",
            root.to_str().unwrap(),
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &site.url("/readyz"),
        ]) == "200"
    });
    assert!(ready, "not ready:\n{}", server.log());

    // What /metrics says of it, read over HTTP/2 (the reading's own
    // connection is open meanwhile).
    let metrics = curl(&[
        "--http2",
        "--cacert",
        root.to_str().unwrap(),
        &site.url("/metrics"),
    ]);
    let value = |series: &str| -> f64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {series} in\n{metrics}"))
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert_eq!(
        value(r#"acme_orders_total{kind="issue",outcome="success"}"#),
        1.0
    );
    assert_eq!(
        value(r#"acme_orders_total{kind="issue",outcome="failure"}"#),
        0.0
    );
    let obtained = value("acme_last_success_timestamp_seconds");
    assert!((now - 120.0..=now).contains(&obtained), "{obtained} {now}");
    // pebble's certificates last five years.
    let ends = value(r#"tls_certificate_not_after_timestamp_seconds{names="localhost"}"#);
    assert!(
        (now + 86400.0..now + 6.0 * 365.0 * 86400.0).contains(&ends),
        "{ends}"
    );
    assert!(value("tls_session_ticket_key_age_seconds") >= 0.0);
    assert!(value(r#"http_connections_open{protocol="h2",tls="true"}"#) >= 1.0);

    // Every page of the sitemap (whose addresses are the https site), and the 404.
    let sitemap = curl(&[
        "--cacert",
        root.to_str().unwrap(),
        &site.url("/sitemap.xml"),
    ]);
    let base = site.url("");
    let mut paths: Vec<String> = sitemap
        .split("<loc>")
        .skip(1)
        .map(|s| s.split("</loc>").next().unwrap().to_owned())
        .collect();
    assert!(
        paths.len() >= 15 && paths.iter().all(|u| u.starts_with(&base)),
        "the sitemap names the https site: {sitemap}"
    );
    paths.push(format!("{base}/no-such-page"));
    for url in &paths {
        let headers = curl(&[
            "--http2",
            "--cacert",
            root.to_str().unwrap(),
            "-o",
            "/dev/null",
            "-D",
            "-",
            "-w",
            "%{http_version}",
            url,
        ]);
        let status = headers.lines().next().unwrap_or("");
        let expected = if url.ends_with("/no-such-page") {
            "HTTP/2 404"
        } else {
            "HTTP/2 200"
        };
        assert!(status.starts_with(expected), "{url}: {status}");
        assert!(headers.ends_with('2'), "{url} over HTTP/2: {headers}");
        assert!(
            headers
                .to_ascii_lowercase()
                .contains("strict-transport-security: max-age=63072000"),
            "{url}: HSTS\n{headers}"
        );
    }
    // HTTP/1.1 still, for clients without h2.
    let v = curl(&[
        "--http1.1",
        "--cacert",
        root.to_str().unwrap(),
        "-o",
        "/dev/null",
        "-w",
        "%{http_version} %{http_code}",
        &site.url("/about"),
    ]);
    assert_eq!(v, "1.1 200");

    // Plain HTTP: a permanent redirect to the same path and query on https.
    let http = format!("http://localhost:{}/blog?type=News", site.http);
    let out = curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code} %{redirect_url}",
        &http,
    ]);
    assert_eq!(out, format!("301 {}", site.url("/blog?type=News")));
    let out = curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "-X",
        "POST",
        &format!("http://localhost:{}/api/save-to-notion", site.http),
    ]);
    assert_eq!(out, "308", "a post is sent on as a post");

    // The account and the certificate are in the database every server
    // shares; the local copy of the certificate (for a start while the
    // database is away) is beside it, readable by the server only.
    let shared = stored_tls(&site, &directory);
    assert_eq!(shared.certificate_serial.as_deref(), Some(serial.as_str()));
    assert!(shared.account, "the ACME account is in the database");
    let cache = site.dir.0.join("acme");
    let files: Vec<PathBuf> = walk(&cache);
    assert!(
        files.iter().any(|f| f.ends_with("localhost.pem"))
            && !files.iter().any(|f| f.ends_with("account.json")),
        "{files:?}"
    );
    for f in &files {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(f).unwrap().permissions().mode() & 0o077,
            0,
            "{} is private",
            f.display()
        );
    }

    // A restart orders nothing: the same certificate, at once.
    let log = server.stop();
    // The line docs/deploy.md promises an operator for ACME.
    let promised = crate::support::promised_journal_line("ACME");
    assert!(
        log.contains(&promised),
        "{promised:?} not in the log:\n{log}"
    );
    assert_no_key_in(&log);
    let server = site.start(&env);
    let again = wait(30, || {
        served_serial(site.https, "localhost", &root).is_some()
    });
    assert!(again, "{}", server.log());
    assert_eq!(
        served_serial(site.https, "localhost", &root).unwrap(),
        serial,
        "the stored certificate after a restart"
    );
    std::thread::sleep(Duration::from_secs(1));
    let log = server.stop();
    assert!(
        log.contains("the stored certificate is in service")
            && !log.contains("ordering a certificate"),
        "{log}"
    );
    assert_no_key_in(&log);

    // Upgrading from a version that kept the account and the certificate
    // in ACME_CACHE_DIR alone: they are taken over, nothing is ordered.
    let folder = files
        .iter()
        .find(|f| f.ends_with("localhost.pem"))
        .and_then(|f| f.parent())
        .unwrap()
        .to_path_buf();
    let account = take_tls_state(&site, &directory);
    std::fs::write(folder.join("account.json"), &account).unwrap();
    let server = site.start(&env);
    let taken = wait(30, || {
        let shared = stored_tls(&site, &directory);
        shared.account && shared.certificate_serial.as_deref() == Some(serial.as_str())
    });
    assert!(taken, "the files are in the database:\n{}", server.log());
    assert_eq!(
        served_serial(site.https, "localhost", &root).as_deref(),
        Some(serial.as_str())
    );
    let log = server.stop();
    assert!(!log.contains("ordering a certificate"), "{log}");
    assert!(
        log.contains("the ACME account kept by an older version is in the database now"),
        "{log}"
    );
}

/// Empties the database's TLS state, as a database an older version made
/// would be; returns the account's credentials it held.
fn take_tls_state(site: &Site, directory: &str) -> String {
    let url = format!("sqlite://{}/site.db", site.dir.0.display());
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let db = citizen_site::db::Db::connect_lazy(&url).unwrap();
        let account = citizen_site::tls::store::account(&db, directory)
            .await
            .unwrap()
            .expect("an account");
        for table in citizen_site::tls::store::TABLES {
            sqlx::query(&format!("DELETE FROM {table}"))
                .execute(&db.pool)
                .await
                .unwrap();
        }
        db.close().await;
        account
    })
}

/// What the site's database holds of its HTTPS identity.
struct StoredTls {
    account: bool,
    certificate_serial: Option<String>,
}

fn stored_tls(site: &Site, directory: &str) -> StoredTls {
    use citizen_site::tls::store;
    let url = format!("sqlite://{}/site.db", site.dir.0.display());
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let db = citizen_site::db::Db::connect_lazy(&url).unwrap();
        let found = StoredTls {
            account: store::account(&db, directory).await.unwrap().is_some(),
            certificate_serial: store::certificate_stamp(&db, directory, "localhost")
                .await
                .unwrap()
                .map(|(serial, _)| serial),
        };
        db.close().await;
        found
    })
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

#[test]
fn a_certificate_near_expiry_is_renewed_while_the_server_runs() {
    let site = Site::new();
    let pebble = Pebble::start(site.http, site.https);
    // A stored certificate for these names from this directory, with a
    // third of its life left in 10 s: in service at start, renewed then.
    let old_ca = TestCa::new();
    let (cert, key) = old_ca.leaf(&["localhost"], -10, 20);
    let folder = site.dir.0.join("acme").join(
        pebble
            .directory()
            .trim_start_matches("https://")
            .replace([':', '/'], "_"),
    );
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("localhost.pem"), format!("{key}\n{cert}")).unwrap();
    let old_root = site.dir.0.join("old-root.pem");
    std::fs::write(&old_root, old_ca.pem()).unwrap();

    let ca = pebble.listener_ca.to_str().unwrap().to_owned();
    let directory = pebble.directory();
    let env = [
        ("TLS_DOMAINS", "localhost"),
        ("ACME_DIRECTORY", directory.as_str()),
        ("ACME_DIRECTORY_CA", ca.as_str()),
        ("ACME_CHALLENGE", "http-01"),
    ];
    let mut server = site.start(&env);
    let first = wait(30, || {
        served_serial(site.https, "localhost", &old_root).is_some()
    });
    assert!(
        first,
        "the stored certificate is served at start:\n{}",
        server.log()
    );
    let old_serial = served_serial(site.https, "localhost", &old_root).unwrap();

    let root = pebble.issuing_root();
    let renewed = wait(90, || {
        served_serial(site.https, "localhost", &root).is_some()
    });
    assert!(renewed, "no renewal (http-01):\n{}", server.log());
    assert!(server.running(), "renewed without a restart");
    let new_serial = served_serial(site.https, "localhost", &root).unwrap();
    assert_ne!(new_serial, old_serial);
    // Counted as a renewal (a certificate was in service), not an issue.
    let metrics = curl(&["--cacert", root.to_str().unwrap(), &site.url("/metrics")]);
    for line in [
        r#"acme_orders_total{kind="renewal",outcome="success"} 1"#,
        r#"acme_orders_total{kind="issue",outcome="success"} 0"#,
    ] {
        assert!(metrics.contains(line), "{line} in\n{metrics}");
    }
    let stored = std::fs::read_to_string(folder.join("localhost.pem")).unwrap();
    assert!(
        !stored.contains(cert.trim()),
        "the stored file holds the new certificate"
    );
    let log = server.stop();
    assert!(
        log.contains("the stored certificate is in service")
            && log.contains("a new certificate is in service"),
        "{log}"
    );
    assert_no_key_in(&log);
}

#[test]
fn the_operators_certificate_is_served_and_reloaded_when_its_files_change() {
    let site = Site::new();
    let ca = TestCa::new();
    let (root, cert_file, key_file) = site.own_certificate(&ca);
    let site_url = site.url("");
    let (c, k) = (cert_file.to_str().unwrap(), key_file.to_str().unwrap());
    let server = site.start(&[
        ("TLS_CERT", c),
        ("TLS_KEY", k),
        ("SITE_URL", site_url.as_str()),
    ]);
    assert!(
        wait(30, || served_serial(site.https, "localhost", &root)
            .is_some()),
        "{}",
        server.log()
    );
    let first = served_serial(site.https, "localhost", &root).unwrap();
    let status = wait(60, || {
        curl(&[
            "--http2",
            "--cacert",
            root.to_str().unwrap(),
            "-o",
            "/dev/null",
            "-w",
            "%{http_version} %{http_code}",
            &site.url("/pricing"),
        ]) == "2 200"
    });
    assert!(status, "{}", server.log());

    // Renewed by the operator's own robot: both files replaced.
    let (cert2, key2) = ca.leaf(&["localhost"], -60, 86400);
    std::fs::write(&key_file, &key2).unwrap();
    std::fs::write(&cert_file, &cert2).unwrap();
    let changed = wait(20, || {
        served_serial(site.https, "localhost", &root).is_some_and(|s| s != first)
    });
    assert!(
        changed,
        "the new pair is in service without a restart:\n{}",
        server.log()
    );
    let log = server.stop();
    assert!(
        log.contains("TLS_CERT / TLS_KEY changed: the new certificate is in service"),
        "{log}"
    );
    assert_no_key_in(&log);
}

/// Runs the binary with `env` and returns (exit code, output) once it
/// exits (or None after 20 s, killed).
fn start_and_exit(site: &Site, env: &[(&str, &str)]) -> Option<(i32, String)> {
    let mut child = site
        .command(env)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            let mut out = String::new();
            child
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut out)
                .unwrap();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut out)
                .unwrap();
            return Some((status.code().unwrap_or(-1), out));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn settings_that_cannot_work_stop_the_start_naming_the_variable() {
    let site = Site::new();
    let ca = TestCa::new();
    let (cert, key) = ca.leaf(&["localhost"], -60, 86400);
    let (cert_file, key_file) = (site.dir.0.join("cert.pem"), site.dir.0.join("key.pem"));
    std::fs::write(&cert_file, &cert).unwrap();
    std::fs::write(&key_file, &key).unwrap();
    let (c, k) = (cert_file.to_str().unwrap(), key_file.to_str().unwrap());
    let other_key = site.dir.0.join("other-key.pem");
    std::fs::write(&other_key, ca.leaf(&["localhost"], -60, 86400).1).unwrap();
    let unreadable = site.dir.0.join("no-such-key.pem");
    let (old_cert, old_key) = ca.leaf(&["localhost"], -7200, -3600);
    let (expired, expired_key) = (site.dir.0.join("old.pem"), site.dir.0.join("old-key.pem"));
    std::fs::write(&expired, &old_cert).unwrap();
    std::fs::write(&expired_key, &old_key).unwrap();
    let url = "https://localhost";
    let cases: Vec<(Vec<(&str, &str)>, String)> = vec![
        (vec![("TLS_DOMAINS", " , ")], "TLS_DOMAINS: empty".into()),
        (
            vec![("TLS_DOMAINS", "site.example,*.site.example")],
            "TLS_DOMAINS: \"*.site.example\" is not a domain name".into(),
        ),
        (
            vec![("TLS_CERT", c), ("SITE_URL", url)],
            "TLS_KEY: not set, but TLS_CERT is".into(),
        ),
        (
            vec![
                ("TLS_CERT", c),
                ("TLS_KEY", unreadable.to_str().unwrap()),
                ("SITE_URL", url),
            ],
            format!(
                "TLS_KEY={}: cannot read the file: no such file",
                unreadable.display()
            ),
        ),
        (
            vec![
                ("TLS_CERT", c),
                ("TLS_KEY", other_key.to_str().unwrap()),
                ("SITE_URL", url),
            ],
            "do not belong together".into(),
        ),
        (
            vec![("TLS_CERT", k), ("TLS_KEY", k), ("SITE_URL", url)],
            format!("TLS_CERT={k}: holds no certificate"),
        ),
        (
            vec![
                ("TLS_CERT", expired.to_str().unwrap()),
                ("TLS_KEY", expired_key.to_str().unwrap()),
                ("SITE_URL", url),
            ],
            format!("TLS_CERT={}: the certificate expired at", expired.display()),
        ),
        (
            vec![("TLS_CERT", c), ("TLS_KEY", k), ("SITE_URL", "https://example.org")],
            "SITE_URL=https://example.org: the certificate in TLS_CERT is not for example.org (it is for localhost)".into(),
        ),
        (
            vec![
                ("TLS_DOMAINS", "localhost"),
                ("ACME_DIRECTORY", "http://127.0.0.1:1/dir"),
            ],
            "ACME_DIRECTORY=http://127.0.0.1:1/dir: must be an https URL".into(),
        ),
    ];
    for (env, expected) in cases {
        let (code, out) =
            start_and_exit(&site, &env).unwrap_or_else(|| panic!("{env:?}: still running"));
        assert_eq!(code, 1, "{env:?}: {out}");
        assert!(
            out.contains(&expected),
            "{env:?}: expected {expected:?} in:\n{out}"
        );
        assert!(
            !out.contains("PRIVATE KEY") && !out.contains(key.lines().nth(1).unwrap()),
            "{env:?}: the key is printed:\n{out}"
        );
    }
    // Nothing was started, so nothing was written: no database, no cache.
    assert!(!site.dir.0.join("site.db").exists() && !site.dir.0.join("acme").exists());
}

#[test]
fn an_unreachable_directory_is_retried_while_the_http_port_keeps_redirecting() {
    let site = Site::new();
    // Nothing listens on port 1.
    let server = site.start(&[
        ("TLS_DOMAINS", "localhost"),
        ("ACME_DIRECTORY", "https://127.0.0.1:1/dir"),
    ]);
    let retried = wait(30, || {
        server
            .log()
            .matches("this server could not reach the CA (ACME_DIRECTORY)")
            .count()
            >= 2
    });
    assert!(retried, "retried with back-off:\n{}", server.log());
    let out = curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code} %{redirect_url}",
        &format!("http://localhost:{}/about", site.http),
    ]);
    assert_eq!(out, format!("301 {}", site.url("/about")));
    let log = server.stop();
    assert!(
        log.contains("retry_in=5s") && log.contains("retry_in=10s"),
        "the wait doubles:\n{log}"
    );
}

#[test]
fn a_returning_visitor_resumes_its_session_after_300_others_have_come() {
    use rustls::client::{ClientSessionMemoryCache, Resumption, Tls12Resumption};
    use rustls::version::{TLS12, TLS13};
    use rustls::HandshakeKind::{Full, Resumed};
    let site = Site::new();
    let ca = TestCa::new();
    let (root, cert_file, key_file) = site.own_certificate(&ca);
    let site_url = site.url("");
    let server = site.start(&[
        ("TLS_CERT", cert_file.to_str().unwrap()),
        ("TLS_KEY", key_file.to_str().unwrap()),
        ("SITE_URL", site_url.as_str()),
        ("RATE_LIMIT_PER_MINUTE", "0"),
    ]);
    assert!(
        wait(60, || served_serial(site.https, "localhost", &root)
            .is_some()),
        "{}",
        server.log()
    );
    const V13: &[&rustls::SupportedProtocolVersion] = &[&TLS13];
    const V12: &[&rustls::SupportedProtocolVersion] = &[&TLS12];
    let others = [
        tls_client(&root, V13, Resumption::disabled()),
        tls_client(&root, V12, Resumption::disabled()),
    ];
    // Ready once its pages are rendered.
    let ready = wait(60, || visit(site.https, &others[0]).1 == "HTTP/1.1 200 OK");
    assert!(ready, "{}", server.log());
    let remembering = |versions, tls12| {
        let store = Arc::new(ClientSessionMemoryCache::new(4));
        tls_client(
            &root,
            versions,
            Resumption::store(store).tls12_resumption(tls12),
        )
    };
    // Returning visitors: TLS 1.3 (tickets), TLS 1.2 with tickets.
    let returning = [
        (
            "TLS 1.3",
            remembering(V13, Tls12Resumption::SessionIdOrTickets),
        ),
        (
            "TLS 1.2",
            remembering(V12, Tls12Resumption::SessionIdOrTickets),
        ),
    ];
    for (name, config) in &returning {
        let (kind, status) = visit(site.https, config);
        assert_eq!(kind, Full, "{name}: the first visit");
        assert_eq!(status, "HTTP/1.1 200 OK", "{name}");
    }
    // A TLS 1.2 client that takes no tickets resumes by session id, from
    // the server's cache.
    let by_id = remembering(V12, Tls12Resumption::SessionIdOnly);
    assert_eq!(visit(site.https, &by_id).0, Full);
    assert_eq!(
        visit(site.https, &by_id).0,
        Resumed,
        "TLS 1.2 by session id"
    );
    // 300 other visitors between, on both versions, each a full handshake.
    for i in 0..300 {
        let (kind, status) = visit(site.https, &others[i % 2]);
        assert_eq!(
            (kind, status.as_str()),
            (Full, "HTTP/1.1 200 OK"),
            "visitor {i}"
        );
    }
    for (name, config) in &returning {
        let (kind, status) = visit(site.https, config);
        assert_eq!(
            kind,
            Resumed,
            "{name}: the returning visitor resumes (no certificate sent):\n{}",
            server.log()
        );
        assert_eq!(status, "HTTP/1.1 200 OK", "{name}");
    }
}
