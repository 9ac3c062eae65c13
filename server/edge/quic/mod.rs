//! HTTP/3: the HTTPS port over UDP (QUIC, quinn; HTTP/3, h3), served
//! beside the TCP port whenever the server serves HTTPS itself and
//! `HTTP3` allows it.
//!
//! It shares what the TCP port has: the certificate store, the
//! session-ticket keys (so a session resumes across members and publishes
//! as over TCP), the dispatcher and so the router, the page cache and the
//! rate limits. Its own bounds ([`transport`], [`serve`]):
//!
//! - connections: up to `MAX_CONNECTIONS` QUIC connections, counted apart
//!   from the TCP ones (a QUIC connection holds no descriptor, which is
//!   what the TCP count mostly guards); beyond, a new one is refused. Once
//!   half are in use a client must prove its address first (a Retry), so
//!   spoofed Initials cannot fill the rest;
//! - handshakes from addresses not yet proven: a quarter of
//!   `MAX_CONNECTIONS` ([`UNPROVEN_SHARE`]); beyond, a Retry, which a
//!   forged source address cannot answer;
//! - per client: `MAX_CONNECTIONS_PER_CLIENT`, counted apart from its TCP
//!   connections, as the HTTP port's are, and only once its address is
//!   proven (a Retry's token, or a finished handshake): Initials forged
//!   with a visitor's address never count against it;
//! - the handshake: the TCP port's bound; then HTTP/3's set-up (its
//!   control streams) within the same bound again;
//! - a connection that asks for nothing: closed (GOAWAY, then closed) once
//!   it has had no request open for the TCP port's request-head bound
//!   (10 s), however many PINGs keep it from QUIC's idle timeout, as a TCP
//!   connection is closed, or once more than [`HEADLESS_STREAMS`] of its
//!   streams ended before their head (each holds an entry in h3 until
//!   the connection ends); a drain never waits on one;
//! - memory: no DATAGRAM frames (RFC 9221: the extension is not offered,
//!   and a peer that sends one anyway is closed); what a client may send
//!   unread is [`CONNECTION_WINDOW`] per connection, what the server
//!   buffers unacknowledged is [`SEND_WINDOW`] per connection, and an
//!   Initial's early packets are buffered up to [`INCOMING_BUFFER`] each,
//!   [`INCOMING_BUFFER_TOTAL`] in all (docs/security.md adds them up);
//! - streams: [`MAX_STREAMS`] requests at once per connection (HTTP/2's
//!   bound), [`MAX_UNI_STREAMS`] unidirectional ones (HTTP/3's control and
//!   QPACK streams);
//! - a request head: [`MAX_FIELD_SECTION`] bytes (QPACK decoded), within
//!   the request-head time bound;
//! - a request body: [`stream::BODY_TIME`], and what a handler reads of it
//!   (`http::api::body`); flow control lets a client send at most
//!   [`STREAM_WINDOW`] per stream and [`CONNECTION_WINDOW`] in all before
//!   the server reads it;
//! - an idle connection: `Limits::idle`; a client that does not read: the
//!   write-stall bound per write, then the stream is reset.
//!
//! No 0-RTT: rustls accepts early data only without a ticketer, and the
//! shared ticket keys are what resume a session on any member
//! (docs/security.md).

mod bounds;
mod connection;
mod drain;
pub mod handoff;
pub mod stream;

pub use bounds::*;
pub use connection::ServesQuic;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::Context;
use quinn::crypto::rustls::QuicServerConfig;
use quinn::{IdleTimeout, VarInt};

use super::connection::OutgoingBody;
use super::limits::Limits;
use super::per_client::PerClient;
use super::signal::Signal;
use super::workers;
use crate::client_ip::Networks;
use crate::telemetry::LogSampler;
use connection::{Served, Shared};
use handoff::{HandedSocket, Handoff, Tagged};
use stream::StreamBounds;

/// QUIC's settings for the HTTPS port: `tls` (TLS 1.3, ALPN `h3`, no
/// early data) and the transport's bounds.
pub fn server_config(
    tls: Arc<rustls::ServerConfig>,
    limits: &Limits,
) -> anyhow::Result<quinn::ServerConfig> {
    let crypto = QuicServerConfig::try_from(tls)
        .context("the TLS settings cannot serve QUIC (TLS 1.3 is needed)")?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    config.transport_config(Arc::new(transport(limits)));
    // Handshakes waiting to be accepted; beyond, new ones are refused.
    config
        .max_incoming(limits.max_connections.clamp(16, 4096))
        .incoming_buffer_size(INCOMING_BUFFER)
        .incoming_buffer_size_total(INCOMING_BUFFER_TOTAL);
    Ok(config)
}

/// The transport's bounds (see the module doc).
pub fn transport(limits: &Limits) -> quinn::TransportConfig {
    let mut transport = quinn::TransportConfig::default();
    transport
        .max_concurrent_bidi_streams(VarInt::from_u32(MAX_STREAMS))
        .max_concurrent_uni_streams(VarInt::from_u32(MAX_UNI_STREAMS))
        .max_idle_timeout(IdleTimeout::try_from(limits.idle).ok())
        .stream_receive_window(VarInt::from_u32(STREAM_WINDOW))
        .receive_window(VarInt::from_u32(CONNECTION_WINDOW))
        .send_window(SEND_WINDOW)
        // DATAGRAM frames are not offered: nothing here reads them, and
        // quinn would keep a client's up to its buffer (1.25 MB each).
        .datagram_receive_buffer_size(None)
        .datagram_send_buffer_size(0);
    transport
}

/// Serves HTTP/3 on `endpoint` until `shutdown` resolves; then it hands
/// the socket to a successor if one serves ([`handoff`]) or refuses new
/// connections, tells each connection to go (GOAWAY), answers what each
/// had asked, and returns when every connection has closed. The QUIC endpoint runs on the
/// first worker; each connection on a worker in turn, with that worker's
/// service (`per_worker`, called once per worker, as [`super::serve`]).
pub async fn serve<M, F, S, B>(
    endpoint: Endpoint,
    per_worker: M,
    limits: Limits,
    exempt: Networks,
    shutdown: impl Future<Output = ()>,
) where
    M: Fn() -> F,
    F: Fn(SocketAddr) -> S + Send + Sync + 'static,
    S: ServesQuic<B>,
    B: OutgoingBody,
{
    // Stopped before it served (a successor stopped while it started):
    // it never reads the socket, whose packets are its predecessor's.
    let mut shutdown = std::pin::pin!(shutdown);
    let stopped =
        std::future::poll_fn(|cx| std::task::Poll::Ready(shutdown.as_mut().poll(cx).is_ready()))
            .await;
    if stopped {
        return;
    }
    endpoint.handoff.start_reading();
    let handles = workers::handles(limits.workers);
    let served: Vec<Arc<Served<F>>> = handles
        .iter()
        .map(|_| {
            Arc::new(Served {
                connection: per_worker(),
                open: limits.counted.worker(),
            })
        })
        .collect();
    let shared = Arc::new(Shared {
        slots: Arc::new(tokio::sync::Semaphore::new(limits.max_connections)),
        per_client: Arc::new(PerClient::new(limits.max_per_client, exempt, "QUIC")),
        unproven: Arc::new(tokio::sync::Semaphore::new(
            (limits.max_connections / UNPROVEN_SHARE).max(1),
        )),
        draining: Arc::new(Signal::default()),
        refusals: LogSampler::new(6),
        bounds: StreamBounds {
            head: limits.header_read.unwrap_or(Limits::HEADER_READ),
            write_stall: limits.write_stall,
        },
        handshake: limits.handshake,
        max: limits.max_connections,
    });
    let quinn = endpoint.quinn.clone();
    let next = AtomicUsize::new(0);
    let accepting = async {
        while let Some(incoming) = quinn.accept().await {
            let turn = next.fetch_add(1, Ordering::Relaxed) % handles.len();
            admit(incoming, &shared, &handles[turn], &served[turn]);
        }
    };
    tokio::pin!(accepting);
    tokio::select! {
        () = &mut accepting => {}
        () = shutdown => {}
    }
    // A successor serves: it reads the socket from now on and passes this
    // process the packets of its connections (and, rarely, a new one's,
    // which is served: each is told GOAWAY at once). With none, new
    // connections are refused and those open finish.
    if !endpoint.handoff.hand_over() {
        endpoint.stop_accepting();
    }
    shared.draining.set();
    let all = u32::try_from(shared.max).unwrap_or(u32::MAX);
    tokio::select! {
        _ = shared.slots.acquire_many(all) => {}
        () = &mut accepting => {
            let _ = shared.slots.acquire_many(all).await;
        }
    }
    let _ = tokio::time::timeout(CLOSE_WAIT, quinn.wait_idle()).await;
}

/// The QUIC endpoint on the HTTPS port's UDP socket.
pub struct Endpoint {
    quinn: quinn::Endpoint,
    handoff: Arc<Handoff>,
}

impl Endpoint {
    /// An endpoint serving `socket` with `config`, its I/O driven by the
    /// first of `workers` (see [`workers::handles`]), its connection IDs
    /// tagged and its packets sorted as `handoff` says ([`handoff`]).
    pub fn new(
        socket: std::net::UdpSocket,
        config: quinn::ServerConfig,
        handoff: Arc<Handoff>,
        workers: usize,
    ) -> anyhow::Result<Endpoint> {
        use quinn::Runtime;
        let first = &workers::handles(workers)[0];
        let _on_the_worker = first.enter();
        let runtime = Arc::new(quinn::TokioRuntime);
        let socket = runtime
            .wrap_udp_socket(socket)
            .context("reading the UDP socket")?;
        let socket = Arc::new(HandedSocket::new(socket, handoff.clone()));
        let mut endpoint = quinn::EndpointConfig::default();
        let tag = handoff.tag();
        endpoint.cid_generator(move || Box::new(Tagged(tag)));
        let quinn =
            quinn::Endpoint::new_with_abstract_socket(endpoint, Some(config), socket, runtime)
                .context("serving QUIC on the UDP socket")?;
        Ok(Endpoint { quinn, handoff })
    }

    /// The UDP socket's address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.quinn.local_addr()
    }

    /// New connections are refused from now on; those open go on.
    fn stop_accepting(&self) {
        self.quinn.set_server_config(None);
    }
}

/// A new connection's first packet: refused beyond the limits, asked to
/// prove its address when the server is busy, else accepted and served on
/// `worker`.
fn admit<F, S, B>(
    incoming: quinn::Incoming,
    shared: &Arc<Shared>,
    worker: &tokio::runtime::Handle,
    served: &Arc<Served<F>>,
) where
    F: Fn(SocketAddr) -> S + Send + Sync + 'static,
    S: ServesQuic<B>,
    B: OutgoingBody,
{
    let peer = incoming.remote_address();
    let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
    let Ok(permit) = shared.slots.clone().try_acquire_owned() else {
        if let Some(held_back) = shared.refusals.admit() {
            tracing::warn!(
                max = shared.max,
                held_back,
                "HTTP/3: the QUIC connections are at MAX_CONNECTIONS; refusing a new one"
            );
        }
        return incoming.refuse();
    };
    // An address is proven by a Retry's token (or, below, by a finished
    // handshake); until then the source may be forged, so it counts
    // against the unproven budget, not against that address.
    let proven = incoming.remote_address_validated();
    let busy = shared.slots.available_permits() < shared.max / 2;
    let unproven = match proven {
        true => None,
        false => shared.unproven.clone().try_acquire_owned().ok(),
    };
    if !proven && (busy || unproven.is_none()) {
        if incoming.may_retry() {
            // Its next Initial carries the token that proves the address.
            let _ = incoming.retry();
            return;
        }
        if unproven.is_none() {
            return incoming.refuse();
        }
    }
    let client = match proven {
        true => match shared.per_client.admit(peer.ip()) {
            Some(client) => Some(client),
            None => return incoming.refuse(),
        },
        false => None,
    };
    let connecting = match incoming.accept() {
        Ok(c) => c,
        Err(e) => return tracing::debug!(client = %peer, error = %e, "QUIC: a connection failed"),
    };
    let (shared, served) = (shared.clone(), served.clone());
    worker.spawn(Box::pin(async move {
        let _held = permit;
        connection::serve(connecting, peer, client, unproven, &shared, &served).await;
    }));
}
