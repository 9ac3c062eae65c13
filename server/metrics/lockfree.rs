//! The two metric types a request touches, made so that a scrape never
//! holds up a visitor: prometheus-client's [`Histogram`] takes a write
//! lock on each observation and its family a read lock on each lookup,
//! and its encoder holds the same locks while it writes a family out. A
//! request that observed or added a series during a scrape waited for it.
//!
//! Here an observation is atomic additions, and a family is a map that is
//! replaced, never changed: a lookup and the encoder each read the map of
//! the moment without a lock; adding a series (once per label set for the
//! life of the process) copies the map under a mutex that only adders take.
//! `tests::a_scrape_stopped_mid_family_holds_up_no_observation` holds an
//! encoder in the middle of a family and observes meanwhile.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::{MetricType, TypedMetric};

/// Series by label set (see the module doc). Clones share the series.
pub struct Family<L, M> {
    series: Arc<ArcSwap<HashMap<L, M>>>,
    adding: Arc<Mutex<()>>,
    make: fn() -> M,
}

impl<L, M> Clone for Family<L, M> {
    fn clone(&self) -> Self {
        Family {
            series: self.series.clone(),
            adding: self.adding.clone(),
            make: self.make,
        }
    }
}

impl<L, M: Default> Default for Family<L, M> {
    fn default() -> Self {
        Family::new(M::default)
    }
}

impl<L, M> std::fmt::Debug for Family<L, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Family")
            .field("series", &self.series.load().len())
            .finish()
    }
}

impl<L, M> Family<L, M> {
    /// An empty family whose series `make` creates.
    pub fn new(make: fn() -> M) -> Self {
        Family {
            series: Arc::new(ArcSwap::from_pointee(HashMap::new())),
            adding: Arc::new(Mutex::new(())),
            make,
        }
    }
}

impl<L: Clone + Hash + Eq, M: Clone> Family<L, M> {
    /// Runs `f` on the series of `labels`, created first if it is new.
    pub fn with<R>(&self, labels: &L, f: impl FnOnce(&M) -> R) -> R {
        if let Some(series) = self.series.load().get(labels) {
            return f(series);
        }
        f(&self.add(labels))
    }

    /// A handle to the series of `labels` (created if new), to keep where
    /// one series is touched often.
    pub fn get_or_create(&self, labels: &L) -> M {
        self.with(labels, M::clone)
    }

    fn add(&self, labels: &L) -> M {
        let _adding = self.adding.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.series.load_full();
        if let Some(series) = now.get(labels) {
            return series.clone();
        }
        let series = (self.make)();
        let mut next = HashMap::clone(&now);
        next.insert(labels.clone(), series.clone());
        self.series.store(Arc::new(next));
        series
    }

    /// The family with a series for each of `labels` from the start, at its
    /// first value, so a rule's `increase()` or a dashboard's `rate()` has a
    /// series before the first event.
    pub fn starting_with(self, labels: impl IntoIterator<Item = L>) -> Self {
        for l in labels {
            self.add(&l);
        }
        self
    }

    /// The family becomes exactly `series` (a gauge whose label sets come
    /// and go: the certificates in service).
    pub fn replace(&self, series: impl IntoIterator<Item = (L, M)>) {
        let _adding = self.adding.lock().unwrap_or_else(|e| e.into_inner());
        self.series.store(Arc::new(series.into_iter().collect()));
    }
}

impl<L, M> TypedMetric for Family<L, M>
where
    M: TypedMetric,
{
    const TYPE: MetricType = M::TYPE;
}

impl<L, M> EncodeMetric for Family<L, M>
where
    L: EncodeLabelSet,
    M: EncodeMetric + TypedMetric,
{
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let series = self.series.load_full();
        for (labels, metric) in series.iter() {
            metric.encode(encoder.encode_family(labels)?)?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        M::TYPE
    }
}

/// A histogram of atomic counts: observing adds to one bucket and the sum;
/// its count is the buckets' total when encoded, so the two always agree.
#[derive(Clone, Debug)]
pub struct Histogram(Arc<Buckets>);

#[derive(Debug)]
struct Buckets {
    /// Upper bounds, ascending; one more count holds what is above them.
    bounds: Box<[f64]>,
    counts: Box<[AtomicU64]>,
    /// An f64, as its bits.
    sum: AtomicU64,
}

impl Histogram {
    pub fn new(bounds: impl IntoIterator<Item = f64>) -> Histogram {
        let bounds: Box<[f64]> = bounds.into_iter().collect();
        let counts = (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect();
        Histogram(Arc::new(Buckets {
            bounds,
            counts,
            sum: AtomicU64::new(0f64.to_bits()),
        }))
    }

    pub fn observe(&self, value: f64) {
        let b = &self.0;
        // The first bound at or above the value (`le`).
        let at = b.bounds.partition_point(|bound| *bound < value);
        b.counts[at].fetch_add(1, Ordering::Relaxed);
        let mut sum = b.sum.load(Ordering::Relaxed);
        loop {
            let next = (f64::from_bits(sum) + value).to_bits();
            match b
                .sum
                .compare_exchange_weak(sum, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => sum = now,
            }
        }
    }

    /// How many values were observed.
    pub fn count(&self) -> u64 {
        self.0
            .counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum()
    }
}

impl TypedMetric for Histogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for Histogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let b = &self.0;
        let buckets: Vec<(f64, u64)> = b
            .bounds
            .iter()
            .copied()
            .chain(std::iter::once(f64::MAX))
            .zip(b.counts.iter().map(|c| c.load(Ordering::Relaxed)))
            .collect();
        let count = buckets.iter().map(|(_, n)| n).sum();
        let sum = f64::from_bits(b.sum.load(Ordering::Relaxed));
        encoder.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use prometheus_client::registry::Registry;

    use super::*;
    use crate::metrics::Outcome;

    #[test]
    fn a_histogram_counts_each_value_in_the_first_bucket_at_or_above_it() {
        let h = Histogram::new([0.1, 1.0]);
        for v in [0.05, 0.1, 0.5, 1.0, 7.0] {
            h.observe(v);
        }
        let mut registry = Registry::default();
        registry.register("t", "a test", h.clone());
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for line in [
            "t_sum 8.65",
            "t_count 5",
            "t_bucket{le=\"0.1\"} 2",
            "t_bucket{le=\"1.0\"} 4",
            "t_bucket{le=\"+Inf\"} 5",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        assert_eq!(h.count(), 5);
    }

    /// A text sink that stops the encoder once it reaches `at`, until the
    /// test lets it go on.
    struct StopsAt {
        text: String,
        at: &'static str,
        reached: Option<mpsc::Sender<()>>,
        go_on: mpsc::Receiver<()>,
    }

    impl std::fmt::Write for StopsAt {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.text.push_str(s);
            if self.text.contains(self.at) {
                if let Some(reached) = self.reached.take() {
                    reached.send(()).unwrap();
                    self.go_on.recv().unwrap();
                }
            }
            Ok(())
        }
    }

    #[test]
    fn a_scrape_stopped_mid_family_holds_up_no_observation() {
        let family = Family::<Outcome, Histogram>::new(|| Histogram::new([1.0]));
        family.with(&Outcome { outcome: "ok" }, |h| h.observe(0.5));
        let mut registry = Registry::default();
        registry.register("calls", "a test", family.clone());
        let (reached, stopped) = mpsc::channel();
        let (go_on, wait) = mpsc::channel();
        let scrape = std::thread::spawn(move || {
            let mut sink = StopsAt {
                text: String::new(),
                at: "calls_bucket",
                reached: Some(reached),
                go_on: wait,
            };
            prometheus_client::encoding::text::encode(&mut sink, &registry).unwrap();
            sink.text
        });
        stopped.recv().unwrap();
        // The encoder is inside the family's one series now. A visitor's
        // request observes that series and adds another.
        let (done, finished) = mpsc::channel();
        let request = family.clone();
        std::thread::spawn(move || {
            request.with(&Outcome { outcome: "ok" }, |h| h.observe(0.25));
            request.with(&Outcome { outcome: "timeout" }, |h| h.observe(2.0));
            done.send(()).unwrap();
        });
        let waited = finished.recv_timeout(Duration::from_secs(20));
        go_on.send(()).unwrap();
        let text = scrape.join().unwrap();
        assert!(
            waited.is_ok(),
            "the request waited for the scrape (a lock the encoder holds)"
        );
        assert!(text.contains("calls_count{outcome=\"ok\"}"), "{text}");
        assert_eq!(family.get_or_create(&Outcome { outcome: "ok" }).count(), 2);
        assert_eq!(
            family
                .get_or_create(&Outcome { outcome: "timeout" })
                .count(),
            1
        );
    }
}
