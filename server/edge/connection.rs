//! One connection accepted, served to its end: plain HTTP/1.1, or TLS
//! then HTTP/2 or HTTP/1.1 as ALPN said. With what a worker keeps for its
//! connections ([`Worker`]) and the bounds a connection's service meets.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio_rustls::TlsAcceptor;

use super::drain::{drained, Begun, ConnState};
use super::limits::Limits;
use super::per_client::ClientSlot;
use super::signal::Signal;
use super::{certs, watched};
use crate::metrics::{Protocol, WorkerCounts};

/// The service of one connection, as hyper serves it: what `serve`'s
/// `per_worker` makes for each peer.
pub trait ServesConnection<B>:
    hyper::service::Service<
        hyper::Request<Incoming>,
        Response = hyper::Response<B>,
        Error = Infallible,
        Future: Send + 'static,
    > + Send
    + 'static
{
}

impl<S, B> ServesConnection<B> for S where
    S: hyper::service::Service<
            hyper::Request<Incoming>,
            Response = hyper::Response<B>,
            Error = Infallible,
            Future: Send + 'static,
        > + Send
        + 'static
{
}

/// The body of a connection service's responses.
pub trait OutgoingBody:
    hyper::body::Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
    + Send
    + 'static
{
}

impl<B> OutgoingBody for B where
    B: hyper::body::Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
        + Send
        + 'static
{
}

/// What one worker keeps for the connections it accepts, touched per
/// connection by that worker's thread alone: nothing here is written by
/// two threads for one connection (a count or a reference count shared
/// between the cores costs a transfer of its cache line each time: with a
/// new connection per request, about 1.8 µs of CPU per request in
/// `bench/tails.mjs`, one worker against two).
pub(super) struct Worker<F> {
    /// Its share of the connections open at once ([`share`]), handshakes
    /// included: draining ends when every permit is back.
    pub(super) slots: Arc<tokio::sync::Semaphore>,
    pub(super) permits: usize,
    /// Set: finish every connection (see [`drained`]).
    pub(super) draining: Arc<Signal>,
    pub(super) http1: hyper::server::conn::http1::Builder,
    pub(super) http2: hyper::server::conn::http2::Builder<TokioExecutor>,
    pub(super) tls: Option<TlsAcceptor>,
    /// From accepting a connection to the end of its TLS handshake.
    pub(super) handshake: Duration,
    /// Its connections open, by protocol (`/metrics`).
    pub(super) open: Arc<WorkerCounts>,
    pub(super) connection: F,
}

impl<F> Worker<F> {
    pub(super) fn new(
        permits: usize,
        tls: Option<TlsAcceptor>,
        limits: &Limits,
        connection: F,
    ) -> Self {
        let mut http1 = hyper::server::conn::http1::Builder::new();
        // None must be said: with a timer, hyper otherwise bounds heads at
        // 30 s, a timer armed per request.
        http1
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_read);
        let mut http2 = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
        http2.timer(TokioTimer::new()).max_concurrent_streams(128);
        Worker {
            slots: Arc::new(tokio::sync::Semaphore::new(permits)),
            permits,
            draining: Arc::new(Signal::default()),
            http1,
            http2,
            tls,
            handshake: limits.handshake,
            open: limits.counted.worker(),
            connection,
        }
    }
}

/// A connection just accepted by `worker`, with its service, the state
/// its draining reads, and what it holds until it ends: its share of the
/// worker's connections, and of its client's.
pub(super) struct Accepted<F, S> {
    pub(super) worker: Arc<Worker<F>>,
    pub(super) io: watched::Watched<tokio::net::TcpStream>,
    pub(super) svc: Begun<S>,
    pub(super) state: ConnState,
    pub(super) peer: SocketAddr,
    pub(super) _held: (tokio::sync::OwnedSemaphorePermit, ClientSlot),
}

/// A plain connection served to its end: HTTP/1.1 (browsers speak HTTP/2
/// over TLS only), so its first bytes are not looked at for HTTP/2's.
pub(super) async fn plain_connection<F, S, B>(accepted: Accepted<F, S>)
where
    S: ServesConnection<B>,
    B: OutgoingBody,
{
    let Accepted {
        worker,
        io,
        svc,
        state,
        peer,
        _held,
    } = accepted;
    let _open = worker.open.open(Protocol::Http1);
    // Boxed where it is made: hyper's connection (about a KB) is not
    // copied again on its way into `drained`.
    let mut conn = Box::pin(worker.http1.serve_connection(TokioIo::new(io), svc));
    let result = drained(
        conn.as_mut(),
        |c| c.graceful_shutdown(),
        false,
        &state,
        &worker.draining,
    )
    .await;
    log_error(peer, result);
}

/// A TLS connection served to its end: the handshake, bounded by the
/// handshake limit, then HTTP/2 or HTTP/1.1 as ALPN said. One that
/// negotiated `acme-tls/1` was a CA's validation and is closed once done.
pub(super) async fn tls_connection<F, S, B>(accepted: Accepted<F, S>)
where
    S: ServesConnection<B>,
    B: OutgoingBody,
{
    let Accepted {
        worker,
        io,
        svc,
        state,
        peer,
        _held,
    } = accepted;
    let Some(acceptor) = &worker.tls else { return };
    let stream = match tokio::time::timeout(worker.handshake, acceptor.accept(io)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => return tracing::debug!(client = %peer, error = %e, "TLS handshake failed"),
        Err(_) => return tracing::debug!(client = %peer, "TLS handshake timed out"),
    };
    let draining = &worker.draining;
    // In this task's own box, not one of its own: a connection's memory
    // while idle is row 14's figure, and a handshake costs far more than
    // a copy.
    let result = match stream.get_ref().1.alpn_protocol() {
        Some(certs::ACME_TLS_ALPN) => return,
        Some(b"h2") => {
            let _open = worker.open.open(Protocol::H2Tls);
            let conn = worker.http2.serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            drained(conn, |c| c.graceful_shutdown(), true, &state, draining).await
        }
        _ => {
            let _open = worker.open.open(Protocol::Http1Tls);
            let conn = worker.http1.serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            drained(conn, |c| c.graceful_shutdown(), false, &state, draining).await
        }
    };
    log_error(peer, result);
}

/// How a connection from `peer` ended, when it was with an error.
fn log_error(peer: SocketAddr, result: Result<(), hyper::Error>) {
    if let Err(e) = result {
        tracing::debug!(client = %peer, error = %e, "connection ended with an error");
    }
}
