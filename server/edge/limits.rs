//! What one connection may hold ([`Limits`]): how many at once, per
//! client, and how long each step may take (see the module doc of `edge`).

use std::time::Duration;

use crate::client_ip::Networks;
use crate::metrics::OpenConnections;

/// What one connection may hold (see the module doc).
#[derive(Debug, Clone)]
pub struct Limits {
    /// Connections open at once, split among the workers ([`share`](super::workers));
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
    /// ([`watched`](super::watched)).
    pub idle: Duration,
    /// A write that the client does not read for this long closes the
    /// connection.
    pub write_stall: Duration,
    /// Threads that accept and serve connections ([`workers`](super::workers)); 0: one per
    /// core. Fixed by the first listener served.
    pub workers: usize,
    /// The balancers whose connections open with a PROXY protocol v2
    /// header naming the visitor ([`proxy_protocol`](super::proxy_protocol)); empty: none.
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
