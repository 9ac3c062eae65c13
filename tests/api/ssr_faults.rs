//! Renders that go wrong: the visitor gets the error page and the server
//! keeps serving. Faults are injected by a script that wraps the real
//! bundle's render function, and a worker panic by the pool's test-only
//! fault hook; no switch in the shipped code turns a fault on.

use std::time::{Duration, Instant};

use crate::helpers::{spawn_app_with, visible_text};

const FAULTS: &str = r#"
;(() => {
  const real = globalThis.__ssr_render;
  globalThis.__ssr_render = (url, boot) => {
    if (url.startsWith("/__hang")) { for (;;) {} }
    if (url.startsWith("/__oom")) { const hoard = []; for (;;) hoard.push(new Array(100000).fill(url)); }
    if (url.startsWith("/__throw")) {
      return real(url, JSON.stringify({ ...JSON.parse(boot), page: "NoSuchPage" }));
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
        c.ssr.inject_script(FAULTS);
    })
    .await;

    let started = Instant::now();
    let (status, html) = app.get_text("/__hang").await;
    let took = started.elapsed();
    assert_eq!(status, 500);
    assert!(visible_text(&html).contains("Unexpected Application Error!"));
    assert!(took < Duration::from_secs(10), "answered after {took:?}, not hung");

    // The worker's isolate was rebuilt: ordinary pages render again.
    for _ in 0..3 {
        let (status, html) = app.get_text("/wallets").await;
        assert_eq!(status, 200);
        assert!(visible_text(&html).contains("Our Wallets"));
    }
}

#[tokio::test]
async fn a_render_error_shows_the_router_error_screen_with_500() {
    let app = spawn_app_with(|c| c.ssr.inject_script(FAULTS)).await;
    let (status, html) = app.get_text("/__throw").await;
    assert_eq!(status, 500);
    let text = visible_text(&html);
    assert!(text.contains("Unexpected Application Error!") && text.contains("500"), "{text}");
    // The client hydrates the same error screen instead of re-running the page.
    let boot = crate::helpers::bootstrap_json(&html);
    assert_eq!(boot["error"]["status"], 500);

    let (status, _) = app.get_text("/").await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_render_that_exhausts_the_heap_is_terminated_and_its_isolate_rebuilt() {
    let app = spawn_app_with(|c| {
        c.ssr.workers = 1;
        c.ssr.deadline = Duration::from_secs(20); // the heap limit, not the deadline, stops it
        c.ssr.inject_script(FAULTS);
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
        c.ssr.inject_script(FAULTS);
        c.ssr.fault = Some(citizen_site::config::FaultHook(Arc::new(move |url: &str| {
            if url.starts_with("/__panic") {
                seen.fetch_add(1, Ordering::SeqCst);
                panic!("injected worker panic");
            }
        })));
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
        assert_eq!(crate::helpers::bootstrap_json(&html)["data"]["type"], *kind);
        assert!(visible_text(&html).contains("Latest Posts") || visible_text(&html).contains(kind));
    }
    assert_eq!(panics.load(Ordering::SeqCst), 2);
    assert_eq!(hang.await.unwrap(), 500, "the hanging render was cut off at its deadline");
    // Both workers are back.
    for path in ["/blog?type=Partnership", "/blog?type=Updates", "/blog?type=Announcements"] {
        assert_eq!(app.get_text(path).await.0, 200);
    }
    let metrics = app.get_text("/metrics").await.1;
    assert!(metrics.contains(r#"ssr_render_failures_total{outcome="panic"} 2"#), "{metrics}");
    assert!(metrics.contains(r#"ssr_render_failures_total{outcome="timeout"} 1"#), "{metrics}");
}

#[tokio::test]
async fn a_full_render_queue_sheds_load_with_503_and_retry_after_at_once() {
    let app = spawn_app_with(|c| {
        c.ssr.workers = 1;
        c.ssr.queue = 2;
        c.ssr.deadline = Duration::from_secs(3);
        c.ssr.inject_script(FAULTS);
    })
    .await;
    // One render hangs in the worker, two wait in the queue.
    let mut busy = Vec::new();
    for i in 0..3 {
        let client = app.client.clone();
        let url = format!("{}/__hang-{i}", app.base);
        busy.push(tokio::spawn(async move { client.get(url).send().await.unwrap().status().as_u16() }));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for i in 0..5 {
        let started = Instant::now();
        let res = app.get(&format!("/blog?type=Events&shed={i}")).await;
        let took = started.elapsed();
        assert_eq!(res.status(), 503);
        assert_eq!(res.headers()["retry-after"], "1");
        assert!(took < Duration::from_millis(500), "shed at once, not after {took:?}");
        assert!(visible_text(&res.text().await.unwrap()).contains("503 Service Unavailable"));
    }
    // Cached pages need no render: still served.
    assert_eq!(app.get_text("/").await.0, 200);
    for task in busy {
        assert_eq!(task.await.unwrap(), 500);
    }
    assert_eq!(app.get_text("/blog?type=Events").await.0, 200, "serving again once the queue drained");
}
