//! Prometheus metrics (prometheus-client, OpenMetrics text at `/metrics`).
//!
//! Labels are bounded sets: a route is the route table's page id or the
//! router's path template, never the raw path, so a crawler walking random
//! URLs cannot grow the label space.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct HttpLabels {
    pub route: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PageLabel {
    pub page: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct Outcome {
    pub outcome: &'static str,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    // 0.5 ms .. ~16 s
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

pub struct Metrics {
    registry: Registry,
    /// Requests and their latency by route and status (its `_count` is the
    /// number of requests).
    pub latency: HistogramFamily<HttpLabels>,
    pub render_seconds: Histogram,
    /// Renders that did not produce a page: timeout, heap, script, panic,
    /// overloaded.
    pub render_failures: Family<Outcome, Counter>,
    /// Page cache lookups, by outcome; the two handles are kept, as every
    /// page view counts one.
    pub page_cache_hits: Counter,
    pub page_cache_misses: Counter,
    /// Route loader runs, by page: a page served from the cache runs none.
    pub loader_runs: Family<PageLabel, Counter>,
    pub render_queue_depth: Gauge,
    pub intro_pending: Gauge,
    /// How long the oldest of them has waited, in seconds (0: none waits).
    pub intro_oldest_pending_age: Gauge,
    /// Intro submissions: stored, duplicate, spam, invalid, failed.
    pub intro_submissions: Family<Outcome, Counter>,
    /// Stored intro requests whose tags could not be read back.
    pub intro_tags_unreadable: Counter,
    pub rate_limited: Counter,
    /// Requests for paths no route has (pages and route data).
    pub not_found: Counter,
    pub database_up: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let latency = HistogramFamily::<HttpLabels>::new_with_constructor(
            latency_histogram as fn() -> Histogram,
        );
        registry.register(
            "http_request_duration_seconds",
            "Time to answer an HTTP request, by route and status (_count: requests answered)",
            latency.clone(),
        );
        let render_seconds = latency_histogram();
        registry.register(
            "ssr_render_duration_seconds",
            "Time a page render took in its V8 isolate, queueing included",
            render_seconds.clone(),
        );
        let render_failures = Family::<Outcome, Counter>::default();
        // Every outcome is there from the start, at 0, so a dashboard's
        // rate() has a series before the first failure.
        for outcome in [
            "timeout",
            "heap_limit",
            "script",
            "panic",
            "overloaded",
            "error_screen",
        ] {
            drop(render_failures.get_or_create(&Outcome { outcome }));
        }
        registry.register(
            "ssr_render_failures",
            "Renders that did not produce a page, by outcome",
            render_failures.clone(),
        );
        let page_cache = Family::<Outcome, Counter>::default();
        registry.register(
            "page_cache_lookups",
            "Rendered-page cache lookups, by outcome (hit, miss)",
            page_cache.clone(),
        );
        let page_cache_hits = page_cache
            .get_or_create(&Outcome { outcome: "hit" })
            .clone();
        let page_cache_misses = page_cache
            .get_or_create(&Outcome { outcome: "miss" })
            .clone();
        let loader_runs = Family::<PageLabel, Counter>::default();
        registry.register(
            "route_loader_runs",
            "Route loader runs (data read for a page or its route data), by page",
            loader_runs.clone(),
        );
        let render_queue_depth = Gauge::default();
        registry.register(
            "ssr_render_queue_depth",
            "Renders waiting for an isolate",
            render_queue_depth.clone(),
        );
        let intro_pending = Gauge::default();
        registry.register(
            "intro_requests_pending",
            "Stored intro requests not yet forwarded to Notion",
            intro_pending.clone(),
        );
        let intro_oldest_pending_age = Gauge::default();
        registry.register(
            "intro_requests_oldest_pending_age_seconds",
            "How long the oldest intro request not yet forwarded to Notion has waited (0: none waits)",
            intro_oldest_pending_age.clone(),
        );
        let intro_submissions = Family::<Outcome, Counter>::default();
        for outcome in ["stored", "duplicate", "spam", "invalid", "failed"] {
            drop(intro_submissions.get_or_create(&Outcome { outcome }));
        }
        registry.register(
            "intro_submissions",
            "Intro request submissions, by outcome",
            intro_submissions.clone(),
        );
        let intro_tags_unreadable = Counter::default();
        registry.register(
            "intro_tags_unreadable",
            "Stored intro requests whose tags could not be read back (forwarded without them)",
            intro_tags_unreadable.clone(),
        );
        let rate_limited = Counter::default();
        registry.register(
            "http_rate_limited",
            "Requests refused with 429 (POSTs, and Stripe session lookups)",
            rate_limited.clone(),
        );
        let not_found = Counter::default();
        registry.register(
            "http_not_found",
            "Requests for unknown routes (404)",
            not_found.clone(),
        );
        let database_up = Gauge::default();
        registry.register(
            "database_up",
            "1 when the database answered its last health check",
            database_up.clone(),
        );
        Metrics {
            registry,
            latency,
            render_seconds,
            render_failures,
            page_cache_hits,
            page_cache_misses,
            loader_runs,
            render_queue_depth,
            intro_pending,
            intro_oldest_pending_age,
            intro_submissions,
            intro_tags_unreadable,
            rate_limited,
            not_found,
            database_up,
        }
    }

    pub fn observe_request(&self, route: &str, status: u16, seconds: f64) {
        self.request_series(route, status).observe(seconds);
    }

    /// The series of requests to `route` answered with `status` (a handle
    /// to keep: observing through it finds nothing).
    pub fn request_series(&self, route: &str, status: u16) -> Histogram {
        self.latency
            .get_or_create(&HttpLabels {
                route: route.to_owned(),
                status,
            })
            .clone()
    }

    pub fn outcome(family: &Family<Outcome, Counter>, outcome: &'static str) {
        family.get_or_create(&Outcome { outcome }).inc();
    }

    /// The OpenMetrics text of every metric.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}
