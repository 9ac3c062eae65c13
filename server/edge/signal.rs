//! [`Signal`]: a flag set once that wakes every task waiting for it.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::task::Waker;

/// A flag set once, that wakes whoever waits for it: draining's signal to
/// the connections, and the workers' signal to stop accepting. Each
/// connection's task waits for draining beside its connection and so polls
/// it on every wakeup (every request): a poll is one atomic load, and the
/// task's waker is registered once, not on each poll (a `watch` receiver's
/// would take its lock and re-register each time: about 1 % of a cache
/// hit's instructions).
#[derive(Default)]
pub(super) struct Signal {
    set: AtomicBool,
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, Waker>>,
}

impl Signal {
    /// Sets it and wakes every task waiting.
    pub(super) fn set(&self) {
        self.set.store(true, Ordering::Release);
        let waiting = std::mem::take(&mut *self.waiting.lock().unwrap_or_else(|p| p.into_inner()));
        for waker in waiting.into_values() {
            waker.wake();
        }
    }

    /// Resolves once it is set.
    pub(super) fn signal(&self) -> Signalled<'_> {
        Signalled {
            drain: self,
            registered: None,
        }
    }
}

pub(super) struct Signalled<'a> {
    drain: &'a Signal,
    /// Its entry among the waiting, and the waker it holds.
    registered: Option<(u64, Waker)>,
}

impl Future for Signalled<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if self.drain.set.load(Ordering::Acquire) {
            return std::task::Poll::Ready(());
        }
        let current = matches!(&self.registered, Some((_, w)) if w.will_wake(cx.waker()));
        if !current {
            let id = match &self.registered {
                Some((id, _)) => *id,
                None => self.drain.next.fetch_add(1, Ordering::Relaxed),
            };
            let waker = cx.waker().clone();
            self.drain
                .waiting
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id, waker.clone());
            self.registered = Some((id, waker));
            // Set between the load above and the registration: not missed.
            if self.drain.set.load(Ordering::Acquire) {
                return std::task::Poll::Ready(());
            }
        }
        std::task::Poll::Pending
    }
}

impl Drop for Signalled<'_> {
    fn drop(&mut self) {
        if let Some((id, _)) = self.registered.take() {
            self.drain
                .waiting
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn every_connection_waiting_for_draining_wakes_once_it_is_set() {
        let drain = Arc::new(Signal::default());
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let drain = drain.clone();
                tokio::spawn(async move { drain.signal().await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(
            drain.waiting.lock().unwrap().len(),
            3,
            "each registered once"
        );
        assert!(waiters.iter().all(|w| !w.is_finished()));
        drain.set();
        for w in waiters {
            tokio::time::timeout(Duration::from_secs(1), w)
                .await
                .expect("woken")
                .unwrap();
        }
        // Once set, at once; and a dropped waiter leaves no entry.
        drain.signal().await;
        assert!(drain.waiting.lock().unwrap().is_empty());
    }
}
