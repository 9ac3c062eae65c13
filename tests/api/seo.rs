//! What crawlers and link previews read, on the server-rendered HTML: the
//! head's share-card tags and the JSON-LD, checked against the rules the
//! platforms publish (Open Graph, X cards, Google's rich results). The
//! platforms' own validator runs over every page too: tests/seo.rs.

use std::collections::HashSet;

use serde_json::Value;

use crate::api::helpers::{
    decode_entities, json_ld, json_ld_of, links, route_table, spawn_app_with, title, TestApp,
};

const SITE: &str = "https://citizen.example";
/// The site's X account (content/site/accounts.json).
const X_HANDLE: &str = "@citizenwallet";

async fn app() -> TestApp {
    spawn_app_with(|c| c.site_url = SITE.into()).await
}

/// A meta tag's content, entities decoded.
fn meta(html: &str, attr: &str, key: &str) -> Option<String> {
    let needle = format!(r#"<meta {attr}="{key}" content=""#);
    let start = html.find(&needle)? + needle.len();
    Some(decode_entities(
        &html[start..start + html[start..].find('"')?],
    ))
}

/// The routes the sitemap lists, from content/routes.json (`:postId` routes
/// apart: the posts are added where needed).
fn indexed() -> Vec<String> {
    route_table()
        .into_iter()
        .filter(|r| r.listed && !r.pattern.contains(':'))
        .map(|r| r.pattern)
        .collect()
}

/// The published posts, as the sitemap lists them.
async fn post_paths(app: &TestApp) -> Vec<String> {
    let (_, xml) = app.get_text("/sitemap.xml").await;
    let doc = roxmltree::Document::parse(&xml).expect("sitemap is XML");
    let posts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("loc"))
        .filter_map(|n| {
            n.text()?
                .strip_prefix(SITE)?
                .strip_prefix("/blog/")
                .map(|id| format!("/blog/{id}"))
        })
        .collect();
    assert_eq!(posts.len(), 6, "the six published posts");
    posts
}

/// (width, height) of a PNG, from its header.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && &png[12..16] == b"IHDR",
        "a PNG"
    );
    let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

/// Fetches an absolute image URL of the site: it must be served with an
/// image content type; returns the content type and the body.
async fn fetch_image(app: &TestApp, url: &str, what: &str) -> (String, Vec<u8>) {
    let path = url
        .strip_prefix(SITE)
        .unwrap_or_else(|| panic!("{what}: {url} is not on {SITE}"));
    let res = app.get(path).await;
    assert_eq!(res.status(), 200, "{what}: {url}");
    let kind = res.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(
        kind.starts_with("image/"),
        "{what}: {url} is served as {kind}"
    );
    (kind, res.bytes().await.unwrap().to_vec())
}

#[tokio::test]
async fn every_route_has_its_own_title_description_canonical_and_complete_share_card() {
    let app = app().await;
    let mut titles = HashSet::new();
    let posts = post_paths(&app).await;
    for path in indexed()
        .iter()
        .map(String::as_str)
        .chain(posts.iter().map(String::as_str))
    {
        let (status, html) = app.get_text(path).await;
        assert_eq!(status, 200);
        let title = decode_entities(title(&html));
        assert!(
            titles.insert(title.clone()),
            "{path}: title {title:?} is not unique"
        );
        let description = meta(&html, "name", "description").expect("description");
        assert!(description.len() > 40, "{path}: a real description");
        assert!(
            html.contains(&format!(r#"<link rel="canonical" href="{SITE}{path}">"#)),
            "{path}: canonical"
        );
        assert_eq!(
            meta(&html, "property", "og:url").as_deref(),
            Some(format!("{SITE}{path}").as_str())
        );
        assert_eq!(
            meta(&html, "property", "og:locale").as_deref(),
            Some("en_US"),
            "{path}"
        );
        assert_eq!(
            meta(&html, "property", "og:site_name").as_deref(),
            Some("Citizen Wallet"),
            "{path}"
        );
        // The X card repeats the Open Graph title and description: X reads its own tags.
        for (name, value) in [("title", &title), ("description", &description)] {
            assert_eq!(
                meta(&html, "property", &format!("og:{name}")).as_ref(),
                Some(value),
                "{path}: og:{name}"
            );
            assert_eq!(
                meta(&html, "name", &format!("twitter:{name}")).as_ref(),
                Some(value),
                "{path}: twitter:{name}"
            );
        }
        assert_eq!(
            meta(&html, "name", "twitter:card").as_deref(),
            Some("summary_large_image")
        );
        assert_eq!(
            meta(&html, "name", "twitter:site").as_deref(),
            Some(X_HANDLE),
            "{path}: the site's X account"
        );

        // The card: its own, served as the PNG of the size the tags state,
        // with the words drawn on it as its alt text.
        let image = meta(&html, "property", "og:image").unwrap();
        assert_eq!(
            meta(&html, "name", "twitter:image").as_ref(),
            Some(&image),
            "{path}"
        );
        let card = match path.strip_prefix("/blog/") {
            Some(id) => format!("{SITE}/assets/images/og/post-{id}-"),
            None => format!("{SITE}/assets/images/og/"),
        };
        assert!(
            image.starts_with(&card) && image.ends_with(".png"),
            "{path}: {image}"
        );
        let (kind, png) = fetch_image(&app, &image, path).await;
        assert_eq!(
            meta(&html, "property", "og:image:type").as_deref(),
            Some(kind.as_str()),
            "{path}"
        );
        assert!(png.len() > 5_000, "{path}: a real image");
        let (w, h) = png_size(&png);
        assert_eq!(
            (w, h),
            (1200, 630),
            "{path}: the large card size platforms ask for"
        );
        assert_eq!(
            meta(&html, "property", "og:image:width"),
            Some(w.to_string()),
            "{path}"
        );
        assert_eq!(
            meta(&html, "property", "og:image:height"),
            Some(h.to_string()),
            "{path}"
        );
        let alt = meta(&html, "property", "og:image:alt").expect("og:image:alt");
        assert_eq!(
            meta(&html, "name", "twitter:image:alt").as_ref(),
            Some(&alt),
            "{path}"
        );
        let drawn = title
            .trim_end_matches(" — Citizen Wallet Blog")
            .trim_end_matches(" — Citizen Wallet");
        assert!(
            alt.ends_with(drawn) && alt.starts_with("Citizen Wallet") && alt.len() <= 420,
            "{path}: the card's alt {alt:?} says what it shows"
        );

        assert_eq!(
            meta(&html, "name", "theme-color").as_deref(),
            Some("#1f5ad6")
        );
        assert!(
            html.contains(r#"<html lang="en">"#)
                && html.contains(r#"<link rel="manifest" href="/site.webmanifest">"#)
        );
        assert!(
            html.contains(r#"<link rel="apple-touch-icon" href="/assets/images/icon-180-"#),
            "{path}: favicon set"
        );
        assert!(html.contains(r#"type="application/rss+xml""#));
        assert!(
            meta(&html, "name", "robots").is_none(),
            "{path} is indexable"
        );
    }
    let (_, html) = app.get_text("/no-such-page").await;
    assert_eq!(meta(&html, "name", "robots").as_deref(), Some("noindex"));
}

#[tokio::test]
async fn a_post_shares_its_own_card_dates_and_author() {
    let app = app().await;
    let (_, html) = app.get_text("/blog/nfc-integration").await;
    assert_eq!(
        meta(&html, "property", "og:type").as_deref(),
        Some("article")
    );
    assert_eq!(
        meta(&html, "property", "article:published_time").as_deref(),
        Some("2024-03-15")
    );
    assert_eq!(
        meta(&html, "property", "article:modified_time").as_deref(),
        Some("2024-03-15"),
        "never revised"
    );
    assert_eq!(
        meta(&html, "property", "og:image:alt").as_deref(),
        Some("Citizen Wallet Blog · Feature: Tap to Pay: NFC Cards Come to Citizen Wallet")
    );
    assert_eq!(
        meta(&html, "name", "twitter:creator"),
        None,
        "the author has no X account on record"
    );
    let posting = &json_ld_of(&html, "BlogPosting")[0];
    assert!(decode_entities(title(&html)).starts_with(posting["headline"].as_str().unwrap()));
    assert_eq!(
        posting["author"],
        serde_json::json!({ "@type": "Person", "name": "Lena Hoffmann" }),
        "no page of hers exists"
    );
    assert_eq!(
        posting["mainEntityOfPage"]["@id"],
        format!("{SITE}/blog/nfc-integration")
    );

    // A post by the team: the organisation wrote it, and its page is /about.
    let (_, html) = app.get_text("/blog/brussels-pay-launch").await;
    let posting = &json_ld_of(&html, "BlogPosting")[0];
    assert_eq!(
        posting["author"],
        serde_json::json!({ "@type": "Organization", "name": "Citizen Wallet Team", "url": format!("{SITE}/about") })
    );
    assert_eq!(
        meta(&html, "name", "twitter:creator").as_deref(),
        Some(X_HANDLE)
    );
    let crumbs = &json_ld_of(&html, "BreadcrumbList")[0];
    let names: Vec<&str> = crumbs["itemListElement"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["Home", "Blog", posting["headline"].as_str().unwrap()]
    );
}

/// Every string of a JSON-LD node that is an address, with its key.
fn addresses<'a>(node: &'a Value, key: &'a str, out: &mut Vec<(&'a str, &'a str)>) {
    match node {
        Value::String(s)
            if s.starts_with("http") || s.starts_with('/') || s.starts_with("www.") =>
        {
            out.push((key, s))
        }
        Value::Array(items) => items.iter().for_each(|i| addresses(i, key, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| addresses(v, k, out)),
        _ => {}
    }
}

/// Checks an ImageObject: absolute, served as an image, and of the size it states.
async fn assert_image(app: &TestApp, image: &Value, min_width: u32, what: &str) -> (u32, u32) {
    assert_eq!(image["@type"], "ImageObject", "{what}: {image}");
    let url = image["url"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: no url in {image}"));
    let (kind, body) = fetch_image(app, url, what).await;
    assert_eq!(kind, "image/png", "{what}: a raster image ({url})");
    let size = png_size(&body);
    assert_eq!(
        (image["width"].as_u64(), image["height"].as_u64()),
        (Some(size.0.into()), Some(size.1.into())),
        "{what}: the stated size of {url}"
    );
    assert!(
        size.0 >= min_width,
        "{what}: {url} is {} px wide, under {min_width}",
        size.0
    );
    size
}

/// A BlogPosting has what Google's article rich result reads: headline (at
/// most 110 characters), both dates, an author with a name, and raster
/// images at least 1200 px wide.
async fn assert_posting(app: &TestApp, posting: &Value, what: &str) {
    assert_eq!(posting["@type"], "BlogPosting", "{what}");
    let headline = posting["headline"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: headline"));
    assert!(
        !headline.is_empty() && headline.chars().count() <= 110,
        "{what}: headline {headline:?}"
    );
    let published = posting["datePublished"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: datePublished"));
    let modified = posting["dateModified"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: dateModified"));
    assert!(
        published.len() == 10 && modified >= published,
        "{what}: {published} .. {modified}"
    );
    assert!(
        posting["author"]["name"]
            .as_str()
            .is_some_and(|n| !n.is_empty()),
        "{what}: author"
    );
    assert!(
        posting["url"]
            .as_str()
            .is_some_and(|u| u.starts_with(&format!("{SITE}/blog/"))),
        "{what}: url"
    );
    let images = posting["image"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: image list"));
    assert!(!images.is_empty(), "{what}: an image");
    for image in images {
        assert_image(app, image, 1200, what).await;
    }
}

#[tokio::test]
async fn every_page_json_ld_parses_is_complete_absolute_and_names_served_images() {
    let app = app().await;
    let (_, community) = app.get_text("/community").await;
    // The Organization's other profiles are the community channels the site links.
    let channels: HashSet<String> = links(&community)
        .into_iter()
        .map(|(href, _)| href)
        .filter(|h| {
            ["discord.gg", "x.com", "github.com"]
                .iter()
                .any(|host| h.starts_with(&format!("https://{host}/")))
        })
        .collect();
    assert_eq!(channels.len(), 3, "{channels:?}");
    let posts = post_paths(&app).await;
    for path in indexed()
        .iter()
        .map(String::as_str)
        .chain(posts.iter().map(String::as_str))
    {
        let (_, html) = app.get_text(path).await;
        let blocks = json_ld(&html);
        for block in &blocks {
            assert_eq!(
                block["@context"], "https://schema.org",
                "{path}: each block has its context"
            );
            assert!(
                block["@type"].is_string(),
                "{path}: each block is a typed node: {block}"
            );
            let mut found = Vec::new();
            addresses(block, "", &mut found);
            for (key, url) in found {
                let elsewhere =
                    key == "sameAs" || key == "@context" || url.starts_with("https://schema.org/");
                assert!(
                    url.starts_with(&format!("{SITE}/")) || elsewhere,
                    "{path}: {key} {url:?} is not absolute on {SITE}"
                );
            }
        }

        let org = json_ld_of(&html, "Organization");
        assert_eq!(org.len(), 1, "{path}: one Organization");
        let org = &org[0];
        assert_eq!(
            (org["name"].as_str(), org["url"].as_str()),
            (Some("Citizen Wallet"), Some(format!("{SITE}/").as_str()))
        );
        let (w, h) = assert_image(&app, &org["logo"], 112, &format!("{path}: logo")).await;
        assert_eq!(w, h, "{path}: the logo is square");
        let same_as: HashSet<String> = org["sameAs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            same_as, channels,
            "{path}: sameAs names the community channels"
        );

        let postings = json_ld_of(&html, "BlogPosting");
        if let Some(id) = path.strip_prefix("/blog/") {
            assert_eq!(postings.len(), 1, "{path}: its BlogPosting");
            let posting = &postings[0];
            assert_posting(&app, posting, path).await;
            assert_eq!(posting["url"], format!("{SITE}{path}"));
            assert!(
                posting["image"][0]["url"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("/og/post-{id}-")),
                "{path}: the post's own card"
            );
            let publisher = &posting["publisher"];
            assert_eq!(
                (publisher["@type"].as_str(), publisher["name"].as_str()),
                (Some("Organization"), Some("Citizen Wallet"))
            );
            assert_eq!(
                publisher["logo"], org["logo"],
                "{path}: the publisher's logo is the site's"
            );
            assert_eq!(
                json_ld_of(&html, "BreadcrumbList").len(),
                1,
                "{path}: breadcrumb"
            );
        } else {
            assert!(postings.is_empty(), "{path}: only a post is a BlogPosting");
        }

        let blog = json_ld_of(&html, "Blog");
        if path == "/blog" {
            let items = blog[0]["blogPost"]
                .as_array()
                .expect("the Blog lists its posts");
            let urls: Vec<String> = items
                .iter()
                .map(|p| {
                    p["url"]
                        .as_str()
                        .unwrap()
                        .strip_prefix(SITE)
                        .unwrap()
                        .to_owned()
                })
                .collect();
            assert_eq!(
                urls,
                posts.iter().map(String::to_owned).collect::<Vec<_>>(),
                "every post, newest first"
            );
            for (i, item) in items.iter().enumerate() {
                assert_posting(&app, item, &format!("/blog item {i}")).await;
            }
        } else {
            assert!(blog.is_empty(), "{path}: only the list is a Blog");
        }
        // Without Stripe (this app) no price is known: no Product anywhere.
        assert!(
            json_ld_of(&html, "Product").is_empty(),
            "{path}: a Product needs a known price"
        );
    }
}

#[tokio::test]
async fn the_sitemap_lists_every_public_route_and_post_and_nothing_else() {
    let app = app().await;
    let (status, xml) = app.get_text("/sitemap.xml").await;
    assert_eq!(status, 200);
    let doc = roxmltree::Document::parse(&xml).expect("sitemap is XML");
    let locs: HashSet<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("loc"))
        .map(|n| n.text().unwrap().to_owned())
        .collect();
    let posts = [
        "brussels-pay-launch",
        "nfc-integration",
        "ethglobal-london",
        "brussels-workshop",
        "quadratic-accelerator",
        "regen-village-brussels",
    ];
    let expected: HashSet<String> = indexed()
        .iter()
        .map(|p| format!("{SITE}{p}"))
        .chain(posts.iter().map(|p| format!("{SITE}/blog/{p}")))
        .collect();
    assert_eq!(locs, expected);
    assert_eq!(
        indexed().len(),
        14,
        "every route but the blog post pattern, /success and /cancel"
    );
    assert!(
        !locs
            .iter()
            .any(|l| l.ends_with("/success") || l.ends_with("/cancel")),
        "no payment page is listed"
    );
    let post = doc
        .descendants()
        .find(|n| {
            n.has_tag_name("url")
                && n.descendants()
                    .any(|c| c.text() == Some(&format!("{SITE}/blog/nfc-integration")))
        })
        .unwrap();
    assert_eq!(
        post.descendants()
            .find(|n| n.has_tag_name("lastmod"))
            .unwrap()
            .text(),
        Some("2024-03-15")
    );

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
    let items: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("item"))
        .collect();
    assert_eq!(items.len(), 6);
    let link = |n: &roxmltree::Node| {
        n.children()
            .find(|c| c.has_tag_name("link"))
            .unwrap()
            .text()
            .unwrap()
            .to_owned()
    };
    assert_eq!(link(&items[0]), format!("{SITE}/blog/brussels-pay-launch"));
    assert!(items.iter().all(|i| i
        .children()
        .any(|c| c.has_tag_name("pubDate") && c.text().is_some_and(|t| t.ends_with("+0000")))));
}
