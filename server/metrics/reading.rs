//! Figures that need the database (the intro backlog), read for a scrape
//! without holding it: one reading at a time, waited for a moment; a scrape
//! that finds the database slow answers with the last reading, and the
//! reading still under way updates the gauges when it ends.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

/// One reading at a time (clones share it).
#[derive(Clone, Debug)]
pub struct Reading(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    running: AtomicBool,
    /// How many readings have ended.
    ended: watch::Sender<u64>,
}

impl Default for Reading {
    fn default() -> Self {
        Reading(Arc::new(Shared {
            running: AtomicBool::new(false),
            ended: watch::Sender::new(0),
        }))
    }
}

impl Reading {
    /// Starts `read` (which sets the gauges) unless a reading is under way,
    /// then waits at most `wait` for the one under way to end. False: it
    /// did not end in time, and the gauges hold the reading before.
    pub async fn refresh(
        &self,
        wait: Duration,
        read: impl Future<Output = ()> + Send + 'static,
    ) -> bool {
        let mut ended = self.0.ended.subscribe();
        let before = *ended.borrow_and_update();
        if !self.0.running.swap(true, Ordering::AcqRel) {
            let shared = self.0.clone();
            tokio::spawn(async move {
                let mut done = Ended {
                    shared,
                    finished: false,
                };
                read.await;
                done.finished = true;
            });
        }
        tokio::time::timeout(wait, ended.wait_for(|n| *n > before))
            .await
            .is_ok_and(|r| r.is_ok())
    }
}

/// Ends a reading however its task ends (a panic unwinds through it too):
/// the next scrape starts a new one instead of waiting on one that is gone.
struct Ended {
    shared: Arc<Shared>,
    finished: bool,
}

impl Drop for Ended {
    fn drop(&mut self) {
        if !self.finished {
            tracing::error!("a metrics reading of the database failed (it panicked); the next scrape reads again");
        }
        self.shared.running.store(false, Ordering::Release);
        self.shared.ended.send_modify(|n| *n += 1);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    #[tokio::test]
    async fn a_slow_reading_is_started_once_and_waited_for_a_moment_only() {
        let reading = Reading::default();
        let started = Arc::new(AtomicUsize::new(0));
        let (release, held) = watch::channel(false);
        let slow = |started: Arc<AtomicUsize>, mut held: watch::Receiver<bool>| async move {
            started.fetch_add(1, Ordering::SeqCst);
            let _ = held.wait_for(|go| *go).await;
        };
        let wait = Duration::from_millis(50);
        assert!(
            !reading
                .refresh(wait, slow(started.clone(), held.clone()))
                .await
        );
        assert!(
            !reading
                .refresh(wait, slow(started.clone(), held.clone()))
                .await
        );
        assert_eq!(started.load(Ordering::SeqCst), 1, "one reading at a time");
        release.send_replace(true);
        // The next scrape waits for the one under way, then starts another.
        let quick = async {};
        assert!(reading.refresh(Duration::from_secs(20), quick).await);
        assert!(reading.refresh(Duration::from_secs(20), async {}).await);
        assert_eq!(started.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_reading_that_panics_lets_the_next_scrape_read_again() {
        let reading = Reading::default();
        let wait = Duration::from_secs(20);
        reading
            .refresh(wait, async { panic!("a reading that fails") })
            .await;
        let read = Arc::new(AtomicUsize::new(0));
        let counted = read.clone();
        let answered = reading
            .refresh(Duration::from_millis(500), async move {
                counted.fetch_add(1, Ordering::SeqCst);
            })
            .await;
        assert!(answered, "the next reading ran and ended in time");
        assert_eq!(read.load(Ordering::SeqCst), 1);
    }
}
