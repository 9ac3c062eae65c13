//! An operator's second hour (issue 67), its HTTPS part: `check` on a
//! `TLS_CERT` and `TLS_KEY` given the wrong way round names both files and
//! says they look swapped; `citizen-site tls status` beside a server that
//! serves its own `TLS_CERT` lists that server with what it serves (and
//! follows a reload of the files); a session-ticket key made seconds ago
//! is said to be seconds old, by `tls status` and `/metrics` alike, a
//! rotation included. Such a server writes its row every few seconds, and
//! at once after a reload; `tls renew` beside it says to replace the
//! files; `check` says a pair in DER form is DER, and how to convert it.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{run, site};
use crate::support::tls_site::{https_server, served_serial, spawn, Proc, TestCa};
use crate::support::{free_port, wait, Dir};

/// `check` with `TLS_CERT` and `TLS_KEY` set to `cert` and `key`, in text
/// and in JSON: (exit code, text, the JSON's problems).
fn check_pair(dir: &Path, cert: &Path, key: &Path) -> (i32, String, Vec<String>) {
    let with = |c: &mut Command| {
        c.env("TLS_CERT", cert)
            .env("TLS_KEY", key)
            .env("SITE_URL", "https://localhost")
            .env("HTTPS_ADDR", format!("127.0.0.1:{}", free_port()))
            .env("HTTP_ADDR", format!("127.0.0.1:{}", free_port()));
    };
    let mut text = site(dir);
    with(text.arg("check"));
    let (code, out, err) = run(&mut text);
    let mut json = site(dir);
    with(json.args(["check", "--json"]));
    let (json_code, json_out, _) = run(&mut json);
    assert_eq!(code, json_code, "{out}{err}");
    let report: serde_json::Value = serde_json::from_str(&json_out).unwrap();
    let problems = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_owned())
        .collect();
    (code, out, problems)
}

#[test]
fn check_names_both_files_of_a_swapped_tls_pair_and_each_file_at_fault() {
    let dir = Dir::new("cli-tls-swapped");
    let ca = TestCa::new();
    let (cert, key) = ca.leaf(&["localhost"], -60, 86400);
    let (cert_file, key_file) = (dir.0.join("cert.pem"), dir.0.join("key.pem"));
    std::fs::write(&cert_file, &cert).unwrap();
    std::fs::write(&key_file, &key).unwrap();
    let (c, k) = (cert_file.display(), key_file.display());

    // Swapped: each file holds what the other should.
    let (code, out, problems) = check_pair(&dir.0, &key_file, &cert_file);
    assert_eq!(code, 1, "{out}");
    for words in [
        format!("error: TLS_CERT={k}: holds no certificate"),
        format!("error: TLS_KEY={c}: holds no PEM private key"),
        format!("error: TLS_CERT={k} and TLS_KEY={c} look swapped"),
    ] {
        assert!(out.contains(&words), "{words:?} not in {out}");
    }
    assert!(!out.contains("PRIVATE KEY-----"), "{out}");
    for start in [format!("TLS_CERT={k}: "), format!("TLS_KEY={c}: ")] {
        assert!(
            problems.iter().any(|p| p.starts_with(&start)),
            "{start:?} not in {problems:?}"
        );
    }

    // Neither file holds what it should: both named, no swap suggested.
    let notes = dir.0.join("notes.txt");
    std::fs::write(&notes, "the certificate is in the other folder\n").unwrap();
    let (code, out, problems) = check_pair(&dir.0, &notes, &notes);
    assert_eq!(code, 1, "{out}");
    let n = notes.display();
    assert!(
        out.contains(&format!("error: TLS_CERT={n}: holds no certificate"))
            && out.contains(&format!("error: TLS_KEY={n}: holds no PEM private key")),
        "{out}"
    );
    assert!(!out.contains("look swapped"), "{out}");
    assert_eq!(problems.len(), 2, "{problems:?}");

    // Another certificate's key: one problem naming both.
    let (_, other_key) = ca.leaf(&["localhost"], -60, 86400);
    let other = dir.0.join("other-key.pem");
    std::fs::write(&other, other_key).unwrap();
    let (code, out, problems) = check_pair(&dir.0, &cert_file, &other);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        problems,
        [format!(
            "TLS_CERT={c} and TLS_KEY={} do not belong together: the key is not the certificate's",
            other.display()
        )]
    );
}

/// A server serving `TLS_CERT` and `TLS_KEY` on the SQLite database `url`,
/// once it serves.
fn serve_own_files(dir: &Path, url: &str, cert: &Path, key: &Path, root: &Path) -> (Proc, u16) {
    let (https, http) = (free_port(), free_port());
    let server = spawn(
        https_server(https, http)
            .env("DATABASE_URL", url)
            .env("TLS_CERT", cert)
            .env("TLS_KEY", key)
            .env("SITE_URL", format!("https://localhost:{https}")),
        dir.join("server.log"),
    );
    assert!(
        wait(60, || served_serial(https, "localhost", root).is_some()),
        "{}",
        server.log()
    );
    (server, https)
}

/// A CA of the test's own (its root in `root`) and a certificate it
/// signed for `names`, a day long, written as the operator's own files.
struct Own {
    ca: TestCa,
    root: PathBuf,
    cert: String,
    cert_file: PathBuf,
    key_file: PathBuf,
}

/// [`Own`], in `dir`: root.pem, cert.pem and key.pem.
fn own_files(dir: &Path, names: &[&str]) -> Own {
    let ca = TestCa::new();
    let root = dir.join("root.pem");
    std::fs::write(&root, ca.pem()).unwrap();
    let (cert, key) = ca.leaf(names, -60, 86400);
    let (cert_file, key_file) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert_file, &cert).unwrap();
    std::fs::write(&key_file, &key).unwrap();
    Own {
        ca,
        root,
        cert,
        cert_file,
        key_file,
    }
}

/// `tls status --json` on `url`.
fn status_json(dir: &Path, url: &str) -> serde_json::Value {
    let (code, out, err) = run(site(dir)
        .args(["tls", "status", "--json"])
        .env("DATABASE_URL", url));
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// A time as `tls status` writes it: in its table, and in its JSON.
fn as_listed(unix_secs: i64) -> (String, String) {
    let t = time::OffsetDateTime::from_unix_timestamp(unix_secs).unwrap();
    let day = format!("{}-{:02}-{:02}", t.year(), t.month() as u8, t.day());
    let clock = format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second());
    (format!("{day} {clock}"), format!("{day}T{clock}.000Z"))
}

/// The serial and end (Unix seconds) of a PEM certificate, as the site reads them.
fn serial_and_end(pem: &str) -> (String, i64) {
    let der = citizen_site::edge::certs::first_certificate(pem).unwrap();
    let info = citizen_site::edge::certs::info(&der).unwrap();
    let end = info
        .not_after
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    (info.serial, end)
}

#[test]
fn tls_status_lists_a_server_serving_its_own_tls_cert_and_follows_a_reload() {
    let dir = Dir::new("cli-tls-own-files");
    let url = format!("sqlite://{}/site.db", dir.0.display());
    let Own {
        ca,
        root,
        cert,
        cert_file,
        key_file,
    } = own_files(&dir.0, &["localhost", "www.localhost"]);
    let (server, https) = serve_own_files(&dir.0, &url, &cert_file, &key_file, &root);
    let (serial, end) = serial_and_end(&cert);
    assert_eq!(
        served_serial(https, "localhost", &root).as_deref(),
        Some(serial.as_str())
    );

    // The server says what it serves within a second or two of its start.
    let listed = |status: &serde_json::Value, serial: &str| {
        status["members"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["serial"] == serial)
    };
    let mut status = serde_json::Value::Null;
    let seen = wait(20, || {
        status = status_json(&dir.0, &url);
        listed(&status, &serial)
    });
    assert!(seen, "the server is not listed: {status}\n{}", server.log());
    let (end_text, end_json) = as_listed(end);
    let member = &status["members"][0];
    assert_eq!(
        member["names"],
        serde_json::json!(["localhost", "www.localhost"])
    );
    assert_eq!(member["not_after"], end_json.as_str(), "{member}");
    assert_eq!(member["source"], "file", "{member}");
    // Its ticket key was made as it started, seconds ago.
    let age = status["ticket_key_age_seconds"].as_i64().unwrap();
    assert!(age < 60, "a key made at the server's start is {age} s old");

    let (code, out, err) = run(site(&dir.0)
        .args(["tls", "status"])
        .env("DATABASE_URL", &url));
    assert_eq!(code, 0, "{err}");
    let row = out
        .lines()
        .find(|l| l.contains(&serial))
        .unwrap_or_else(|| panic!("no row serves {serial}: {out}"));
    for cell in [&end_text, "localhost, www.localhost", "file"] {
        assert!(row.contains(cell), "{cell:?} not in {row:?}\n{out}");
    }
    assert!(!out.contains("no server seen"), "{out}");
    assert!(
        !out.contains("order one once they run with TLS_DOMAINS"),
        "nothing is to be ordered: {out}"
    );
    assert!(out.contains("their own TLS_CERT"), "{out}");
    assert!(out.contains("ticket key    made "), "{out}");

    // The operator installs a new pair: the row follows the reload.
    let (cert2, key2) = ca.leaf(&["localhost"], -60, 2 * 86400);
    std::fs::write(&key_file, &key2).unwrap();
    std::fs::write(&cert_file, &cert2).unwrap();
    let (serial2, end2) = serial_and_end(&cert2);
    let followed = wait(30, || {
        status = status_json(&dir.0, &url);
        listed(&status, &serial2) && !listed(&status, &serial)
    });
    assert!(followed, "{status}\n{}", server.log());
    assert_eq!(
        status["members"][0]["not_after"],
        as_listed(end2).1.as_str()
    );
    assert_eq!(
        status["members"][0]["names"],
        serde_json::json!(["localhost"])
    );
    server.stop();
}

#[test]
fn a_ticket_key_made_by_rotate_tickets_is_seconds_old() {
    let dir = Dir::new("cli-tls-ticket-age");
    super::site_database(&dir.0, &[], false);
    let (code, out, err) = run(site(&dir.0).args(["tls", "rotate-tickets"]));
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = run(site(&dir.0).args(["tls", "status", "--json"]));
    assert_eq!(code, 0, "{err}");
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    let age = status["ticket_key_age_seconds"].as_i64().unwrap();
    assert!(age < 60, "a key made just now is {age} s old: {out}");
    let (_, out, _) = run(site(&dir.0).args(["tls", "status"]));
    let line = out
        .lines()
        .find(|l| l.starts_with("ticket key"))
        .unwrap_or_else(|| panic!("{out}"));
    let secs: i64 = line
        .strip_prefix("ticket key    made ")
        .and_then(|rest| rest.split(" s ago").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line:?}"));
    assert!(secs < 60, "{line:?}");
    assert!(line.contains("sealing new sessions since"), "{line:?}");
}

/// What `/metrics` of the HTTPS server on `https` says of `series`.
fn metric(https: u16, root: &Path, series: &str) -> Option<f64> {
    crate::support::curl(&[
        "--cacert",
        root.to_str().unwrap(),
        &format!("https://localhost:{https}/metrics"),
    ])
    .lines()
    .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
    .and_then(|v| v.parse().ok())
}

/// The SQLite clock in Unix milliseconds, as the site's rows keep it.
const SQLITE_NOW_MS: &str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

#[test]
fn the_ticket_key_age_in_metrics_counts_from_its_making_and_a_rotation_resets_it() {
    let dir = Dir::new("cli-tls-ticket-metric");
    super::site_database(&dir.0, &[], false);
    // The keys of this period and the next, made an hour ago (a server's
    // period is 6 hours): what a fleet running a while holds.
    let period_ms: i64 = 6 * 3600 * 1000;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let current = now_ms / period_ms;
    let keys: Vec<String> = [current, current + 1]
        .iter()
        .enumerate()
        .map(|(i, period)| {
            format!(
                "INSERT INTO tls_ticket_keys (period, period_ms, secret, created_at) \
                 VALUES ({period}, {period_ms}, '{}', {SQLITE_NOW_MS} - 3600000)",
                format!("{:02x}", i + 1).repeat(32)
            )
        })
        .collect();
    super::sql(&dir.0, &keys.iter().map(String::as_str).collect::<Vec<_>>());
    let url = format!("sqlite://{}/data/citizen-site.db", dir.0.display());
    let Own {
        root,
        cert_file,
        key_file,
        ..
    } = own_files(&dir.0, &["localhost"]);
    let (server, https) = serve_own_files(&dir.0, &url, &cert_file, &key_file, &root);
    const AGE: &str = "tls_session_ticket_key_age_seconds";

    // The key sealing now was made an hour ago, whenever its period began.
    let mut age = None;
    let read = wait(20, || {
        age = metric(https, &root, AGE);
        age.is_some_and(|a| a >= 3000.0)
    });
    let age = age.unwrap_or_else(|| panic!("no {AGE}:\n{}", server.log()));
    assert!(
        read && (3590.0..3700.0).contains(&age),
        "a key made an hour ago is said to be {age} s old"
    );
    let status = status_json(&dir.0, &url);
    let said = status["ticket_key_age_seconds"].as_f64().unwrap();
    assert!(
        (said - age).abs() <= 5.0,
        "tls status says {said}, /metrics {age}"
    );

    // Rotated: the servers read the new keys within seconds, and the age
    // starts again.
    let (code, out, err) = run(site(&dir.0)
        .args(["tls", "rotate-tickets"])
        .env("DATABASE_URL", &url));
    assert_eq!(code, 0, "{out}{err}");
    let mut age = None;
    let reset = wait(20, || {
        age = metric(https, &root, AGE);
        age.is_some_and(|a| a < 30.0)
    });
    assert!(
        reset,
        "after tls rotate-tickets /metrics says the key is {age:?} s old:\n{}",
        server.log()
    );
    let said = status_json(&dir.0, &url)["ticket_key_age_seconds"]
        .as_f64()
        .unwrap();
    assert!(said < 30.0, "tls status says {said}");
    server.stop();
}

/// The `seen_at` and `serial` of every row of `tls_members` in `db`.
fn member_rows(db: &Path) -> Vec<(i64, Option<String>)> {
    let url = format!("sqlite://{}?mode=ro", db.display());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            use sqlx::{Connection, Row};
            let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
            let rows = sqlx::query("SELECT seen_at, serial FROM tls_members")
                .fetch_all(&mut conn)
                .await
                .unwrap_or_default();
            conn.close().await.unwrap();
            rows.iter()
                .map(|r| (r.get::<i64, _>(0), r.get::<Option<String>, _>(1)))
                .collect()
        })
}

#[test]
fn a_server_serving_its_own_files_writes_its_row_every_few_seconds_and_at_once_after_a_reload() {
    let dir = Dir::new("cli-tls-file-member-writes");
    let db = dir.0.join("site.db");
    let url = format!("sqlite://{}", db.display());
    let Own {
        ca,
        root,
        cert_file,
        key_file,
        ..
    } = own_files(&dir.0, &["localhost"]);
    let (server, https) = serve_own_files(&dir.0, &url, &cert_file, &key_file, &root);
    assert!(
        wait(20, || member_rows(&db).len() == 1),
        "no row:\n{}",
        server.log()
    );

    // Watched for 13 s: each write is seen (they come a second apart at
    // the most), and they come every 5 s or so, well within the 10 s a
    // server counts as running, not every second.
    let mut writes: Vec<i64> = Vec::new();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(13);
    while std::time::Instant::now() < until {
        for (seen, _) in member_rows(&db) {
            if writes.last() != Some(&seen) {
                writes.push(seen);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(150));
    }
    let gaps: Vec<i64> = writes.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.len() >= 2,
        "the row was written {} times in 13 s: {writes:?}",
        writes.len()
    );
    assert!(
        gaps.iter().all(|g| (4_000..9_000).contains(g)),
        "the row's writes came {gaps:?} ms apart (every ~5 s expected)"
    );

    // A new pair: the row says so as soon as handshakes get it, not at
    // the next write due.
    let (cert2, key2) = ca.leaf(&["localhost"], -60, 2 * 86400);
    let (serial2, _) = serial_and_end(&cert2);
    std::fs::write(&key_file, &key2).unwrap();
    std::fs::write(&cert_file, &cert2).unwrap();
    assert!(
        wait(30, || served_serial(https, "localhost", &root).as_deref()
            == Some(serial2.as_str())),
        "{}",
        server.log()
    );
    let served = std::time::Instant::now();
    let written = wait(10, || {
        member_rows(&db)
            .iter()
            .any(|(_, s)| s.as_deref() == Some(serial2.as_str()))
    });
    let after = served.elapsed();
    assert!(written, "the row never says {serial2}:\n{}", server.log());
    assert!(
        after < std::time::Duration::from_millis(2_500),
        "the row said {serial2} {after:?} after handshakes got it"
    );
    server.stop();
}

#[test]
fn tls_renew_beside_servers_serving_their_own_files_says_to_replace_the_files() {
    let dir = Dir::new("cli-tls-renew-own-files");
    super::site_database(&dir.0, &[], false);
    let url = format!("sqlite://{}/data/citizen-site.db", dir.0.display());
    let Own {
        root,
        cert_file,
        key_file,
        ..
    } = own_files(&dir.0, &["localhost"]);
    let (server, _) = serve_own_files(&dir.0, &url, &cert_file, &key_file, &root);
    assert!(
        wait(20, || !status_json(&dir.0, &url)["members"]
            .as_array()
            .unwrap()
            .is_empty()),
        "{}",
        server.log()
    );
    let renew = || {
        let (code, out, err) = run(site(&dir.0)
            .args(["tls", "renew", "--wait", "5"])
            .env("DATABASE_URL", &url));
        assert_eq!(code, 1, "{out}{err}");
        err
    };

    // Nothing stored, nothing ordered: the files are what to replace.
    let err = renew();
    assert!(!err.contains("TLS_DOMAINS"), "{err}");
    for words in [
        "the running servers serve their own TLS_CERT files",
        "nothing is ordered",
        "replace TLS_CERT and TLS_KEY",
        "within 2 s",
    ] {
        assert!(err.contains(words), "{words:?} not in {err}");
    }
    let status = status_json(&dir.0, &url);
    assert_eq!(status["certificates"], serde_json::json!([]), "{status}");

    // A certificate stored by ACME before (the site moved to its own
    // files): the request is kept for a server under ACME, and the files
    // are named as what the running servers serve.
    super::stored_certificate(
        &dir.0,
        "https://acme-v02.api.letsencrypt.org/directory",
        "9a01",
    );
    let err = renew();
    for words in [
        "no running server of the site orders certificates",
        "serve their own TLS_CERT files",
        "the request is kept",
        "retires 9a01",
        "replace TLS_CERT and TLS_KEY",
    ] {
        assert!(err.contains(words), "{words:?} not in {err}");
    }
    let status = status_json(&dir.0, &url);
    assert_eq!(
        status["certificates"][0]["renewal_requested"], true,
        "{status}"
    );
    server.stop();
}

#[test]
fn check_says_a_tls_pair_in_der_form_is_der_and_how_to_convert_it() {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let dir = Dir::new("cli-tls-der");
    let ca = TestCa::new();
    let (cert, key) = ca.leaf(&["localhost"], -60, 86400);
    let cert_der = CertificateDer::from_pem_slice(cert.as_bytes()).unwrap();
    let key_der = PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
    let (cert_file, key_file) = (dir.0.join("cert.der"), dir.0.join("key.der"));
    std::fs::write(&cert_file, cert_der.as_ref()).unwrap();
    std::fs::write(&key_file, key_der.secret_der()).unwrap();
    let (c, k) = (cert_file.display(), key_file.display());

    let (code, out, problems) = check_pair(&dir.0, &cert_file, &key_file);
    assert_eq!(code, 1, "{out}");
    assert_eq!(problems.len(), 2, "{problems:?}");
    for (problem, start, command) in [
        (
            &problems[0],
            format!("TLS_CERT={c}: "),
            format!("openssl x509 -inform DER -in {c} -out {c}.pem"),
        ),
        (
            &problems[1],
            format!("TLS_KEY={k}: "),
            format!("openssl pkey -inform DER -in {k} -out {k}.pem"),
        ),
    ] {
        assert!(problem.starts_with(&start), "{problem}");
        assert!(problem.contains("DER"), "{problem}");
        assert!(problem.contains(&command), "{command:?} not in {problem}");
        assert!(out.contains(problem.as_str()), "{out}");
    }

    // Converted as said, the pair serves.
    for (kind, file) in [("x509", &cert_file), ("pkey", &key_file)] {
        let pem = Command::new("openssl")
            .args([kind, "-inform", "DER", "-in"])
            .arg(file)
            .arg("-out")
            .arg(format!("{}.pem", file.display()))
            .status()
            .unwrap();
        assert!(pem.success());
    }
    let (code, out, problems) = check_pair(
        &dir.0,
        Path::new(&format!("{c}.pem")),
        Path::new(&format!("{k}.pem")),
    );
    assert_eq!(code, 0, "{out}{problems:?}");
}
