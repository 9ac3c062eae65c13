//! What `serve` keeps out that `dev` adds: draft posts, and the dev
//! server's reload script and endpoints.

use crate::api::helpers::{bootstrap_json, published_posts, route_table, spawn_app};

const DRAFT: &str = "launch-checklist";
const DRAFT_TITLE: &str = "Launching Your Community Currency: A Checklist";

#[tokio::test]
async fn a_draft_post_is_in_no_list_page_sitemap_or_feed() {
    // content/blog holds a draft (its front matter says so)...
    let published = published_posts();
    let files = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/content/blog"))
        .unwrap()
        .count();
    assert_eq!(
        (files, published.len()),
        (7, 6),
        "one draft among the posts"
    );
    assert!(!published.contains(&DRAFT.to_owned()));

    // ...and serve shows none of it.
    let app = spawn_app().await;
    let (status, html) = app.get_text("/blog").await;
    assert_eq!(status, 200);
    assert!(!html.contains(DRAFT_TITLE) && !html.contains(DRAFT));
    let mut listed: Vec<String> = bootstrap_json(&html)["data"]["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect();
    listed.sort();
    assert_eq!(listed, published, "every published post and not the draft");

    // Its address shows the list, as for any post that does not exist: 404.
    let (status, html) = app.get_text(&format!("/blog/{DRAFT}")).await;
    assert_eq!(status, 404);
    assert!(bootstrap_json(&html)["data"]["post"].is_null());
    assert!(!html.contains(DRAFT_TITLE));
    let (_, data) = app
        .get_text(&format!("/api/route-data?url=/blog/{DRAFT}"))
        .await;
    assert!(!data.contains(DRAFT_TITLE));

    for feed in ["/sitemap.xml", "/feed.xml"] {
        let (status, xml) = app.get_text(feed).await;
        assert_eq!(status, 200);
        assert!(
            xml.contains("/blog/nfc-integration"),
            "{feed} lists the published posts"
        );
        assert!(
            !xml.contains(DRAFT) && !xml.contains(DRAFT_TITLE),
            "{feed} lists the draft"
        );
    }
}

#[tokio::test]
async fn serve_has_no_dev_endpoint_or_script() {
    let app = spawn_app().await;
    for path in ["/__dev/events", "/__dev/client.js", "/__dev/problems.css"] {
        let res = app.get(path).await;
        assert_eq!(res.status(), 404, "{path}");
        assert!(!res.headers()["content-type"]
            .to_str()
            .unwrap()
            .contains("event-stream"));
    }
    let paths: Vec<String> = route_table()
        .iter()
        .map(|r| r.path("nfc-integration"))
        .collect();
    assert_eq!(paths.len(), 17);
    for path in paths.iter().map(String::as_str).chain(["/no-such-page"]) {
        let (_, html) = app.get_text(path).await;
        assert!(!html.contains("/__dev/"), "{path} carries the dev script");
    }
}
