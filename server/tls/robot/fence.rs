//! The order lease held while an order runs ([`Fence`]): renewed every third of its TTL, and given up however the order ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::failure::Failure;
use crate::tls::store::{self, Hold};

/// The hold of the order lease while an order runs: renewed every third of
/// its TTL; [`Fence::holds`] says whether the order may take its next step.
pub(super) struct Fence {
    db: crate::db::Db,
    pub(super) hold: Hold,
    ttl: Duration,
    lost: Arc<AtomicBool>,
    /// When the last successful renewal (or the take) was asked for.
    renewed: Arc<Mutex<Instant>>,
    task: tokio::task::JoinHandle<()>,
    /// Given up by [`Fence::end`]; otherwise the drop gives it up.
    ended: bool,
}

/// The fence's renewal ends with its order however the order ends: a
/// panic in it (instant-acme's, say) or the robot's task aborted drops the
/// fence, which stops renewing and gives the lease up, so no dead order
/// keeps the fleet from ordering.
impl Drop for Fence {
    fn drop(&mut self) {
        self.task.abort();
        if self.ended {
            return;
        }
        tracing::warn!(
            generation = self.hold.generation,
            "HTTPS: the order ended without finishing (a panic, or the robot stopped); its lease is given up"
        );
        let (db, hold) = (self.db.clone(), self.hold.clone());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = store::release_lease(&db, &hold).await {
                    tracing::debug!(error = %e, "the order lease expires by itself");
                }
            });
        }
    }
}

impl Fence {
    /// Takes the lease `name` for `holder` (None: another holds it) and
    /// keeps it. Its time left counts from before the take was asked: the
    /// database's TTL runs from when it wrote the lease, which a slow
    /// round trip puts anywhere between the ask and the answer, so the
    /// answer's arrival would overstate it and let a CA step follow
    /// another member's takeover.
    pub(super) async fn take(
        db: &crate::db::Db,
        name: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Option<Fence>, sqlx::Error> {
        let asked = Instant::now();
        let hold = store::take_lease(db, name, holder, ttl).await?;
        Ok(hold.map(|hold| Fence::keep(db.clone(), hold, ttl, asked)))
    }

    fn keep(db: crate::db::Db, hold: Hold, ttl: Duration, asked: Instant) -> Fence {
        let lost = Arc::new(AtomicBool::new(false));
        let renewed = Arc::new(Mutex::new(asked));
        let task = {
            let (db, hold, lost, renewed) =
                (db.clone(), hold.clone(), lost.clone(), renewed.clone());
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(ttl / 3).await;
                    let asked = Instant::now();
                    match store::renew_lease(&db, &hold, ttl).await {
                        Ok(true) => *renewed.lock().unwrap_or_else(|p| p.into_inner()) = asked,
                        Ok(false) => {
                            lost.store(true, Ordering::Release);
                            tracing::warn!(generation = hold.generation, "HTTPS: the order lease is lost (it expired, or another server took it)");
                            return;
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "HTTPS: the order lease could not be renewed")
                        }
                    }
                }
            })
        };
        Fence {
            db,
            hold,
            ttl,
            lost,
            renewed,
            task,
            ended: false,
        }
    }

    /// Ok while the lease is held: no renewal said it was lost, and one
    /// succeeded within its TTL (by this process's monotonic clock, which
    /// runs on while the process is stopped).
    pub(super) fn holds(&self) -> Result<(), Failure> {
        if self.lost.load(Ordering::Acquire) {
            return Err(Failure::Abandoned(
                "the order lease passed to another server".into(),
            ));
        }
        let since = self
            .renewed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed();
        if since >= self.ttl {
            return Err(Failure::Abandoned(format!(
                "the order lease was not renewed for {since:?} (its TTL is {:?})",
                self.ttl
            )));
        }
        Ok(())
    }

    /// Stops renewing and gives the lease up.
    pub(super) async fn end(mut self) {
        self.task.abort();
        self.ended = true;
        if let Err(e) = store::release_lease(&self.db, &self.hold).await {
            tracing::debug!(error = %e, "the order lease expires by itself");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::robot::LEASE;

    async fn db() -> (crate::db::Db, std::path::PathBuf) {
        crate::db::scratch("fence").await
    }

    /// An order that panics (or whose task is aborted) gives its lease up:
    /// its fence's renewal does not outlive it.
    #[tokio::test]
    async fn a_panicking_or_aborted_order_gives_the_lease_up() {
        let (db, dir) = db().await;
        let ttl = Duration::from_millis(900);
        for ending in ["panic", "abort"] {
            let fence = Fence::take(&db, LEASE, "m1", ttl).await.unwrap().unwrap();
            let order = tokio::spawn(async move {
                let _fence = fence;
                if ending == "panic" {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    panic!("a CA's Retry-After added to the clock");
                }
                std::future::pending::<()>().await;
            });
            if ending == "abort" {
                tokio::time::sleep(Duration::from_millis(50)).await;
                order.abort();
            }
            assert!(order.await.is_err(), "{ending}");
            // Well within the TTL, and again after it: nobody renews it.
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert_eq!(
                store::lease(&db, LEASE).await.unwrap(),
                None,
                "{ending}: held after the order ended"
            );
            tokio::time::sleep(ttl * 2).await;
            assert_eq!(store::lease(&db, LEASE).await.unwrap(), None, "{ending}");
            // Another member takes it at once.
            let next = store::take_lease(&db, LEASE, "m2", ttl).await.unwrap();
            assert!(next.is_some(), "{ending}");
            store::release_lease(&db, &next.unwrap()).await.unwrap();
        }
        db.close().await;
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// The write lock of the database file, held by another connection
    /// until the answer is sent.
    async fn write_locked(dir: &std::path::Path) -> tokio::sync::oneshot::Sender<()> {
        use sqlx::{Connection, Executor};
        let url = format!("sqlite://{}/t.db", dir.display());
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        conn.execute("BEGIN IMMEDIATE").await.unwrap();
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = released.await;
            conn.execute("COMMIT").await.unwrap();
        });
        release
    }

    /// A take whose answer is slow (here it waits 400 ms on the database's
    /// write lock) counts the lease's time from when it was asked: with a
    /// TTL of 600 ms and no renewal getting through, the order stops
    /// stepping 600 ms after the ask, not 600 ms after the answer.
    #[tokio::test]
    async fn a_slow_take_counts_the_lease_from_the_ask() {
        let (db, dir) = db().await;
        let ttl = Duration::from_millis(600);
        let release = write_locked(&dir).await;
        let unlock = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(400)).await;
            let _ = release.send(());
        });
        let asked = Instant::now();
        let fence = Fence::take(&db, LEASE, "m1", ttl).await.unwrap().unwrap();
        unlock.await.unwrap();
        let waited = asked.elapsed();
        assert!(waited >= Duration::from_millis(400), "{waited:?}");
        // No renewal gets through from now on.
        let release = write_locked(&dir).await;
        tokio::time::sleep(ttl.saturating_sub(waited) + Duration::from_millis(50)).await;
        assert!(
            asked.elapsed() < waited + ttl,
            "the check comes before the answer's TTL is over"
        );
        assert!(
            matches!(fence.holds(), Err(Failure::Abandoned(_))),
            "{:?} after the ask, {:?} after the answer: the lease's TTL is {ttl:?}",
            asked.elapsed(),
            asked.elapsed() - waited
        );
        let _ = release.send(());
        fence.end().await;
        db.close().await;
        std::fs::remove_dir_all(dir).unwrap();
    }
}
