//! Many servers, one HTTPS site: three servers of one database behind a
//! real TCP balancer (Debian's HAProxy, in TCP mode, round robin, with
//! the PROXY protocol, configured by docs/deploy.md's block word for word
//! but its addresses), in front of pebble, whose validations go through the
//! balancer and land on any server (several names, resolved by
//! `pebble-challtestsrv`).
//!
//! On PostgreSQL (TLS-ALPN-01): one order reaches pebble, every server
//! serves the same serial, each server answers every pending validation
//! when probed directly, the servers see the visitors' addresses through
//! the PROXY protocol (in their logs and their per-client cap; a header
//! from elsewhere is refused, and so is a balancer's connection without
//! one), a session from one server resumes
//! on the others, after an upgrade and across a ticket-key rotation, a
//! renewal is done once and served by every server without a restart, and
//! a server restarted while its database is unreachable (a proxy the test
//! cuts; never the shared cluster) serves HTTPS.
//!
//! On SQLite (one file, HTTP-01): the order holder killed (SIGKILL) mid-order
//! is replaced once its lease expires, and every server serves the one
//! certificate the survivors obtained; each answers a pending HTTP-01 token.
//!
//! Needs `pebble`, `haproxy` and PostgreSQL on 127.0.0.1:5432 (.ci/run
//! installs and starts them).

use crate::support;

mod ca_word;
mod commands;
mod faults;
mod stand_in;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::client::{ClientSessionMemoryCache, Resumption, Tls12Resumption};
use rustls::HandshakeKind::{Full, Resumed};
use support::pg::{CutProxy, PgDb};
use support::tls_site::{
    get_via, https_server, served_serial_via, spawn, tls_client, visit_via, Pebble, Proc, Route,
};
use support::{deploy_step, free_port, needs, wait, Dir};

const BIN: &str = env!("CARGO_BIN_EXE_citizen-site");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const NAMES: [&str; 3] = ["a.site.test", "b.site.test", "c.site.test"];

/// `pebble-challtestsrv` answering every name with `address` (127.0.0.1:
/// where the balancer listens), on a DNS port of its own.
fn dns_server(dir: &Path, address: &str) -> (Proc, u16) {
    let (dns, management) = (free_port(), free_port());
    let proc = spawn(
        Command::new("pebble-challtestsrv")
            .args(["-defaultIPv4", address, "-defaultIPv6", ""])
            .args(["-dns01", &format!("127.0.0.1:{dns}")])
            .args(["-http01", "", "-https01", "", "-tlsalpn01", ""])
            .args(["-management", &format!("127.0.0.1:{management}")]),
        dir.join("challtestsrv.log"),
    );
    assert!(
        wait(20, || TcpStream::connect(("127.0.0.1", management)).is_ok()),
        "pebble-challtestsrv did not start: {}",
        proc.log()
    );
    (proc, dns)
}

/// One server of the fleet: its ports and its own folder (as on a machine
/// of its own).
struct Server {
    https: u16,
    http: u16,
    dir: PathBuf,
    proc: Option<Proc>,
}

/// The fleet's settings, shared by every server.
struct Fleet {
    dir: Dir,
    servers: Vec<Server>,
    balancer_https: u16,
    balancer_http: u16,
    env: Vec<(String, String)>,
    _haproxy: Proc,
}

impl Fleet {
    /// Three servers' ports, and HAProxy in front of them configured by
    /// the guide's block with the test's addresses.
    fn new(name: &str) -> Fleet {
        needs("haproxy", "haproxy");
        let dir = Dir::new(name);
        let servers: Vec<Server> = (1..=3)
            .map(|i| {
                let folder = dir.0.join(format!("web{i}"));
                std::fs::create_dir_all(&folder).unwrap();
                Server {
                    https: free_port(),
                    http: free_port(),
                    dir: folder,
                    proc: None,
                }
            })
            .collect();
        let (balancer_https, balancer_http) = (free_port(), free_port());
        let guide = std::fs::read_to_string(Path::new(ROOT).join("docs/deploy.md")).unwrap();
        let mut config = deploy_step(&guide, "balancer");
        for (from, to) in [
            ("bind :443", format!("bind 127.0.0.1:{balancer_https}")),
            ("bind :80", format!("bind 127.0.0.1:{balancer_http}")),
        ] {
            assert!(config.contains(from), "the guide's block has {from:?}");
            config = config.replace(from, &to);
        }
        for (i, s) in servers.iter().enumerate() {
            // The HTTPS server line checks the HTTP port: that port too.
            let https_line = format!("10.0.0.{}:443", 11 + i);
            config = config
                .lines()
                .map(|line| match line.contains(&https_line) {
                    true => line.replace("port 80", &format!("port {}", s.http)),
                    false => line.to_owned(),
                })
                .map(|line| line + "\n")
                .collect();
            for (port, to) in [(443, s.https), (80, s.http)] {
                let from = format!("10.0.0.{}:{port}", 11 + i);
                assert!(config.contains(&from), "the guide's block has {from}");
                config = config.replace(&from, &format!("127.0.0.1:{to}"));
            }
        }
        // Beside the guide's block, a socket to read the balancer's view
        // of its servers from (`Fleet::routes_https`).
        assert!(config.starts_with("global\n"), "{config}");
        let config = config.replacen(
            "global\n",
            &format!(
                "global\n    stats socket {} level user\n",
                dir.0.join("haproxy.sock").display()
            ),
            1,
        );
        let file = dir.0.join("haproxy.cfg");
        std::fs::write(&file, &config).unwrap();
        let check = Command::new("haproxy")
            .arg("-c")
            .arg("-f")
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "haproxy -c: {}{}",
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        );
        let haproxy = spawn(
            Command::new("haproxy").arg("-db").arg("-f").arg(&file),
            dir.0.join("haproxy.log"),
        );
        assert!(
            wait(20, || TcpStream::connect(("127.0.0.1", balancer_https))
                .is_ok()),
            "haproxy did not start: {}",
            haproxy.log()
        );
        Fleet {
            dir,
            servers,
            balancer_https,
            balancer_http,
            env: Vec::new(),
            _haproxy: haproxy,
        }
    }

    /// Whether the balancer sends HTTPS connections (the CA's TLS-ALPN
    /// validations among them) to at least one member: one of
    /// `site_https`'s servers is UP in its own health checks.
    fn routes_https(&self) -> bool {
        use std::os::unix::net::UnixStream;
        let Ok(mut socket) = UnixStream::connect(self.dir.0.join("haproxy.sock")) else {
            return false;
        };
        let mut stats = String::new();
        if socket.write_all(b"show stat\n").is_err() || socket.read_to_string(&mut stats).is_err() {
            return false;
        }
        // CSV: the proxy, the server, ..., the status (UP, DOWN, ...).
        stats.lines().any(|row| {
            let fields: Vec<&str> = row.split(',').collect();
            fields.len() > 17
                && fields[0] == "site_https"
                && fields[1].starts_with("web")
                && fields[17] == "UP"
        })
    }

    fn set(&mut self, name: &str, value: &str) {
        self.env.push((name.into(), value.into()));
    }

    /// Starts server `i` (0-based) with the fleet's settings and `extra`.
    fn start(&mut self, i: usize, extra: &[(&str, &str)]) {
        let s = &self.servers[i];
        let mut cmd = https_server(s.https, s.http);
        cmd.env("ACME_CACHE_DIR", s.dir.join("acme"))
            .env("RUST_LOG", "info,citizen_site::http::observe=debug")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .envs(extra.iter().copied());
        let log = s.dir.join("server.log");
        self.servers[i].proc = Some(spawn(&mut cmd, log));
    }

    fn server(&self, i: usize) -> &Proc {
        self.servers[i].proc.as_ref().expect("started")
    }

    fn logs(&self) -> String {
        self.servers
            .iter()
            .enumerate()
            .map(|(i, s)| {
                format!(
                    "--- web{}\n{}",
                    i + 1,
                    std::fs::read_to_string(s.dir.join("server.log")).unwrap_or_default()
                )
            })
            .collect()
    }

    /// A visit to server `i` by `visitor` (a client that keeps its
    /// tickets), reached as the balancer would for the visitor `from`:
    /// whether its handshake was full or resumed.
    fn visit(
        &self,
        i: usize,
        visitor: &Arc<rustls::ClientConfig>,
        from: &str,
    ) -> rustls::HandshakeKind {
        let route = Route::for_visitor(from);
        visit_via(self.servers[i].https, NAMES[0], visitor, route).0
    }

    /// The serial each server presents for `name`, probed directly (as
    /// the balancer would, for a visitor of the test's).
    fn serials(&self, name: &str, root: &Path) -> Vec<Option<String>> {
        self.servers
            .iter()
            .map(|s| served_serial_via(s.https, name, root, Route::for_visitor("192.0.2.1:1000")))
            .collect()
    }
}

/// A server process the test did not start (an upgrade's successor),
/// killed when dropped.
struct Successor(u32);

impl Drop for Successor {
    fn drop(&mut self) {
        // SAFETY: kill(2) with a process id and a signal number.
        unsafe { libc::kill(self.0 as libc::pid_t, libc::SIGKILL) };
    }
}

/// How many certificates pebble has issued.
fn issued(pebble: &Pebble) -> usize {
    pebble
        .proc
        .log()
        .matches("Issued certificate serial")
        .count()
}

/// Whether the server on `port` answers a TLS-ALPN-01 validation of
/// `name` (a handshake asking for `acme-tls/1` gets a certificate with the
/// acmeIdentifier extension).
fn answers_alpn_challenge(port: u16, name: &str) -> bool {
    #[derive(Debug)]
    struct AnyCert;
    impl rustls::client::danger::ServerCertVerifier for AnyCert {
        fn verify_server_cert(
            &self,
            _: &rustls::pki_types::CertificateDer<'_>,
            _: &[rustls::pki_types::CertificateDer<'_>],
            _: &rustls::pki_types::ServerName<'_>,
            _: &[u8],
            _: rustls::pki_types::UnixTime,
        ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
            Ok(rustls::client::danger::ServerCertVerified::assertion())
        }
        fn verify_tls12_signature(
            &self,
            _: &[u8],
            _: &rustls::pki_types::CertificateDer<'_>,
            _: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
        }
        fn verify_tls13_signature(
            &self,
            _: &[u8],
            _: &rustls::pki_types::CertificateDer<'_>,
            _: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
        }
        fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
            rustls::crypto::ring::default_provider()
                .signature_verification_algorithms
                .supported_schemes()
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCert))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"acme-tls/1".to_vec()];
    let Ok(mut conn) = rustls::ClientConnection::new(
        Arc::new(config),
        rustls::pki_types::ServerName::try_from(name.to_owned()).unwrap(),
    ) else {
        return false;
    };
    let Ok(mut tcp) = Route::for_visitor("192.0.2.2:1000").connect(port) else {
        return false;
    };
    while conn.is_handshaking() {
        if conn.complete_io(&mut tcp).is_err() {
            return false;
        }
    }
    conn.peer_certificates()
        .and_then(|c| c.first())
        .and_then(|der| {
            let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
            Some(
                cert.extensions()
                    .iter()
                    .any(|e| e.oid.to_id_string() == "1.3.6.1.5.5.7.1.31"),
            )
        })
        .unwrap_or(false)
}

/// A returning visitor: TLS 1.3 or 1.2, keeping the tickets it is given.
fn returning(
    root: &Path,
    version: &'static rustls::SupportedProtocolVersion,
) -> Arc<rustls::ClientConfig> {
    let store = Arc::new(ClientSessionMemoryCache::new(8));
    tls_client(
        root,
        &[version],
        Resumption::store(store).tls12_resumption(Tls12Resumption::SessionIdOrTickets),
    )
}

#[test]
fn three_servers_on_postgres_behind_haproxy_share_one_certificate_its_renewal_and_their_sessions() {
    needs("pebble", "pebble");
    let db = PgDb::new();
    let mut fleet = Fleet::new("fleet-postgres");
    let (_dns, dns_port) = dns_server(&fleet.dir.0, "127.0.0.1");
    // Certificates of 45 s: renewed 30 s after they are issued.
    let pebble = Pebble::start_with(
        fleet.balancer_http,
        fleet.balancer_https,
        Some(dns_port),
        Some(45),
    );
    let directory = pebble.directory();
    let ca = pebble.listener_ca.to_str().unwrap().to_owned();
    let db_proxy = CutProxy::start(5432);
    let names = NAMES.join(",");
    for (k, v) in [
        ("TLS_DOMAINS", names.as_str()),
        ("ACME_DIRECTORY", directory.as_str()),
        ("ACME_DIRECTORY_CA", ca.as_str()),
        ("ACME_CHALLENGE", "tls-alpn-01"),
        ("PROXY_PROTOCOL_FROM", "127.0.0.1"),
        ("TLS_TICKET_PERIOD_SECS", "4"),
        ("RATE_LIMIT_PER_MINUTE", "0"),
        ("MAX_CONNECTIONS_PER_CLIENT", "8"),
    ] {
        fleet.set(k, v);
    }
    // The third reaches the database through a proxy the test cuts later.
    let via_proxy = format!(
        "postgres://postgres@127.0.0.1:{}/{}",
        db_proxy.port, db.name
    );
    for i in 0..3 {
        let url = if i == 2 {
            via_proxy.clone()
        } else {
            db.url.clone()
        };
        fleet.start(i, &[("DATABASE_URL", url.as_str())]);
    }

    // While the order runs, each server answers every name's validation
    // when probed directly (the answers are in the database).
    let mut answered = [[false; 3]; 3];
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut root = None;
    while Instant::now() < deadline {
        for (s, server) in fleet.servers.iter().enumerate() {
            for (n, name) in NAMES.iter().enumerate() {
                if !answered[s][n] && answers_alpn_challenge(server.https, name) {
                    answered[s][n] = true;
                }
            }
        }
        if issued(&pebble) > 0 {
            let r = pebble.issuing_root();
            if fleet.serials(NAMES[0], &r).iter().all(Option::is_some) {
                root = Some(r);
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let root = root.unwrap_or_else(|| panic!("no certificate on every server:\n{}", fleet.logs()));
    assert_eq!(
        issued(&pebble),
        1,
        "one order reached pebble:\n{}",
        fleet.logs()
    );
    assert_eq!(
        answered, [[true; 3]; 3],
        "every server answered every pending validation (server x name)"
    );
    let serials = fleet.serials(NAMES[0], &root);
    assert!(
        serials.iter().all(|s| *s == serials[0]),
        "one certificate: {serials:?}"
    );
    for name in NAMES {
        assert_eq!(fleet.serials(name, &root), serials, "{name}");
    }
    let first = serials[0].clone().unwrap();
    // One server obtained it (a first try may fail while the balancer has
    // not yet seen the servers answer its checks; the next try, another
    // server's, then succeeds).
    let obtained = fleet
        .logs()
        .matches("a new certificate is in service")
        .count();
    assert_eq!(obtained, 1, "one server obtained it:\n{}", fleet.logs());

    // Ready on every server (pages rendered) before the visits below.
    let probe = tls_client(&root, &[&rustls::version::TLS13], Resumption::disabled());
    for s in &fleet.servers {
        let ok = wait(60, || {
            visit_via(
                s.https,
                NAMES[0],
                &probe,
                Route::for_visitor("192.0.2.3:1000"),
            )
            .1 == "HTTP/1.1 200 OK"
        });
        assert!(ok, "{}", fleet.logs());
    }

    // The visitors' addresses, through the balancer: the servers log them.
    for from in ["127.0.0.5", "127.0.0.6", "127.0.0.7"] {
        let (_, status) = visit_via(fleet.balancer_https, NAMES[1], &probe, Route::from(from));
        assert_eq!(status, "HTTP/1.1 200 OK");
    }
    for from in ["127.0.0.5", "127.0.0.6", "127.0.0.7"] {
        assert!(
            fleet.logs().contains(&format!("client={from}")),
            "a server logged the visitor {from}:\n{}",
            fleet.logs()
        );
    }
    // The per-client cap counts the visitor the header names, not the
    // balancer every connection comes from: a visitor holding its 8 is
    // refused a ninth, another visitor is served meanwhile.
    let web2 = fleet.servers[1].https;
    let held: Vec<TcpStream> = (0..8)
        .map(|_| Route::for_visitor("192.0.2.60:1000").connect(web2).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut ninth = Route::for_visitor("192.0.2.60:1001").connect(web2).unwrap();
    ninth
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut byte = [0u8; 1];
    let closed = match ninth.read(&mut byte) {
        Ok(n) => n == 0,
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
    };
    assert!(closed, "the visitor's ninth connection is closed at once");
    assert!(
        served_serial_via(web2, NAMES[0], &root, Route::for_visitor("192.0.2.61:1000")).is_some(),
        "another visitor behind the same balancer is served"
    );
    drop(held);
    // A PROXY header from an address not named is not one (the TLS
    // handshake fails on it); a named balancer's connection without one is
    // closed unanswered.
    let elsewhere = Route {
        from: Some("127.0.0.9".parse().unwrap()),
        visitor: Some("192.0.2.4:1000".parse().unwrap()),
    };
    assert_eq!(
        served_serial_via(fleet.servers[0].https, NAMES[0], &root, elsewhere),
        None,
        "a PROXY header from an address not named is refused"
    );
    let mut bare = TcpStream::connect(("127.0.0.1", fleet.servers[0].http)).unwrap();
    bare.set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    bare.write_all(b"GET / HTTP/1.1\r\nHost: a.site.test\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    let _ = bare.read_to_end(&mut answer);
    assert!(
        answer.is_empty(),
        "a balancer's connection without a header is closed unanswered: {}",
        String::from_utf8_lossy(&answer)
    );

    // A session from one server resumes on the others (TLS 1.3 and 1.2).
    for version in [&rustls::version::TLS13, &rustls::version::TLS12] {
        let visitor = returning(&root, version);
        let on = |i| fleet.visit(i, &visitor, "192.0.2.5:1000");
        assert_eq!(on(0), Full, "{version:?}: the first visit");
        assert_eq!(on(1), Resumed, "{version:?}: on the second server");
        assert_eq!(on(2), Resumed, "{version:?}: on the third server");
    }

    // Across a key rotation (4 s periods): a ticket from before the period
    // changes resumes on another server after it.
    let visitor = returning(&root, &rustls::version::TLS13);
    let on = |i| fleet.visit(i, &visitor, "192.0.2.6:1000");
    assert_eq!(on(0), Full);
    std::thread::sleep(Duration::from_millis(4500));
    assert_eq!(on(1), Resumed, "a ticket of the previous period");
    std::thread::sleep(Duration::from_millis(4500));
    assert_eq!(
        on(2),
        Resumed,
        "a ticket of the next period, on another server"
    );

    // Across an upgrade of the first server: its new process resumes what
    // the old one sealed. A ticket lives two periods (8 s here) in the
    // client, less than a successor may take to start on a loaded machine,
    // so the visitor comes back every second while the upgrade runs: every
    // visit resumes, and the first one the successor answers resumes a
    // ticket of the old process (the last visit, after the command, is the
    // successor's).
    let visitor = returning(&root, &rustls::version::TLS13);
    assert_eq!(fleet.visit(0, &visitor, "192.0.2.7:1000"), Full);
    let pid = fleet.server(0).child.id();
    let started = Instant::now();
    let upgrade = std::thread::spawn(move || {
        Command::new(BIN)
            .args(["upgrade", "--pid", &pid.to_string()])
            .output()
            .unwrap()
    });
    // (Judged once the upgrade is done and its successor is in the guard
    // below, which stops it whatever the test finds.)
    let mut during = Vec::new();
    while !upgrade.is_finished() {
        std::thread::sleep(Duration::from_secs(1));
        during.push((
            started.elapsed(),
            fleet.visit(0, &visitor, "192.0.2.7:1000"),
        ));
    }
    let out = upgrade.join().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "upgrade: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // web1's process from now on: not the test's child, stopped with it.
    let _successor = Successor(
        said.split("upgraded: pid ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the new pid: {said}")),
    );
    println!(
        "the upgrade took {:?} ({} visits meanwhile): {said}",
        started.elapsed(),
        during.len()
    );
    let full: Vec<_> = during.iter().filter(|(_, v)| *v != Resumed).collect();
    assert!(
        full.is_empty(),
        "visits during the upgrade not resumed: {full:?}"
    );
    assert_eq!(
        fleet.visit(0, &visitor, "192.0.2.7:1000"),
        Resumed,
        "after the upgrade"
    );

    // The renewal: done once, served by every server without a restart.
    let renewed = wait(90, || {
        let now = fleet.serials(NAMES[0], &root);
        now.iter()
            .all(|s| s.is_some() && s.as_deref() != Some(first.as_str()))
            && now.iter().all(|s| *s == now[0])
    });
    assert!(renewed, "renewed on every server:\n{}", fleet.logs());
    assert_eq!(issued(&pebble), 2, "one renewal order:\n{}", fleet.logs());
    assert!(
        fleet
            .logs()
            .contains("the certificate in the database is in service"),
        "the others took it from the database, without a restart:\n{}",
        fleet.logs()
    );
    // (web1's process is its upgrade's successor, not the test's child.)
    for i in 1..3 {
        let s = &mut fleet.servers[i];
        assert!(s.proc.as_mut().unwrap().running(), "web{} runs on", i + 1);
    }

    // The third server restarted while its database is unreachable: it
    // serves the certificate it last served, from its local copy.
    let before = fleet.serials(NAMES[0], &root)[2].clone();
    let log = fleet.servers[2].proc.take().unwrap().stop();
    assert!(log.contains("stopped"), "{log}");
    db_proxy.cut();
    fleet.start(2, &[("DATABASE_URL", via_proxy.as_str())]);
    let back = wait(30, || {
        served_serial_via(
            fleet.servers[2].https,
            NAMES[0],
            &root,
            Route::for_visitor("192.0.2.8:1000"),
        ) == before
    });
    let log = fleet.server(2).log();
    assert!(back, "HTTPS without the database:\n{log}");
    assert!(
        log.contains("the database is unreachable at start")
            && log.contains("the stored certificate is in service"),
        "{log}"
    );
    drop(fleet);
}

#[test]
fn on_one_sqlite_file_the_order_holder_killed_mid_order_is_replaced_and_every_server_serves_the_result(
) {
    needs("pebble", "pebble");
    let mut fleet = Fleet::new("fleet-sqlite");
    let (_dns, dns_port) = dns_server(&fleet.dir.0, "127.0.0.1");
    let pebble = Pebble::start_with(
        fleet.balancer_http,
        fleet.balancer_https,
        Some(dns_port),
        None,
    );
    let directory = pebble.directory();
    let ca = pebble.listener_ca.to_str().unwrap().to_owned();
    let file = fleet.dir.0.join("site.db");
    let url = format!("sqlite://{}", file.display());
    let names = NAMES.join(",");
    for (k, v) in [
        ("DATABASE_URL", url.as_str()),
        ("TLS_DOMAINS", names.as_str()),
        ("ACME_DIRECTORY", directory.as_str()),
        ("ACME_DIRECTORY_CA", ca.as_str()),
        ("ACME_CHALLENGE", "http-01"),
        ("PROXY_PROTOCOL_FROM", "127.0.0.1"),
    ] {
        fleet.set(k, v);
    }
    for i in 0..3 {
        fleet.start(i, &[]);
    }
    // The holder, as soon as it has stored its first answer: killed.
    let mut holder = None;
    let found = wait(60, || {
        holder = (0..3).find(|i| {
            fleet
                .server(*i)
                .log()
                .contains("this server holds the order lease")
        });
        holder.is_some() && pending_tokens(&file).is_some_and(|t| !t.is_empty())
    });
    assert!(found, "an order began:\n{}", fleet.logs());
    let holder = holder.unwrap();
    // Each server answers the pending HTTP-01 token, probed directly.
    let tokens = pending_tokens(&file).unwrap();
    for (i, s) in fleet.servers.iter().enumerate() {
        let ok = wait(10, || {
            tokens.iter().all(|(token, answer)| {
                http_get(s.http, &format!("/.well-known/acme-challenge/{token}")) == *answer
            })
        });
        assert!(ok, "web{} answers the pending token", i + 1);
    }
    let mut killed = fleet.servers[holder].proc.take().unwrap();
    killed.child.kill().unwrap();
    killed.child.wait().unwrap();

    let survivors: Vec<usize> = (0..3).filter(|i| *i != holder).collect();
    let root = {
        let done = wait(120, || issued(&pebble) > 0);
        assert!(
            done,
            "another server completed the order:\n{}",
            fleet.logs()
        );
        pebble.issuing_root()
    };
    let served = wait(30, || {
        survivors.iter().all(|i| {
            served_serial_via(
                fleet.servers[*i].https,
                NAMES[2],
                &root,
                Route::for_visitor("192.0.2.9:1000"),
            )
            .is_some()
        })
    });
    assert!(served, "{}", fleet.logs());
    let serials: Vec<_> = survivors
        .iter()
        .map(|i| {
            served_serial_via(
                fleet.servers[*i].https,
                NAMES[2],
                &root,
                Route::for_visitor("192.0.2.9:1000"),
            )
        })
        .collect();
    assert_eq!(serials[0], serials[1], "one certificate");
    assert_eq!(issued(&pebble), 1, "{}", fleet.logs());
    // The killed server, started again, serves it at once: nothing ordered.
    fleet.start(holder, &[]);
    let again = wait(30, || {
        served_serial_via(
            fleet.servers[holder].https,
            NAMES[0],
            &root,
            Route::for_visitor("192.0.2.9:1000"),
        ) == serials[0]
    });
    assert!(again, "{}", fleet.server(holder).log());
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(issued(&pebble), 1);
}

/// The pending HTTP-01 tokens and their answers, read from the site's
/// SQLite file (None while it cannot be read).
fn pending_tokens(file: &Path) -> Option<Vec<(String, String)>> {
    use sqlx::Row;
    let url = format!("sqlite://{}?mode=ro", file.display());
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let db = citizen_site::db::Db::connect_lazy(&url).ok()?;
        let rows = sqlx::query("SELECT name, answer FROM tls_challenges WHERE kind = 'http-01'")
            .fetch_all(&db.pool)
            .await
            .ok()?;
        db.close().await;
        Some(
            rows.iter()
                .map(|r| (r.get::<String, _>(0), r.get::<String, _>(1)))
                .collect(),
        )
    })
}

/// The body of a plain GET of `path` on the HTTP port, reached as the
/// balancer would.
fn http_get(port: u16, path: &str) -> String {
    let Ok(mut tcp) = Route::for_visitor("192.0.2.10:1000").connect(port) else {
        return String::new();
    };
    let request = format!("GET {path} HTTP/1.1\r\nHost: a.site.test\r\nConnection: close\r\n\r\n");
    if tcp.write_all(request.as_bytes()).is_err() {
        return String::new();
    }
    let mut answer = String::new();
    let _ = tcp.read_to_string(&mut answer);
    answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default()
}
