//! Prometheus metrics (prometheus-client, OpenMetrics text at `/metrics`).
//!
//! Labels are bounded sets: a route is the route table's page id or the
//! router's path template, never the raw path, so a crawler walking random
//! URLs cannot grow the label space.
//!
//! A scrape never slows a visitor: the metrics a request touches take no
//! lock the encoder holds ([`lockfree`]), open connections are counted per
//! worker ([`connections`]), and the figures read from the database come
//! from their last reading when a new one is slow ([`Reading`]).

mod connections;
pub mod lockfree;
mod reading;

use std::sync::atomic::AtomicU64;
use std::time::{SystemTime, UNIX_EPOCH};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::exponential_buckets;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Metric, Registry};

pub use self::connections::{OpenConnections, Protocol, WorkerCounts};
pub use self::lockfree::{Family, Histogram};
pub use self::reading::Reading;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct HttpLabels {
    pub route: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PageLabel {
    pub page: String,
}

/// A page of the site, by its path.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PathLabel {
    pub path: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct Outcome {
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct Reason {
    pub reason: &'static str,
}

/// A certificate in service, by the names it is valid for (comma-separated).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CertLabels {
    pub names: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AcmeLabels {
    /// `issue` (no certificate was in service) or `renewal`.
    pub kind: &'static str,
    /// `success` or `failure`.
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UpstreamLabels {
    /// `stripe` or `notion`.
    pub upstream: &'static str,
    pub operation: &'static str,
    /// `ok`, `error_status`, `timeout`, `unreachable` or `bad_answer`.
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: &'static str,
    commit: &'static str,
    payload: String,
}

/// A gauge of seconds since 1970 (a moment), or of any fraction.
pub type Seconds = Gauge<f64, AtomicU64>;

type HistogramFamily<L> = Family<L, Histogram>;

fn latency_histogram() -> Histogram {
    // 0.5 ms .. ~16 s
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

/// Registers `metric` as `name` and gives back the handle the code counts
/// with (a clone shares its values).
fn add<M: Metric + Clone>(registry: &mut Registry, name: &str, help: &str, metric: M) -> M {
    registry.register(name, help, metric.clone());
    metric
}

/// Seconds since 1970 at `t` (0 before it), as the timestamp gauges say.
pub fn unix_seconds(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The engine's commit (build.rs: `git rev-parse` of the checkout built).
pub const COMMIT: &str = env!("CITIZEN_SITE_COMMIT");

/// Calls to Stripe and Notion, by operation and outcome, with their
/// durations (clones share them).
#[derive(Clone, Debug)]
pub struct UpstreamCalls(HistogramFamily<UpstreamLabels>);

impl Default for UpstreamCalls {
    fn default() -> Self {
        UpstreamCalls(HistogramFamily::new(latency_histogram))
    }
}

impl UpstreamCalls {
    pub fn record(&self, labels: UpstreamLabels, seconds: f64) {
        self.0.with(&labels, |h| h.observe(seconds));
    }
}

/// The certificate robot's orders and its last success (clones share them).
#[derive(Clone, Debug)]
pub struct AcmeOrders {
    orders: Family<AcmeLabels, Counter>,
    last_success: Seconds,
    failing: Gauge,
}

impl AcmeOrders {
    /// An order ended: `renewal` when a certificate was in service.
    pub fn record(&self, renewal: bool, success: bool) {
        let kind = if renewal { "renewal" } else { "issue" };
        let outcome = if success { "success" } else { "failure" };
        self.orders.with(&AcmeLabels { kind, outcome }, |c| c.inc());
        if success {
            self.last_success.set(unix_seconds(SystemTime::now()));
        }
    }

    /// This process's own orders that failed in a row (0 after a success).
    pub fn failing(&self, in_a_row: u64) {
        self.failing.set(in_a_row as i64);
    }
}

/// V8 isolates rebuilt after a render they could not be trusted after.
#[derive(Clone, Debug, Default)]
pub struct IsolateRebuilds(Family<Reason, Counter>);

impl IsolateRebuilds {
    pub fn record(&self, reason: &'static str) {
        self.0.with(&Reason { reason }, |c| c.inc());
    }
}

/// What `/metrics` shows: registered once, each handle shared with the
/// code that counts (names and units as Prometheus's conventions have
/// them; docs/operate.md's table lists them, checked by
/// `tests/api/operations.rs`).
pub struct Metrics {
    registry: Registry,
    /// Requests and their latency by route and status (its `_count` is the
    /// number of requests).
    pub latency: HistogramFamily<HttpLabels>,
    pub render_seconds: Histogram,
    /// Renders that did not produce a page: timeout, heap, script, panic,
    /// overloaded.
    pub render_failures: Family<Outcome, Counter>,
    pub isolate_rebuilds: IsolateRebuilds,
    /// Page cache lookups, by outcome; the two handles are kept, as every
    /// page view counts one.
    pub page_cache_hits: Counter,
    pub page_cache_misses: Counter,
    /// Pages in the cache and their bytes (every encoding), at the scrape.
    pub page_cache_entries: Gauge,
    pub page_cache_bytes: Gauge,
    /// Route loader runs, by page: a page served from the cache runs none.
    pub loader_runs: Family<PageLabel, Counter>,
    pub render_queue_depth: Gauge,
    pub intro_pending: Gauge,
    /// How long the oldest of them has waited, in seconds (0: none waits).
    pub intro_oldest_pending_age: Gauge,
    /// 1 when Notion forwarding is on.
    pub intro_forwarding: Gauge,
    /// The two gauges above that need the database, one reading at a time.
    pub backlog_reading: Reading,
    /// Intro submissions: stored, duplicate, spam, invalid, failed.
    pub intro_submissions: Family<Outcome, Counter>,
    /// Stored intro requests whose tags could not be read back.
    pub intro_tags_unreadable: Counter,
    pub rate_limited: Counter,
    /// Requests for paths no route has (pages and route data).
    pub not_found: Counter,
    pub database_up: Gauge,
    pub ready: Gauge,
    pub draining: Gauge,
    /// 1 for each page the start's prerender could not render, by path.
    pub pages_unrendered: Family<PathLabel, Gauge>,
    pub connections: OpenConnections,
    pub certificates: Family<CertLabels, Seconds>,
    /// When the certificate in service is renewed, by the same names.
    pub certificate_renewals: Family<CertLabels, Seconds>,
    pub acme: AcmeOrders,
    pub ticket_key_age: Gauge,
    pub upstream: UpstreamCalls,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let build = BuildLabels {
            version: env!("CARGO_PKG_VERSION"),
            commit: COMMIT,
            payload: crate::payload::load().map_or_else(|_| "none".to_owned(), |p| p.short_hash()),
        };
        registry.register(
            "citizen_site_build",
            "The build serving: its version, the commit its engine was built from, and its content payload's SHA-256 (first 12 digits)",
            Info::new(build),
        );
        add(
            &mut registry,
            "process_start_time_seconds",
            "When this process started, in seconds since 1970",
            Seconds::default(),
        )
        .set(unix_seconds(SystemTime::now()));
        let ready = add(
            &mut registry,
            "server_ready",
            "1 when /readyz says ready (isolates loaded, pages prerendered, database up, not draining)",
            Gauge::default(),
        );
        let pages_unrendered = add(
            &mut registry,
            "site_page_unrendered",
            "1 for each page of the site that did not render when this process started (a script that threw, a render that timed out, a 500), by path; none when every page renders",
            Family::<PathLabel, Gauge>::default(),
        );
        let draining = add(
            &mut registry,
            "server_draining",
            "1 once shutdown or a hand-over has begun: finishing in-flight requests",
            Gauge::default(),
        );
        let connections = add(
            &mut registry,
            "http_connections_open",
            "Connections open, by protocol and TLS (from the end of the handshake)",
            OpenConnections::default(),
        );
        let latency = add(
            &mut registry,
            "http_request_duration_seconds",
            "Time to answer an HTTP request, by route and status (_count: requests answered)",
            HistogramFamily::<HttpLabels>::new(latency_histogram),
        );
        let render_seconds = add(
            &mut registry,
            "ssr_render_duration_seconds",
            "Time a page render took in its V8 isolate, queueing included",
            latency_histogram(),
        );
        // Every outcome and reason is there from the start, at 0.
        let render_failures = add(
            &mut registry,
            "ssr_render_failures",
            "Renders that did not produce a page, by outcome",
            Family::default().starting_with(
                [
                    "timeout",
                    "heap_limit",
                    "script",
                    "panic",
                    "overloaded",
                    "error_screen",
                ]
                .map(|outcome| Outcome { outcome }),
            ),
        );
        let isolate_rebuilds = IsolateRebuilds(add(
            &mut registry,
            "ssr_isolate_rebuilds",
            "V8 isolates rebuilt after a render that broke or outran its deadline, or a worker that panicked, by reason",
            Family::default().starting_with(
                ["timeout", "heap_limit", "script", "panic"].map(|reason| Reason { reason }),
            ),
        ));
        let page_cache = add(
            &mut registry,
            "page_cache_lookups",
            "Rendered-page cache lookups, by outcome (hit, miss)",
            Family::<Outcome, Counter>::default(),
        );
        let page_cache_hits = page_cache.get_or_create(&Outcome { outcome: "hit" });
        let page_cache_misses = page_cache.get_or_create(&Outcome { outcome: "miss" });
        let page_cache_entries = add(
            &mut registry,
            "page_cache_entries",
            "Rendered pages in the cache",
            Gauge::default(),
        );
        let page_cache_bytes = add(
            &mut registry,
            "page_cache_bytes",
            "Bytes of the rendered pages in the cache (every encoding and their route data)",
            Gauge::default(),
        );
        let loader_runs = add(
            &mut registry,
            "route_loader_runs",
            "Route loader runs (data read for a page or its route data), by page",
            Family::<PageLabel, Counter>::default(),
        );
        let render_queue_depth = add(
            &mut registry,
            "ssr_render_queue_depth",
            "Renders waiting for an isolate",
            Gauge::default(),
        );
        let intro_pending = add(
            &mut registry,
            "intro_requests_pending",
            "Stored intro requests not yet forwarded to Notion",
            Gauge::default(),
        );
        let intro_oldest_pending_age = add(
            &mut registry,
            "intro_requests_oldest_pending_age_seconds",
            "How long the oldest intro request not yet forwarded to Notion has waited (0: none waits)",
            Gauge::default(),
        );
        let intro_forwarding = add(
            &mut registry,
            "intro_forwarding_enabled",
            "1 when intro requests are forwarded to Notion (NOTION_TOKEN and NOTION_DATABASE_ID set)",
            Gauge::default(),
        );
        let intro_submissions = add(
            &mut registry,
            "intro_submissions",
            "Intro request submissions, by outcome",
            Family::default().starting_with(
                ["stored", "duplicate", "spam", "invalid", "failed"]
                    .map(|outcome| Outcome { outcome }),
            ),
        );
        let intro_tags_unreadable = add(
            &mut registry,
            "intro_tags_unreadable",
            "Stored intro requests whose tags could not be read back (forwarded without them)",
            Counter::default(),
        );
        let rate_limited = add(
            &mut registry,
            "http_rate_limited",
            "Requests refused with 429 (POSTs, and Stripe session lookups)",
            Counter::default(),
        );
        let not_found = add(
            &mut registry,
            "http_not_found",
            "Requests for unknown routes (404)",
            Counter::default(),
        );
        let database_up = add(
            &mut registry,
            "database_up",
            "1 when the database answered its last health check",
            Gauge::default(),
        );
        let certificates = add(
            &mut registry,
            "tls_certificate_not_after_timestamp_seconds",
            "When the certificate in service expires, in seconds since 1970, by the names it covers",
            Family::<CertLabels, Seconds>::default(),
        );
        let certificate_renewals = add(
            &mut registry,
            "tls_certificate_renewal_timestamp_seconds",
            "When the certificate in service is renewed, in seconds since 1970: a point of the CA's window (ARI) chosen for the fleet, or two thirds of its life",
            Family::<CertLabels, Seconds>::default(),
        );
        let acme = AcmeOrders {
            orders: add(
                &mut registry,
                "acme_orders",
                "Certificate orders this process made (as the order lease's holder), by kind (issue, renewal) and outcome",
                // Each at 0 from the start: the first failure after a
                // restart is an increase a rule sees.
                Family::default().starting_with(["issue", "renewal"].into_iter().flat_map(|kind| {
                    ["success", "failure"].map(|outcome| AcmeLabels { kind, outcome })
                })),
            ),
            last_success: add(
                &mut registry,
                "acme_last_success_timestamp_seconds",
                "When this process last obtained a certificate, in seconds since 1970 (0: not since it started)",
                Seconds::default(),
            ),
            failing: add(
                &mut registry,
                "acme_order_failures_in_a_row",
                "This process's own certificate orders that failed in a row (0 after a success): a member that keeps failing while another serves the fleet's certificate",
                Gauge::default(),
            ),
        };
        let ticket_key_age = add(
            &mut registry,
            "tls_session_ticket_key_age_seconds",
            "How long ago the session-ticket key that seals new tickets was made (a period before it seals, so 6 to 12 hours while keys rotate; seconds after citizen-site tls rotate-tickets), as citizen-site tls status says",
            Gauge::default(),
        );
        let upstream = UpstreamCalls::default();
        add(
            &mut registry,
            "upstream_request_duration_seconds",
            "Calls to Stripe and Notion and how long they took, by upstream, operation and outcome (_count: calls)",
            upstream.0.clone(),
        );
        Metrics {
            registry,
            latency,
            render_seconds,
            render_failures,
            isolate_rebuilds,
            page_cache_hits,
            page_cache_misses,
            page_cache_entries,
            page_cache_bytes,
            loader_runs,
            render_queue_depth,
            intro_pending,
            intro_oldest_pending_age,
            intro_forwarding,
            backlog_reading: Reading::default(),
            intro_submissions,
            intro_tags_unreadable,
            rate_limited,
            not_found,
            database_up,
            ready,
            draining,
            pages_unrendered,
            connections,
            certificates,
            certificate_renewals,
            acme,
            ticket_key_age,
            upstream,
        }
    }

    pub fn observe_request(&self, route: &str, status: u16, seconds: f64) {
        let labels = HttpLabels {
            route: route.to_owned(),
            status,
        };
        self.latency.with(&labels, |h| h.observe(seconds));
    }

    /// The series of requests to `route` answered with `status` (a handle
    /// to keep: observing through it finds nothing).
    pub fn request_series(&self, route: &str, status: u16) -> Histogram {
        self.latency.get_or_create(&HttpLabels {
            route: route.to_owned(),
            status,
        })
    }

    /// Says which pages did not render (`paths`), and no other.
    pub fn unrendered(&self, paths: impl IntoIterator<Item = String>) {
        self.pages_unrendered.replace(paths.into_iter().map(|path| {
            let gauge = Gauge::default();
            gauge.set(1);
            (PathLabel { path }, gauge)
        }));
    }

    pub fn outcome(family: &Family<Outcome, Counter>, outcome: &'static str) {
        family.with(&Outcome { outcome }, |c| c.inc());
    }

    /// The OpenMetrics text of every metric.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}
