//! Draining a connection without losing a request: what [`drained`] does
//! once the server stops, and the per-connection state it reads.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::signal::Signal;

/// Once draining begins, how long a connection is given to begin its
/// first request (one accepted a moment before was not idle: its request is
/// on the way), and then how long an HTTP/1.1 connection is given to send
/// its next one, answered with `Connection: close`.
pub(super) const WHEN_DRAINING: Duration = Duration::from_secs(1);

/// Serves `conn` to its end; once `draining` is set, gracefully, so that no
/// request a client has sent is lost:
///
/// - a connection whose first request has not begun gets [`WHEN_DRAINING`]
///   for it (until then hyper would close it unread);
/// - HTTP/1.1: from then on every response says `Connection: close` and
///   the connection ends after it; one still open after [`WHEN_DRAINING`]
///   is closed between requests (never mid-request: a request being
///   answered is finished first). A client therefore rarely sends a
///   request as the server closes (which browsers retry anyway);
/// - HTTP/2 (`http2`): GOAWAY at once, and the streams it accepted are
///   finished.
pub(super) async fn drained<C, T>(
    mut conn: Pin<&mut C>,
    graceful: impl FnOnce(Pin<&mut C>),
    http2: bool,
    state: &ConnState,
    draining: &Signal,
) -> T
where
    C: Future<Output = T>,
{
    tokio::select! {
        biased;
        result = conn.as_mut() => return result,
        () = draining.signal() => {}
    }
    state.fetch_or(CLOSING, Ordering::Relaxed);
    let until = tokio::time::Instant::now() + WHEN_DRAINING;
    while state.load(Ordering::Relaxed) & STARTED == 0 && tokio::time::Instant::now() < until {
        tokio::select! {
            biased;
            result = conn.as_mut() => return result,
            () = tokio::time::sleep(Duration::from_millis(10)) => {}
        }
    }
    if !http2 {
        tokio::select! {
            biased;
            result = conn.as_mut() => return result,
            () = tokio::time::sleep(WHEN_DRAINING) => {}
        }
    }
    graceful(conn.as_mut());
    conn.await
}

/// Where a connection stands: bits [`STARTED`] (its first request has
/// begun) and [`CLOSING`] (draining: HTTP/1.1 responses close it).
pub(super) type ConnState = Arc<AtomicU8>;
pub(super) const STARTED: u8 = 1;
pub(super) const CLOSING: u8 = 2;

/// A connection's service that notes when its first request begins and,
/// once draining, marks each HTTP/1.1 response `Connection: close`.
pub(super) struct Begun<S> {
    service: S,
    state: ConnState,
}

impl<S> Begun<S> {
    pub(super) fn new(service: S) -> (Begun<S>, ConnState) {
        let state = ConnState::default();
        let begun = Begun {
            service,
            state: state.clone(),
        };
        (begun, state)
    }
}

impl<S, B, ReqB> hyper::service::Service<hyper::Request<ReqB>> for Begun<S>
where
    S: hyper::service::Service<hyper::Request<ReqB>, Response = hyper::Response<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = MaybeClose<S::Future>;

    fn call(&self, req: hyper::Request<ReqB>) -> Self::Future {
        let mut before = self.state.load(Ordering::Relaxed);
        if before & STARTED == 0 {
            before = self.state.fetch_or(STARTED, Ordering::Relaxed);
        }
        MaybeClose {
            close: before & CLOSING != 0 && req.version() < hyper::Version::HTTP_2,
            inner: self.service.call(req),
        }
    }
}

pin_project_lite::pin_project! {
    /// A response future whose response gets `Connection: close` when
    /// `close` is set.
    pub struct MaybeClose<F> {
        #[pin]
        inner: F,
        close: bool,
    }
}

impl<F, B, E> Future for MaybeClose<F>
where
    F: Future<Output = Result<hyper::Response<B>, E>>,
{
    type Output = F::Output;

    fn poll(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = self.project();
        let close = *this.close;
        this.inner.poll(cx).map_ok(|mut response| {
            if close {
                response.headers_mut().insert(
                    hyper::header::CONNECTION,
                    hyper::header::HeaderValue::from_static("close"),
                );
            }
            response
        })
    }
}
