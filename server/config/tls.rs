//! HTTPS settings: `TLS_DOMAINS` (certificates by ACME) or `TLS_CERT` and
//! `TLS_KEY` (the operator's own files), checked and settled, each error
//! naming the variable at fault.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use super::{sqlite_dir, ServeArgs};
use crate::edge::acme::{AcmeSettings, AcmeTiming};

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
    Files { cert: PathBuf, key: PathBuf },
}

impl TlsSettings {
    /// The names the HTTP port may send a visitor back to by name.
    pub fn domains(&self) -> Vec<String> {
        match &self.certs {
            CertSource::Acme(a) => a.domains.clone(),
            CertSource::Files { .. } => Vec::new(),
        }
    }
}

/// HTTPS settings from `TLS_DOMAINS`, `TLS_CERT`/`TLS_KEY` and `ACME_*`,
/// or None when neither is set.
pub(super) fn tls_settings(a: &ServeArgs) -> anyhow::Result<Option<TlsSettings>> {
    let certs = match (&a.tls_domains, &a.tls_cert, &a.tls_key) {
        (None, None, None) => return Ok(None),
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            anyhow::bail!("TLS_DOMAINS and TLS_CERT/TLS_KEY are both set: use TLS_DOMAINS for certificates obtained by ACME, or TLS_CERT and TLS_KEY for your own")
        }
        (None, Some(_), None) => {
            anyhow::bail!("TLS_KEY: not set, but TLS_CERT is: both are needed")
        }
        (None, None, Some(_)) => {
            anyhow::bail!("TLS_CERT: not set, but TLS_KEY is: both are needed")
        }
        (None, Some(cert), Some(key)) => CertSource::Files {
            cert: cert.clone(),
            key: key.clone(),
        },
        (Some(domains), None, None) => {
            let domains = parse_domains(domains)?;
            let directory = a.acme_directory.trim().to_owned();
            let url = reqwest::Url::parse(&directory)
                .map_err(|e| anyhow::anyhow!("ACME_DIRECTORY: {directory:?} is not a URL ({e})"))?;
            anyhow::ensure!(
                url.scheme() == "https",
                "ACME_DIRECTORY: {directory:?} must be an https URL (RFC 8555 requires it)"
            );
            let contact = match a
                .acme_email
                .as_deref()
                .map(str::trim)
                .filter(|e| !e.is_empty())
            {
                None => Vec::new(),
                Some(e) => {
                    anyhow::ensure!(
                        email_address::EmailAddress::is_valid(e),
                        "ACME_EMAIL: {e:?} is not an email address"
                    );
                    vec![format!("mailto:{e}")]
                }
            };
            let directory_ca = match &a.acme_directory_ca {
                None => None,
                Some(path) => {
                    let pem = std::fs::read(path).with_context(|| {
                        format!("ACME_DIRECTORY_CA: cannot read {}", path.display())
                    })?;
                    let found = reqwest::Certificate::from_pem_bundle(&pem)
                        .map(|c| c.len())
                        .unwrap_or(0);
                    anyhow::ensure!(
                        found > 0,
                        "ACME_DIRECTORY_CA: {} holds no PEM certificate",
                        path.display()
                    );
                    Some(pem)
                }
            };
            let cache_dir = match &a.acme_cache_dir {
                Some(dir) => dir.clone(),
                None => sqlite_dir(&a.database.database_url)
                    .unwrap_or_else(|| PathBuf::from("data"))
                    .join("acme"),
            };
            CertSource::Acme(AcmeSettings {
                domains,
                directory,
                contact,
                directory_ca,
                cache_dir,
                challenge: a.acme_challenge,
                profile: a
                    .acme_profile
                    .as_deref()
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned),
                timing: acme_timing(a),
            })
        }
    };
    anyhow::ensure!(
        a.https_addr != a.http_addr,
        "HTTPS_ADDR and HTTP_ADDR are the same address ({})",
        a.https_addr
    );
    #[cfg(feature = "test-hooks")]
    let ticket_period = a.tls_ticket_period_secs.map(Duration::from_secs);
    #[cfg(not(feature = "test-hooks"))]
    let ticket_period: Option<Duration> = None;
    Ok(Some(TlsSettings {
        https_addr: a.https_addr,
        http_addr: a.http_addr,
        certs,
        ticket_period: ticket_period
            .filter(|p| !p.is_zero())
            .unwrap_or(TICKET_PERIOD),
    }))
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
