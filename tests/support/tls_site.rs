//! The HTTPS tests' parts (`tests/https.rs`, `tests/fleet.rs`,
//! `tests/monitoring.rs`): the server's command, a process killed when
//! dropped, a CA of the test's own, Debian's pebble, and TLS
//! clients that read the certificate served and tell a resumed handshake
//! from a full one.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::{CertificateDer, ServerName};

use super::{curl, free_port, needs, wait, Dir};

/// A process killed when dropped.
pub struct Proc {
    pub child: Child,
    pub log: PathBuf,
}

impl Proc {
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGTERM, and waits for the exit.
    pub fn stop(mut self) -> String {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self.child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.log()
    }

    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn spawn(cmd: &mut Command, log: PathBuf) -> Proc {
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .unwrap();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap();
    Proc { child, log }
}

/// The binary serving HTTPS on `https` (its redirect on `http`) as the
/// HTTPS tests run it: nothing of the test's environment but `PATH`, one
/// isolate, info logs. The caller adds its database and certificate.
pub fn https_server(https: u16, http: u16) -> Command {
    https_server_of(Path::new(env!("CARGO_BIN_EXE_citizen-site")), https, http)
}

/// [`https_server`] running `binary` (a copy an upgrade replaces).
pub fn https_server_of(binary: &Path, https: u16, http: u16) -> Command {
    let mut cmd = Command::new(binary);
    cmd.arg("serve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HTTPS_ADDR", format!("127.0.0.1:{https}"))
        .env("HTTP_ADDR", format!("127.0.0.1:{http}"))
        .env("SSR_WORKERS", "1")
        .env("RUST_LOG", "info");
    cmd
}

/// A CA of the test's own, and a certificate it signed for `names`.
pub struct TestCa {
    cert: rcgen::Certificate,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

impl TestCa {
    pub fn new() -> TestCa {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "citizen-site test CA");
        let cert = params.self_signed(&key).unwrap();
        let issuer = rcgen::Issuer::new(params, key);
        TestCa { cert, issuer }
    }

    /// (certificate PEM, key PEM), valid from `from` to `until` seconds from now.
    pub fn leaf(&self, names: &[&str], from: i64, until: i64) -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params =
            rcgen::CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .unwrap();
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now + time::Duration::seconds(from);
        params.not_after = now + time::Duration::seconds(until);
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    pub fn pem(&self) -> String {
        self.cert.pem()
    }
}

/// Debian's pebble on ports of its own, validating challenges on the
/// site's HTTP and HTTPS ports.
pub struct Pebble {
    pub proc: Proc,
    pub dir: Dir,
    pub api: u16,
    pub management: u16,
    /// The CA of pebble's own listener (ACME_DIRECTORY_CA).
    pub listener_ca: PathBuf,
}

impl Pebble {
    pub fn start(http_port: u16, tls_port: u16) -> Pebble {
        Pebble::start_with(http_port, tls_port, None, None)
    }

    /// Pebble resolving names through the DNS server on `dns` (a
    /// `pebble-challtestsrv`), and issuing certificates valid for
    /// `validity_secs`.
    pub fn start_with(
        http_port: u16,
        tls_port: u16,
        dns: Option<u16>,
        validity_secs: Option<u64>,
    ) -> Pebble {
        needs("pebble", "pebble");
        let dir = Dir::new("pebble");
        let ca = TestCa::new();
        // Backdated by more than the clock skew tests/fleet.rs gives a
        // server (120 s behind), which must still trust it.
        let (cert, key) = ca.leaf(&["localhost", "127.0.0.1"], -600, 86400);
        std::fs::write(dir.0.join("cert.pem"), cert).unwrap();
        std::fs::write(dir.0.join("key.pem"), key).unwrap();
        let listener_ca = dir.0.join("ca.pem");
        std::fs::write(&listener_ca, ca.pem()).unwrap();
        let (api, management) = (free_port(), free_port());
        let config = serde_json::json!({"pebble": {
            "listenAddress": format!("127.0.0.1:{api}"),
            "managementListenAddress": format!("127.0.0.1:{management}"),
            "certificate": dir.0.join("cert.pem"),
            "privateKey": dir.0.join("key.pem"),
            "httpPort": http_port,
            "tlsPort": tls_port,
            "ocspResponderURL": "",
            "externalAccountBindingRequired": false
        }});
        let mut config = config;
        if let Some(secs) = validity_secs {
            config["pebble"]["certificateValidityPeriod"] = secs.into();
        }
        std::fs::write(dir.0.join("config.json"), config.to_string()).unwrap();
        let mut command = Command::new("pebble");
        if let Some(port) = dns {
            command.arg("-dnsserver").arg(format!("127.0.0.1:{port}"));
        }
        let proc = spawn(
            command
                .arg("-config")
                .arg(dir.0.join("config.json"))
                .env("PEBBLE_VA_NOSLEEP", "1")
                .env("PEBBLE_WFE_NONCEREJECT", "0")
                // Every order validates its names afresh.
                .env("PEBBLE_AUTHZREUSE", "0"),
            dir.0.join("pebble.log"),
        );
        let pebble = Pebble {
            proc,
            dir,
            api,
            management,
            listener_ca,
        };
        let up = wait(20, || {
            std::net::TcpStream::connect(("127.0.0.1", api)).is_ok()
                && std::net::TcpStream::connect(("127.0.0.1", management)).is_ok()
        });
        assert!(up, "pebble did not start: {}", pebble.proc.log());
        pebble
    }

    pub fn directory(&self) -> String {
        format!("https://127.0.0.1:{}/dir", self.api)
    }

    /// The root that signs the certificates pebble issues (made at its start).
    pub fn issuing_root(&self) -> PathBuf {
        let path = self.dir.0.join("issuing-root.pem");
        let out = curl(&[
            "--cacert",
            self.listener_ca.to_str().unwrap(),
            &format!("https://127.0.0.1:{}/roots/0", self.management),
        ]);
        assert!(out.contains("BEGIN CERTIFICATE"), "{out}");
        std::fs::write(&path, out).unwrap();
        path
    }
}

/// The serial of the certificate the site presents for `name`, checked
/// against `roots` (PEM), or None when no handshake succeeds.
pub fn served_serial(port: u16, name: &str, roots: &Path) -> Option<String> {
    served_serial_via(port, name, roots, Route::default())
}

/// How a test reaches a server: from `from` (a loopback address of its
/// own, or the system's choice), and as a balancer would, with a PROXY
/// protocol v2 header naming `visitor` first.
#[derive(Debug, Clone, Copy, Default)]
pub struct Route {
    pub from: Option<std::net::IpAddr>,
    pub visitor: Option<std::net::SocketAddr>,
}

impl Route {
    /// As the balancer would, for `visitor`.
    pub fn for_visitor(visitor: &str) -> Route {
        Route {
            from: None,
            visitor: Some(visitor.parse().unwrap()),
        }
    }

    /// From the loopback address `from`, without a header.
    pub fn from(from: &str) -> Route {
        Route {
            from: Some(from.parse().unwrap()),
            visitor: None,
        }
    }

    /// A connection to `port` on 127.0.0.1 taken this way.
    pub fn connect(&self, port: u16) -> std::io::Result<std::net::TcpStream> {
        use std::io::Write;
        let to = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
        if let Some(from) = self.from {
            socket.bind(&std::net::SocketAddr::new(from, 0).into())?;
        }
        socket.connect_timeout(&to.into(), Duration::from_secs(5))?;
        let mut tcp: std::net::TcpStream = socket.into();
        tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
        if let Some(visitor) = self.visitor {
            tcp.write_all(&citizen_site::edge::proxy_protocol::header(visitor, to))?;
        }
        Ok(tcp)
    }
}

/// [`served_serial`], reaching the server by `route`.
pub fn served_serial_via(port: u16, name: &str, roots: &Path, route: Route) -> Option<String> {
    let mut store = rustls::RootCertStore::empty();
    let pem = std::fs::read(roots).ok()?;
    for cert in rustls_pemfile_certs(&pem) {
        store.add(cert).ok()?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .with_root_certificates(store)
        .with_no_client_auth();
    let mut conn = rustls::ClientConnection::new(
        Arc::new(config),
        ServerName::try_from(name.to_owned()).ok()?,
    )
    .ok()?;
    let mut tcp = route.connect(port).ok()?;
    while conn.is_handshaking() {
        conn.complete_io(&mut tcp).ok()?;
    }
    let der = conn.peer_certificates()?.first()?.clone();
    let (_, cert) = x509_parser::parse_x509_certificate(&der).ok()?;
    Some(
        cert.raw_serial_as_string()
            .replace(':', "")
            .to_ascii_uppercase(),
    )
}

pub fn rustls_pemfile_certs(pem: &[u8]) -> Vec<CertificateDer<'static>> {
    use rustls::pki_types::pem::PemObject;
    CertificateDer::pem_slice_iter(pem)
        .filter_map(Result::ok)
        .collect()
}

/// A TLS client of `versions` that trusts `roots`: it keeps the sessions it
/// is given in a store of its own (a returning visitor), or keeps none.
pub fn tls_client(
    roots: &Path,
    versions: &[&'static rustls::SupportedProtocolVersion],
    resumption: rustls::client::Resumption,
) -> Arc<rustls::ClientConfig> {
    let mut store = rustls::RootCertStore::empty();
    for cert in rustls_pemfile_certs(&std::fs::read(roots).unwrap()) {
        store.add(cert).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(store)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config.resumption = resumption;
    Arc::new(config)
}

/// One visit: a handshake and a GET of `/readyz` read to its end (a TLS 1.3
/// ticket comes after the handshake). Whether the handshake was full or
/// resumed (a resumed one sends no certificate), and the answer's status
/// line.
pub fn visit(port: u16, config: &Arc<rustls::ClientConfig>) -> (rustls::HandshakeKind, String) {
    visit_as(port, "localhost", config)
}

/// [`visit`] with `name` as the server name.
pub fn visit_as(
    port: u16,
    name: &str,
    config: &Arc<rustls::ClientConfig>,
) -> (rustls::HandshakeKind, String) {
    visit_via(port, name, config, Route::default())
}

/// [`visit_as`], reaching the server by `route`.
pub fn visit_via(
    port: u16,
    name: &str,
    config: &Arc<rustls::ClientConfig>,
    route: Route,
) -> (rustls::HandshakeKind, String) {
    let (kind, answer) = get_via(port, name, config, route, "/readyz");
    let status = answer.lines().next().unwrap_or_default().to_owned();
    (kind, status)
}

/// A GET of `path` over HTTPS (HTTP/1.1), reaching the server by `route`:
/// the handshake's kind and the whole answer, head and body.
pub fn get_via(
    port: u16,
    name: &str,
    config: &Arc<rustls::ClientConfig>,
    route: Route,
    path: &str,
) -> (rustls::HandshakeKind, String) {
    use std::io::Write;
    let mut conn = rustls::ClientConnection::new(
        config.clone(),
        ServerName::try_from(name.to_owned()).unwrap(),
    )
    .unwrap();
    let mut tcp = route.connect(port).unwrap();
    // A server that stalls fails the visit in 30 s, not the test's 20 min.
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    tcp.set_write_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let mut tls = rustls::Stream::new(&mut conn, &mut tcp);
    tls.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: {name}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap();
    let mut answer = Vec::new();
    // The server's close_notify ends it; an abrupt close after the answer
    // is as good here.
    let _ = tls.read_to_end(&mut answer);
    let kind = conn.handshake_kind().expect("the handshake ended");
    (kind, String::from_utf8_lossy(&answer).into_owned())
}
