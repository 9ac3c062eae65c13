//! What crawlers and link previews read, on the server-rendered HTML.

use std::collections::HashSet;

use serde_json::Value;

use crate::helpers::{json_ld, spawn_app_with, title, TestApp};

const SITE: &str = "https://citizen.example";

async fn app() -> TestApp {
    spawn_app_with(|c| c.site_url = SITE.into()).await
}

fn meta<'a>(html: &'a str, attr: &str, key: &str) -> Option<&'a str> {
    let needle = format!(r#"<meta {attr}="{key}" content=""#);
    let start = html.find(&needle)? + needle.len();
    Some(&html[start..start + html[start..].find('"')?])
}

const INDEXED: &[&str] = &[
    "/",
    "/wallets",
    "/services",
    "/about",
    "/community",
    "/blog",
    "/nfc-wallet",
    "/mobile-app",
    "/discord-wallet",
    "/pricing",
    "/contact",
    "/ctzn",
    "/privacy",
    "/terms",
];

#[tokio::test]
async fn every_route_has_its_own_title_description_canonical_and_preview_tags() {
    let app = app().await;
    let mut titles = HashSet::new();
    for path in INDEXED {
        let (status, html) = app.get_text(path).await;
        assert_eq!(status, 200);
        let title = title(&html).to_owned();
        assert!(titles.insert(title.clone()), "{path}: title {title:?} is not unique");
        let description = meta(&html, "name", "description").expect("description");
        assert!(description.len() > 40, "{path}: a real description");
        assert!(html.contains(&format!(r#"<link rel="canonical" href="{SITE}{path}">"#)), "{path}: canonical");
        assert_eq!(meta(&html, "property", "og:url"), Some(format!("{SITE}{path}").as_str()));
        assert_eq!(meta(&html, "property", "og:title"), Some(title.as_str()));
        assert_eq!(meta(&html, "property", "og:description"), Some(description));
        let image = meta(&html, "property", "og:image").unwrap();
        assert!(image.starts_with(&format!("{SITE}/assets/images/og/")) && image.ends_with(".png"), "{path}: {image}");
        let res = app.get(image.strip_prefix(SITE).unwrap()).await;
        assert_eq!(res.headers()["content-type"], "image/png", "{path}: the card is served");
        let png = res.bytes().await.unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 5_000, "{path}: a real image");
        assert_eq!(meta(&html, "name", "twitter:card"), Some("summary_large_image"));
        assert_eq!(meta(&html, "name", "theme-color"), Some("#1f5ad6"));
        assert!(html.contains(r#"<html lang="en">"#) && html.contains(r#"<link rel="manifest" href="/site.webmanifest">"#));
        assert!(html.contains(r#"<link rel="apple-touch-icon" href="/assets/images/icon-180-"#), "{path}: favicon set");
        assert!(html.contains(r#"type="application/rss+xml""#));
        assert!(meta(&html, "name", "robots").is_none(), "{path} is indexable");
        let ld = json_ld(&html);
        assert_eq!(ld["@context"], "https://schema.org");
        assert_eq!(ld["@graph"][0]["@type"], "Organization");
    }
    let (_, html) = app.get_text("/no-such-page").await;
    assert_eq!(meta(&html, "name", "robots"), Some("noindex"));
}

#[tokio::test]
async fn a_post_shares_its_own_title_and_excerpt_as_a_blog_posting() {
    let app = app().await;
    let (_, html) = app.get_text("/blog/nfc-integration").await;
    let ld = json_ld(&html);
    let posting = ld["@graph"].as_array().unwrap().iter().find(|n| n["@type"] == "BlogPosting").expect("BlogPosting");
    let title = posting["headline"].as_str().unwrap();
    assert!(html.contains(&format!("<title>{}", title.replace('&', "&amp;").replace('\'', "&#39;"))));
    assert_eq!(meta(&html, "property", "og:type"), Some("article"));
    assert!(meta(&html, "property", "og:image").unwrap().contains("/og/post-nfc-integration-"), "the post's own card");
    assert_eq!(posting["datePublished"], "2024-03-15");
    assert_eq!(posting["mainEntityOfPage"], format!("{SITE}/blog/nfc-integration"));
    let crumbs = ld["@graph"].as_array().unwrap().iter().find(|n| n["@type"] == "BreadcrumbList").expect("breadcrumb");
    assert_eq!(crumbs["itemListElement"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn the_sitemap_lists_every_public_route_and_post_and_nothing_else() {
    let app = app().await;
    let (status, xml) = app.get_text("/sitemap.xml").await;
    assert_eq!(status, 200);
    let doc = roxmltree::Document::parse(&xml).expect("sitemap is XML");
    let locs: HashSet<String> = doc.descendants().filter(|n| n.has_tag_name("loc")).map(|n| n.text().unwrap().to_owned()).collect();
    let posts =
        ["brussels-pay-launch", "nfc-integration", "ethglobal-london", "brussels-workshop", "quadratic-accelerator", "regen-village-brussels"];
    let expected: HashSet<String> = INDEXED.iter().map(|p| format!("{SITE}{p}")).chain(posts.iter().map(|p| format!("{SITE}/blog/{p}"))).collect();
    assert_eq!(locs, expected);
    let post = doc
        .descendants()
        .find(|n| n.has_tag_name("url") && n.descendants().any(|c| c.text() == Some(&format!("{SITE}/blog/nfc-integration"))))
        .unwrap();
    assert_eq!(post.descendants().find(|n| n.has_tag_name("lastmod")).unwrap().text(), Some("2024-03-15"));

    let (_, robots) = app.get_text("/robots.txt").await;
    assert!(robots.contains(&format!("Sitemap: {SITE}/sitemap.xml")));
    let manifest: Value = app.get("/site.webmanifest").await.json().await.unwrap();
    assert_eq!(manifest["name"], "Citizen Wallet");
    for icon in manifest["icons"].as_array().unwrap() {
        let res = app.get(icon["src"].as_str().unwrap()).await;
        assert_eq!(res.status(), 200, "{icon}");
    }
    assert_eq!(manifest["icons"][2]["sizes"], "512x512");
}

#[tokio::test]
async fn the_feed_parses_and_lists_the_six_posts_newest_first() {
    let app = app().await;
    let (status, xml) = app.get_text("/feed.xml").await;
    assert_eq!(status, 200);
    let doc = roxmltree::Document::parse(&xml).expect("feed is XML");
    let items: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("item")).collect();
    assert_eq!(items.len(), 6);
    let link = |n: &roxmltree::Node| n.children().find(|c| c.has_tag_name("link")).unwrap().text().unwrap().to_owned();
    assert_eq!(link(&items[0]), format!("{SITE}/blog/brussels-pay-launch"));
    assert!(items.iter().all(|i| i.children().any(|c| c.has_tag_name("pubDate") && c.text().is_some_and(|t| t.ends_with("+0000")))));
}
