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
//!
//! The resolver and its challenges are `resolver.rs`, a certificate in
//! service and what it says `served.rs`, a certificate and key read and
//! checked `pair.rs`, the operator's files watched `watch.rs`; here are
//! the TLS settings of the HTTPS port and of HTTP/3.

mod pair;
mod resolver;
mod served;
mod watch;

use std::sync::Arc;

use rustls::ServerConfig;

pub use pair::{parse, parse_files, PairProblems};
pub use resolver::{alpn_certificate, Certs, ACME_TLS_ALPN};
pub use served::{first_certificate, info, rfc3339, CertInfo, ServedCert};
pub use watch::{watch_files, FILE_CHECK_EVERY};

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
