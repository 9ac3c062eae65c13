//! HTTPS settings: `TLS_DOMAINS` (certificates by ACME) or `TLS_CERT` and
//! `TLS_KEY` (the operator's own files), checked and settled, each error
//! naming the variable at fault.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::flags::ServeArgs;
use super::read::{setting, Reader};
use super::values::{http_url, sqlite_dir, Addr, ADDRESS};
use super::words::io_reason;
use crate::edge::acme::{AcmeSettings, AcmeTiming};
use crate::edge::certs::{PairProblems, ServedCert};

/// How long one session-ticket key seals new tickets.
pub const TICKET_PERIOD: Duration = Duration::from_secs(6 * 3600);

#[derive(Debug, Clone)]
pub struct TlsSettings {
    pub https_addr: SocketAddr,
    pub http_addr: SocketAddr,
    pub certs: CertSource,
    /// How long one session-ticket key seals new tickets (6 hours; tests
    /// may shorten it, `TLS_TICKET_PERIOD_SECS` under `test-hooks`).
    pub ticket_period: Duration,
}

#[derive(Debug, Clone)]
pub enum CertSource {
    /// Obtained and renewed by the ACME robot.
    Acme(AcmeSettings),
    /// The operator's files, reloaded when they change.
    Files(OwnFiles),
}

impl TlsSettings {
    /// The names the HTTP port may send a visitor back to by name.
    pub fn domains(&self) -> Vec<String> {
        match &self.certs {
            CertSource::Acme(a) => a.domains.clone(),
            CertSource::Files(_) => Vec::new(),
        }
    }
}

/// The operator's certificate and key files (`TLS_CERT`, `TLS_KEY`).
#[derive(Debug, Clone)]
pub struct OwnFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
    /// How the operator wrote them, for messages (`TLS_CERT=/etc/...`, or
    /// the flags).
    pub named: (String, String),
}

impl OwnFiles {
    /// The pair read and checked as [`crate::edge::certs::parse_files`]
    /// does, for `check`, a start and a reload alike. Every problem is
    /// named: both files when neither can be read, a file in DER form with
    /// the command that converts it.
    pub fn load(&self) -> Result<ServedCert, PairProblems> {
        let mut problems = Vec::new();
        let mut read = |path: &Path, named: &str| {
            std::fs::read(path)
                .map_err(|e| {
                    problems.push(format!("{named}: cannot read the file: {}", io_reason(&e)))
                })
                .ok()
        };
        let chain = read(&self.cert, &self.named.0);
        let key = read(&self.key, &self.named.1);
        match (chain, key) {
            (Some(chain), Some(key)) => crate::edge::certs::parse_files(
                &chain,
                &key,
                (&self.named.0, &self.named.1),
                (&self.cert, &self.key),
            ),
            _ => Err(PairProblems(problems)),
        }
    }

    /// The two paths, for a watch on their changes.
    pub fn paths(&self) -> [PathBuf; 2] {
        [self.cert.clone(), self.key.clone()]
    }
}

/// HTTPS settings as read, with the names the operator's certificate
/// covers (SITE_URL is checked against them).
pub(super) struct ReadTls {
    pub settings: TlsSettings,
    /// `TLS_CERT`'s names, when it was read.
    cert_names: Option<Vec<String>>,
}

/// HTTPS settings from `TLS_DOMAINS`, `TLS_CERT`/`TLS_KEY` and `ACME_*`,
/// or None when neither is set (or they have problems, noted in `r`).
pub(super) fn tls_settings(a: &ServeArgs, r: &mut Reader<'_>) -> Option<ReadTls> {
    let domains = r.text(setting!(a, tls_domains));
    let cert = r.text(setting!(a, tls_cert)).map(PathBuf::from);
    let key = r.text(setting!(a, tls_key)).map(PathBuf::from);
    let https_addr = r.parse::<Addr>(setting!(a, https_addr), ADDRESS).0;
    let http_addr = r.parse::<Addr>(setting!(a, http_addr), ADDRESS).0;
    let mut cert_names = None;
    let certs = match (domains, cert, key) {
        (None, None, None) => return None,
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            let (domains, files) = (r.name("tls_domains"), r.name("tls_cert"));
            r.problem(format!("{domains} and {files}/{} are both set: use {domains} for certificates obtained by ACME, or {files} and {} for your own", r.name("tls_key"), r.name("tls_key")));
            return None;
        }
        (None, Some(_), None) => {
            let (cert, key) = (r.name("tls_cert"), r.name("tls_key"));
            r.problem(format!("{key}: not set, but {cert} is: both are needed"));
            return None;
        }
        (None, None, Some(_)) => {
            let (cert, key) = (r.name("tls_cert"), r.name("tls_key"));
            r.problem(format!("{cert}: not set, but {key} is: both are needed"));
            return None;
        }
        (None, Some(cert), Some(key)) => {
            let named = (
                r.shown("tls_cert", &cert.display().to_string()),
                r.shown("tls_key", &key.display().to_string()),
            );
            let files = OwnFiles { cert, key, named };
            cert_names = read_files(r, &files);
            CertSource::Files(files)
        }
        (Some(domains), None, None) => CertSource::Acme(acme_settings(a, r, &domains)?),
    };
    if https_addr == http_addr && !r.has_problems_with("https_addr") {
        let (https, http) = (r.name("https_addr"), r.name("http_addr"));
        r.problem(format!(
            "{https} and {http} are the same address ({https_addr})"
        ));
    }
    #[cfg(feature = "test-hooks")]
    let ticket_period = a.tls_ticket_period_secs.map(Duration::from_secs);
    #[cfg(not(feature = "test-hooks"))]
    let ticket_period: Option<Duration> = None;
    Some(ReadTls {
        settings: TlsSettings {
            https_addr,
            http_addr,
            certs,
            ticket_period: ticket_period
                .filter(|p| !p.is_zero())
                .unwrap_or(TICKET_PERIOD),
        },
        cert_names,
    })
}

/// The operator's certificate and key, read as the server will: each must
/// be readable PEM, the key the certificate's, the certificate unexpired.
/// Every problem of the pair is noted (both files of a pair given the wrong
/// way round). The names it covers, when it is usable.
fn read_files(r: &mut Reader<'_>, files: &OwnFiles) -> Option<Vec<String>> {
    let served = match files.load() {
        Ok(served) => served,
        Err(problems) => {
            for problem in problems.0 {
                r.problem(problem);
            }
            return None;
        }
    };
    let until = crate::edge::certs::rfc3339(served.info.not_after);
    if served.info.not_after <= std::time::SystemTime::now() {
        r.problem(format!(
            "{}: the certificate expired at {until}",
            files.named.0
        ));
        return None;
    }
    Some(served.info.names)
}

/// `TLS_DOMAINS` and the `ACME_*` settings; None when they have problems.
fn acme_settings(a: &ServeArgs, r: &mut Reader<'_>, domains: &str) -> Option<AcmeSettings> {
    let domains = match parse_domains(domains) {
        Ok(d) => d,
        Err(why) => {
            r.problem(
                why.to_string()
                    .replacen("TLS_DOMAINS", &r.name("tls_domains"), 1),
            );
            return None;
        }
    };
    let directory = r.text(setting!(a, acme_directory)).unwrap_or_default();
    match reqwest::Url::parse(&directory) {
        Err(e) => r.bad("acme_directory", &directory, format!("not a URL ({e})")),
        Ok(url) if url.scheme() != "https" => r.bad(
            "acme_directory",
            &directory,
            "must be an https URL (RFC 8555 requires it)",
        ),
        Ok(_) => {}
    }
    let contact = match r.text(setting!(a, acme_email)) {
        None => Vec::new(),
        Some(e) if email_address::EmailAddress::is_valid(&e) => vec![format!("mailto:{e}")],
        Some(e) => {
            r.bad("acme_email", &e, "not an email address");
            Vec::new()
        }
    };
    let directory_ca = r
        .text(setting!(a, acme_directory_ca))
        .and_then(|path| match std::fs::read(&path) {
            Err(e) => {
                r.bad(
                    "acme_directory_ca",
                    &path,
                    format!("cannot read the file: {}", io_reason(&e)),
                );
                None
            }
            Ok(pem) => {
                let found = reqwest::Certificate::from_pem_bundle(&pem)
                    .map(|c| c.len())
                    .unwrap_or(0);
                if found == 0 {
                    r.bad("acme_directory_ca", &path, "holds no PEM certificate");
                }
                Some(pem)
            }
        });
    let profile = r.text(setting!(a, acme_profile));
    if let Some(p) = &profile {
        // RFC 9773's profiles are names the CA lists: a word, not a sentence.
        if !p
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        {
            r.bad("acme_profile", p, "not a profile name (letters, digits, '-', '_' or '.', as the CA's directory lists them)");
        }
    }
    let challenge = r.choice(setting!(a, acme_challenge));
    let cache_dir = match r.text(setting!(a, acme_cache_dir)) {
        Some(dir) => PathBuf::from(dir),
        None => sqlite_dir(a.database.url())
            .unwrap_or_else(|| PathBuf::from("data"))
            .join("acme"),
    };
    Some(AcmeSettings {
        domains,
        directory,
        contact,
        directory_ca,
        cache_dir,
        challenge,
        profile,
        timing: acme_timing(a),
    })
}

/// `SITE_URL`, or its default: an absolute http(s) URL with a host, https
/// when the server serves HTTPS, and one `TLS_CERT` covers. Plain HTTP's
/// default is the address it listens on (`addr`, `ADDR`'s): links and the
/// sitemap then name a port that answers.
pub(super) fn site_url(
    a: &ServeArgs,
    r: &mut Reader<'_>,
    tls: Option<&ReadTls>,
    addr: SocketAddr,
) -> String {
    let given = r.text(setting!(a, site_url));
    let url = match (given, tls.map(|t| &t.settings)) {
        (Some(url), tls) => {
            match http_url(&url) {
                Err(why) => r.bad("site_url", &url, why),
                Ok(u) if tls.is_some() && u.scheme() != "https" => {
                    let tls_name = tls_name(a, r);
                    r.bad("site_url", &url, format!("must start with https:// when the server serves HTTPS itself ({tls_name})"));
                }
                Ok(_) => {}
            }
            url
        }
        (
            None,
            Some(TlsSettings {
                https_addr,
                certs: CertSource::Acme(acme),
                ..
            }),
        ) => match https_addr.port() {
            443 => format!("https://{}", acme.domains[0]),
            port => format!("https://{}:{port}", acme.domains[0]),
        },
        (
            None,
            Some(TlsSettings {
                certs: CertSource::Files(_),
                ..
            }),
        ) => {
            let (site, cert) = (r.name("site_url"), r.name("tls_cert"));
            r.problem(format!(
                "{site}: set it to the https address {cert} is for (https://your.domain)"
            ));
            String::new()
        }
        (None, None) => plain_site_url(addr),
    };
    // The operator's certificate must cover the site's host.
    if let (Some(names), Ok(u)) = (tls.and_then(|t| t.cert_names.as_ref()), http_url(&url)) {
        let host = u
            .host_str()
            .unwrap_or_default()
            .trim_end_matches('.')
            .to_ascii_lowercase();
        if !names.iter().any(|n| name_covers(n, &host)) {
            let cert = r.name("tls_cert");
            r.bad(
                "site_url",
                &url,
                format!(
                    "the certificate in {cert} is not for {host} (it is for {})",
                    names.join(", ")
                ),
            );
        }
    }
    url.trim_end_matches('/').to_owned()
}

/// The address a plain server listening on `addr` is reached at: a
/// wildcard address (`0.0.0.0`, `[::]`) as `localhost`, port 80 unwritten.
pub fn plain_site_url(addr: SocketAddr) -> String {
    let host = match addr.ip() {
        ip if ip.is_unspecified() => "localhost".to_owned(),
        std::net::IpAddr::V4(ip) => ip.to_string(),
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
    };
    match addr.port() {
        80 => format!("http://{host}"),
        port => format!("http://{host}:{port}"),
    }
}

/// The HTTPS setting in use, as written (`TLS_DOMAINS` or `TLS_CERT`).
fn tls_name(a: &ServeArgs, r: &Reader<'_>) -> String {
    let id = if r.text(setting!(a, tls_domains)).is_some() {
        "tls_domains"
    } else {
        "tls_cert"
    };
    r.name(id)
}

/// Whether a certificate's DNS name (`*.example.org` included) is valid for `host`.
pub fn name_covers(name: &str, host: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    match name.strip_prefix("*.") {
        Some(parent) => host
            .split_once('.')
            .is_some_and(|(label, rest)| !label.is_empty() && rest == parent),
        None => name == host,
    }
}

/// The robot's waits: the defaults, or a test's (under `test-hooks`).
fn acme_timing(a: &ServeArgs) -> AcmeTiming {
    #[cfg(feature = "test-hooks")]
    {
        let timing = AcmeTiming::default();
        let secs = |v: Option<u64>, default| v.map_or(default, Duration::from_secs);
        AcmeTiming {
            lease_ttl: secs(a.tls_lease_ttl_secs, timing.lease_ttl),
            first_retry: secs(a.acme_first_retry_secs, timing.first_retry),
            challenge_wait: secs(a.acme_challenge_wait_secs, timing.challenge_wait),
            ari_min_poll: secs(a.acme_ari_min_poll_secs, timing.ari_min_poll),
        }
    }
    #[cfg(not(feature = "test-hooks"))]
    {
        let _ = a;
        AcmeTiming::default()
    }
}

/// `TLS_DOMAINS`: one or more DNS names, comma-separated, lowercased. A
/// wildcard, an address or a port is refused: ACME's HTTP and TLS
/// challenges validate plain names only.
pub fn parse_domains(list: &str) -> anyhow::Result<Vec<String>> {
    let mut domains: Vec<String> = Vec::new();
    for raw in list.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let d = raw.trim_end_matches('.').to_ascii_lowercase();
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        };
        let is_address = d.parse::<std::net::IpAddr>().is_ok()
            || d.split('.').all(|l| l.bytes().all(|b| b.is_ascii_digit()));
        anyhow::ensure!(
            d.len() <= 253 && d.split('.').all(label_ok) && !is_address,
            "TLS_DOMAINS: {raw:?} is not a domain name (letters, digits and hyphens between dots; no wildcard, address or port)"
        );
        if !domains.contains(&d) {
            domains.push(d);
        }
    }
    anyhow::ensure!(!domains.is_empty(), "TLS_DOMAINS: empty; list the names to serve, comma-separated (example.org,www.example.org)");
    Ok(domains)
}
