//! For load balancers and monitoring: `/healthz` (the process is alive),
//! `/readyz` (it should get traffic) and `/metrics` (Prometheus).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::json;

use crate::client_ip::ClientIp;
use crate::db::now_ms;
use crate::intake::store;
use crate::metrics::{unix_seconds, CertLabels, Seconds};
use crate::state::SharedState;

/// 200 while the process serves at all.
pub async fn healthz() -> (StatusCode, &'static str) {
    (StatusCode::OK, "ok")
}

/// 200 when every SSR isolate has loaded the bundle, the static pages are
/// prerendered, the database answered its last check and no shutdown has
/// begun; 503 otherwise. The body says which check failed, which pages
/// did not render at start (`unrendered`: served as the error page, while
/// the others serve; a successor with any refuses to take over), and how many
/// intro requests wait for Notion (`intro_requests`, null while the
/// database is away): a stalled forwarder shows there, but the site stays
/// ready, as visitors' requests are kept. With HTTPS, it says whether this
/// server's own certificate orders keep failing (`certificate_orders`).
pub async fn readyz(State(state): State<SharedState>) -> Response {
    let checks = Readiness::of(&state);
    let status = if checks.ready() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let intro = match backlog(&state).await {
        Some(b) => json!({
            "pending": b.pending,
            "oldest_pending_seconds": b.oldest_age_secs(now_ms()),
            "forwarding": state.forwarder.is_some(),
        }),
        None => serde_json::Value::Null,
    };
    let Readiness {
        isolates,
        prerendered,
        database,
        draining,
    } = checks;
    // This server's own certificate orders: a member whose tries keep
    // failing says so, and stays ready while it serves the fleet's
    // certificate. That they fail, not why: the CA's text (its URLs, the
    // names it refused) is for the operator's log and `tls status`, not
    // for whoever can reach a health check.
    let orders = state.tls.as_ref().map(|tls| {
        let failing = tls.trouble().map_or(0, |t| t.0);
        json!({
            "failing": failing > 0,
            "failing_in_a_row": failing,
        })
    });
    // The paths alone: why is for the operator's log, not for whoever can
    // reach a health check.
    let unrendered: Vec<String> = state.unrendered().iter().map(|u| u.path.clone()).collect();
    let body = json!({
        "ready": checks.ready(), "isolates": isolates, "prerendered": prerendered, "database": database, "draining": draining,
        "unrendered": unrendered,
        "intro_requests": intro, "certificate_orders": orders,
    });
    (status, [(header::CACHE_CONTROL, "no-store")], Json(body)).into_response()
}

/// What `/readyz` checks (and `/metrics`'s `server_ready` says).
#[derive(Clone, Copy)]
struct Readiness {
    isolates: bool,
    prerendered: bool,
    database: bool,
    draining: bool,
}

impl Readiness {
    fn of(state: &SharedState) -> Readiness {
        Readiness {
            isolates: state.site().front.pool.is_ready(),
            prerendered: state.prerendered.is_set(),
            database: state.db.is_up(),
            draining: state.draining.load(Ordering::Acquire),
        }
    }

    fn ready(self) -> bool {
        self.isolates && self.prerendered && self.database && !self.draining
    }
}

/// How long a scrape waits for the backlog's reading before it answers
/// with the one before: a database that is slow to answer never holds the
/// scrape (nor a visitor: the reading runs beside them).
const BACKLOG_WAIT: Duration = Duration::from_millis(500);

/// Reads the intro backlog into the metrics, unless the database is known
/// to be away (the gauges then keep the last reading).
async fn read_backlog(state: &SharedState) {
    if !state.db.is_up() {
        return;
    }
    let weak = Arc::downgrade(state);
    let read = async move {
        let Some(state) = weak.upgrade() else { return };
        if let Ok(b) = store::backlog(&state.db).await {
            let m = &state.metrics;
            m.intro_pending.set(b.pending);
            m.intro_oldest_pending_age.set(b.oldest_age_secs(now_ms()));
        }
    };
    state
        .metrics
        .backlog_reading
        .refresh(BACKLOG_WAIT, read)
        .await;
}

/// The requests waiting for Notion, unless the database is known to be away.
async fn backlog(state: &SharedState) -> Option<store::Backlog> {
    if !state.db.is_up() {
        return None;
    }
    store::backlog(&state.db).await.ok()
}

/// The Prometheus metrics, for clients in `METRICS_ALLOW` (loopback and
/// private networks by default); anyone else gets a plain-text 404 ("Not
/// found"), which says nothing of what is there. The gauges of the moment
/// are read first (readiness, the queue, the page cache, the certificate
/// and ticket key in service, the backlog within [`BACKLOG_WAIT`]); the
/// rest are counted where they happen (docs/operate.md, "The metrics").
pub async fn metrics(
    State(state): State<SharedState>,
    Extension(client): Extension<ClientIp>,
) -> Response {
    if !state.config.metrics_allow.contains(client.0) {
        return (StatusCode::NOT_FOUND, "Not found").into_response();
    }
    let m = &state.metrics;
    let checks = Readiness::of(&state);
    m.ready.set(i64::from(checks.ready()));
    m.draining.set(i64::from(checks.draining));
    m.database_up.set(i64::from(checks.database));
    m.render_queue_depth
        .set(state.site().front.pool.queue_depth() as i64);
    let (mut pages, mut bytes) = (0, 0);
    for (_, page) in state.page_cache.iter() {
        pages += 1;
        bytes += page.bytes();
    }
    m.page_cache_entries.set(pages);
    m.page_cache_bytes.set(bytes as i64);
    if let Some(tls) = &state.tls {
        let served = tls.certs.current();
        let at = |t: std::time::SystemTime| {
            let gauge = Seconds::default();
            gauge.set(unix_seconds(t));
            gauge
        };
        let names = served.as_ref().map(|s| CertLabels {
            names: s.info.names.join(","),
        });
        m.certificates.replace(
            served
                .as_ref()
                .zip(names.clone())
                .map(|(s, names)| (names, at(s.info.not_after))),
        );
        m.certificate_renewals
            .replace(names.zip(tls.renew_at()).map(|(names, t)| (names, at(t))));
        if let Some(age) = tls.tickets.sealing_key_age_ms(tls.tickets.clock_ms()) {
            m.ticket_key_age.set(age / 1000);
        }
    }
    read_backlog(&state).await;
    (
        [
            (
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            ),
            (header::CACHE_CONTROL, "no-store"),
        ],
        m.encode(),
    )
        .into_response()
}
