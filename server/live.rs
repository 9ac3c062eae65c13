//! Data that changes while the server runs (the team table, the Stripe price
//! list), held as numbered snapshots.
//!
//! A page built from such data is cached under its URL and the snapshot's
//! version, so a cache hit asks nothing of the database or Stripe and hashes
//! no data: it reads one number. Background refreshes (see
//! [`crate::state::AppState::refresh_team`] and
//! [`crate::payments::Payments::refresh_prices`]) store what they read; only
//! a value that differs from the current one makes a new version, and with
//! it new cache keys, so nothing needs invalidating.

use std::sync::Arc;

use arc_swap::ArcSwap;

/// One value and the version it was stored as.
#[derive(Debug)]
pub struct Snapshot<T> {
    pub version: u64,
    pub value: T,
}

#[derive(Debug)]
pub struct Live<T> {
    current: ArcSwap<Snapshot<T>>,
    /// Serialises writers, so two refreshes cannot both take version n + 1.
    write: std::sync::Mutex<()>,
}

impl<T: PartialEq> Live<T> {
    /// `value` as version 0.
    pub fn new(value: T) -> Live<T> {
        Live {
            current: ArcSwap::from_pointee(Snapshot { version: 0, value }),
            write: std::sync::Mutex::new(()),
        }
    }

    /// The current snapshot (a counted reference: it stays valid however
    /// long the caller keeps it).
    pub fn get(&self) -> Arc<Snapshot<T>> {
        self.current.load_full()
    }

    /// The current version: one atomic read, no reference counting.
    pub fn version(&self) -> u64 {
        self.current.load().version
    }

    /// Stores `value` as the next version when it differs from the current
    /// one; returns the new version, or None when nothing changed.
    pub fn set(&self, value: T) -> Option<u64> {
        let _writer = self
            .write
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let current = self.current.load();
        if current.value == value {
            return None;
        }
        let version = current.version + 1;
        self.current.store(Arc::new(Snapshot { version, value }));
        Some(version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_different_value_makes_a_new_version() {
        let live = Live::new(vec!["Ada"]);
        assert_eq!(live.version(), 0);
        assert_eq!(live.set(vec!["Ada"]), None, "the same list again");
        assert_eq!(live.version(), 0);
        let held = live.get();
        assert_eq!(live.set(vec!["Ada", "Bea"]), Some(1));
        assert_eq!((live.version(), live.get().value.len()), (1, 2));
        assert_eq!(
            (held.version, held.value.len()),
            (0, 1),
            "a reader keeps the snapshot it took"
        );
        assert_eq!(live.set(vec![]), Some(2));
    }
}

/// Something that happens once (the pages are prerendered), which any task
/// can check at once or wait for, without polling.
#[derive(Debug)]
pub struct Flag(tokio::sync::watch::Sender<bool>);

impl Default for Flag {
    fn default() -> Flag {
        Flag(tokio::sync::watch::Sender::new(false))
    }
}

impl Flag {
    /// It has happened; every waiter wakes.
    pub fn set(&self) {
        self.0.send_replace(true);
    }

    pub fn is_set(&self) -> bool {
        *self.0.borrow()
    }

    /// Returns once it has happened.
    pub async fn wait(&self) {
        let mut changes = self.0.subscribe();
        // The sender is `self`, alive for this whole call: never an error.
        let _ = changes.wait_for(|set| *set).await;
    }
}
