//! A certificate in service and what it says about itself: its serial,
//! validity and names, when to renew it, and its times as the logs write
//! them.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::sign::CertifiedKey;

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
