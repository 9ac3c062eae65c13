//! What `serve` keeps out that `dev` adds: draft posts, and the dev
//! server's reload script and endpoints.

use citizen_site::assets::Manifest;
use citizen_site::content::blog::Drafts;
use citizen_site::content::{Content, Source};

use crate::helpers::{bootstrap_json, spawn_app};

const DRAFT: &str = "launch-checklist";
const DRAFT_TITLE: &str = "Launching Your Community Currency: A Checklist";

#[tokio::test]
async fn a_draft_post_is_in_no_list_page_sitemap_or_feed() {
    // The binary does hold a draft, checked like any post...
    let all = Content::load(Source::Embedded, &Manifest::embedded(), Drafts::Show).expect("the bundled content parses");
    let draft = all.blog.get(DRAFT).expect("the bundled draft post");
    assert!(draft.summary.draft);

    // ...and serves none of it.
    let app = spawn_app().await;
    let (status, html) = app.get_text("/blog").await;
    assert_eq!(status, 200);
    assert!(!html.contains(DRAFT_TITLE) && !html.contains(DRAFT));
    let posts = bootstrap_json(&html)["data"]["posts"].as_array().unwrap().len();
    assert_eq!(posts, all.blog.list().len() - 1, "every post but the draft");

    // Its address shows the list, as for any post that does not exist.
    let (status, html) = app.get_text(&format!("/blog/{DRAFT}")).await;
    assert_eq!(status, 200);
    assert!(bootstrap_json(&html)["data"]["post"].is_null());
    assert!(!html.contains(DRAFT_TITLE));
    let (_, data) = app.get_text(&format!("/api/route-data?url=/blog/{DRAFT}")).await;
    assert!(!data.contains(DRAFT_TITLE));

    for feed in ["/sitemap.xml", "/feed.xml"] {
        let (status, xml) = app.get_text(feed).await;
        assert_eq!(status, 200);
        assert!(xml.contains("/blog/nfc-integration"), "{feed} lists the published posts");
        assert!(!xml.contains(DRAFT) && !xml.contains(DRAFT_TITLE), "{feed} lists the draft");
    }
}

#[tokio::test]
async fn serve_has_no_dev_endpoint_or_script() {
    let app = spawn_app().await;
    for path in ["/__dev/events", "/__dev/client.js", "/__dev/problems.css"] {
        let res = app.get(path).await;
        assert_eq!(res.status(), 404, "{path}");
        assert!(!res.headers()["content-type"].to_str().unwrap().contains("event-stream"));
    }
    let paths = app.state.site().content.routes.concrete_paths(|_| vec!["nfc-integration".into()]);
    for path in paths.iter().map(String::as_str).chain(["/no-such-page"]) {
        let (_, html) = app.get_text(path).await;
        assert!(!html.contains("/__dev/"), "{path} carries the dev script");
    }
    assert!(app.state.dev.is_none());
}
