//! The threads that serve connections: one per core, each running a tokio
//! runtime of its own (current-thread), as nginx runs one worker process
//! per core.
//!
//! Each worker accepts from the listening socket itself (a copy of it is
//! registered with the worker's own epoll) and serves the connections it
//! accepted to their end, on its own thread: a request is read, answered
//! and written by the thread that was woken for it, with no hand-over to
//! another thread. On tokio's shared (multi-thread) runtime one thread at a
//! time waits on the one epoll and wakes the others to steal what it found:
//! with 1,000 open connections a request's p99 was twice nginx's, and with
//! a new connection per request its p50 1.5 times (docs/performance.md,
//! "Where the time went").
//!
//! A connection's handlers, loaders and database and Stripe calls run on
//! its worker's runtime too. Renders run on the V8 threads (a connection's
//! task awaits them from its worker), and background work on the main
//! runtime.

use std::sync::OnceLock;
use std::thread;
use std::time::Duration;

use tokio::runtime::Handle;

/// The workers, started on first use, running for the rest of the process.
static WORKERS: OnceLock<Vec<Handle>> = OnceLock::new();

/// One handle per worker: `count` of them, or as many as the machine has
/// cores when it is 0 (the first call decides; later ones get the same).
pub fn handles(count: usize) -> &'static [Handle] {
    WORKERS.get_or_init(|| {
        let count = match count {
            0 => thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        (0..count).map(start).collect()
    })
}

fn start(index: usize) -> Handle {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    thread::Builder::new()
        .name(format!("edge-{index}"))
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a connection worker's runtime starts");
            let _ = tx.send(runtime.handle().clone());
            // Runs whatever is spawned on it, for as long as the process,
            // with a timer due within the second: a connection's own
            // timers (its idle bound, 60 s away) are then never the
            // earliest, which would make tokio wake its own epoll with a
            // write to an eventfd, one system call per new connection.
            runtime.block_on(async {
                loop {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            });
        })
        .expect("a connection worker's thread starts");
    rx.recv().expect("the worker sends its handle")
}
