//! [`serve`]: a listener's connections accepted by the workers, each
//! within its worker's share of the connection limit and its client's, and
//! the drain when it stops.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::connection::{
    plain_connection, tls_connection, Accepted, OutgoingBody, ServesConnection, Worker,
};
use super::drain::Begun;
use super::limits::Limits;
use super::per_client::PerClient;
use super::proxy_protocol::{self, Header};
use super::signal::Signal;
use super::{watched, workers};
use crate::client_ip::Networks;
use crate::telemetry::LogSampler;

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
    S: ServesConnection<B>,
    B: OutgoingBody,
{
    let shared = Arc::new(Shared {
        per_client: Arc::new(PerClient::new(limits.max_per_client, exempt, "TCP")),
        refusals: LogSampler::new(6),
        stop: Signal::default(),
        limits,
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
    shared: &Arc<Shared>,
    worker: Arc<Worker<F>>,
    nodelay_each: bool,
) where
    F: Fn(SocketAddr) -> S + Send + Sync + 'static,
    S: ServesConnection<B>,
    B: OutgoingBody,
{
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
        let proxied = &shared.limits.proxy_from;
        if !proxied.is_empty() && proxied.contains(peer.ip()) {
            // A balancer: the visitor's address comes first (bounded like
            // a handshake), then the connection is admitted as the visitor's.
            let (shared, worker) = (shared.clone(), worker.clone());
            tokio::spawn(async move {
                let mut tcp = tcp;
                let read =
                    tokio::time::timeout(shared.limits.handshake, proxy_protocol::read(&mut tcp))
                        .await;
                match read {
                    Ok(Ok(Header::Proxied(visitor))) => {
                        admit(tcp, visitor, permit, &shared, &worker, nodelay_each)
                    }
                    Ok(Ok(Header::Local)) => {
                        admit(tcp, peer, permit, &shared, &worker, nodelay_each)
                    }
                    Ok(Err(why)) => {
                        if let Some(held_back) = shared.refusals.admit() {
                            tracing::warn!(balancer = %peer.ip(), error = %why, held_back, "a connection from a balancer (PROXY_PROTOCOL_FROM) refused");
                        }
                    }
                    Err(_) => {
                        if let Some(held_back) = shared.refusals.admit() {
                            tracing::warn!(balancer = %peer.ip(), held_back, "a connection from a balancer (PROXY_PROTOCOL_FROM) sent no PROXY header in time");
                        }
                    }
                }
            });
        } else {
            admit(tcp, peer, permit, shared, &worker, nodelay_each);
        }
        // One connection per turn, as nginx accepts (without
        // multi_accept): what is ready on the sockets already open is
        // served before the next accept (p50 with a new connection per
        // request 1.81 -> 1.68 ms in one run of bench/tails.mjs).
        tokio::task::yield_now().await;
    }
}
/// Serves one accepted connection as `peer`'s (the visitor's, behind a
/// balancer): unless `peer` already holds its share of connections.
fn admit<F, S, B>(
    tcp: tokio::net::TcpStream,
    peer: SocketAddr,
    permit: tokio::sync::OwnedSemaphorePermit,
    shared: &Shared,
    worker: &Arc<Worker<F>>,
    nodelay_each: bool,
) where
    F: Fn(SocketAddr) -> S + Send + Sync + 'static,
    S: ServesConnection<B>,
    B: OutgoingBody,
{
    let limits = &shared.limits;
    let Some(client) = shared.per_client.admit(peer.ip()) else {
        return;
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
