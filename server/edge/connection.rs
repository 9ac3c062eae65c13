//! One connection accepted, served to its end: plain HTTP/1.1, or TLS
//! then HTTP/2 or HTTP/1.1 as ALPN said.

use std::net::SocketAddr;
use std::sync::Arc;

use hyper_util::rt::TokioIo;

use super::drain::{drained, Begun, ConnState};
use super::per_client::ClientSlot;
use super::serve::{OutgoingBody, ServesConnection, Worker};
use super::{certs, watched};

/// A connection just accepted by `worker`, with its service, the state
/// its draining reads, and what it holds until it ends: its share of the
/// worker's connections, and of its client's.
pub(super) struct Accepted<F, S> {
    pub(super) worker: Arc<Worker<F>>,
    pub(super) io: watched::Watched<tokio::net::TcpStream>,
    pub(super) svc: Begun<S>,
    pub(super) state: ConnState,
    pub(super) peer: SocketAddr,
    pub(super) _held: (tokio::sync::OwnedSemaphorePermit, Option<ClientSlot>),
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
            let conn = worker.http2.serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            drained(conn, |c| c.graceful_shutdown(), true, &state, draining).await
        }
        _ => {
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
