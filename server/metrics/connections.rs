//! Open connections by protocol, counted per worker thread: a connection
//! adds to and takes from its own worker's counts only, each on a cache
//! line of its own, so no count moves between cores per connection (see
//! `edge::connection::Worker`); a scrape adds the workers' counts up.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::{MetricType, TypedMetric};

/// What a connection speaks, once its TLS handshake (if any) is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Http1,
    Http1Tls,
    H2Tls,
    /// HTTP/3, over QUIC (always encrypted).
    H3,
}

impl Protocol {
    const ALL: [Protocol; 4] = [
        Protocol::Http1,
        Protocol::Http1Tls,
        Protocol::H2Tls,
        Protocol::H3,
    ];

    fn labels(self) -> ConnectionLabels {
        let (protocol, tls) = match self {
            Protocol::Http1 => ("http1", "false"),
            Protocol::Http1Tls => ("http1", "true"),
            Protocol::H2Tls => ("h2", "true"),
            Protocol::H3 => ("h3", "true"),
        };
        ConnectionLabels { protocol, tls }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ConnectionLabels {
    protocol: &'static str,
    tls: &'static str,
}

/// Every worker's counts (clones share them).
#[derive(Clone, Debug, Default)]
pub struct OpenConnections {
    workers: Arc<Mutex<Vec<Weak<WorkerCounts>>>>,
}

/// One worker's open connections, by [`Protocol`].
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct WorkerCounts {
    open: [AtomicI64; Protocol::ALL.len()],
}

/// A connection counted as open until dropped.
pub struct Open<'a>(&'a AtomicI64);

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl WorkerCounts {
    /// Counts a connection speaking `protocol` until the guard is dropped.
    pub fn open(&self, protocol: Protocol) -> Open<'_> {
        let count = &self.open[protocol as usize];
        count.fetch_add(1, Ordering::Relaxed);
        Open(count)
    }
}

impl OpenConnections {
    /// A new worker's counts, summed by every scrape while it lives.
    pub fn worker(&self) -> Arc<WorkerCounts> {
        let counts = Arc::new(WorkerCounts::default());
        let mut workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        workers.retain(|w| w.strong_count() > 0);
        workers.push(Arc::downgrade(&counts));
        counts
    }

    /// Open connections speaking `protocol`, all workers together.
    pub fn count(&self, protocol: Protocol) -> i64 {
        let workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        workers
            .iter()
            .filter_map(Weak::upgrade)
            .map(|w| w.open[protocol as usize].load(Ordering::Relaxed))
            .sum()
    }
}

impl TypedMetric for OpenConnections {
    const TYPE: MetricType = MetricType::Gauge;
}

impl EncodeMetric for OpenConnections {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        for protocol in Protocol::ALL {
            encoder
                .encode_family(&protocol.labels())?
                .encode_gauge(&self.count(protocol))?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Gauge
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_workers_connections_add_up_until_they_close_or_the_worker_ends() {
        let all = OpenConnections::default();
        let (one, two) = (all.worker(), all.worker());
        let a = one.open(Protocol::H2Tls);
        let b = two.open(Protocol::H2Tls);
        let c = two.open(Protocol::Http1);
        assert_eq!(all.count(Protocol::H2Tls), 2);
        assert_eq!(all.count(Protocol::Http1), 1);
        assert_eq!(all.count(Protocol::Http1Tls), 0);
        drop(a);
        assert_eq!(all.count(Protocol::H2Tls), 1);
        drop((b, c));
        drop(two);
        assert_eq!(all.count(Protocol::H2Tls), 0);
        assert_eq!(all.workers.lock().unwrap().len(), 2);
        drop(all.worker());
        assert_eq!(
            all.workers.lock().unwrap().len(),
            2,
            "an ended worker is forgotten"
        );
    }
}
