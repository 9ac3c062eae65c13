//! One QUIC connection served to its end: its start ([`Start`]: QUIC's
//! handshake, then HTTP/3's set-up, each within its bound), then each
//! request on a task of its own, until the client closes it, it asks for
//! nothing ([`Idle`]), or the server drains ([`Drain`]: GOAWAY, the
//! requests in hand answered, then the close).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use quinn::VarInt;
use tokio::time::{Instant, Sleep};

use super::super::connection::OutgoingBody;
use super::super::per_client::{ClientSlot, PerClient};
use super::super::signal::{Signal, Signalled};
use super::bounds::{CLOSE_WAIT, HEADLESS_STREAMS, MAX_FIELD_SECTION};
use super::drain::{Drain, Stepped};
use super::stream::{self, QuicBody, StreamBounds};
use crate::metrics::{Protocol, WorkerCounts};
use crate::telemetry::LogSampler;

/// HTTP/3's error codes used here (RFC 9114, 8.1).
const H3_NO_ERROR: u32 = 0x100;
const H3_EXCESSIVE_LOAD: u32 = 0x107;

type H3 = h3::server::Connection<h3_quinn::Connection, Bytes>;

/// The service of one QUIC connection's requests, as
/// `serve`'s `per_worker` makes it for each peer.
pub trait ServesQuic<B>:
    hyper::service::Service<
        hyper::Request<QuicBody>,
        Response = hyper::Response<B>,
        Error = std::convert::Infallible,
        Future: Send + 'static,
    > + Send
    + Sync
    + 'static
{
}

impl<S, B> ServesQuic<B> for S where
    S: hyper::service::Service<
            hyper::Request<QuicBody>,
            Response = hyper::Response<B>,
            Error = std::convert::Infallible,
            Future: Send + 'static,
        > + Send
        + Sync
        + 'static
{
}

/// What one worker keeps for the QUIC connections it serves.
pub(super) struct Served<F> {
    pub(super) connection: F,
    pub(super) open: Arc<WorkerCounts>,
}

/// What the connections of one endpoint share.
pub(super) struct Shared {
    /// QUIC connections open at once, handshakes included.
    pub(super) slots: Arc<tokio::sync::Semaphore>,
    pub(super) per_client: Arc<PerClient>,
    /// Handshakes from addresses not yet proven, at once.
    pub(super) unproven: Arc<tokio::sync::Semaphore>,
    /// Set: every connection says GOAWAY and finishes.
    pub(super) draining: Arc<Signal>,
    pub(super) refusals: LogSampler,
    pub(super) bounds: StreamBounds,
    pub(super) handshake: Duration,
    pub(super) max: usize,
}

/// One QUIC connection served to its end (see the module doc). `client`
/// is its address's slot when that was proven before the handshake;
/// `unproven`, the unproven budget's permit it holds until then.
pub(super) async fn serve<F, S, B>(
    connecting: quinn::Connecting,
    peer: SocketAddr,
    client: Option<ClientSlot>,
    unproven: Option<tokio::sync::OwnedSemaphorePermit>,
    shared: &Shared,
    served: &Served<F>,
) where
    F: Fn(SocketAddr) -> S + Send + Sync + 'static,
    S: ServesQuic<B>,
    B: OutgoingBody,
{
    let draining = shared.draining.signal();
    tokio::pin!(draining);
    let mut start = Start {
        bound: shared.handshake,
        draining: draining.as_mut(),
    };
    let handshake = start.within(connecting).await;
    drop(unproven);
    let quic = match handshake {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return tracing::debug!(client = %peer, error = %e, "QUIC handshake failed"),
        Err(Unfinished::TimedOut) => {
            return tracing::debug!(client = %peer, "QUIC handshake timed out")
        }
        Err(Unfinished::Drained) => {
            return tracing::debug!(client = %peer, "QUIC handshake unfinished as the server drains")
        }
    };
    // Its address is proven now: it counts against it from here.
    let _client = match client.or_else(|| shared.per_client.admit(peer.ip())) {
        Some(client) => client,
        None => {
            return quic.close(
                VarInt::from_u32(H3_EXCESSIVE_LOAD),
                b"refused: this address holds its maximum of connections",
            )
        }
    };
    let _open = served.open.open(Protocol::H3);
    // HTTP/3's set-up opens the server's control stream, which a client
    // can hold up (by allowing it no stream): bounded as the handshake is.
    // One that finishes goes on to the requests, which say GOAWAY first
    // when the server drains meanwhile.
    let mut builder = h3::server::builder();
    builder.max_field_section_size(MAX_FIELD_SECTION);
    let setup = start
        .within(builder.build::<_, Bytes>(h3_quinn::Connection::new(quic.clone())))
        .await;
    let h3 = match setup {
        Ok(Ok(h3)) => h3,
        Ok(Err(e)) => {
            return tracing::debug!(client = %peer, error = %e, "HTTP/3: the connection failed to start")
        }
        Err(why) => {
            tracing::debug!(client = %peer, "HTTP/3: the connection's set-up {why}");
            return quic.close(VarInt::from_u32(H3_NO_ERROR), b"");
        }
    };
    let service = Arc::new((served.connection)(peer));
    let requests = Requests {
        quic,
        h3,
        peer,
        bounds: shared.bounds,
    };
    requests.serve(service, draining).await;
}

/// A step of a connection's start, within its bound; once the server
/// drains, within [`CLOSE_WAIT`] more at most.
struct Start<'a, 'd> {
    bound: Duration,
    draining: Pin<&'a mut Signalled<'d>>,
}

/// Why a step of the start did not finish.
#[derive(Debug)]
enum Unfinished {
    TimedOut,
    Drained,
}

impl std::fmt::Display for Unfinished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unfinished::TimedOut => "did not finish in time",
            Unfinished::Drained => "unfinished as the server drains",
        })
    }
}

impl Start<'_, '_> {
    async fn within<T>(&mut self, step: impl Future<Output = T>) -> Result<T, Unfinished> {
        let step = tokio::time::timeout(self.bound, step);
        tokio::pin!(step);
        tokio::select! {
            done = &mut step => done.map_err(|_| Unfinished::TimedOut),
            () = self.draining.as_mut() => match tokio::time::timeout(CLOSE_WAIT, &mut step).await {
                Ok(done) => done.map_err(|_| Unfinished::TimedOut),
                Err(_) => Err(Unfinished::Drained),
            },
        }
    }
}

/// Whether a connection asks for anything. It does not once it has had no
/// request open for `quiet` (the TCP port's request-head bound: PINGs keep
/// QUIC's own idle timer from firing), nor once more than
/// [`HEADLESS_STREAMS`] of its streams have ended without a head (empty,
/// reset, timed out, or refused past the GOAWAY: h3 keeps an entry for
/// each such stream until the connection ends). A request counts once its
/// head has arrived: a stream opened bare every few seconds neither keeps
/// the connection nor resets the wait.
struct Idle {
    quiet: Duration,
    timer: Pin<Box<Sleep>>,
    /// Requests whose head has arrived and whose answer has not ended.
    active: Arc<AtomicUsize>,
    headless: usize,
}

/// What one more stream without a head makes of the connection.
#[derive(Debug, PartialEq, Eq)]
enum Headless {
    Within,
    /// Past [`HEADLESS_STREAMS`]: told GOAWAY and closed, as an idle one.
    Goaway,
    /// Past twice that (streams opened on while it drains): closed now.
    Close,
}

impl Idle {
    fn new(quiet: Duration) -> Idle {
        Idle {
            quiet,
            timer: Box::pin(tokio::time::sleep(quiet)),
            active: Arc::default(),
            headless: 0,
        }
    }

    /// Whether the wait is over with no request open; one open when the
    /// timer fires starts the wait again.
    fn expired(&mut self) -> bool {
        if self.active.load(Ordering::Acquire) > 0 {
            self.answered();
            return false;
        }
        true
    }

    /// A request answered: the wait for the next starts now.
    fn answered(&mut self) {
        self.timer.as_mut().reset(Instant::now() + self.quiet);
    }

    /// One more stream that ended without a head.
    fn headless(&mut self) -> Headless {
        self.headless += 1;
        match self.headless {
            n if n > 2 * HEADLESS_STREAMS => Headless::Close,
            n if n > HEADLESS_STREAMS => Headless::Goaway,
            _ => Headless::Within,
        }
    }
}

/// A connection's requests, served once it has started.
struct Requests {
    quic: quinn::Connection,
    h3: H3,
    peer: SocketAddr,
    bounds: StreamBounds,
}

impl Requests {
    async fn serve<S, B>(mut self, service: Arc<S>, mut draining: Pin<&mut Signalled<'_>>)
    where
        S: ServesQuic<B>,
        B: OutgoingBody,
    {
        let (quic, peer, bounds) = (self.quic.clone(), self.peer, self.bounds);
        let mut idle = Idle::new(bounds.head);
        let (mut drain, held) = Drain::new();
        let mut requests = tokio::task::JoinSet::new();
        let mut close_now = false;
        loop {
            tokio::select! {
                biased;
                () = draining.as_mut(), if drain.serving() => drain.begin(&quic),
                () = idle.timer.as_mut(), if drain.serving() => {
                    // No request for `quiet`: told GOAWAY and closed as a
                    // drain closes it, so one crossing the GOAWAY is
                    // refused as retryable, not cut off.
                    if idle.expired() {
                        drain.begin(&quic);
                    }
                }
                () = drain.step.as_mut(), if drain.stepping() => {
                    if let Stepped::Close = drain.next(&mut self.h3, &quic, peer).await {
                        break;
                    }
                    if drain.gone() && requests.is_empty() {
                        break;
                    }
                }
                Some(joined) = requests.join_next(), if !requests.is_empty() => {
                    if joined.unwrap_or(false) {
                        idle.answered();
                    } else {
                        match idle.headless() {
                            Headless::Within => {}
                            Headless::Goaway => drain.begin(&quic),
                            Headless::Close => {
                                close_now = true;
                                break;
                            }
                        }
                    }
                    if drain.gone() && requests.is_empty() {
                        break;
                    }
                }
                accepted = self.h3.accept() => match accepted {
                    Ok(Some(resolver)) => {
                        // h3 0.0.8 exposes a request's stream this way alone.
                        let id = resolver.frame_stream.id().into_inner();
                        if drain.refuses(id) {
                            // At once, its head unread: nothing may hold the
                            // drain by opening streams past the GOAWAY.
                            stream::refuse_request(resolver);
                            if idle.headless() == Headless::Close {
                                close_now = true;
                                break;
                            }
                            continue;
                        }
                        let (service, held, active) =
                            (service.clone(), held.clone(), idle.active.clone());
                        requests.spawn(async move {
                            let (headed, served) =
                                stream::serve_request(resolver, &*service, bounds, held, &active).await;
                            if let Err(why) = served {
                                tracing::debug!(client = %peer, error = %why, "HTTP/3: a request stream ended early");
                            }
                            headed
                        });
                    }
                    // Every request answered after the client's GOAWAY.
                    Ok(None) => break,
                    Err(e) => {
                        if !e.is_h3_no_error() {
                            tracing::debug!(client = %peer, error = %e, "HTTP/3: the connection ended with an error");
                        }
                        return;
                    }
                },
            }
        }
        if close_now {
            tracing::debug!(client = %peer, "HTTP/3: closed, past twice its bound of streams without a head");
            return quic.close(VarInt::from_u32(H3_EXCESSIVE_LOAD), b"");
        }
        drain.hold.send_replace(false);
        while requests.join_next().await.is_some() {}
        // The answers are written; the client closes once it has them.
        // Until then, a request it sent before it read the GOAWAY (its task
        // may not have run yet) is refused as not processed, so it sends it
        // again elsewhere; closing on it would fail it (H3_NO_ERROR), not
        // retry it. Each counts as a stream without a head.
        let refusing = async {
            while let Ok(Some(resolver)) = self.h3.accept().await {
                stream::refuse_request(resolver);
                if idle.headless() == Headless::Close {
                    return;
                }
            }
            std::future::pending::<()>().await
        };
        let _ = tokio::time::timeout(CLOSE_WAIT, async {
            tokio::select! {
                _ = quic.closed() => {}
                () = refusing => {}
            }
        })
        .await;
        quic.close(VarInt::from_u32(H3_NO_ERROR), b"");
    }
}
