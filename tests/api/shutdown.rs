//! The real binary stopped the way an operator or an orchestrator stops it:
//! SIGTERM and Ctrl-C (SIGINT). It stops accepting at once, lets in-flight
//! requests finish within the grace period and no longer, stops the Notion
//! forwarder, and exits 0. Its JSON logs carry each request's id.

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::api::helpers::{tempdir::TempDir, Blackhole, SiteProcess as Server};
use crate::api::stripe_fixtures::checkout_session;

async fn post_verify(base: &str, session: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{base}/api/verify-checkout-session"))
        .json(&json!({ "sessionId": session }))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn sigterm_finishes_in_flight_requests_refuses_new_ones_and_stops_the_forwarder() {
    // Stripe answers this session after 2 s: the request is in flight when SIGTERM comes.
    let stripe = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/checkout/sessions/cs_test_slow"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(checkout_session(
                    "cs_test_slow",
                    "paid",
                    Some("ana@example.org"),
                ))
                .set_delay(Duration::from_secs(2)),
        )
        .mount(&stripe)
        .await;
    let notion = MockServer::start().await;
    Mock::given(path_regex("^/v1/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({ "results": [] })))
        .mount(&notion)
        .await;
    let mut server = Server::start(&[
        ("STRIPE_SECRET_KEY", "sk_test_x".into()),
        ("STRIPE_API_BASE", stripe.uri()),
        ("NOTION_TOKEN", "secret_test".into()),
        ("NOTION_DATABASE_ID", "db123".into()),
        ("NOTION_API_BASE", notion.uri()),
        ("SHUTDOWN_GRACE_SECS", "10".into()),
    ])
    .await;

    // A request whose log line must carry its id.
    let res = reqwest::get(format!("{}/no-such-page", server.base))
        .await
        .unwrap();
    let request_id = res.headers()["x-request-id"].to_str().unwrap().to_owned();

    let base = server.base.clone();
    let in_flight = tokio::spawn(async move { post_verify(&base, "cs_test_slow").await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.signal("TERM");
    tokio::time::sleep(Duration::from_millis(300)).await;
    // No new connections once shutdown has begun.
    let refused = tokio::net::TcpStream::connect(server.base.trim_start_matches("http://")).await;
    assert!(
        refused.is_err(),
        "a new connection was accepted during shutdown"
    );

    let res = in_flight.await.unwrap();
    assert_eq!(res.status(), 200, "the in-flight request finished");
    assert_eq!(
        res.json::<Value>().await.unwrap()["session"]["customer_email"],
        "ana@example.org"
    );
    let (status, took) = server.exited(Duration::from_secs(10)).await;
    assert!(status.success(), "exit status {status}");
    assert!(
        took < Duration::from_secs(5),
        "exited {took:?} after the request finished"
    );

    let logs = server.logged();
    let messages: Vec<&str> = logs
        .iter()
        .filter_map(|l| l["fields"]["message"].as_str())
        .collect();
    assert!(messages.contains(&"SIGTERM received"), "{messages:?}");
    assert!(
        messages.contains(&"intro request forwarder stopped"),
        "{messages:?}"
    );
    assert!(messages.contains(&"stopped"), "{messages:?}");
    let unknown = logs
        .iter()
        .find(|l| l["fields"]["message"] == "404: unknown route requested")
        .expect("the 404 is logged");
    assert_eq!(
        unknown["request_id"],
        request_id.as_str(),
        "the log line carries the request id: {unknown}"
    );
    assert_eq!(
        unknown["level"], "INFO",
        "crawlers' 404s are not warnings: {unknown}"
    );
}

#[test]
fn a_stripe_key_that_cannot_work_stops_the_start_with_a_configuration_error() {
    for (key, says) in [
        ("pk_live_51Hxyz", "publishable key"),
        ("sk_live_51H\nxyz", "characters no Stripe key has"),
    ] {
        let data = TempDir::new();
        let out = Command::new(env!("CARGO_BIN_EXE_citizen-site"))
            .env("ADDR", "127.0.0.1:0")
            .env(
                "DATABASE_URL",
                format!("sqlite://{}/site.db", data.path().display()),
            )
            .env("STRIPE_SECRET_KEY", key)
            .output()
            .expect("running the server binary");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("STRIPE_SECRET_KEY: not usable") && stderr.contains(says),
            "{stderr}"
        );
        assert!(
            !stderr.contains("panicked") && !stderr.contains("51H"),
            "no panic, and the key is not printed: {stderr}"
        );
    }
}

#[tokio::test]
async fn a_request_that_outlives_the_grace_period_does_not_hold_the_process() {
    let stripe = Blackhole::start().await;
    let mut server = Server::start(&[
        ("STRIPE_SECRET_KEY", "sk_test_x".into()),
        ("STRIPE_API_BASE", stripe.url()),
        ("SHUTDOWN_GRACE_SECS", "1".into()),
    ])
    .await;
    let base = server.base.clone();
    let stuck = tokio::spawn(async move {
        reqwest::Client::new()
            .post(format!("{base}/api/verify-checkout-session"))
            .json(&json!({ "sessionId": "cs_test_stuck" }))
            .send()
            .await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.signal("TERM");
    let (status, took) = server.exited(Duration::from_secs(6)).await;
    assert!(status.success(), "exit status {status}");
    assert!(
        took < Duration::from_secs(3),
        "exited after {took:?}, grace is 1 s"
    );
    assert!(
        stuck.await.unwrap().is_err(),
        "the stuck request's connection was closed"
    );
    let messages: Vec<String> = server
        .logged()
        .iter()
        .filter_map(|l| l["fields"]["message"].as_str().map(String::from))
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("outlived the shutdown grace")),
        "{messages:?}"
    );
}

#[tokio::test]
async fn ctrl_c_stops_it_cleanly() {
    let mut server = Server::start(&[]).await;
    assert_eq!(
        reqwest::get(format!("{}/", server.base))
            .await
            .unwrap()
            .status(),
        200
    );
    server.signal("INT");
    let (status, _) = server.exited(Duration::from_secs(5)).await;
    assert!(status.success(), "exit status {status}");
    assert!(server
        .logged()
        .iter()
        .any(|l| l["fields"]["message"] == "interrupted (Ctrl-C)"));
}

/// Reads one HTTP/1.1 response (head and a Content-Length body) from `tcp`.
async fn read_response(tcp: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut buf))
            .await
            .expect("an answer within 10 s")
            .unwrap();
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length: ")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if body.len() >= length {
                return text;
            }
        }
        assert!(n > 0, "closed before a whole answer: {text:?}");
    }
}

/// Draining loses no request a client has sent: a keep-alive connection's
/// next request is answered (with `Connection: close`, and /readyz says
/// 503 from the first moment), a connection accepted just before draining
/// has its first request answered, and new connections are refused.
#[tokio::test]
async fn draining_answers_what_clients_send_on_open_connections_and_says_not_ready() {
    use tokio::io::AsyncWriteExt;
    let mut app = crate::api::helpers::spawn_app().await;
    let addr = app.addr().to_owned();
    let mut kept = tokio::net::TcpStream::connect(&addr).await.unwrap();
    kept.write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let first = read_response(&mut kept).await;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    // Accepted, but its request not yet sent.
    let mut fresh = tokio::net::TcpStream::connect(&addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;

    let _ = app.shutdown.take().unwrap().send(());
    tokio::time::sleep(Duration::from_millis(200)).await;
    kept.write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let draining = read_response(&mut kept).await;
    assert!(draining.starts_with("HTTP/1.1 503"), "{draining}");
    assert!(draining.contains("\"draining\":true"), "{draining}");
    assert!(
        draining.to_ascii_lowercase().contains("connection: close"),
        "{draining}"
    );
    // Its first request answered, which is the metrics: draining, not ready.
    fresh
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let metrics = read_response(&mut fresh).await;
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    for line in ["\nserver_draining 1\n", "\nserver_ready 0\n"] {
        assert!(metrics.contains(line), "{line:?} in {metrics}");
    }
    assert!(
        tokio::net::TcpStream::connect(&addr).await.is_err(),
        "a new connection while draining"
    );
    tokio::time::timeout(Duration::from_secs(10), app.server.take().unwrap())
        .await
        .expect("it stops once its connections are done")
        .unwrap()
        .unwrap();
}
