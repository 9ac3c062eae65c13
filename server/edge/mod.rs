//! Where the binary meets the network: the listening sockets and what a
//! connection goes through before a request reaches the site.
//!
//! Two ways to run:
//!
//! - **Behind a proxy** (the default): plain HTTP on `ADDR`.
//! - **Facing the internet** (`TLS_DOMAINS`, or `TLS_CERT` and `TLS_KEY`):
//!   HTTPS on `HTTPS_ADDR` with HTTP/2 and HTTP/1.1 by ALPN, the
//!   certificate obtained by [`acme`] or read from the operator's files
//!   ([`certs`]); and on `HTTP_ADDR` only the ACME challenges and a
//!   permanent redirect to https ([`redirect`]).
//!
//! Every listener runs [`serve`], which bounds what one connection may
//! hold ([`Limits`]): open connections in all and per client, the TLS
//! handshake, the time to send a request's head, a connection that says
//! nothing, and a write the client does not read. A request's body is
//! bounded where it is read (`http::api::body`). So a slow or hostile
//! client holds at most its own connections, for seconds, and visitors are
//! still served (docs/deploy.md, "Facing the internet"). Behind a TCP
//! balancer the operator names, each connection first says whose it is
//! ([`proxy_protocol`]), and those bounds apply to the visitor.

pub mod acme;
pub mod acme_http;
mod axum_service;
pub mod certs;
mod connection;
mod drain;
mod limits;
mod per_client;
pub mod proxy_protocol;
pub mod quic;
pub mod redirect;
mod serve;
mod signal;
pub mod tickets;
pub mod watched;
pub mod workers;

use std::net::SocketAddr;

pub use self::axum_service::Axum;
pub use self::connection::{OutgoingBody, ServesConnection};
pub use self::limits::Limits;
pub use self::serve::serve;

/// Raises this process's open-file limit to the hard limit (one descriptor
/// per connection), and returns what it is now. Where raising it is refused
/// (the service unit sets the limit and forbids `setrlimit`), the limit as
/// it stands.
pub fn raise_open_files() -> u64 {
    rlimit::increase_nofile_limit(u64::MAX).unwrap_or_else(|_| {
        rlimit::getrlimit(rlimit::Resource::NOFILE)
            .map(|(soft, _)| soft)
            .unwrap_or(1024)
    })
}

/// The addresses a running server listens on.
#[derive(Debug, Clone, Copy)]
pub struct Addresses {
    /// Plain HTTP (behind a proxy), or HTTPS.
    pub main: SocketAddr,
    /// The HTTP port's redirect, when serving HTTPS.
    pub redirect: Option<SocketAddr>,
}
