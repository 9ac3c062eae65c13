//! rustls's certificate resolver: the certificate in service, swapped in
//! whole, and the ACME challenges' answers (TLS-ALPN-01's certificates,
//! HTTP-01's key authorizations) while one is being obtained.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwapOption;
use rustls::crypto::ring::sign::any_supported_type;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use super::served::ServedCert;

/// The ALPN protocol of TLS-ALPN-01 validation (RFC 8737, section 6.2).
pub const ACME_TLS_ALPN: &[u8] = b"acme-tls/1";

/// What the HTTPS port presents (see `edge::certs`).
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

#[cfg(test)]
mod tests {
    use super::super::served::info;
    use super::*;

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
