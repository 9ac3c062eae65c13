use base64::Engine;

use crate::api::helpers::{bootstrap_json, element, links, route_table, spawn_app, visible_text};

/// Every route of the spec's table with the heading its screen must show.
const ROUTES: &[(&str, &str, &str)] = &[
    ("/", "Home", "The wallet for your community currency"),
    ("/wallets", "Wallets", "Our Wallets"),
    ("/services", "Services", "Our Services"),
    ("/about", "About", "About"),
    ("/community", "Community", "Join Our Community"),
    ("/blog", "Blog", "Blog"),
    ("/blog/brussels-pay-launch", "Blog", "Brussels Pay Is Live"),
    ("/nfc-wallet", "NfcWallet", "NFC Wallet"),
    ("/mobile-app", "MobileApp", "Mobile App"),
    ("/discord-wallet", "DiscordWallet", "Discord Wallet"),
    ("/pricing", "Pricing", "Pricing"),
    ("/contact", "Contact", "Request an Intro"),
    ("/ctzn", "Ctzn", "CTZN Token"),
    ("/privacy", "Privacy", "Privacy Policy"),
    ("/terms", "Terms", "Terms of Service"),
    ("/success?session_id=cs_test_1", "Success", "Payment"),
    ("/cancel", "Cancel", "Payment Cancelled"),
];

const NAV: &[(&str, &str)] = &[
    ("/wallets", "Our Wallets"),
    ("/pricing", "Pricing"),
    ("/about", "About"),
    ("/community", "Community"),
    ("/blog", "Blog"),
    ("/ctzn", "CTZN Token"),
];

fn h1(html: &str) -> String {
    let start = html.find("<h1").expect("page has an h1");
    let open_end = start + html[start..].find('>').unwrap() + 1;
    let close = open_end + html[open_end..].find("</h1>").unwrap();
    visible_text(&format!("<body>{}", &html[open_end..close]))
}

/// The list above is kept by hand (each route's heading is the spec's), so
/// a route added to content/routes.json fails here until it has its line.
#[test]
fn the_route_list_above_is_every_route_of_the_table() {
    for route in route_table() {
        let path = route.path("brussels-pay-launch");
        assert!(
            ROUTES
                .iter()
                .any(|(p, page, _)| p.split('?').next() == Some(path.as_str())
                    && *page == route.page),
            "{path} ({}) is in content/routes.json but not in tests/api/pages.rs's ROUTES",
            route.page
        );
    }
    assert_eq!(ROUTES.len(), route_table().len());
}

#[tokio::test]
async fn every_route_renders_on_the_server_with_header_and_footer() {
    let app = spawn_app().await;
    for (path, page, heading) in ROUTES {
        let (status, html) = app.get_text(path).await;
        assert_eq!(status, 200, "{path}");
        assert!(
            html.starts_with("<!DOCTYPE html><html lang=\"en\">"),
            "{path}: a full document"
        );
        assert!(
            h1(&html).contains(heading),
            "{path}: heading {heading:?}, got {:?}",
            h1(&html)
        );
        assert_eq!(
            bootstrap_json(&html)["page"],
            *page,
            "{path}: loader JSON names the page"
        );

        // Header: logo to /, every menu entry (desktop), Get Started, the mobile toggle.
        let header = links(element(&html, "header"));
        assert!(
            html.contains(r#"aria-label="Citizen Wallet home" href="/""#),
            "{path}: logo links home"
        );
        for (href, label) in NAV {
            assert!(
                header.contains(&(href.to_string(), label.to_string())),
                "{path}: nav {label}"
            );
        }
        assert!(
            header.contains(&("/pricing".into(), "Get Started".into())),
            "{path}: Get Started"
        );
        assert!(
            html.contains(r#"aria-controls="mobile-menu" aria-expanded="false""#),
            "{path}: mobile toggle"
        );

        // Footer: anchors, placeholders, legal pages, copyright.
        let footer_html = element(&html, "footer");
        let footer = links(footer_html);
        let text = visible_text(footer_html);
        for anchor in ["#features", "#about"] {
            assert!(
                footer.iter().any(|(h, _)| h == anchor),
                "{path}: footer anchor {anchor}"
            );
        }
        for label in [
            "Pricing",
            "Documentation",
            "API Reference",
            "Case Studies",
            "Blog",
            "Careers",
            "Press Kit",
            "Contact",
        ] {
            assert!(
                footer.contains(&("#".into(), label.into())),
                "{path}: footer placeholder {label}"
            );
        }
        assert!(
            footer.iter().any(|(h, _)| h == "/privacy")
                && footer.iter().any(|(h, _)| h == "/terms"),
            "{path}: legal links"
        );
        assert!(text.contains("© 2024"), "{path}: copyright 2024");
    }
}

#[tokio::test]
async fn unknown_paths_get_the_404_screen_with_status_404() {
    let app = spawn_app().await;
    for path in [
        "/does-not-exist",
        "/blog/a/b",
        "/WALLETS",
        "/%2e%2e/etc/passwd",
    ] {
        let (status, html) = app.get_text(path).await;
        assert_eq!(status, 404, "{path}");
        let text = visible_text(&html);
        assert!(
            text.contains("404") && text.contains("Oops! Page not found"),
            "{path}: {text}"
        );
        assert!(
            html.contains(r#"href="/" data-discover="true">Return to Home</a>"#),
            "{path}"
        );
        assert_eq!(bootstrap_json(&html)["page"], "NotFound");
    }
}

#[tokio::test]
async fn loader_json_cannot_be_broken_out_of() {
    let app = spawn_app().await;
    let evil = "</script><script>document.title='pwned'</script><!--";
    let url = format!("/success?session_id={}", percent(evil));
    let (status, html) = app.get_text(&url).await;
    assert_eq!(status, 200);
    assert!(
        !html.contains("<script>document.title"),
        "injected markup must not appear raw"
    );
    let data = bootstrap_json(&html);
    assert_eq!(
        data["data"]["sessionId"], evil,
        "the value survives, escaped"
    );
    // Exactly the scripts the document carries: JSON-LD, the entry, the data.
    assert_eq!(html.matches("<script").count(), 3);
}

#[tokio::test]
async fn route_data_endpoint_serves_the_same_loader_json() {
    let app = spawn_app().await;
    let (_, html) = app.get_text("/terms").await;
    let embedded = bootstrap_json(&html);
    let res = app.get("/api/route-data?url=%2Fterms").await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<serde_json::Value>().await.unwrap(), embedded);

    let res = app
        .get("/api/route-data?url=%2Fblog%2Fnfc-integration%3Ftype%3DFeature")
        .await;
    let json: serde_json::Value = res.json().await.unwrap();
    assert_eq!(json["page"], "Blog");
    assert_eq!(json["data"]["post"]["id"], "nfc-integration");
    assert_eq!(json["data"]["type"], "Feature");

    let res = app.get("/api/route-data?url=%2Fnope").await;
    assert_eq!(res.status(), 404);
    assert_eq!(
        res.json::<serde_json::Value>().await.unwrap()["page"],
        "NotFound"
    );

    let res = app.get("/api/route-data?url=nope").await;
    assert_eq!(res.status(), 400);
}

#[tokio::test]
async fn trailing_slashes_redirect_to_the_canonical_path() {
    let app = spawn_app().await;
    let res = app.get("/about/?x=1").await;
    assert_eq!(res.status(), 308);
    assert_eq!(res.headers()["location"], "/about?x=1");
}

#[tokio::test]
async fn a_page_has_one_url_and_other_spellings_redirect_to_it() {
    let app = spawn_app().await;
    // Percent-encoded letters, digits and `-._~` are the same URL: one form,
    // which the client router (it does not decode paths) hydrates too.
    for (spelling, plain) in [
        ("/blog/nfc%2Dintegration", "/blog/nfc-integration"),
        ("/ab%6Fut/?x=1", "/about?x=1"),
        ("/%70ricing", "/pricing"),
    ] {
        let res = app.raw_get(spelling).await;
        assert_eq!(res.status, 308, "{spelling}");
        assert_eq!(res.header("location"), Some(plain), "{spelling}");
        let again = app.raw_get(plain).await;
        assert_eq!(again.status, 200, "{plain}");
        let html = again.text();
        let canonical = html
            .split(r#"<link rel="canonical" href=""#)
            .nth(1)
            .unwrap();
        let canonical = canonical.split('"').next().unwrap();
        let path = plain.split('?').next().unwrap();
        assert!(
            canonical.ends_with(path),
            "{plain}: the canonical link is {canonical}"
        );
    }
    // A reserved character stays encoded: `%2F` is not a `/`.
    assert_eq!(app.raw_get("/blog%2Fnfc-integration").await.status, 404);
    // `//host/` is no spelling of a path here: never a redirect to `//host`.
    let res = app.raw_get("//evil.example/").await;
    assert_eq!(res.status, 404);
    assert_eq!(res.header("location"), None);
}

#[tokio::test]
async fn hashed_assets_are_immutable_and_precompressed() {
    let app = spawn_app().await;
    let (_, html) = app.get_text("/").await;
    let attr = |name: &str| attr_of(&html, name);
    // One script: the boot module, with the page's modules (entry first).
    assert_eq!(html.matches("<script type=\"module\"").count(), 1);
    let (boot, modules, css) = (attr("src"), attr("data-modules"), attr("data-stylesheet"));
    let entry = modules.split(' ').next().unwrap();
    assert!(
        boot.starts_with("/assets/boot-")
            && entry.starts_with("/assets/entry-")
            && css.starts_with("/assets/app-"),
        "{boot} {modules}"
    );

    for url in [boot.as_str(), entry] {
        for (accept, encoding) in [
            ("br, gzip", Some("br")),
            ("gzip", Some("gzip")),
            ("identity", None),
        ] {
            let res = app
                .client
                .get(format!("{}{url}", app.base))
                .header("accept-encoding", accept)
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), 200);
            assert_eq!(
                res.headers()["cache-control"],
                "public, max-age=31536000, immutable"
            );
            assert_eq!(
                res.headers()
                    .get("content-encoding")
                    .map(|v| v.to_str().unwrap()),
                encoding,
                "{accept}"
            );
            assert!(res.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/javascript"));
        }
    }
    let res = app.get(&css).await;
    assert_eq!(res.status(), 200);
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/css"));

    // The page's own chunk is listed; another page's is not. Nothing is
    // preloaded by the HTML itself: the first paint has the network alone.
    assert!(
        modules.split(' ').any(|m| m.starts_with("/assets/Home-")),
        "{modules}"
    );
    assert!(!html.contains("modulepreload"));
    assert!(!html.contains("/assets/Pricing-"));

    assert_eq!(app.get("/assets/nope.js").await.status(), 404);
    assert_eq!(app.get("/assets/../Cargo.toml").await.status(), 404);
}

#[tokio::test]
async fn the_rules_a_page_may_leave_out_are_one_file_and_each_page_names_those_it_kept() {
    // server/css/rest.rs: every rule a page may leave out of its inline
    // CSS, with its place; a page names the ones it kept, one bit each.
    let app = spawn_app().await;
    let (_, home) = app.get_text("/").await;
    let (_, pricing) = app.get_text("/pricing").await;
    let url = attr_of(&home, "data-css");
    assert_eq!(
        url,
        attr_of(&pricing, "data-css"),
        "one file for every page"
    );
    assert!(
        url.starts_with("/assets/app-") && url.contains(".rules-") && url.ends_with(".json"),
        "{url}"
    );
    let res = app
        .client
        .get(format!("{}{url}", app.base))
        .header("accept-encoding", "br")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/json");
    assert_eq!(
        res.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert_eq!(res.headers()["content-encoding"], "br");
    let mut body = Vec::new();
    brotli::BrotliDecompress(&mut &res.bytes().await.unwrap()[..], &mut body).unwrap();
    let file: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let rules = file["rules"].as_array().unwrap();
    // The bits a page names: the rules its inline CSS holds, and no other.
    let whole = app
        .get(&attr_of(&home, "data-stylesheet"))
        .await
        .text()
        .await
        .unwrap();
    for html in [&home, &pricing] {
        let kept = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(attr_of(html, "data-kept"))
            .unwrap();
        assert_eq!(kept.len(), rules.len().div_ceil(8));
        let inline = element(html, "style");
        let mut left_out = 0;
        for (n, rule) in rules.iter().enumerate() {
            let text = rule[2].as_str().unwrap();
            assert!(whole.contains(text), "{text}");
            let keeps = kept[n / 8] & (1 << (n % 8)) != 0;
            assert_eq!(inline.contains(text), keeps, "{text}");
            left_out += usize::from(!keeps);
        }
        assert!(left_out > 50, "{left_out} rules left out");
    }
    assert_ne!(attr_of(&home, "data-kept"), attr_of(&pricing, "data-kept"));
    // Another name is no file, and its 404 is not kept by a cache: the
    // file may be on another server, or in the next build.
    let missing = app.get(&url.replace(".rules-", ".rules-x")).await;
    assert_eq!(missing.status(), 404);
    assert_eq!(missing.headers()["cache-control"], "no-store");
}

fn attr_of(html: &str, name: &str) -> String {
    html.split(&format!(r#" {name}=""#))
        .nth(1)
        .and_then(|a| a.split('"').next())
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn pages_are_served_precompressed_with_an_etag_and_304() {
    let app = spawn_app().await;
    let get = |enc: &'static str| {
        app.client
            .get(format!("{}/blog", app.base))
            .header("accept-encoding", enc)
            .send()
    };
    let plain = get("identity").await.unwrap();
    assert_eq!(plain.headers().get("content-encoding"), None);
    let etag = plain.headers()["etag"].to_str().unwrap().to_owned();
    assert!(
        etag.starts_with('"') && etag.ends_with('"'),
        "a strong validator: {etag}"
    );
    let html = plain.text().await.unwrap();
    let mut tags = vec![etag.clone()];
    for (enc, expected) in [("gzip", "gzip"), ("gzip, br", "br")] {
        let res = get(enc).await.unwrap();
        assert_eq!(res.headers()["content-encoding"], expected);
        let tag = res.headers()["etag"].to_str().unwrap().to_owned();
        assert!(
            !tag.starts_with("W/") && !tags.contains(&tag),
            "{enc}: its own strong ETag ({tag}), as its bytes differ"
        );
        tags.push(tag.clone());
        assert_eq!(res.headers()["vary"], "accept-encoding");
        // reqwest here has no decompression: compare sizes, and decode gzip.
        let body = res.bytes().await.unwrap();
        assert!(body.len() * 3 < html.len(), "{enc}: compressed");
        if expected == "gzip" {
            let mut out = String::new();
            std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&body[..]), &mut out)
                .unwrap();
            assert_eq!(out, html);
        }
        let res = app
            .client
            .get(format!("{}/blog", app.base))
            .header("accept-encoding", enc)
            .header("if-none-match", &tag)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 304, "{enc}: its copy is current");
        assert_eq!(res.headers()["etag"].to_str().unwrap(), tag);
    }
    let res = app
        .client
        .get(format!("{}/blog", app.base))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 304);
    assert!(res.bytes().await.unwrap().is_empty());
    let res = app
        .client
        .get(format!("{}/blog", app.base))
        .header("if-none-match", "\"other\"")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    // The brotli copy's tag does not stand for the plain body.
    let res = app
        .client
        .get(format!("{}/blog", app.base))
        .header("if-none-match", &tags[2])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

fn percent(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
