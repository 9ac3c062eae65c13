//! Hostile input: odd paths and queries, traversal under /assets/, bodies
//! too large or of the wrong type, broken JSON and form data, unknown
//! methods. Every one is answered with a 4xx that says what is wrong, never
//! a 500, and nothing outside the bundle is ever served.

use proptest::prelude::*;
use proptest::test_runner::{Config as PropConfig, TestRunner};
use serde_json::{json, Value};

use crate::api::helpers::{bootstrap_json, spawn_app, spawn_app_with, TestApp};

/// Text that would only appear if a file outside the bundle were served.
fn leaks(body: &str) -> bool {
    body.contains("[package]") || body.contains("root:x:0:0") || body.contains("[dependencies]")
}

fn assert_sane(target: &str, status: u16, body: &str) {
    assert!(
        status < 500,
        "{target} -> {status}: {}",
        &body[..body.len().min(300)]
    );
    assert!(!leaks(body), "{target} served a file outside the bundle");
}

#[tokio::test]
async fn odd_paths_and_queries_never_reach_a_500_or_a_file_outside_the_bundle() {
    let app = spawn_app().await;
    let long_post = format!("/blog/{}", "x".repeat(8_000));
    let deep = format!("/{}", "a/".repeat(2_000));
    let many_params = format!("/blog?{}", "type=Events&".repeat(1_000));
    let targets = [
        "/%",
        "/%zz",
        "/%00",
        "/%ff%fe",
        "/blog/%ff",
        "/blog/%",
        "/blog/%2e%2e",
        "/blog/..%2f..%2fCargo.toml",
        "/../../etc/passwd",
        "/./",
        "//",
        "///wallets",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/%2F%2Fevil.example",
        "/assets/../Cargo.toml",
        "/assets/..%2f..%2fCargo.toml",
        "/assets/%2e%2e/%2e%2e/etc/passwd",
        "/assets/..%5c..%5cCargo.toml",
        "/assets/",
        "/assets",
        "/assets/%00",
        "/assets//etc/passwd",
        "/assets/../../../../../../etc/passwd",
        "/assets/%252e%252e/Cargo.toml",
        "/blog?type=%",
        "/blog?type=%ff",
        "/blog?type=%3C%2Fscript%3E",
        "/blog?type=",
        "/blog?type",
        "/api/route-data?url=%",
        "/api/route-data?url=//evil.example",
        "/api/route-data?url=/../../etc/passwd",
        "/api/route-data",
        "/api/route-data?url=/blog/%ff",
        "/api/route-data?url=https://evil.example/",
        "/success?session_id=%00",
        "/pricing?billing=%ff",
        "/contact?submitted=%ff&submitted=1",
        "/sitemap.xml?x=%",
        "/robots.txt/..",
        "/healthz/../../etc/passwd",
        long_post.as_str(),
        deep.as_str(),
        many_params.as_str(),
        "http://evil.example/wallets",
    ];
    for target in targets {
        let res = app.raw_get(target).await;
        assert_sane(target, res.status, &res.text());
    }
    // The server still serves.
    assert_eq!(app.raw_get("/").await.status, 200);
}

#[tokio::test]
async fn asset_paths_serve_only_embedded_files() {
    let app = spawn_app().await;
    for target in [
        "/assets/../Cargo.toml",
        "/assets/..%2fCargo.toml",
        "/assets/%2e%2e%2fbuild.rs",
        "/assets/Cargo.toml",
    ] {
        let res = app.raw_get(target).await;
        assert_eq!(res.status, 404, "{target}");
    }
}

#[tokio::test]
async fn oversized_request_lines_and_headers_are_refused_with_a_4xx() {
    let app = spawn_app().await;
    let huge_path = format!("/{}", "a".repeat(70_000));
    let res = app.raw_get(&huge_path).await;
    assert!(
        (400..500).contains(&res.status),
        "a 70 kB path -> {}",
        res.status
    );
    let mut req = String::from("GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n");
    for i in 0..64 {
        req.push_str(&format!("X-Filler-{i}: {}\r\n", "b".repeat(8_000)));
    }
    req.push_str("\r\n");
    let res = app.raw(req.as_bytes()).await;
    assert!(
        (400..500).contains(&res.status),
        "512 kB of headers -> {}",
        res.status
    );
    assert_eq!(app.raw_get("/").await.status, 200, "still serving");
}

/// Every POST endpoint the visitor's pages call.
const POST_ENDPOINTS: [&str; 3] = [
    "/api/save-to-notion",
    "/api/create-checkout-session",
    "/api/verify-checkout-session",
];

#[tokio::test]
async fn bodies_over_the_limit_get_413_and_change_nothing() {
    let app = spawn_app().await;
    let big = json!({ "name": "x".repeat(100_000), "email": "a@b.example" }).to_string();
    for endpoint in POST_ENDPOINTS {
        let res = app
            .client
            .post(format!("{}{endpoint}", app.base))
            .header("content-type", "application/json")
            .body(big.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 413, "{endpoint}");
        let body: Value = res.json().await.unwrap();
        assert_eq!(
            body,
            json!({ "success": false, "error": "The request body is too large" }),
            "{endpoint}"
        );
    }
    // Without a Content-Length: a chunked body is cut off at the limit too.
    let chunk = "a".repeat(16_000);
    let mut req = String::from("POST /api/save-to-notion HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
    for _ in 0..8 {
        req.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
    }
    req.push_str("0\r\n\r\n");
    assert_eq!(app.raw(req.as_bytes()).await.status, 413);
    assert_eq!(
        citizen_site::intake::store::pending_count(&app.state.db)
            .await
            .unwrap(),
        0
    );
}

/// Sends `head`, then all of `body` (as Python's http.client does, reading
/// nothing until it has sent everything), then reads the answer's status.
async fn send_all_then_read(addr: &str, head: &str, body: &[u8]) -> (std::io::Result<()>, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let sent = stream.write_all(body).await;
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(std::time::Duration::from_secs(20), stream.read(&mut answer))
        .await
        .expect("an answer")
        .unwrap_or(0);
    (
        sent,
        String::from_utf8_lossy(&answer[..n])
            .lines()
            .next()
            .unwrap_or("")
            .to_owned(),
    )
}

#[tokio::test]
async fn a_client_that_sends_a_5_mb_body_without_waiting_still_reads_its_413() {
    let app = spawn_app().await;
    let body = vec![b'a'; 5 * 1024 * 1024];
    let head = format!("POST /api/save-to-notion HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len());
    let (sent, status) = send_all_then_read(app.addr(), &head, &body).await;
    assert!(sent.is_ok(), "the upload was cut off: {sent:?}");
    assert_eq!(status, "HTTP/1.1 413 Payload Too Large");

    // Without a length (chunked), the same.
    let mut chunked = Vec::new();
    for piece in body.chunks(64 * 1024) {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let head = "POST /api/save-to-notion HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    let (sent, status) = send_all_then_read(app.addr(), head, &chunked).await;
    assert!(sent.is_ok(), "the upload was cut off: {sent:?}");
    assert_eq!(status, "HTTP/1.1 413 Payload Too Large");

    // A client that asks first is told at once, and sends nothing.
    let head = format!(
        "POST /api/save-to-notion HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let (_, status) = send_all_then_read(app.addr(), &head, b"").await;
    assert_eq!(status, "HTTP/1.1 413 Payload Too Large");
    assert_eq!(
        citizen_site::intake::store::pending_count(&app.state.db)
            .await
            .unwrap(),
        0
    );
}

#[tokio::test]
async fn a_wrong_content_type_gets_415() {
    let app = spawn_app_with(|c| c.stripe_webhook_secret = Some("whsec_test".into())).await;
    for endpoint in POST_ENDPOINTS.iter().chain(&["/api/stripe-webhook"]) {
        for ct in [
            "text/plain",
            "multipart/form-data; boundary=x",
            "application/xml",
        ] {
            let res = app
                .client
                .post(format!("{}{endpoint}", app.base))
                .header("content-type", ct)
                .body("name=a")
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), 415, "{endpoint} with {ct}");
        }
        let res = app
            .client
            .post(format!("{}{endpoint}", app.base))
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 415, "{endpoint} without a content type");
    }
    // verify-checkout-session is called by the page's script only: JSON.
    let res = app
        .client
        .post(format!("{}/api/verify-checkout-session", app.base))
        .form(&[("sessionId", "cs_1")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 415);
}

async fn post_json(app: &TestApp, endpoint: &str, body: &str) -> (u16, String) {
    let res = app
        .client
        .post(format!("{}{endpoint}", app.base))
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let json: Value = res.json().await.unwrap();
    (
        status,
        json["error"].as_str().unwrap_or_default().to_owned(),
    )
}

#[tokio::test]
async fn malformed_json_gets_400_naming_the_field() {
    let app = spawn_app().await;
    let cases = [
        (
            "/api/save-to-notion",
            r#"{"name": 5, "email": "a@b.example"}"#,
            "name: invalid type: integer `5`, expected a string",
        ),
        (
            "/api/save-to-notion",
            r#"{"name": "A", "email": "a@b.example", "tags": "Loyalty"}"#,
            "tags: invalid type: string \"Loyalty\", expected a sequence",
        ),
        (
            "/api/save-to-notion",
            r#"{"name": "A", "email": "a@b.example", "tags": ["Loyalty", null]}"#,
            "tags[1]: invalid type: null, expected a string",
        ),
        (
            "/api/save-to-notion",
            r#"{"name": "A", "email": ["a@b.example"]}"#,
            "email: invalid type: sequence, expected a string",
        ),
        (
            "/api/create-checkout-session",
            r#"{"priceId": 42}"#,
            "priceId: invalid type: integer `42`, expected a string",
        ),
        (
            "/api/create-checkout-session",
            r#"{}"#,
            "Invalid JSON: missing field `priceId`",
        ),
        (
            "/api/verify-checkout-session",
            r#"{"sessionId": {"$ne": ""}}"#,
            "sessionId: invalid type: map, expected a string",
        ),
        (
            "/api/save-to-notion",
            r#"{"name": "A""#,
            "Invalid JSON: EOF while parsing an object",
        ),
        (
            "/api/save-to-notion",
            r#"{"name": "A"} {"name": "B"}"#,
            "Invalid JSON: trailing characters",
        ),
        (
            "/api/save-to-notion",
            "\u{feff}{}",
            "Invalid JSON: expected value",
        ),
    ];
    for (endpoint, body, message) in cases {
        let (status, error) = post_json(&app, endpoint, body).await;
        assert_eq!(status, 400, "{body}");
        assert!(
            error.starts_with(message),
            "{body}: {error:?} should start with {message:?}"
        );
    }
    assert_eq!(
        citizen_site::intake::store::pending_count(&app.state.db)
            .await
            .unwrap(),
        0,
        "nothing stored"
    );
}

#[tokio::test]
async fn malformed_form_data_gets_400_naming_the_field_and_keeps_what_was_typed() {
    let app = spawn_app().await;
    let url = format!("{}/api/save-to-notion", app.base);
    let send = |body: &'static str| {
        app.client
            .post(&url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
    };
    let res = send("name=Riverbend&email=ana%40riverbend.example&description=%FF%FE")
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let html = res.text().await.unwrap();
    assert!(
        html.contains("description: not valid UTF-8"),
        "the contact page names the field"
    );
    let res = send("name=Riverbend&name=Other&email=ana%40riverbend.example")
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let html = res.text().await.unwrap();
    assert!(html.contains("name: sent more than once"));
    assert_eq!(
        citizen_site::intake::store::pending_count(&app.state.db)
            .await
            .unwrap(),
        0
    );
}

#[tokio::test]
async fn unknown_methods_get_405_with_allow() {
    let app = spawn_app().await;
    let cases = [
        ("PUT", "/"),
        ("DELETE", "/about"),
        ("PATCH", "/api/save-to-notion"),
        ("DELETE", "/api/create-checkout-session"),
        ("PUT", "/api/route-data?url=/"),
        ("POST", "/assets/app.js"),
        ("OPTIONS", "/api/save-to-notion"),
        ("TRACE", "/"),
        ("BREW", "/"),
        ("POST", "/blog"),
    ];
    for (method, target) in cases {
        let res = app.raw(format!("{method} {target} HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").as_bytes()).await;
        assert_eq!(res.status, 405, "{method} {target}");
        assert!(
            res.header("allow").is_some_and(|a| !a.is_empty()),
            "{method} {target} names the allowed methods"
        );
    }
    let res = app
        .raw(b"HEAD /wallets HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        .await;
    assert_eq!(res.status, 200);
}

#[tokio::test]
async fn markup_in_contact_fields_is_text_everywhere() {
    let app = spawn_app().await;
    let markup = r#"<script>alert("x")</script><img src=x onerror=alert(1)>"#;
    // Stored as sent.
    let res = app
        .client
        .post(format!("{}/api/save-to-notion", app.base))
        .json(&json!({ "name": markup, "contactPerson": markup, "email": "ana@riverbend.example", "description": markup }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    use sqlx::Row;
    let row = sqlx::query("SELECT name, contact_person, description FROM intro_requests")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    for col in ["name", "contact_person", "description"] {
        assert_eq!(row.get::<String, _>(col), markup, "{col} stored as text");
    }
    // Echoed back (a refused plain form post): escaped in the page, intact in its data.
    let res = app
        .client
        .post(format!("{}/api/save-to-notion", app.base))
        .form(&[
            ("name", markup),
            ("email", "not-an-email"),
            ("description", markup),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
    let html = res.text().await.unwrap();
    assert!(
        !html.contains("<script>alert") && !html.contains("<img src=x"),
        "markup reached the page as markup"
    );
    assert!(html.contains("&lt;script&gt;alert"), "shown as text");
    assert_eq!(bootstrap_json(&html)["data"]["values"]["name"], markup);
}

#[test]
fn random_paths_and_queries_never_reach_a_500() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let app = rt.block_on(spawn_app());
    // Visible ASCII a request line may carry, plus percent-escapes of any byte.
    let piece = prop_oneof![
        "[A-Za-z0-9._~!$&'()*+,;=:@/?-]{1,6}",
        any::<u8>().prop_map(|b| format!("%{b:02X}")),
        Just("%".to_owned()),
        Just("..".to_owned()),
        Just("//".to_owned()),
        Just("/blog/".to_owned()),
        Just("/assets/".to_owned()),
        Just("?type=".to_owned()),
        Just("?url=/".to_owned()),
        Just("/api/route-data?url=".to_owned()),
    ];
    let paths =
        proptest::collection::vec(piece, 1..12).prop_map(|parts| format!("/{}", parts.concat()));
    let mut runner = TestRunner::new(PropConfig {
        cases: 300,
        failure_persistence: None,
        ..PropConfig::default()
    });
    runner
        .run(&paths, |target| {
            let res = rt.block_on(app.raw_get(&target));
            prop_assert!(res.status < 500, "{} -> {}", target, res.status);
            prop_assert!(!leaks(&res.text()), "{} leaked a file", target);
            Ok(())
        })
        .unwrap();
    rt.block_on(app.stop());
}
