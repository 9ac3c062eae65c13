//! The certificate the HTTPS port presents, and the ACME challenges it
//! answers while one is being obtained.
//!
//! [`Certs`] is rustls's certificate resolver: a TLS handshake takes the
//! current certificate, swapped in whole when a new one comes (ordered by
//! `tls::robot`, or by another server and read from the database by
//! `tls::Identity`) or the operator's files (`TLS_CERT`, `TLS_KEY`)
//! change ([`watch_files`]), so a renewal needs no restart and no
//! connection sees half of one. A handshake that asks for the `acme-tls/1`
//! protocol is the CA validating a TLS-ALPN-01 challenge (RFC 8737) and
//! gets that challenge's certificate instead; the HTTP port answers HTTP-01
//! tokens from here too ([`Certs::http_challenge`]). The answers are those
//! of any server's order, read from the database.
//!
//! Nothing here logs or returns key material: errors name the file and
//! what is wrong with it, never its contents.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwapOption;
use rustls::crypto::ring::sign::any_supported_type;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::ServerConfig;

/// The ALPN protocol of TLS-ALPN-01 validation (RFC 8737, section 6.2).
pub const ACME_TLS_ALPN: &[u8] = b"acme-tls/1";

/// How often the operator's certificate files are checked for a change.
pub const FILE_CHECK_EVERY: Duration = Duration::from_secs(2);

/// What the HTTPS port presents (see the module doc).
#[derive(Default)]
pub struct Certs {
    current: ArcSwapOption<ServedCert>,
    /// TLS-ALPN-01: the challenge certificate per domain being validated,
    /// with the digest it carries.
    alpn_challenges: Mutex<HashMap<String, AlpnAnswer>>,
    /// HTTP-01: the key authorization per token being validated.
    http_challenges: Mutex<HashMap<String, String>>,
}

/// A TLS-ALPN-01 answer: the digest it carries, and its certificate.
type AlpnAnswer = (Vec<u8>, Arc<CertifiedKey>);

/// A certificate in service, with what the logs and `/readyz` say of it.
pub struct ServedCert {
    pub key: Arc<CertifiedKey>,
    pub info: CertInfo,
}

/// What a certificate says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertInfo {
    /// Hexadecimal, as `openssl x509 -serial` prints it.
    pub serial: String,
    pub not_before: SystemTime,
    pub not_after: SystemTime,
    /// The DNS names it is valid for.
    pub names: Vec<String>,
}

impl std::fmt::Debug for Certs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Certs")
            .field("serial", &self.current().map(|s| s.info.serial.clone()))
            .finish_non_exhaustive()
    }
}

impl Certs {
    pub fn new() -> Arc<Certs> {
        Arc::new(Certs::default())
    }

    /// The certificate in service, if there is one yet.
    pub fn current(&self) -> Option<Arc<ServedCert>> {
        self.current.load_full()
    }

    /// Puts `served` in service for every handshake from now on.
    pub fn deploy(&self, served: ServedCert) {
        self.current.store(Some(Arc::new(served)));
    }

    /// Takes the certificate out of service (it was retired): handshakes
    /// fail until another is deployed.
    pub fn withdraw(&self) {
        self.current.store(None);
    }

    /// Answers TLS-ALPN-01 for `domain` with a certificate carrying
    /// `digest` (the SHA-256 of the key authorization).
    pub fn set_alpn_challenge(&self, domain: &str, digest: &[u8]) -> anyhow::Result<()> {
        let key = alpn_certificate(domain, digest)?;
        lock(&self.alpn_challenges).insert(
            domain.to_ascii_lowercase(),
            (digest.to_vec(), Arc::new(key)),
        );
        Ok(())
    }

    /// The pending challenges become `http` (token, key authorization) and
    /// `alpn` (domain, digest): those another server's order stored. A
    /// challenge certificate already made for the same digest is kept.
    pub fn replace_challenges(&self, http: HashMap<String, String>, alpn: Vec<(String, Vec<u8>)>) {
        *lock(&self.http_challenges) = http;
        let wanted: HashMap<String, Vec<u8>> = alpn
            .into_iter()
            .map(|(d, digest)| (d.to_ascii_lowercase(), digest))
            .collect();
        let missing: Vec<(String, Vec<u8>)> = {
            let mut made = lock(&self.alpn_challenges);
            made.retain(|d, (digest, _)| wanted.get(d) == Some(digest));
            wanted
                .into_iter()
                .filter(|(d, _)| !made.contains_key(d))
                .collect()
        };
        for (domain, digest) in missing {
            if let Err(e) = self.set_alpn_challenge(&domain, &digest) {
                tracing::warn!(error = %e, %domain, "HTTPS: a stored TLS-ALPN-01 challenge cannot be answered");
            }
        }
    }

    pub fn set_http_challenge(&self, token: &str, key_authorization: &str) {
        lock(&self.http_challenges).insert(token.to_owned(), key_authorization.to_owned());
    }

    /// The key authorization to answer at `/.well-known/acme-challenge/{token}`.
    pub fn http_challenge(&self, token: &str) -> Option<String> {
        lock(&self.http_challenges).get(token).cloned()
    }

    /// Forgets the HTTP-01 answer for `token`, if it is still `answer`
    /// (the order that set it is over; a later order's answer stays).
    pub fn forget_http_challenge(&self, token: &str, answer: &str) {
        let mut answers = lock(&self.http_challenges);
        if answers.get(token).is_some_and(|a| a == answer) {
            answers.remove(token);
        }
    }

    /// Forgets the TLS-ALPN-01 answer for `domain`, if it still carries
    /// `digest` (a later order's answer stays).
    pub fn forget_alpn_challenge(&self, domain: &str, digest: &[u8]) {
        let mut answers = lock(&self.alpn_challenges);
        let domain = domain.to_ascii_lowercase();
        if answers.get(&domain).is_some_and(|(d, _)| d == digest) {
            answers.remove(&domain);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ResolvesServerCert for Certs {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let validating = hello
            .alpn()
            .is_some_and(|mut protocols| protocols.any(|p| p == ACME_TLS_ALPN));
        if validating {
            let name = hello.server_name()?.to_ascii_lowercase();
            return lock(&self.alpn_challenges)
                .get(&name)
                .map(|(_, key)| key.clone());
        }
        self.current
            .load()
            .as_ref()
            .map(|served| served.key.clone())
    }
}

/// The HTTPS port's TLS settings: TLS 1.2 and 1.3 (rustls's safe
/// defaults), HTTP/2 preferred over HTTP/1.1 by ALPN, and the ACME
/// validation protocol, which only the CA asks for.
///
/// A returning visitor resumes its session (no certificate, no signature)
/// however many others came between, on whichever server of the site it
/// lands, before and after a publish: the session is sealed into the ticket
/// it holds, under a key every server shares ([`super::tickets`]), so no
/// server remembers anything per visitor. TLS 1.3 always resumes by ticket;
/// a TLS 1.2 client that takes no tickets resumes by session id, from
/// rustls's in-memory cache of the last 256 such sessions in this process.
pub fn server_config(
    certs: Arc<Certs>,
    tickets: &Arc<super::tickets::TicketKeys>,
) -> Arc<ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_no_client_auth()
        .with_cert_resolver(certs);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec(), ACME_TLS_ALPN.to_vec()];
    config.ticketer = tickets.ticketer();
    Arc::new(config)
}

/// HTTP/3's TLS: the same certificate store and session-ticket keys as
/// [`server_config`], TLS 1.3 alone (QUIC has no other) and ALPN `h3`.
/// No early data (0-RTT): rustls accepts it only without a ticketer, and
/// the shared ticket keys are what resume a session on any server.
pub fn quic_server_config(
    certs: Arc<Certs>,
    tickets: &Arc<super::tickets::TicketKeys>,
) -> Arc<ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("ring supports TLS 1.3")
        .with_no_client_auth()
        .with_cert_resolver(certs);
    config.alpn_protocols = vec![b"h3".to_vec()];
    config.ticketer = tickets.ticketer();
    config.max_early_data_size = 0;
    Arc::new(config)
}

/// The self-signed certificate a TLS-ALPN-01 validation must see for
/// `domain`: its one name, and the SHA-256 of the key authorization in the
/// critical acmeIdentifier extension (RFC 8737, section 3).
pub fn alpn_certificate(domain: &str, digest: &[u8]) -> anyhow::Result<CertifiedKey> {
    let key = rcgen::KeyPair::generate()?;
    let mut params = rcgen::CertificateParams::new(vec![domain.to_owned()])?;
    params.custom_extensions = vec![rcgen::CustomExtension::new_acme_identifier(digest)];
    let cert = params.self_signed(&key)?;
    let signing = any_supported_type(&PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        key.serialize_der(),
    )))?;
    Ok(CertifiedKey::new(
        vec![CertificateDer::from(cert.der().to_vec())],
        signing,
    ))
}

/// What is wrong with a certificate and its key: every problem found at
/// once, each naming the file at fault (or both, when each is usable alone
/// but they do not belong together).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairProblems(pub Vec<String>);

impl std::fmt::Display for PairProblems {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("; "))
    }
}

/// A certificate chain and its private key, both PEM, checked to belong
/// together. `what` names them in errors (the variables as written, or a
/// cache file). Each file's own problem is named, the two together's too:
/// a certificate file that holds a key while the key file holds a
/// certificate (the paths given the wrong way round) is said to look
/// swapped.
pub fn parse(
    chain_pem: &[u8],
    key_pem: &[u8],
    what: (&str, &str),
) -> Result<ServedCert, PairProblems> {
    parse_named(chain_pem, key_pem, what, None)
}

/// [`parse`] for the operator's files at `paths`: a file in DER (binary)
/// form rather than PEM is said to be, with the `openssl` command that
/// converts it.
pub fn parse_files(
    chain_pem: &[u8],
    key_pem: &[u8],
    what: (&str, &str),
    paths: (&Path, &Path),
) -> Result<ServedCert, PairProblems> {
    parse_named(chain_pem, key_pem, what, Some(paths))
}

/// What a file that is not PEM holds in DER (binary) form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Der {
    Certificate,
    Key,
    /// Binary that starts as DER does (an ASN.1 SEQUENCE), read as neither.
    Other,
}

/// What `bytes` hold in DER form; None when they do not look like DER.
fn der(bytes: &[u8]) -> Option<Der> {
    if bytes.first() != Some(&0x30) {
        return None;
    }
    if x509_parser::parse_x509_certificate(bytes).is_ok() {
        return Some(Der::Certificate);
    }
    if PrivateKeyDer::try_from(bytes).is_ok() {
        return Some(Der::Key);
    }
    // A text file that happens to begin with "0" is not DER.
    let text = std::str::from_utf8(bytes)
        .is_ok_and(|t| !t.chars().any(|c| c.is_control() && !c.is_whitespace()));
    (!text).then_some(Der::Other)
}

/// The `openssl` command that converts the DER file at `path` to PEM
/// (`x509` for a certificate, `pkey` for a key), its output beside it.
fn to_pem(kind: &str, path: Option<&Path>) -> String {
    let file = path.map_or_else(|| "FILE".to_owned(), shell_word);
    format!("`openssl {kind} -inform DER -in {file} -out {file}.pem`")
}

/// `path` as one word of a shell command: as it is when plain, else quoted.
fn shell_word(path: &Path) -> String {
    let text = path.display().to_string();
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c));
    match plain {
        true => text,
        false => format!("'{}'", text.replace('\'', "'\\''")),
    }
}

fn parse_named(
    chain_pem: &[u8],
    key_pem: &[u8],
    what: (&str, &str),
    paths: Option<(&Path, &Path)>,
) -> Result<ServedCert, PairProblems> {
    let holds_key =
        |held: &[u8]| PrivateKeyDer::from_pem_slice(held).is_ok() || der(held) == Some(Der::Key);
    let holds_certificate = |held: &[u8]| {
        CertificateDer::pem_slice_iter(held).any(|c| c.is_ok())
            || der(held) == Some(Der::Certificate)
    };
    let mut problems = Vec::new();
    let parsed = CertificateDer::pem_slice_iter(chain_pem).collect::<Result<Vec<_>, _>>();
    let chain: Option<Vec<CertificateDer<'static>>> = match (parsed, der(chain_pem)) {
        (Ok(chain), _) if !chain.is_empty() => Some(chain),
        (_, Some(held)) => {
            let convert = to_pem("x509", paths.map(|p| p.0));
            problems.push(match held {
                Der::Certificate => format!(
                    "{}: holds a certificate in DER (binary) form, not PEM: convert it with {convert} and name the .pem file instead",
                    what.0
                ),
                Der::Key => format!(
                    "{}: holds no certificate but a private key, in DER (binary) form (expected PEM \"BEGIN CERTIFICATE\" blocks)",
                    what.0
                ),
                Der::Other => format!(
                    "{}: holds no certificate: it looks like DER (binary), not PEM; a certificate in DER converts with {convert}",
                    what.0
                ),
            });
            None
        }
        (parsed, None) => match parsed {
            Err(e) => {
                problems.push(format!("{}: not a PEM certificate chain ({e})", what.0));
                None
            }
            Ok(_) => {
                let instead = if holds_key(chain_pem) {
                    " but a private key"
                } else {
                    ""
                };
                problems.push(format!(
                    "{}: holds no certificate{instead} (expected PEM \"BEGIN CERTIFICATE\" blocks)",
                    what.0
                ));
                None
            }
        },
    };
    let info = match &chain {
        Some(chain) => info(&chain[0])
            .map_err(|e| problems.push(format!("{}: {e}", what.0)))
            .ok(),
        None => None,
    };
    let signing = match (PrivateKeyDer::from_pem_slice(key_pem), der(key_pem)) {
        (Err(_), Some(held)) => {
            let convert = to_pem("pkey", paths.map(|p| p.1));
            problems.push(match held {
                Der::Key => format!(
                    "{}: holds a private key in DER (binary) form, not PEM: convert it with {convert} and name the .pem file instead",
                    what.1
                ),
                Der::Certificate => format!(
                    "{}: holds no private key but a certificate, in DER (binary) form (expected PEM: PKCS#8, PKCS#1 or SEC1)",
                    what.1
                ),
                Der::Other => format!(
                    "{}: holds no private key: it looks like DER (binary), not PEM; a key in DER converts with {convert}",
                    what.1
                ),
            });
            None
        }
        (Err(_), None) => {
            let instead = if holds_certificate(key_pem) {
                " but a certificate"
            } else {
                ""
            };
            problems.push(format!(
                "{}: holds no PEM private key{instead} (PKCS#8, PKCS#1 or SEC1)",
                what.1
            ));
            None
        }
        (Ok(key), _) => any_supported_type(&key)
            .map_err(|_| {
                problems.push(format!(
                    "{}: the private key is of a type TLS cannot use",
                    what.1
                ))
            })
            .ok(),
    };
    if chain.is_none() && signing.is_none() && holds_key(chain_pem) && holds_certificate(key_pem) {
        problems.push(format!(
            "{} and {} look swapped: each file holds what the other should; exchange the two paths",
            what.0, what.1
        ));
    }
    let (Some(chain), Some(info), Some(signing)) = (chain, info, signing) else {
        return Err(PairProblems(problems));
    };
    let key = CertifiedKey::new(chain, signing);
    key.keys_match().map_err(|_| {
        PairProblems(vec![format!(
            "{} and {} do not belong together: the key is not the certificate's",
            what.0, what.1
        )])
    })?;
    Ok(ServedCert {
        key: Arc::new(key),
        info,
    })
}

/// The first certificate of a PEM text (a stored key and chain, or one
/// certificate alone).
pub fn first_certificate(pem: &str) -> Option<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem.as_bytes()).next()?.ok()
}

/// The serial, validity and DNS names of a DER certificate.
pub fn info(der: &CertificateDer<'_>) -> Result<CertInfo, String> {
    use x509_parser::extensions::GeneralName;
    let (_, cert) = x509_parser::parse_x509_certificate(der)
        .map_err(|e| format!("the certificate cannot be read: {e}"))?;
    let at = |t: x509_parser::time::ASN1Time| {
        SystemTime::UNIX_EPOCH + Duration::from_secs(t.timestamp().max(0) as u64)
    };
    let mut names = Vec::new();
    if let Ok(Some(san)) = cert.subject_alternative_name() {
        for name in &san.value.general_names {
            if let GeneralName::DNSName(n) = name {
                names.push(n.to_ascii_lowercase());
            }
        }
    }
    Ok(CertInfo {
        serial: cert
            .raw_serial_as_string()
            .replace(':', "")
            .to_ascii_uppercase(),
        not_before: at(cert.validity().not_before),
        not_after: at(cert.validity().not_after),
        names,
    })
}

impl CertInfo {
    /// When to replace it: once two thirds of its life have passed (30 days
    /// before the end of a 90-day certificate), as Let's Encrypt advises.
    pub fn renew_at(&self) -> SystemTime {
        let life = self
            .not_after
            .duration_since(self.not_before)
            .unwrap_or_default();
        self.not_after - life / 3
    }

    /// Whether it is valid for every one of `domains`.
    pub fn covers(&self, domains: &[String]) -> bool {
        domains.iter().all(|d| self.names.iter().any(|n| n == d))
    }
}

/// Watches the operator's files (`TLS_CERT`, `TLS_KEY`: `paths`) and puts
/// a changed pair in service, as `load` reads it (`config::OwnFiles`); a
/// pair that does not load (one file written, not yet the other) keeps the
/// certificate in service, with a warning naming every problem of the pair
/// as a start would, until the next check. The member's row in the
/// database follows (`tls::Identity` says what `certs` serves).
pub fn watch_files<L>(
    certs: Arc<Certs>,
    paths: [PathBuf; 2],
    load: L,
) -> tokio::task::JoinHandle<()>
where
    L: Fn() -> Result<ServedCert, PairProblems> + Send + Sync + 'static,
{
    fn stamp(paths: &[PathBuf; 2]) -> Vec<Option<(SystemTime, u64)>> {
        paths
            .iter()
            .map(|p| {
                std::fs::metadata(p)
                    .ok()
                    .and_then(|m| Some((m.modified().ok()?, m.len())))
            })
            .collect()
    }
    let load = Arc::new(load);
    tokio::spawn(async move {
        let mut seen = stamp(&paths);
        let mut warned = false;
        loop {
            tokio::time::sleep(FILE_CHECK_EVERY).await;
            let now = stamp(&paths);
            if now == seen {
                continue;
            }
            let load = load.clone();
            match tokio::task::spawn_blocking(move || load()).await {
                Ok(Ok(served)) => {
                    tracing::info!(serial = %served.info.serial, valid_until = %rfc3339(served.info.not_after), "TLS_CERT / TLS_KEY changed: the new certificate is in service");
                    certs.deploy(served);
                    seen = now;
                    warned = false;
                }
                Ok(Err(why)) if !warned => {
                    tracing::warn!(error = %why, "TLS_CERT / TLS_KEY changed but do not load; the previous certificate stays in service");
                    warned = true;
                }
                _ => {}
            }
        }
    })
}

/// A time as RFC 3339 (UTC), for logs.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    time::OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| secs.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn self_signed(names: &[&str]) -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let params =
            rcgen::CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .unwrap();
        (params.self_signed(&key).unwrap().pem(), key.serialize_pem())
    }

    #[test]
    fn a_pair_loads_with_its_names_and_a_renewal_after_two_thirds_of_its_life() {
        let (cert, key) = self_signed(&["site.example", "www.site.example"]);
        let served = parse(cert.as_bytes(), key.as_bytes(), ("TLS_CERT", "TLS_KEY")).unwrap();
        assert_eq!(served.info.names, ["site.example", "www.site.example"]);
        assert!(
            served.info.covers(&["www.site.example".into()])
                && !served.info.covers(&["other.example".into()])
        );
        let life = served
            .info
            .not_after
            .duration_since(served.info.not_before)
            .unwrap();
        assert_eq!(
            served
                .info
                .not_after
                .duration_since(served.info.renew_at())
                .unwrap(),
            life / 3
        );
        assert!(
            !served.info.serial.is_empty()
                && served.info.serial.chars().all(|c| c.is_ascii_hexdigit())
        );
    }

    #[test]
    fn a_key_of_another_certificate_or_a_file_without_one_is_refused_by_name_without_its_contents()
    {
        let (cert, _) = self_signed(&["site.example"]);
        let (_, other_key) = self_signed(&["site.example"]);
        let said = |chain: &str, key: &str| {
            parse(chain.as_bytes(), key.as_bytes(), ("TLS_CERT", "TLS_KEY"))
                .err()
                .unwrap()
                .0
        };
        assert_eq!(
            said(&cert, &other_key),
            ["TLS_CERT and TLS_KEY do not belong together: the key is not the certificate's"]
        );
        assert_eq!(
            said(&cert, "not a key"),
            ["TLS_KEY: holds no PEM private key (PKCS#8, PKCS#1 or SEC1)"]
        );
        let err = said(&other_key, &other_key);
        assert_eq!(err.len(), 1, "{err:?}");
        assert!(
            err[0].starts_with("TLS_CERT: holds no certificate but a private key"),
            "{err:?}"
        );
        assert!(!err[0].contains("PRIVATE KEY-----"), "{err:?}");
    }

    #[test]
    fn every_problem_of_a_pair_is_named_and_a_swapped_pair_said_to_be_swapped() {
        let (cert, key) = self_signed(&["site.example"]);
        assert_eq!(
            parse(key.as_bytes(), cert.as_bytes(), ("TLS_CERT=k", "TLS_KEY=c"))
                .err()
                .unwrap()
                .0,
            [
                "TLS_CERT=k: holds no certificate but a private key (expected PEM \"BEGIN CERTIFICATE\" blocks)",
                "TLS_KEY=c: holds no PEM private key but a certificate (PKCS#8, PKCS#1 or SEC1)",
                "TLS_CERT=k and TLS_KEY=c look swapped: each file holds what the other should; exchange the two paths",
            ]
        );
        // Neither holds anything: both named, nothing said of a swap.
        let err = parse(b"", b"", ("TLS_CERT=a", "TLS_KEY=b")).err().unwrap();
        assert_eq!(err.0.len(), 2, "{err}");
        assert!(err.0[0].starts_with("TLS_CERT=a: holds no certificate ("));
        assert!(err.0[1].starts_with("TLS_KEY=b: holds no PEM private key ("));
        // One file for both, as the local copy of an ACME certificate:
        // usable, or one problem per thing missing, never a swap.
        let both = format!("{key}{cert}");
        assert!(parse(both.as_bytes(), both.as_bytes(), ("f", "f")).is_ok());
        let err = parse(cert.as_bytes(), cert.as_bytes(), ("f", "f"))
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "f: holds no PEM private key but a certificate (PKCS#8, PKCS#1 or SEC1)"
        );
    }

    #[test]
    fn a_pair_in_der_form_is_said_to_be_der_with_the_command_that_converts_it() {
        let (cert, key) = self_signed(&["site.example"]);
        let cert_der = CertificateDer::from_pem_slice(cert.as_bytes()).unwrap();
        let key_der = PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
        let (c, k) = (
            Path::new("/etc/site/cert.der"),
            Path::new("/etc/my site/key"),
        );
        let err = parse_files(
            cert_der.as_ref(),
            key_der.secret_der(),
            ("TLS_CERT=c", "TLS_KEY=k"),
            (c, k),
        )
        .err()
        .unwrap();
        assert_eq!(
            err.0,
            [
                "TLS_CERT=c: holds a certificate in DER (binary) form, not PEM: convert it with `openssl x509 -inform DER -in /etc/site/cert.der -out /etc/site/cert.der.pem` and name the .pem file instead",
                "TLS_KEY=k: holds a private key in DER (binary) form, not PEM: convert it with `openssl pkey -inform DER -in '/etc/my site/key' -out '/etc/my site/key'.pem` and name the .pem file instead",
            ]
        );
        // Given the wrong way round: swapped, in DER.
        let err = parse_files(
            key_der.secret_der(),
            cert_der.as_ref(),
            ("TLS_CERT=k", "TLS_KEY=c"),
            (k, c),
        )
        .err()
        .unwrap();
        assert_eq!(err.0.len(), 3, "{err}");
        assert!(err.0[2].contains("look swapped"), "{err}");
        // Text that begins with "0" is not DER; binary that does is.
        assert_eq!(der(b"0 certificates here\n"), None);
        assert_eq!(der(&[0x30, 0x82, 0xff, 0x00]), Some(Der::Other));
        let err = parse(b"0 certificates here\n", &[0x30, 0x82, 0xff], ("a", "b"))
            .err()
            .unwrap();
        assert!(err.0[0].starts_with("a: holds no certificate ("), "{err}");
        assert!(err.0[1].contains("looks like DER"), "{err}");
        assert!(!err.0[1].contains("'"), "{err}");
    }

    #[test]
    fn an_order_over_forgets_its_own_answers_and_keeps_a_later_orders() {
        let certs = Certs::default();
        // A stale holder's answers, then the next holder's for the same
        // names, read from the database.
        certs.set_http_challenge("tok-old", "old.key");
        certs.set_alpn_challenge("example.org", &[1; 32]).unwrap();
        certs.replace_challenges(
            [
                ("tok-old".to_owned(), "old.key".to_owned()),
                ("tok-new".to_owned(), "new.key".to_owned()),
            ]
            .into(),
            vec![("example.org".to_owned(), vec![2; 32])],
        );
        // The stale holder ends: only what it set goes.
        certs.forget_http_challenge("tok-old", "old.key");
        certs.forget_alpn_challenge("example.org", &[1; 32]);
        assert_eq!(certs.http_challenge("tok-old"), None);
        assert_eq!(certs.http_challenge("tok-new").as_deref(), Some("new.key"));
        assert!(lock(&certs.alpn_challenges)
            .get("example.org")
            .is_some_and(|(d, _)| d == &vec![2; 32]));
        certs.forget_alpn_challenge("Example.org", &[2; 32]);
        assert!(lock(&certs.alpn_challenges).is_empty());
    }

    #[test]
    fn the_alpn_challenge_certificate_names_the_domain_and_carries_the_digest() {
        let digest = [7u8; 32];
        let key = alpn_certificate("site.example", &digest).unwrap();
        let (_, cert) = x509_parser::parse_x509_certificate(&key.cert[0]).unwrap();
        let ext = cert
            .extensions()
            .iter()
            .find(|e| e.oid.to_id_string() == "1.3.6.1.5.5.7.1.31")
            .expect("acmeIdentifier");
        assert!(ext.critical);
        // An OCTET STRING of the 32-byte digest.
        assert_eq!(ext.value, [&[0x04, 32][..], &digest[..]].concat());
        assert_eq!(info(&key.cert[0]).unwrap().names, ["site.example"]);
    }
}
