//! A first visit paints after one round trip: every page's HTML, with the
//! CSS its markup uses inline, fits in a new TCP connection's first flight
//! (ten segments, 14,600 bytes) brotli-compressed, as the cache keeps it.
//! Chromium checks that nothing it loads blocks the paint and that the
//! inline CSS styles the page fully (tests/e2e/first-paint.test.mjs).

use crate::api::helpers::{route_table, spawn_app};

/// Ten segments of 1,460 bytes: what a server may send on a new TCP
/// connection before the first acknowledgement (RFC 6928).
const FIRST_FLIGHT: usize = 14_600;

/// Every post of content/blog/, by id.
fn posts() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/content/blog");
    let mut ids: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().ok()?;
            name.strip_suffix(".md").map(str::to_owned)
        })
        .collect();
    ids.sort();
    assert!(!ids.is_empty());
    ids
}

#[tokio::test]
async fn every_page_with_its_inline_css_fits_in_the_first_flight() {
    let app = spawn_app().await;
    let mut paths = Vec::new();
    for route in route_table() {
        if route.pattern.contains(":postId") {
            paths.extend(posts().iter().map(|id| route.path(id)));
        } else {
            paths.push(route.path(""));
        }
    }
    paths.push("/no-such-page".into());
    let mut sizes = Vec::new();
    for path in &paths {
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: test\r\nAccept-Encoding: br\r\nConnection: close\r\n\r\n"
        );
        let res = app.raw(request.as_bytes()).await;
        assert!(matches!(res.status, 200 | 404), "{path}: {}", res.status);
        assert_eq!(res.header("content-encoding"), Some("br"), "{path}");
        // The same bytes again: kept compressed, not compressed per request.
        let again = app.raw(request.as_bytes()).await;
        assert_eq!(again.body, res.body, "{path}");
        // Its inline CSS is in those bytes.
        let (_, html) = app.get_text(path).await;
        let css = html
            .split_once("<style>")
            .and_then(|(_, rest)| rest.split_once("</style>"))
            .map_or(0, |(css, _)| css.len());
        assert!(css > 1_000, "{path}: {css} bytes of inline CSS");
        sizes.push((res.body.len(), path.clone(), css));
    }
    sizes.sort();
    let table: Vec<String> = sizes
        .iter()
        .rev()
        .map(|(br, path, css)| format!("{br:>6} B brotli  {path} ({css} B of inline CSS)"))
        .collect();
    let over: Vec<&String> = sizes
        .iter()
        .rev()
        .zip(&table)
        .filter(|((br, _, _), _)| *br > FIRST_FLIGHT)
        .map(|(_, line)| line)
        .collect();
    assert!(
        over.is_empty(),
        "pages over the first flight ({FIRST_FLIGHT} B): {over:#?}\nall pages:\n{}",
        table.join("\n")
    );
}
