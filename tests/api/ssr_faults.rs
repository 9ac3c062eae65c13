//! Renders that go wrong: the visitor gets the error page and the server
//! keeps serving. Faults are injected by a script that wraps the real
//! bundle's render function, and a worker panic (or a worker held until the
//! test lets it go) by the render hooks of the `test-hooks` feature, which only
//! `cargo test` compiles in: no switch in the shipped code turns a fault on. No test here reads a clock: what they
//! check is what happened, and in which order.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::api::helpers::{eventually, spawn_app_with, visible_text};

const FAULTS: &str = r#"
;(() => {
  const real = globalThis.__ssr_render;
  globalThis.__ssr_render = (url, boot) => {
    if (url.startsWith("/__hang")) { for (;;) {} }
    if (url.startsWith("/__oom")) { const hoard = []; for (;;) hoard.push(new Array(100000).fill(url)); }
    if (url.startsWith("/__throw")) {
      // A page that throws while rendering: data it cannot read.
      return real(url, JSON.stringify({ ...JSON.parse(boot), page: "Blog", data: { posts: 5, post: null, type: null } }));
    }
    return real(url, boot);
  };
})();
"#;

#[tokio::test]
async fn a_render_that_never_returns_is_cut_off_at_the_deadline() {
    let app = spawn_app_with(|c| {
        c.ssr.workers = 1; // the same worker must come back for the next request
        c.ssr.deadline = Duration::from_millis(500);
        c.ssr.hooks.inject_script(FAULTS);
    })
    .await;

    // The render loops for ever: an answer at all means something cut it off,
    // and the failure it is counted as says it was the deadline.
    let (status, html) = app.get_text("/__hang").await;
    assert_eq!(status, 500);
    assert!(visible_text(&html).contains("Unexpected Application Error!"));
    let metrics = app.get_text("/metrics").await.1;
    assert!(
        metrics.contains(r#"ssr_render_failures_total{outcome="timeout"} 1"#),
        "cut off by the deadline: {metrics}"
    );
    assert!(
        metrics.contains(r#"ssr_isolate_rebuilds_total{reason="timeout"} 1"#),
        "its isolate rebuilt: {metrics}"
    );

    // The worker's isolate was rebuilt: ordinary pages render again.
    for _ in 0..3 {
        let (status, html) = app.get_text("/wallets").await;
        assert_eq!(status, 200);
        assert!(visible_text(&html).contains("Our Wallets"));
    }
}

#[tokio::test]
async fn a_render_error_shows_the_router_error_screen_with_500() {
    let app = spawn_app_with(|c| c.ssr.hooks.inject_script(FAULTS)).await;
    let (status, html) = app.get_text("/__throw").await;
    assert_eq!(status, 500);
    let text = visible_text(&html);
    assert!(
        text.contains("Unexpected Application Error!") && text.contains("500"),
        "{text}"
    );
    // The client hydrates the same error screen instead of re-running the page.
    let boot = crate::api::helpers::bootstrap_json(&html);
    assert_eq!(boot["error"]["status"], 500);

    let (status, _) = app.get_text("/").await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_render_that_exhausts_the_heap_is_terminated_and_its_isolate_rebuilt() {
    let app = spawn_app_with(|c| {
        c.ssr.workers = 1;
        c.ssr.deadline = Duration::from_secs(20); // the heap limit, not the deadline, stops it
        c.ssr.hooks.inject_script(FAULTS);
    })
    .await;
    let (status, html) = app.get_text("/__oom").await;
    assert_eq!(status, 500);
    assert!(visible_text(&html).contains("Unexpected Application Error!"));
    for _ in 0..3 {
        let (status, html) = app.get_text("/community").await;
        assert_eq!(status, 200);
        assert!(visible_text(&html).contains("Join Our Community"));
    }
}

#[tokio::test]
async fn a_worker_that_panics_gives_a_500_is_restarted_and_the_others_keep_serving() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let panics = Arc::new(AtomicUsize::new(0));
    let seen = panics.clone();
    let app = spawn_app_with(move |c| {
        c.ssr.workers = 2;
        c.ssr.deadline = Duration::from_secs(5);
        c.ssr.hooks.inject_script(FAULTS);
        c.ssr.hooks.before_render(move |url: &str| {
            if url.starts_with("/__panic") {
                seen.fetch_add(1, Ordering::SeqCst);
                panic!("injected worker panic");
            }
        });
    })
    .await;

    // One worker is busy in a render that hangs; the other panics twice over.
    let hang = tokio::spawn({
        let client = app.client.clone();
        let url = format!("{}/__hang", app.base);
        async move { client.get(url).send().await.unwrap().status().as_u16() }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    for (i, kind) in ["Events", "Feature"].iter().enumerate() {
        let (status, html) = app.get_text(&format!("/__panic-{i}")).await;
        assert_eq!(status, 500);
        assert!(visible_text(&html).contains("Unexpected Application Error!"));
        // Meanwhile pages that need a render (not in the cache yet) get one.
        let (status, html) = app.get_text(&format!("/blog?type={kind}")).await;
        assert_eq!(status, 200, "served while a worker was down");
        assert_eq!(
            crate::api::helpers::bootstrap_json(&html)["data"]["type"],
            *kind
        );
        assert!(visible_text(&html).contains("Latest Posts") || visible_text(&html).contains(kind));
    }
    assert_eq!(panics.load(Ordering::SeqCst), 2);
    assert_eq!(
        hang.await.unwrap(),
        500,
        "the hanging render was cut off at its deadline"
    );
    // Both workers are back.
    for path in [
        "/blog?type=Partnership",
        "/blog?type=Updates",
        "/blog?type=Announcements",
    ] {
        assert_eq!(app.get_text(path).await.0, 200);
    }
    let metrics = app.get_text("/metrics").await.1;
    assert!(
        metrics.contains(r#"ssr_render_failures_total{outcome="panic"} 2"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"ssr_isolate_rebuilds_total{reason="panic"} 2"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"ssr_render_failures_total{outcome="timeout"} 1"#),
        "{metrics}"
    );
}

/// A gate render workers wait at (in the pool's fault hook) until the test
/// opens it; it opens when dropped, so a failing test frees its worker.
#[derive(Clone, Default)]
struct Gate(Arc<(Mutex<GateState>, Condvar)>);

#[derive(Default)]
struct GateState {
    open: bool,
    /// Renders that reached the gate.
    arrived: usize,
}

impl Gate {
    /// Called by a worker: waits until the gate is open.
    fn pass(&self) {
        let (state, changed) = &*self.0;
        let mut state = state.lock().unwrap();
        state.arrived += 1;
        changed.notify_all();
        while !state.open {
            state = changed.wait(state).unwrap();
        }
    }

    fn arrived(&self) -> usize {
        self.0 .0.lock().unwrap().arrived
    }

    fn open(&self) {
        let (state, changed) = &*self.0;
        state.lock().unwrap().open = true;
        changed.notify_all();
    }
}

struct OpenOnDrop(Gate);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

#[tokio::test]
async fn a_full_render_queue_sheds_load_with_503_and_retry_after_at_once() {
    // The one worker is held at a gate until the test opens it, so the queue
    // stays full for as long as the test needs: no deadline races the requests.
    let gate = Gate::default();
    let _opens = OpenOnDrop(gate.clone());
    let hook = gate.clone();
    let app = spawn_app_with(move |c| {
        c.ssr.workers = 1;
        c.ssr.queue = 2;
        c.ssr.hooks.before_render(move |url: &str| {
            if url.starts_with("/__held") {
                hook.pass();
            }
        });
    })
    .await;
    let site = app.state.site();
    let pool = &site.front.pool;
    let request = |path: String| {
        let client = app.client.clone();
        let url = format!("{}{path}", app.base);
        tokio::spawn(async move { client.get(url).send().await.unwrap().status().as_u16() })
    };
    // One render held in the worker, then two waiting in the queue.
    let mut busy = vec![request("/__held-0".into())];
    assert!(
        eventually(30, || async { gate.arrived() == 1 }).await,
        "the worker took the first render"
    );
    busy.extend([request("/__held-1".into()), request("/__held-2".into())]);
    assert!(
        eventually(30, || async { pool.queue_depth() == 2 }).await,
        "two renders queued"
    );

    for i in 0..5 {
        // A page the start did not make (a post's page under a type).
        let res = app
            .get(&format!("/blog/nfc-integration?type=Events&shed={i}"))
            .await;
        assert_eq!(res.status(), 503);
        assert_eq!(res.headers()["retry-after"], "1");
        assert!(visible_text(&res.text().await.unwrap()).contains("503 Service Unavailable"));
        // Answered while the queue was still full and nothing in it had moved:
        // the request did not wait for room.
        assert_eq!(
            (gate.arrived(), pool.queue_depth()),
            (1, 2),
            "shed {i}: the pool changed before the answer"
        );
        assert!(
            busy.iter().all(|task| !task.is_finished()),
            "shed {i}: a held render finished before the answer"
        );
    }
    // Cached pages need no render: still served.
    assert_eq!(app.get_text("/").await.0, 200);
    let metrics = app.get_text("/metrics").await.1;
    assert!(
        metrics.contains(r#"ssr_render_failures_total{outcome="overloaded"} 5"#),
        "{metrics}"
    );

    // Let the worker go: the held and queued renders are served (unknown
    // paths: the 404 page), and new renders find room again.
    gate.open();
    for task in busy {
        assert_eq!(task.await.unwrap(), 404);
    }
    assert_eq!(
        app.get_text("/blog/nfc-integration?type=Events").await.0,
        200,
        "serving again once the queue drained"
    );
}
