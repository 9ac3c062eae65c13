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
use std::time::Duration;

use crate::client_ip::Networks;
use crate::metrics::OpenConnections;

pub use self::axum_service::Axum;
pub use self::connection::{OutgoingBody, ServesConnection};
pub use self::serve::serve;

/// What one connection may hold (see the module doc).
#[derive(Debug, Clone)]
pub struct Limits {
    /// Connections open at once, split among the workers ([`share`]);
    /// beyond, new ones wait in the kernel's queue until one closes.
    pub max_connections: usize,
    /// Connections one client address may hold at once (on the HTTPS and
    /// HTTP ports when facing the internet; trusted proxies are exempt);
    /// beyond, a new one is closed at once. None: no such cap (behind a
    /// proxy every connection comes from the proxy).
    pub max_per_client: Option<usize>,
    /// From accepting a connection to the end of its TLS handshake.
    pub handshake: Duration,
    /// From waiting for a request to the end of its head (HTTP/1.1): also
    /// how long a keep-alive connection may sit between requests. Only when
    /// facing the internet (None behind a proxy, which bounds request heads
    /// itself and keeps its connections to the site open between requests).
    pub header_read: Option<Duration>,
    /// A connection that sends nothing for a whole period this long is
    /// closed (a client gone quiet): after one to two periods of silence
    /// ([`watched`]).
    pub idle: Duration,
    /// A write that the client does not read for this long closes the
    /// connection.
    pub write_stall: Duration,
    /// Threads that accept and serve connections ([`workers`]); 0: one per
    /// core. Fixed by the first listener served.
    pub workers: usize,
    /// The balancers whose connections open with a PROXY protocol v2
    /// header naming the visitor ([`proxy_protocol`]); empty: none.
    pub proxy_from: Networks,
    /// Where the connections open are counted (`/metrics`); the default
    /// counts them for no one.
    pub counted: OpenConnections,
}

impl Limits {
    /// The request-head limit when facing the internet.
    pub const HEADER_READ: Duration = Duration::from_secs(10);
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 4096,
            max_per_client: None,
            handshake: Duration::from_secs(10),
            header_read: None,
            idle: Duration::from_secs(60),
            write_stall: Duration::from_secs(30),
            workers: 0,
            proxy_from: Networks::default(),
            counted: OpenConnections::default(),
        }
    }
}

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
