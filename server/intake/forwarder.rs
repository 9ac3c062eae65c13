//! The background forwarder: claims stored intro requests and creates their
//! Notion pages. Spec section 9's retry rule first (3 tries, 1 s then 2 s
//! apart), then it keeps trying later (from 1 min, doubling, at most 1 h):
//! a request is never dropped. Claims are leases in the database, so several
//! processes sharing one PostgreSQL forward each request once.

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use tokio::sync::{watch, Notify};

use super::store;
use crate::db::now_ms;
use crate::db::Db;
use crate::intake::notion::NotionClient;

/// How long a claim holds by default (`INTRO_LEASE_SECS`): longer than one
/// Notion call with its timeouts. After a crash, the request waits this long
/// before another process retries it.
pub const LEASE: Duration = Duration::from_secs(60);
/// How often an idle forwarder looks for due requests (other processes'
/// new requests, retries coming due).
pub const POLL: Duration = Duration::from_secs(2);

/// Delay before the next try after `failed` failed tries.
pub fn retry_delay(failed: i64) -> Duration {
    if failed < 3 {
        // Spec: delay from 1 s, doubling, capped at 30 s.
        Duration::from_secs(1u64 << (failed - 1).clamp(0, 5)).min(Duration::from_secs(30))
    } else {
        Duration::from_secs(60u64 << (failed - 3).clamp(0, 6)).min(Duration::from_secs(3600))
    }
}

/// A running forwarder; wake it when a request is stored.
#[derive(Clone)]
pub struct ForwarderHandle {
    wake: Arc<Notify>,
    stop: watch::Sender<bool>,
}

impl ForwarderHandle {
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Asks the forwarder to stop after the request it is working on.
    pub fn stop(&self) {
        let _ = self.stop.send(true);
    }
}

/// Starts a forwarder; `unreadable_tags` counts the claimed requests whose
/// stored tags could not be read (they are forwarded without them).
pub fn spawn(
    db: Db,
    notion: NotionClient,
    worker: String,
    lease: Duration,
    unreadable_tags: Counter,
) -> (ForwarderHandle, tokio::task::JoinHandle<()>) {
    let wake = Arc::new(Notify::new());
    let (stop_tx, mut stop_rx) = watch::channel(false);
    let handle = ForwarderHandle {
        wake: wake.clone(),
        stop: stop_tx,
    };
    let task = tokio::spawn(async move {
        tracing::info!(worker = %worker, "intro request forwarder started");
        loop {
            if *stop_rx.borrow() {
                break;
            }
            match store::claim(&db, &worker, lease).await {
                Ok(Some(req)) => {
                    if req.tags_unreadable && req.attempts == 0 {
                        unreadable_tags.inc();
                    }
                    // What happened is logged and recorded on the row.
                    let _ = forward_one(&db, &notion, &worker, req).await;
                }
                Ok(None) => {
                    tokio::select! {
                        _ = wake.notified() => {}
                        _ = tokio::time::sleep(POLL) => {}
                        _ = stop_rx.changed() => {}
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "forwarder cannot reach the database; retrying");
                    tokio::select! {
                        _ = tokio::time::sleep(POLL * 2) => {}
                        _ = stop_rx.changed() => {}
                    }
                }
            }
        }
        tracing::info!(worker = %worker, "intro request forwarder stopped");
    });
    (handle, task)
}

/// Forwards one claimed request and records what happened: its Notion page
/// (the page id), or the failed try, counted, with its next try set by
/// [`retry_delay`] (the error). The background forwarder and an operator's
/// `citizen-site intro retry` both forward through here.
pub async fn forward_one(
    db: &Db,
    notion: &NotionClient,
    worker: &str,
    req: store::StoredRequest,
) -> Result<String, String> {
    match notion.forward(&req).await {
        Ok(page_id) => {
            if let Err(e) = store::mark_forwarded(db, &req.id, &page_id).await {
                // The page exists; the next claim finds it by its Request ID.
                tracing::error!(id = %req.id, error = %e, "forwarded to Notion but could not record it");
            } else {
                tracing::info!(id = %req.id, page = %page_id, "intro request forwarded to Notion");
            }
            Ok(page_id)
        }
        Err(e) => {
            let failed = req.attempts + 1;
            let delay = retry_delay(failed);
            tracing::warn!(id = %req.id, attempt = failed, retry_in = ?delay, error = %e, "Notion forwarding failed");
            let retry_at = now_ms() + delay.as_millis() as i64;
            if let Err(e) = store::mark_failed(db, &req.id, worker, &e.to_string(), retry_at).await
            {
                tracing::error!(id = %req.id, error = %e, "could not record a failed forward; the lease will expire");
            }
            Err(e.to_string())
        }
    }
}

/// How long a request may wait for its Notion page before the log says so.
pub const STALLED_AFTER: Duration = Duration::from_secs(3600);
/// How often the watch looks at the backlog.
pub const WATCH_EVERY: Duration = Duration::from_secs(60);

/// Watches the requests waiting for Notion while forwarding is on: when the
/// oldest has waited longer than [`STALLED_AFTER`], a warning says how many
/// wait and for how long; again each hour while it lasts, and once when the
/// backlog clears.
pub fn spawn_watch(db: Db) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut warned: Option<std::time::Instant> = None;
        loop {
            if let Ok(backlog) = store::backlog(&db).await {
                let age = Duration::from_secs(backlog.oldest_age_secs(now_ms()) as u64);
                if age > STALLED_AFTER {
                    if warned.is_none_or(|at| at.elapsed() >= STALLED_AFTER) {
                        tracing::warn!(
                            pending = backlog.pending,
                            oldest_waiting_secs = age.as_secs(),
                            "intro requests are waiting for Notion: the oldest has waited {} min (see `citizen-site intro list --status failed`)",
                            age.as_secs() / 60
                        );
                        warned = Some(std::time::Instant::now());
                    }
                } else if warned.take().is_some() {
                    tracing::info!(
                        pending = backlog.pending,
                        "intro requests are reaching Notion again: none has waited an hour"
                    );
                }
            }
            tokio::time::sleep(WATCH_EVERY).await;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_follow_the_spec_then_back_off() {
        let s = |n| retry_delay(n).as_secs();
        assert_eq!((s(1), s(2)), (1, 2), "three tries: now, +1 s, +2 s");
        assert_eq!((s(3), s(4), s(5)), (60, 120, 240));
        assert_eq!(s(50), 3600);
    }
}
