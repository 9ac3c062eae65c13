//! The certificate robot: obtains the HTTPS certificate for `TLS_DOMAINS`
//! from an ACME CA (RFC 8555; Let's Encrypt unless `ACME_DIRECTORY` says
//! otherwise), keeps it and the account key under `ACME_CACHE_DIR`, and
//! renews it while the server runs.
//!
//! The protocol and its signed requests are instant-acme's; its requests go
//! through reqwest, so each has a connect timeout and an overall one, and
//! `ACME_DIRECTORY_CA` can add the CA of a test directory. The robot's own
//! part is the schedule:
//!
//! 1. At start, a stored certificate for exactly these names from this
//!    directory is put in service at once; a restart orders nothing while
//!    it is fresh.
//! 2. Once two thirds of its life have passed ([`certs::CertInfo::renew_at`]), or
//!    when there is none, it orders one: every name is validated by the
//!    challenge `ACME_CHALLENGE` names (TLS-ALPN-01 on the HTTPS port,
//!    HTTP-01 on the HTTP port), the certificate is stored (written to a
//!    new file, then renamed over the old one) and swapped into service.
//! 3. A failure (directory unreachable, order refused, validation failed)
//!    is logged and retried after [`FIRST_RETRY`], doubling up to
//!    [`LAST_RETRY`]; the certificate in service, and the HTTP port's
//!    redirect, go on meanwhile.
//!
//! Files: `<cache>/<directory>/account.json` (the account and its key) and
//! `<cache>/<directory>/<names>.pem` (the certificate's key, then its
//! chain), created readable by the server's user only. Nothing the robot
//! logs holds a key.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::Context;
use instant_acme::{
    Account, AccountCredentials, AuthorizationStatus, ChallengeType, Identifier, NewAccount,
    NewOrder, OrderStatus, RetryPolicy,
};
use rustls::crypto::ring::sign::any_supported_type;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::sign::CertifiedKey;

use super::acme_http::AcmeHttp;
use super::certs::{self, rfc3339, Certs, ServedCert};

/// Let's Encrypt's production directory, the default `ACME_DIRECTORY`.
pub const LETS_ENCRYPT: &str = "https://acme-v02.api.letsencrypt.org/directory";

/// The wait after a first failure; it doubles with each next one.
pub const FIRST_RETRY: Duration = Duration::from_secs(5);
/// The longest wait between two tries (Let's Encrypt allows 5 failed
/// validations per name an hour).
pub const LAST_RETRY: Duration = Duration::from_secs(3600);
/// The longest the robot sleeps at once before it looks at the clock again
/// (a machine that was suspended wakes up to a late renewal, not a missed one).
const LONGEST_SLEEP: Duration = Duration::from_secs(3600);

/// The validation the CA is asked for.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Challenge {
    /// On the HTTPS port (RFC 8737): needs only port 443 reachable.
    #[value(name = "tls-alpn-01")]
    TlsAlpn01,
    /// On the HTTP port, at `/.well-known/acme-challenge/` (RFC 8555 8.3).
    #[value(name = "http-01")]
    Http01,
}

/// What `TLS_DOMAINS` and the `ACME_*` variables settled to.
#[derive(Debug, Clone)]
pub struct AcmeSettings {
    pub domains: Vec<String>,
    pub directory: String,
    /// `mailto:` contacts for the account (`ACME_EMAIL`).
    pub contact: Vec<String>,
    /// An extra CA the directory's own certificate may chain to (PEM,
    /// read at start from `ACME_DIRECTORY_CA`).
    pub directory_ca: Option<Vec<u8>>,
    pub cache_dir: PathBuf,
    pub challenge: Challenge,
}

impl AcmeSettings {
    /// The folder of this directory's account and certificates.
    fn folder(&self) -> PathBuf {
        let name: String = self
            .directory
            .trim_start_matches("https://")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.cache_dir.join(name.trim_end_matches('_'))
    }

    /// The file of the certificate for these names (lowercase, sorted).
    pub fn cert_file(&self) -> PathBuf {
        let mut names = self.domains.clone();
        names.sort();
        self.folder().join(format!("{}.pem", names.join(",")))
    }

    fn account_file(&self) -> PathBuf {
        self.folder().join("account.json")
    }
}

/// Creates the cache folder (a problem stops the start, naming
/// `ACME_CACHE_DIR`), puts a stored certificate in service, and starts the
/// robot.
pub fn start(
    settings: AcmeSettings,
    certs: Arc<Certs>,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let folder = settings.folder();
    create_private_dir(&folder)
        .with_context(|| format!("ACME_CACHE_DIR: cannot create {}", folder.display()))?;
    let http = AcmeHttp::new(settings.directory_ca.as_deref())?;
    if let Some(stored) = load_stored(&settings) {
        tracing::info!(
            serial = %stored.info.serial,
            valid_until = %rfc3339(stored.info.not_after),
            renew_from = %rfc3339(stored.info.renew_at()),
            "HTTPS: the stored certificate is in service"
        );
        certs.deploy(stored);
    }
    Ok(tokio::spawn(run(settings, certs, http)))
}

async fn run(settings: AcmeSettings, certs: Arc<Certs>, http: AcmeHttp) {
    let mut retry = FIRST_RETRY;
    loop {
        // Sleep until the certificate in service is due (none: at once).
        loop {
            let due = certs
                .current()
                .map(|s| s.info.renew_at())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            match due.duration_since(SystemTime::now()) {
                Ok(wait) if !wait.is_zero() => tokio::time::sleep(wait.min(LONGEST_SLEEP)).await,
                _ => break,
            }
        }
        tracing::info!(domains = ?settings.domains, directory = %settings.directory, challenge = ?settings.challenge, "HTTPS: ordering a certificate");
        let outcome = order(&settings, &certs, &http).await;
        certs.clear_challenges();
        match outcome {
            Ok(served) => {
                tracing::info!(
                    serial = %served.info.serial,
                    valid_until = %rfc3339(served.info.not_after),
                    renew_from = %rfc3339(served.info.renew_at()),
                    "HTTPS: a new certificate is in service"
                );
                certs.deploy(served);
                retry = FIRST_RETRY;
            }
            Err(e) => {
                let error = format!("{e:#}");
                tracing::warn!(%error, retry_in = ?retry, directory = %settings.directory, "HTTPS: could not obtain a certificate from ACME_DIRECTORY; trying again later");
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(LAST_RETRY);
            }
        }
    }
}

/// One order, from the account to the stored certificate.
async fn order(
    settings: &AcmeSettings,
    certs: &Certs,
    http: &AcmeHttp,
) -> anyhow::Result<ServedCert> {
    let account = account(settings, http).await?;
    let ids: Vec<Identifier> = settings
        .domains
        .iter()
        .map(|d| Identifier::Dns(d.clone()))
        .collect();
    let mut order = account
        .new_order(&NewOrder::new(&ids))
        .await
        .context("placing the order")?;
    let kind = match settings.challenge {
        Challenge::TlsAlpn01 => ChallengeType::TlsAlpn01,
        Challenge::Http01 => ChallengeType::Http01,
    };
    let mut authorizations = order.authorizations();
    while let Some(authorization) = authorizations.next().await {
        let mut authorization = authorization.context("reading an authorization")?;
        match authorization.status {
            AuthorizationStatus::Valid => continue,
            AuthorizationStatus::Pending => {}
            other => anyhow::bail!(
                "the authorization for {} is {other:?}",
                authorization.identifier()
            ),
        }
        let domain = match authorization.identifier().identifier {
            Identifier::Dns(d) => d.clone(),
            other => anyhow::bail!("the CA asks to validate {other:?}, not a domain name"),
        };
        let mut challenge = authorization.challenge(kind.clone()).with_context(|| {
            format!(
                "the CA offers no {kind:?} challenge for {domain}; try the other ACME_CHALLENGE"
            )
        })?;
        let key_authorization = challenge.key_authorization();
        match settings.challenge {
            Challenge::TlsAlpn01 => certs.set_alpn_challenge(
                &domain,
                alpn_certificate(&domain, key_authorization.digest().as_ref())?,
            ),
            Challenge::Http01 => {
                certs.set_http_challenge(&challenge.token, key_authorization.as_str())
            }
        }
        challenge
            .set_ready()
            .await
            .with_context(|| format!("asking the CA to validate {domain}"))?;
    }
    let patience = RetryPolicy::new()
        .initial_delay(Duration::from_millis(500))
        .timeout(Duration::from_secs(120));
    let status = order
        .poll_ready(&patience)
        .await
        .context("waiting for the validation")?;
    if status != OrderStatus::Ready {
        let mut why = Vec::new();
        let mut authorizations = order.authorizations();
        while let Some(Ok(a)) = authorizations.next().await {
            for c in a.challenges.iter().filter(|c| c.error.is_some()) {
                why.push(format!(
                    "{}: {}",
                    a.identifier(),
                    c.error.as_ref().map(|p| p.to_string()).unwrap_or_default()
                ));
            }
        }
        anyhow::bail!(
            "the order is {status:?}: {}",
            if why.is_empty() {
                "the CA gave no reason".into()
            } else {
                why.join("; ")
            }
        );
    }
    let key_pem = order
        .finalize()
        .await
        .context("sending the certificate request")?;
    let chain_pem = order
        .poll_certificate(&patience)
        .await
        .context("downloading the certificate")?;
    let served = certs::parse(
        chain_pem.as_bytes(),
        key_pem.as_bytes(),
        ("the issued certificate", "its key"),
    )
    .map_err(anyhow::Error::msg)?;
    let file = settings.cert_file();
    write_private(&file, format!("{key_pem}\n{chain_pem}").as_bytes())
        .with_context(|| format!("storing the certificate in {}", file.display()))?;
    Ok(served)
}

/// The stored account for this directory, or a new one (stored at once).
async fn account(settings: &AcmeSettings, http: &AcmeHttp) -> anyhow::Result<Account> {
    let file = settings.account_file();
    if let Ok(text) = std::fs::read(&file) {
        match serde_json::from_slice::<AccountCredentials>(&text) {
            Ok(credentials) => {
                return Account::builder_with_http(Box::new(http.clone()))
                    .from_credentials(credentials)
                    .await
                    .context("reaching the ACME directory with the stored account");
            }
            Err(_) => {
                tracing::warn!(file = %file.display(), "HTTPS: the stored ACME account cannot be read; creating a new one")
            }
        }
    }
    let contact: Vec<&str> = settings.contact.iter().map(String::as_str).collect();
    let new = NewAccount {
        contact: &contact,
        terms_of_service_agreed: true,
        only_return_existing: false,
    };
    let (account, credentials) = Account::builder_with_http(Box::new(http.clone()))
        .create(&new, settings.directory.clone(), None)
        .await
        .context("creating the ACME account")?;
    let json = serde_json::to_vec(&credentials).context("serialising the account")?;
    write_private(&file, &json)
        .with_context(|| format!("storing the account in {}", file.display()))?;
    tracing::info!(account = %account.id(), "HTTPS: ACME account created");
    Ok(account)
}

/// The stored certificate, if it is readable, for exactly these names, and
/// not expired.
fn load_stored(settings: &AcmeSettings) -> Option<ServedCert> {
    let file = settings.cert_file();
    let pem = std::fs::read(&file).ok()?;
    let name = file.display().to_string();
    match certs::parse(&pem, &pem, (&name, &name)) {
        Ok(served)
            if served.info.covers(&settings.domains)
                && served.info.not_after > SystemTime::now() =>
        {
            Some(served)
        }
        Ok(_) => None,
        Err(why) => {
            tracing::warn!(error = %why, "HTTPS: the stored certificate cannot be used; ordering a new one");
            None
        }
    }
}

/// The self-signed certificate a TLS-ALPN-01 validation must see for
/// `domain`: its one name, and the SHA-256 of the key authorization in the
/// critical acmeIdentifier extension (RFC 8737, section 3).
fn alpn_certificate(domain: &str, digest: &[u8]) -> anyhow::Result<CertifiedKey> {
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

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Writes `bytes` to a new file readable by this user only, then renames it
/// over `path`, so a reader sees the old file or the new one, never half.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("new");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(directory: &str, domains: &[&str]) -> AcmeSettings {
        AcmeSettings {
            domains: domains.iter().map(|s| s.to_string()).collect(),
            directory: directory.into(),
            contact: vec![],
            directory_ca: None,
            cache_dir: PathBuf::from("/var/lib/citizen-site/acme"),
            challenge: Challenge::TlsAlpn01,
        }
    }

    #[test]
    fn each_directory_and_set_of_names_has_its_own_files() {
        let s = settings(LETS_ENCRYPT, &["www.site.example", "site.example"]);
        assert_eq!(s.cert_file(), Path::new("/var/lib/citizen-site/acme/acme-v02.api.letsencrypt.org_directory/site.example,www.site.example.pem"));
        assert_eq!(
            s.account_file(),
            Path::new(
                "/var/lib/citizen-site/acme/acme-v02.api.letsencrypt.org_directory/account.json"
            )
        );
        let pebble = settings("https://127.0.0.1:14000/dir", &["localhost"]);
        assert_eq!(
            pebble.cert_file(),
            Path::new("/var/lib/citizen-site/acme/127.0.0.1_14000_dir/localhost.pem")
        );
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
        assert_eq!(certs::info(&key.cert[0]).unwrap().names, ["site.example"]);
    }

    #[test]
    fn private_files_are_readable_by_their_owner_only_and_replaced_whole() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("citizen-acme-{}", uuid::Uuid::new_v4()));
        create_private_dir(&dir.join("a")).unwrap();
        let file = dir.join("a").join("x.pem");
        write_private(&file, b"one").unwrap();
        write_private(&file, b"two").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"two");
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            std::fs::metadata(dir.join("a"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o700
        );
        assert!(!file.with_extension("new").exists());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
