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
//! still served (docs/deploy.md, "Facing the internet").

pub mod acme;
pub mod certs;
pub mod redirect;
pub mod watched;
pub mod workers;

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Waker;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request};
use axum::response::Response;
use bytes::Bytes;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tower::Service;

use crate::client_ip::Networks;
use crate::telemetry::LogSampler;

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

/// The service of one connection, as hyper serves it: what `serve`'s
/// `per_worker` makes for each peer.
pub trait ConnectionService<B>:
    hyper::service::Service<
        hyper::Request<Incoming>,
        Response = hyper::Response<B>,
        Error = Infallible,
        Future: Send + 'static,
    > + Send
    + 'static
{
}

impl<S, B> ConnectionService<B> for S where
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
pub trait ResponseBody:
    hyper::body::Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
    + Send
    + 'static
{
}

impl<B> ResponseBody for B where
    B: hyper::body::Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
        + Send
        + 'static
{
}

/// Serves `listener`'s connections until `shutdown` resolves; then stops
/// accepting and drains: every connection already accepted is finished,
/// not cut (see [`drained`]), and it returns when the last one has. The
/// connections are accepted and served on the [`workers`], each worker
/// accepting for itself. `per_worker` is called once for each worker; what
/// it returns makes the service of each connection that worker accepts,
/// for its peer ([`Axum`] for a tower service of axum's requests). With
/// `tls`, each connection starts with a handshake (one under way when
/// draining begins is completed and served); one that negotiated
/// `acme-tls/1` was a CA's validation and is closed once done.
pub async fn serve<M, F, S, B>(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    per_worker: M,
    limits: Limits,
    exempt: Networks,
    shutdown: impl Future<Output = ()>,
) where
    M: Fn() -> F,
    F: Fn(SocketAddr) -> S + Send + Sync + 'static,
    S: ConnectionService<B>,
    B: ResponseBody,
{
    let shared = Arc::new(Shared {
        per_client: Arc::new(PerClient::default()),
        refusals: LogSampler::new(6),
        stop: Signal::default(),
        limits,
        exempt,
    });
    // Stopped and drained however this ends (dropped too: a worker's
    // accept loop must not outlive the server).
    let mut stop_on_drop = StopOnDrop(shared.clone(), Vec::new());
    let listener = match listener.into_std() {
        Ok(l) => l,
        Err(e) => {
            return tracing::error!(error = %e, "the listening socket cannot be handed to the workers")
        }
    };
    // Set once on the listening socket, TCP_NODELAY is each accepted
    // socket's from the start (Linux copies it): no system call per
    // connection. Where it cannot be, each connection sets it.
    let nodelay_each = socket2::SockRef::from(&listener)
        .set_tcp_nodelay(true)
        .is_err();
    let handles = workers::handles(shared.limits.workers);
    let mut accepting = Vec::new();
    let mut local = Vec::new();
    for (index, handle) in handles.iter().enumerate() {
        let worker = Arc::new(Worker::new(
            share(shared.limits.max_connections, handles.len(), index),
            tls.clone(),
            &shared.limits,
            per_worker(),
        ));
        if worker.permits == 0 {
            // Fewer connections allowed than there are workers.
            continue;
        }
        let copy = match listener.try_clone() {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "the listening socket cannot be copied for a worker");
                continue;
            }
        };
        stop_on_drop.1.push(worker.draining.clone());
        local.push(worker.clone());
        let shared = shared.clone();
        accepting.push(handle.spawn(async move {
            // Registered with this worker's own epoll.
            match TcpListener::from_std(copy) {
                Ok(listener) => accept(listener, &shared, worker, nodelay_each).await,
                Err(e) => tracing::error!(error = %e, "a worker cannot listen"),
            }
        }));
    }
    // The workers hold the only copies: closed when they stop accepting.
    drop(listener);
    shutdown.await;
    shared.stop.set();
    for task in accepting {
        let _ = task.await;
    }
    for worker in &local {
        worker.draining.set();
    }
    // Every connection has ended when every worker has its permits back.
    for worker in &local {
        let all = u32::try_from(worker.permits).unwrap_or(u32::MAX);
        let _ = worker.slots.acquire_many(all).await;
    }
}

/// Worker `index`'s share of `max` connections among `workers`: the
/// connection limit is split as nginx's `worker_connections` is per
/// worker, so that no count is shared between threads. A full worker
/// accepts nothing more; the others still do.
fn share(max: usize, workers: usize, index: usize) -> usize {
    max / workers + usize::from(index < max % workers)
}

/// What the workers serving one listener share: read by them, written only
/// on a refusal or a stop (and, per connection, the count of a client's
/// connections when there is a cap per client).
struct Shared {
    per_client: Arc<PerClient>,
    refusals: LogSampler,
    /// Set: stop accepting.
    stop: Signal,
    limits: Limits,
    exempt: Networks,
}

/// What one worker keeps for the connections it accepts, touched per
/// connection by that worker's thread alone: nothing here is written by
/// two threads for one connection (a count or a reference count shared
/// between the cores costs a transfer of its cache line each time: with a
/// new connection per request, about 1.8 µs of CPU per request in
/// `bench/tails.mjs`, one worker against two).
struct Worker<F> {
    /// Its share of the connections open at once ([`share`]), handshakes
    /// included: draining ends when every permit is back.
    slots: Arc<tokio::sync::Semaphore>,
    permits: usize,
    /// Set: finish every connection (see [`drained`]).
    draining: Arc<Signal>,
    http1: hyper::server::conn::http1::Builder,
    http2: hyper::server::conn::http2::Builder<TokioExecutor>,
    tls: Option<TlsAcceptor>,
    /// From accepting a connection to the end of its TLS handshake.
    handshake: Duration,
    connection: F,
}

impl<F> Worker<F> {
    fn new(permits: usize, tls: Option<TlsAcceptor>, limits: &Limits, connection: F) -> Self {
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
            connection,
        }
    }
}

/// Stops the accept loops and drains every worker's connections.
struct StopOnDrop(Arc<Shared>, Vec<Arc<Signal>>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop.set();
        for draining in &self.1 {
            draining.set();
        }
    }
}

/// One worker's accept loop: a connection accepted here is served on this
/// worker, until `stop` is set.
async fn accept<F, S, B>(
    listener: TcpListener,
    shared: &Shared,
    worker: Arc<Worker<F>>,
    nodelay_each: bool,
) where
    F: Fn(SocketAddr) -> S + Send + Sync + 'static,
    S: ConnectionService<B>,
    B: ResponseBody,
{
    let limits = &shared.limits;
    // Waited for across the whole loop: registered once, not once per
    // connection.
    let stop = shared.stop.signal();
    tokio::pin!(stop);
    loop {
        let permit = tokio::select! {
            permit = worker.slots.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            () = &mut stop => break,
        };
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors or memory: wait instead of spinning.
                    if shared.refusals.admit().is_some() {
                        tracing::warn!(error = %e, "accepting a connection failed");
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let client = match limits
            .max_per_client
            .filter(|_| !shared.exempt.contains(peer.ip()))
        {
            Some(max) => match shared.per_client.take(peer.ip(), max) {
                Some(slot) => Some(slot),
                None => {
                    if let Some(held_back) = shared.refusals.admit() {
                        tracing::warn!(client = %peer.ip(), max, held_back, "a client holds its maximum of open connections; refusing another");
                    }
                    continue;
                }
            },
            None => None,
        };
        if nodelay_each {
            let _ = tcp.set_nodelay(true);
        }
        let (svc, state) = Begun::new((worker.connection)(peer));
        let accepted = Accepted {
            io: watched::Watched::new(tcp, limits.idle, limits.write_stall),
            worker: worker.clone(),
            svc,
            state,
            peer,
            _held: (permit, client),
        };
        // On this worker (its runtime is the current one). Each kind its
        // own task, boxed: tokio would otherwise copy the future (a TLS
        // one's is a few KB) on each of its moves into the task (about
        // 900 instructions of a plain connection's, 5,000 of a TLS one's).
        if worker.tls.is_some() {
            tokio::spawn(Box::pin(tls_connection(accepted)));
        } else {
            tokio::spawn(Box::pin(plain_connection(accepted)));
        }
        // One connection per turn, as nginx accepts (without
        // multi_accept): what is ready on the sockets already open is
        // served before the next accept (p50 with a new connection per
        // request 1.81 -> 1.68 ms in one run of bench/tails.mjs).
        tokio::task::yield_now().await;
    }
}

/// A connection just accepted by `worker`, with its service, the state
/// its draining reads, and what it holds until it ends: its share of the
/// worker's connections, and of its client's.
struct Accepted<F, S> {
    worker: Arc<Worker<F>>,
    io: watched::Watched<tokio::net::TcpStream>,
    svc: Begun<S>,
    state: ConnState,
    peer: SocketAddr,
    _held: (tokio::sync::OwnedSemaphorePermit, Option<ClientSlot>),
}

/// A plain connection served to its end: HTTP/1.1 (browsers speak HTTP/2
/// over TLS only), so its first bytes are not looked at for HTTP/2's.
async fn plain_connection<F, S, B>(accepted: Accepted<F, S>)
where
    S: ConnectionService<B>,
    B: ResponseBody,
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
async fn tls_connection<F, S, B>(accepted: Accepted<F, S>)
where
    S: ConnectionService<B>,
    B: ResponseBody,
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

/// Once draining begins, how long a connection is given to begin its
/// first request (one accepted a moment before was not idle: its request is
/// on the way), and then how long an HTTP/1.1 connection is given to send
/// its next one, answered with `Connection: close`.
const WHEN_DRAINING: Duration = Duration::from_secs(1);

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
async fn drained<C, T>(
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

/// A flag set once, that wakes whoever waits for it: draining's signal to
/// the connections, and the workers' signal to stop accepting. Each
/// connection's task waits for draining beside its connection and so polls
/// it on every wakeup (every request): a poll is one atomic load, and the
/// task's waker is registered once, not on each poll (a `watch` receiver's
/// would take its lock and re-register each time: about 1 % of a cache
/// hit's instructions).
#[derive(Default)]
struct Signal {
    set: AtomicBool,
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, Waker>>,
}

impl Signal {
    /// Sets it and wakes every task waiting.
    fn set(&self) {
        self.set.store(true, Ordering::Release);
        let waiting = std::mem::take(&mut *self.waiting.lock().unwrap_or_else(|p| p.into_inner()));
        for waker in waiting.into_values() {
            waker.wake();
        }
    }

    /// Resolves once it is set.
    fn signal(&self) -> Signalled<'_> {
        Signalled {
            drain: self,
            registered: None,
        }
    }
}

struct Signalled<'a> {
    drain: &'a Signal,
    /// Its entry among the waiting, and the waker it holds.
    registered: Option<(u64, Waker)>,
}

impl Future for Signalled<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if self.drain.set.load(Ordering::Acquire) {
            return std::task::Poll::Ready(());
        }
        let current = matches!(&self.registered, Some((_, w)) if w.will_wake(cx.waker()));
        if !current {
            let id = match &self.registered {
                Some((id, _)) => *id,
                None => self.drain.next.fetch_add(1, Ordering::Relaxed),
            };
            let waker = cx.waker().clone();
            self.drain
                .waiting
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id, waker.clone());
            self.registered = Some((id, waker));
            // Set between the load above and the registration: not missed.
            if self.drain.set.load(Ordering::Acquire) {
                return std::task::Poll::Ready(());
            }
        }
        std::task::Poll::Pending
    }
}

impl Drop for Signalled<'_> {
    fn drop(&mut self) {
        if let Some((id, _)) = self.registered.take() {
            self.drain
                .waiting
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
        }
    }
}

/// Where a connection stands: bits [`STARTED`] (its first request has
/// begun) and [`CLOSING`] (draining: HTTP/1.1 responses close it).
type ConnState = Arc<AtomicU8>;
const STARTED: u8 = 1;
const CLOSING: u8 = 2;

/// A connection's service that notes when its first request begins and,
/// once draining, marks each HTTP/1.1 response `Connection: close`.
struct Begun<S> {
    service: S,
    state: ConnState,
}

impl<S> Begun<S> {
    fn new(service: S) -> (Begun<S>, ConnState) {
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

/// A tower service of axum's requests as the service of one connection:
/// each request's body boxed and the peer in its extensions
/// ([`ConnectInfo`]), as axum's extractors expect.
#[derive(Clone)]
pub struct Axum<S> {
    service: S,
    peer: SocketAddr,
}

impl<S> Axum<S> {
    /// `service` for each connection (the argument of [`serve`]).
    pub fn per_worker(service: S) -> impl Fn() -> Box<dyn Fn(SocketAddr) -> Axum<S> + Send + Sync>
    where
        S: Clone + Send + Sync + 'static,
    {
        move || {
            let service = service.clone();
            Box::new(move |peer| Axum {
                service: service.clone(),
                peer,
            })
        }
    }
}

impl<S> hyper::service::Service<hyper::Request<Incoming>> for Axum<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone,
{
    type Response = Response;
    type Error = Infallible;
    type Future = S::Future;

    fn call(&self, req: hyper::Request<Incoming>) -> S::Future {
        let mut req = req.map(Body::new);
        req.extensions_mut().insert(ConnectInfo(self.peer));
        self.service.clone().call(req)
    }
}

/// Open connections per client address.
#[derive(Default)]
struct PerClient(Mutex<HashMap<IpAddr, usize>>);

/// One connection of `ip`, counted until dropped.
struct ClientSlot {
    ip: IpAddr,
    of: Arc<PerClient>,
}

impl PerClient {
    fn take(self: &Arc<Self>, ip: IpAddr, max: usize) -> Option<ClientSlot> {
        let mut counts = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let n = counts.entry(ip).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(ClientSlot {
            ip,
            of: self.clone(),
        })
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut counts = self.of.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = counts.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.ip);
            }
        }
    }
}

/// The addresses a running server listens on.
#[derive(Debug, Clone, Copy)]
pub struct Addresses {
    /// Plain HTTP (behind a proxy), or HTTPS.
    pub main: SocketAddr,
    /// The HTTP port's redirect, when serving HTTPS.
    pub redirect: Option<SocketAddr>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_connection_waiting_for_draining_wakes_once_it_is_set() {
        let drain = Arc::new(Signal::default());
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let drain = drain.clone();
                tokio::spawn(async move { drain.signal().await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(
            drain.waiting.lock().unwrap().len(),
            3,
            "each registered once"
        );
        assert!(waiters.iter().all(|w| !w.is_finished()));
        drain.set();
        for w in waiters {
            tokio::time::timeout(Duration::from_secs(1), w)
                .await
                .expect("woken")
                .unwrap();
        }
        // Once set, at once; and a dropped waiter leaves no entry.
        drain.signal().await;
        assert!(drain.waiting.lock().unwrap().is_empty());
    }

    #[test]
    fn the_connection_limit_is_split_among_the_workers_to_the_last_connection() {
        for (max, workers) in [(4096, 2), (4097, 2), (7, 3), (1, 2), (2, 2), (5, 8)] {
            let shares: Vec<_> = (0..workers).map(|i| share(max, workers, i)).collect();
            assert_eq!(
                shares.iter().sum::<usize>(),
                max,
                "{max} among {workers}: {shares:?}"
            );
            let (least, most) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
            assert!(most - least <= 1, "{max} among {workers}: {shares:?}");
        }
    }

    #[test]
    fn a_client_holds_at_most_its_share_and_gets_it_back_as_connections_close() {
        let per = Arc::new(PerClient::default());
        let a: IpAddr = "203.0.113.1".parse().unwrap();
        let b: IpAddr = "203.0.113.2".parse().unwrap();
        let held: Vec<_> = (0..3).map(|_| per.take(a, 3).unwrap()).collect();
        assert!(per.take(a, 3).is_none(), "a fourth connection of a");
        let other = per.take(b, 3);
        assert!(other.is_some(), "b is not held back by a");
        drop(held);
        let again = per.take(a, 3);
        assert!(again.is_some(), "a's closed connections are given back");
        drop(other);
        assert_eq!(
            per.0.lock().unwrap().len(),
            1,
            "a client with no connection is forgotten"
        );
    }
}
