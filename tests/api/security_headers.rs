//! Security headers on every response, and a policy that every page's own
//! frames, images and forms fit (the browser suite checks that no page
//! reports a violation).

use crate::api::helpers::{route_table, spawn_app, spawn_app_with, RawResponse, TestApp};

/// Every concrete route, the 404 page, the API, an asset, the SEO files and
/// the health endpoints.
async fn every_kind_of_response(app: &TestApp) -> Vec<String> {
    // The table as the file says, not as the server read it.
    let mut targets: Vec<String> = route_table()
        .iter()
        .map(|r| r.path("nfc-integration"))
        .collect();
    let home = app.get_text("/").await.1;
    let asset = home
        .split("src=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("the home page loads a script")
        .to_owned();
    targets.extend(
        [
            "/no-such-page",
            "/api/route-data?url=/",
            "/api/get-stripe-prices",
            "/sitemap.xml",
            "/robots.txt",
            "/feed.xml",
            "/site.webmanifest",
            "/healthz",
            "/readyz",
            "/metrics",
            "/assets/no-such-file.js",
        ]
        .map(String::from),
    );
    targets.push(asset);
    targets
}

/// The Content-Security-Policy, written out: nothing by default; scripts,
/// styles, fonts and data from this origin only (no inline script, no eval;
/// a page's one inline style by its hash alone: [`inline_style_source`]); images from here, data: URLs and any https host; frames from
/// the two embeds in content/site/embeds.json; forms that post here or to
/// Stripe Checkout; nobody may frame the site.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; font-src 'self'; \
                   connect-src 'self'; manifest-src 'self'; frame-src https://dexscreener.com https://www.youtube-nocookie.com; \
                   form-action 'self' https://checkout.stripe.com; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";
const PERMISSIONS_POLICY: &str =
    "camera=(), microphone=(), geolocation=(), payment=(), usb=(), browsing-topics=()";
/// Two years, as the HSTS preload list asks.
const HSTS: &str = "max-age=63072000";

/// The CSP source that allows a page's one `<style>`, computed here from
/// its text (SHA-256, base64), as a browser checks it; None without one.
pub fn inline_style_source(html: &str) -> Option<String> {
    use base64::Engine;
    use sha2::Digest;
    let (_, rest) = html.split_once("<style>")?;
    let (text, _) = rest
        .split_once("</style>")
        .expect("the style element is closed");
    Some(format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(text.as_bytes()))
    ))
}

fn assert_headers(target: &str, res: &RawResponse, https: bool) {
    let h = |name: &str| {
        res.header(name)
            .unwrap_or_else(|| panic!("{target}: no {name}"))
    };
    // A page allows its own inline style, and nothing else does.
    let csp = match inline_style_source(&String::from_utf8_lossy(&res.body)) {
        Some(source) => CSP.replace("style-src 'self';", &format!("style-src 'self' {source};")),
        None => CSP.to_owned(),
    };
    let csp = if https {
        format!("{csp}; upgrade-insecure-requests")
    } else {
        csp
    };
    assert_eq!(h("content-security-policy"), csp, "{target}");
    assert_eq!(h("x-content-type-options"), "nosniff", "{target}");
    assert_eq!(h("x-frame-options"), "DENY", "{target}");
    assert_eq!(
        h("referrer-policy"),
        "strict-origin-when-cross-origin",
        "{target}"
    );
    assert_eq!(h("permissions-policy"), PERMISSIONS_POLICY, "{target}");
    assert_eq!(h("cross-origin-opener-policy"), "same-origin", "{target}");
    let corp = if target.starts_with("/assets/") {
        "cross-origin"
    } else {
        "same-origin"
    };
    assert_eq!(h("cross-origin-resource-policy"), corp, "{target}");
    assert!(h("x-request-id").len() >= 32, "{target}");
    match res.header("strict-transport-security") {
        Some(v) if https => assert_eq!(v, HSTS, "{target}"),
        None if !https => {}
        other => panic!(
            "{target}: HSTS {other:?} on a site that is {}https",
            if https { "" } else { "not " }
        ),
    }
}

#[tokio::test]
async fn every_response_carries_the_security_headers() {
    let app = spawn_app().await;
    for target in every_kind_of_response(&app).await {
        let res = app.raw_get(&target).await;
        assert_headers(&target, &res, false);
    }
    // Errors made by the router and the body limits carry them too.
    let res = app
        .raw(b"PUT / HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        .await;
    assert_eq!(res.status, 405);
    assert_headers("PUT /", &res, false);
    let body = "x".repeat(70_000);
    let res = app
        .raw(format!("POST /api/save-to-notion HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len()).as_bytes())
        .await;
    assert_eq!(res.status, 413);
    assert_headers("POST /api/save-to-notion (413)", &res, false);
}

#[tokio::test]
async fn hsts_and_upgrade_insecure_requests_when_the_site_is_https() {
    let app = spawn_app_with(|c| c.site_url = "https://citizenwallet.example".into()).await;
    for target in [
        "/",
        "/pricing",
        "/no-such-page",
        "/api/route-data?url=/",
        "/robots.txt",
    ] {
        let res = app.raw_get(target).await;
        assert_headers(target, &res, true);
    }
}

/// The values of `attr` on every `<tag ...>` in `html`.
fn attribute_values(html: &str, tag: &str, attr: &str) -> Vec<String> {
    html.split(&format!("<{tag} "))
        .skip(1)
        .filter_map(|rest| {
            let open = rest.split('>').next()?;
            let value = open
                .split(&format!(" {attr}=\""))
                .nth(1)
                .or_else(|| open.strip_prefix(&format!("{attr}=\"")))?;
            Some(value.split('"').next()?.replace("&amp;", "&"))
        })
        .collect()
}

#[tokio::test]
async fn every_frame_image_and_form_on_every_page_is_allowed_by_the_policy() {
    let app = spawn_app().await;
    // frame-src of the policy above.
    let frames = [
        "https://dexscreener.com",
        "https://www.youtube-nocookie.com",
    ];
    let mut seen_frames = 0;
    for path in route_table().iter().map(|r| r.path("nfc-integration")) {
        let (status, html) = app.get_text(&path).await;
        assert_eq!(status, 200, "{path}");
        assert!(
            !html.contains(" style=\""),
            "{path}: an inline style attribute would be blocked (style-src 'self')"
        );
        // One <style>, in the head, which the page's policy names by hash.
        assert_eq!(html.matches("<style").count(), 1, "{path}");
        let head = html.split("</head>").next().unwrap();
        assert!(
            head.contains("<style>"),
            "{path}: the inline CSS is not in the head"
        );
        let res = app.raw_get(&path).await;
        let source = inline_style_source(&String::from_utf8_lossy(&res.body)).unwrap();
        assert!(
            res.header("content-security-policy")
                .unwrap()
                .contains(&format!("style-src 'self' {source};")),
            "{path}: its <style> would be blocked"
        );
        for src in attribute_values(&html, "iframe", "src") {
            seen_frames += 1;
            assert!(
                frames.iter().any(|o| src.starts_with(&format!("{o}/"))),
                "{path}: frame {src} is not in frame-src {frames:?}"
            );
        }
        for src in attribute_values(&html, "img", "src") {
            assert!(
                src.starts_with('/') || src.starts_with("https://") || src.starts_with("data:"),
                "{path}: image {src} is not allowed by img-src"
            );
        }
        for action in attribute_values(&html, "form", "action") {
            assert!(
                action.starts_with('/') && !action.starts_with("//"),
                "{path}: form posts to {action}, outside form-action 'self'"
            );
        }
        for src in attribute_values(&html, "script", "src") {
            assert!(
                src.starts_with("/assets/"),
                "{path}: script {src} is not from this origin"
            );
        }
        // The only inline scripts are data blocks, which the policy does not run.
        for block in html.split("<script").skip(1) {
            let open = block.split('>').next().unwrap();
            assert!(
                open.contains(" src=\"")
                    || open.contains("type=\"application/json\"")
                    || open.contains("type=\"application/ld+json\""),
                "{path}: inline script <script{open}> would be blocked"
            );
        }
    }
    assert_eq!(seen_frames, 2, "the video and the price chart");
}
