//! The isolate pool.
//!
//! A `JsRuntime` is not `Send`, so each lives on its own worker thread (with a
//! current-thread tokio runtime entered, which deno_core's V8 platform needs)
//! and all of them take jobs from one bounded queue. A full queue answers at
//! once with [`RenderError::Overloaded`] instead of piling up latency.
//!
//! Every render runs under a deadline kept by a watchdog thread per worker:
//! when it passes, the watchdog terminates the isolate's execution, the visitor
//! gets an error (the 500 page) and the worker rebuilds its isolate before
//! taking the next job. A worker that panics is restarted the same way.
//!
//! Every isolate in the process starts from the same startup snapshot: V8
//! shares one read-only heap per process, and an isolate made from another
//! snapshot (or from none) next to them aborts the process. Tests that need
//! other JavaScript add it on top (the `test-hooks` feature's
//! [`crate::config::RenderHooks`]).

use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use deno_core::v8::IsolateHandle;
use deno_core::{serde_v8, v8, JsRuntime, RuntimeOptions};
use tokio::sync::oneshot;

use crate::config::SsrConfig;
use crate::metrics::IsolateRebuilds;

/// What `__ssr_render(url, bootstrapJson)` returns (part of the contract
/// with the front end).
pub use crate::contract::RenderOutput;

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("the render queue is full")]
    Overloaded,
    #[error("the render ran past its {0:?} deadline and was terminated")]
    Timeout(Duration),
    #[error("the render failed in JavaScript: {0}")]
    Script(String),
    #[error("the render worker stopped before answering (it panicked)")]
    WorkerLost,
    #[error("the render reached the isolate's heap limit and was terminated")]
    HeapLimit,
}

impl RenderError {
    /// Its name on `/metrics` (`ssr_render_failures_total`'s outcome, and
    /// `ssr_isolate_rebuilds_total`'s reason).
    pub fn name(&self) -> &'static str {
        match self {
            RenderError::Overloaded => "overloaded",
            RenderError::Timeout(_) => "timeout",
            RenderError::HeapLimit => "heap_limit",
            RenderError::Script(_) => "script",
            RenderError::WorkerLost => "panic",
        }
    }
}

struct Job {
    url: String,
    bootstrap: String,
    reply: oneshot::Sender<Result<RenderOutput, RenderError>>,
}

/// Handle to the pool; cheap to clone.
#[derive(Clone)]
pub struct SsrPool {
    queue: flume::Sender<Job>,
    status: Arc<tokio::sync::watch::Sender<PoolStatus>>,
    workers: usize,
}

/// How far the workers got creating their first isolate, watched by
/// [`SsrPool::wait_ready`].
#[derive(Default, Clone)]
struct PoolStatus {
    ready: usize,
    /// Why a worker could not create its first isolate (a broken bundle).
    failure: Option<String>,
}

impl SsrPool {
    /// Starts `cfg.workers` worker threads. Isolates are created on the
    /// workers; [`SsrPool::is_ready`] turns true once all have loaded the bundle.
    pub fn start(cfg: &SsrConfig) -> SsrPool {
        let (tx, rx) = flume::bounded::<Job>(cfg.queue);
        let status = Arc::new(tokio::sync::watch::Sender::new(PoolStatus::default()));
        for id in 0..cfg.workers {
            let rx = rx.clone();
            let status = status.clone();
            let bundle = Source {
                script: cfg.bundle.clone(),
                snapshot: cfg.snapshot,
                #[cfg(feature = "test-hooks")]
                hooks: cfg.hooks.clone(),
            };
            let (deadline, rebuilds) = (cfg.deadline, cfg.rebuilds.clone());
            std::thread::Builder::new()
                .name(format!("ssr-{id}"))
                .spawn(move || supervise(id, bundle, deadline, rx, status, rebuilds))
                .expect("spawning an SSR worker thread");
        }
        SsrPool {
            queue: tx,
            status,
            workers: cfg.workers,
        }
    }

    /// Renders waiting for a worker.
    pub fn queue_depth(&self) -> usize {
        self.queue.len()
    }

    pub fn is_ready(&self) -> bool {
        self.status.borrow().ready >= self.workers
    }

    /// Waits until every isolate has evaluated the bundle, or fails with the
    /// reason the bundle could not be evaluated.
    pub async fn wait_ready(&self) -> Result<(), String> {
        let mut changes = self.status.subscribe();
        let workers = self.workers;
        let settled = changes
            .wait_for(|s| s.failure.is_some() || s.ready >= workers)
            .await;
        // The pool holds the sender: it cannot be dropped while waited on.
        let status = settled.map(|s| s.clone()).unwrap_or_default();
        status.failure.map_or(Ok(()), Err)
    }

    /// Renders `url` with the route's loader data (`bootstrap`, JSON).
    pub async fn render(&self, url: &str, bootstrap: &str) -> Result<RenderOutput, RenderError> {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            url: url.to_owned(),
            bootstrap: bootstrap.to_owned(),
            reply,
        };
        self.queue
            .try_send(job)
            .map_err(|_| RenderError::Overloaded)?;
        answer.await.unwrap_or(Err(RenderError::WorkerLost))
    }
}

/// What an isolate starts from.
#[derive(Clone)]
struct Source {
    script: Arc<str>,
    snapshot: Option<&'static [u8]>,
    /// What a fault test injects (see [`crate::config::RenderHooks`]).
    #[cfg(feature = "test-hooks")]
    hooks: crate::config::RenderHooks,
}

/// Runs a worker, restarting it if it panics, until the pool is dropped. The
/// job in hand when it panicked is answered with [`RenderError::WorkerLost`]
/// (its reply channel is dropped while unwinding); the other workers keep
/// serving meanwhile.
fn supervise(
    id: usize,
    bundle: Source,
    deadline: Duration,
    rx: flume::Receiver<Job>,
    status: Arc<tokio::sync::watch::Sender<PoolStatus>>,
    rebuilds: IsolateRebuilds,
) {
    let mut first = true;
    loop {
        let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
            worker(id, &bundle, deadline, &rx, &status, &mut first, &rebuilds)
        }));
        match run {
            Ok(Ok(())) => return, // queue closed: the server is shutting down
            Ok(Err(why)) => {
                // The bundle itself is broken: no restart can fix that.
                tracing::error!(worker = id, error = %why, "SSR bundle failed to evaluate");
                status.send_modify(|s| s.failure = Some(why));
                return;
            }
            Err(_) => {
                tracing::error!(worker = id, "SSR worker panicked; restarting it");
                rebuilds.record(RenderError::WorkerLost.name());
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

fn worker(
    id: usize,
    bundle: &Source,
    deadline: Duration,
    rx: &flume::Receiver<Job>,
    status: &tokio::sync::watch::Sender<PoolStatus>,
    first: &mut bool,
    rebuilds: &IsolateRebuilds,
) -> Result<(), String> {
    let tokio_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("building a worker's tokio runtime");
    let _ctx = tokio_rt.enter();
    let watchdog = Watchdog::spawn(id);
    let mut isolate = Isolate::new(bundle)?;
    if std::mem::take(first) {
        status.send_modify(|s| s.ready += 1);
        tracing::debug!(worker = id, "SSR isolate ready");
    }

    while let Ok(job) = rx.recv() {
        if job.reply.is_closed() {
            continue; // the visitor is gone; don't spend a render on them
        }
        #[cfg(feature = "test-hooks")]
        if let Some(hook) = &bundle.hooks.before_render {
            hook(&job.url);
        }
        watchdog.arm(isolate.handle(), Instant::now() + deadline);
        let result = isolate.render(&job.url, &job.bootstrap);
        let fired = watchdog.disarm();
        let result = match result {
            Err(_) if fired => Err(RenderError::Timeout(deadline)),
            other => other,
        };
        if fired || matches!(result, Err(RenderError::Script(_) | RenderError::HeapLimit)) {
            // A terminated or broken isolate is not trusted with another page.
            tracing::warn!(worker = id, url = %job.url, "rebuilding SSR isolate");
            // Ok only when it finished as the watchdog fired: terminated
            // all the same.
            rebuilds.record(result.as_ref().err().map_or("timeout", RenderError::name));
            let _ = job.reply.send(result);
            // Isolates on a thread must be dropped before the next is made.
            drop(isolate);
            isolate =
                Isolate::new(bundle).expect("the bundle evaluated before, so it evaluates again");
            continue;
        }
        let _ = job.reply.send(result);
    }
    Ok(())
}

/// Heap ceiling of one isolate. A page render needs a few MB; the ceiling
/// keeps a runaway render from taking the machine (it is terminated near the
/// limit and its isolate rebuilt) and keeps RSS predictable.
const HEAP_LIMIT: usize = 64 * 1024 * 1024;

/// V8 flags, set once before the first isolate: a small young generation
/// (scavenges are cheap for short renders) keeps each isolate's RSS low.
fn set_v8_flags() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = deno_core::v8_set_flags(vec![
            "citizen-site".into(),
            "--max-semi-space-size=2".into(),
        ]);
    });
}

/// One V8 isolate with the SSR bundle evaluated in it.
struct Isolate {
    runtime: JsRuntime,
    /// `globalThis.__ssr_render`, called directly: no script compiled per page.
    render_fn: v8::Global<v8::Function>,
    /// Set by the near-heap-limit callback, which also terminates the render.
    out_of_memory: Arc<std::sync::atomic::AtomicBool>,
}

impl Isolate {
    fn new(source: &Source) -> Result<Isolate, String> {
        set_v8_flags();
        let mut runtime = JsRuntime::new(RuntimeOptions {
            create_params: Some(v8::CreateParams::default().heap_limits(0, HEAP_LIMIT)),
            startup_snapshot: source.snapshot,
            ..Default::default()
        });
        if source.snapshot.is_none() {
            runtime
                .execute_script("ssr.js", source.script.to_string())
                .map_err(|e| e.to_string())?;
        }
        #[cfg(feature = "test-hooks")]
        if let Some(script) = &source.hooks.script {
            runtime
                .execute_script("injected.js", script.to_string())
                .map_err(|e| e.to_string())?;
        }
        let value = runtime
            .execute_script("<render-fn>", "globalThis.__ssr_render")
            .map_err(|e| e.to_string())?;
        let render_fn = {
            deno_core::scope!(scope, &mut runtime);
            let local = v8::Local::new(scope, value);
            let f = v8::Local::<v8::Function>::try_from(local)
                .map_err(|_| "the bundle defines no __ssr_render function".to_string())?;
            v8::Global::new(scope, f)
        };
        let out_of_memory = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (flag, handle) = (
            out_of_memory.clone(),
            runtime.v8_isolate().thread_safe_handle(),
        );
        runtime.add_near_heap_limit_callback(move |current, _initial| {
            flag.store(true, Ordering::Release);
            handle.terminate_execution();
            // Room to unwind; the isolate is dropped right after.
            current * 2
        });
        Ok(Isolate {
            runtime,
            render_fn,
            out_of_memory,
        })
    }

    fn handle(&mut self) -> IsolateHandle {
        self.runtime.v8_isolate().thread_safe_handle()
    }

    fn render(&mut self, url: &str, bootstrap: &str) -> Result<RenderOutput, RenderError> {
        let out = {
            deno_core::scope!(scope, &mut self.runtime);
            let func = v8::Local::new(scope, &self.render_fn);
            let (Some(url), Some(boot)) = (
                v8::String::new(scope, url),
                v8::String::new(scope, bootstrap),
            ) else {
                return Err(RenderError::Script(
                    "input too large for a V8 string".into(),
                ));
            };
            let recv: v8::Local<v8::Value> = v8::undefined(scope).into();
            v8::tc_scope!(let tc, scope);
            match func.call(tc, recv, &[url.into(), boot.into()]) {
                Some(value) => serde_v8::from_v8::<RenderOutput>(tc, value)
                    .map_err(|e| RenderError::Script(e.to_string())),
                None => {
                    let message = match tc.exception() {
                        Some(e) if !tc.has_terminated() => e.to_rust_string_lossy(tc),
                        _ => "execution terminated".to_owned(),
                    };
                    Err(RenderError::Script(message))
                }
            }
        };
        if self.out_of_memory.load(Ordering::Acquire) {
            return Err(RenderError::HeapLimit);
        }
        self.runtime.v8_isolate().perform_microtask_checkpoint();
        out
    }
}

/// Terminates a render that outlives its deadline.
struct Watchdog {
    shared: Arc<(Mutex<WatchState>, Condvar)>,
}

#[derive(Default)]
struct WatchState {
    armed: Option<(Instant, IsolateHandle)>,
    fired: bool,
    stop: bool,
}

impl Watchdog {
    fn spawn(id: usize) -> Watchdog {
        let shared = Arc::new((Mutex::new(WatchState::default()), Condvar::new()));
        let theirs = shared.clone();
        std::thread::Builder::new()
            .name(format!("ssr-{id}-watchdog"))
            .spawn(move || {
                let (lock, cv) = &*theirs;
                let mut st = lock.lock().unwrap();
                loop {
                    if st.stop {
                        return;
                    }
                    match &st.armed {
                        None => st = cv.wait(st).unwrap(),
                        Some((due, handle)) => {
                            let now = Instant::now();
                            if now >= *due {
                                handle.terminate_execution();
                                st.fired = true;
                                st.armed = None;
                            } else {
                                let wait = *due - now;
                                st = cv.wait_timeout(st, wait).unwrap().0;
                            }
                        }
                    }
                }
            })
            .expect("spawning an SSR watchdog thread");
        Watchdog { shared }
    }

    fn arm(&self, handle: IsolateHandle, due: Instant) {
        let (lock, cv) = &*self.shared;
        let mut st = lock.lock().unwrap();
        st.armed = Some((due, handle));
        st.fired = false;
        cv.notify_one();
    }

    /// Disarms and tells whether the deadline fired during the render. Both
    /// sides hold the lock, so a `false` here means no termination was sent.
    fn disarm(&self) -> bool {
        let (lock, _) = &*self.shared;
        let mut st = lock.lock().unwrap();
        st.armed = None;
        std::mem::take(&mut st.fired)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let (lock, cv) = &*self.shared;
        lock.lock().unwrap().stop = true;
        cv.notify_one();
    }
}
