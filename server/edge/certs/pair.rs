//! A certificate chain and its private key read and checked to belong
//! together, every problem of the pair named by its file, never with what
//! the file holds.

use std::path::Path;
use std::sync::Arc;

use rustls::crypto::ring::sign::any_supported_type;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;

use super::served::{info, ServedCert};

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
}
