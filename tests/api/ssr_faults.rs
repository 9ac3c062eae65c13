//! Renders that go wrong: the visitor gets the error page and the server
//! keeps serving. Faults are injected by wrapping the real bundle's render
//! function, never by a switch in the shipped code.

use std::time::{Duration, Instant};

use citizen_site::assets::SSR_BUNDLE;

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
        c.ssr.use_bundle(format!("{SSR_BUNDLE}\n{FAULTS}"));
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
    let app = spawn_app_with(|c| c.ssr.use_bundle(format!("{SSR_BUNDLE}\n{FAULTS}"))).await;
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
        c.ssr.use_bundle(format!("{SSR_BUNDLE}\n{FAULTS}"));
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
