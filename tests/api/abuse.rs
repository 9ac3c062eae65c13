//! Abuse: per-client rate limits on the POST endpoints, client addresses
//! from forwarding headers only behind configured proxies, the contact
//! form's honeypot, and submissions sent twice.

use serde_json::{json, Value};
use sqlx::Row;

use citizen_site::rate_limit::Rate;

use crate::api::helpers::{bootstrap_json, spawn_app, spawn_app_with};

fn request(n: usize) -> Value {
    json!({ "name": format!("Community {n}"), "email": format!("c{n}@example.org") })
}

#[tokio::test]
async fn a_client_over_its_limit_gets_429_with_retry_after_and_others_are_unaffected() {
    let app = spawn_app_with(|c| {
        c.post_rate = Rate::per_minute(3);
        // The test client plays a load balancer on loopback.
        c.trusted_proxies = "127.0.0.1".parse().unwrap();
    })
    .await;
    let url = format!("{}/api/save-to-notion", app.base);
    let from = |ip: &'static str, n: usize| {
        app.client
            .post(&url)
            .header("x-forwarded-for", ip)
            .json(&request(n))
            .send()
    };
    for n in 0..3 {
        assert_eq!(from("203.0.113.7", n).await.unwrap().status(), 200);
    }
    let res = from("203.0.113.7", 3).await.unwrap();
    assert_eq!(res.status(), 429);
    let wait: u64 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=20).contains(&wait), "Retry-After {wait}");
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["success"], false);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("Too many requests."),
        "{body}"
    );
    // Another client behind the same proxy has its own budget.
    assert_eq!(from("198.51.100.20", 4).await.unwrap().status(), 200);
    // The refused request was not stored.
    assert_eq!(
        citizen_site::intake::store::pending_count(&app.state.db)
            .await
            .unwrap(),
        4
    );
    // The checkout endpoints count against the same budget.
    let res = app
        .client
        .post(format!("{}/api/verify-checkout-session", app.base))
        .header("x-forwarded-for", "203.0.113.7")
        .json(&json!({ "sessionId": "cs_1" }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    // Pages are never limited.
    assert_eq!(
        app.client
            .get(format!("{}/contact", app.base))
            .header("x-forwarded-for", "203.0.113.7")
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let metrics = app.get_text("/metrics").await.1;
    assert!(metrics.contains("http_rate_limited_total 2"), "{metrics}");
}

#[tokio::test]
async fn forwarding_headers_from_an_unconfigured_proxy_do_not_escape_the_limit() {
    // No trusted proxies: the peer address is the client, whatever the header says.
    let app = spawn_app_with(|c| c.post_rate = Rate::per_minute(2)).await;
    let url = format!("{}/api/save-to-notion", app.base);
    let statuses = futures_statuses(&app.client, &url, &["1.1.1.1", "2.2.2.2", "3.3.3.3"]).await;
    assert_eq!(
        statuses,
        vec![200, 200, 429],
        "a spoofed X-Forwarded-For is ignored"
    );
}

async fn futures_statuses(client: &reqwest::Client, url: &str, ips: &[&str]) -> Vec<u16> {
    let mut out = Vec::new();
    for (n, ip) in ips.iter().enumerate() {
        out.push(
            client
                .post(url)
                .header("x-forwarded-for", *ip)
                .json(&request(n))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16(),
        );
    }
    out
}

#[tokio::test]
async fn a_plain_form_post_over_the_limit_keeps_what_was_typed() {
    let app = spawn_app_with(|c| c.post_rate = Rate::per_minute(1)).await;
    let url = format!("{}/api/save-to-notion", app.base);
    let form = [
        ("name", "Riverbend"),
        ("email", "ana@riverbend.example"),
        ("description", "Forty shops"),
    ];
    assert_eq!(
        app.client
            .post(&url)
            .form(&form)
            .send()
            .await
            .unwrap()
            .status(),
        303
    );
    let res = app.client.post(&url).form(&form).send().await.unwrap();
    assert_eq!(res.status(), 429);
    assert!(res.headers().contains_key("retry-after"));
    let html = res.text().await.unwrap();
    let data = &bootstrap_json(&html)["data"];
    assert!(data["error"]
        .as_str()
        .unwrap()
        .starts_with("Too many requests."));
    assert_eq!(
        data["values"]["description"], "Forty shops",
        "the contact page comes back with what was typed"
    );
}

#[tokio::test]
async fn the_honeypot_keeps_bot_requests_aside_and_tells_the_bot_nothing() {
    let app = spawn_app().await;
    let url = format!("{}/api/save-to-notion", app.base);
    let mut bot = request(1);
    bot["fax"] = json!("+1 555 0100");
    let res = app.client.post(&url).json(&bot).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({ "success": true })
    );
    // A plain form post with the field filled looks just as successful.
    let res = app
        .client
        .post(&url)
        .form(&[
            ("name", "Bot"),
            ("email", "bot@example.org"),
            ("fax", "yes"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    let rows = sqlx::query("SELECT status FROM intro_requests")
        .fetch_all(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(rows.len(), 2, "kept, in case a person filled it");
    assert!(
        rows.iter().all(|r| r.get::<String, _>("status") == "spam"),
        "never forwarded"
    );
    assert_eq!(
        citizen_site::intake::store::pending_count(&app.state.db)
            .await
            .unwrap(),
        0
    );
    // People leave it empty.
    let mut person = request(2);
    person["fax"] = json!("");
    assert_eq!(
        app.client
            .post(&url)
            .json(&person)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        citizen_site::intake::store::pending_count(&app.state.db)
            .await
            .unwrap(),
        1
    );
}

#[tokio::test]
async fn a_submission_sent_twice_is_stored_once() {
    let app = spawn_app().await;
    let url = format!("{}/api/save-to-notion", app.base);
    let mut body = request(1);
    body["submissionId"] = json!("0b6f3c2e-8a47-4c1e-9f55-3f1a2d6b7c80");
    for _ in 0..3 {
        let res = app.client.post(&url).json(&body).send().await.unwrap();
        assert_eq!(res.status(), 200, "every try is told it worked");
    }
    let ids: Vec<String> = sqlx::query("SELECT id FROM intro_requests")
        .fetch_all(&app.state.db.pool)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get("id"))
        .collect();
    assert_eq!(ids, vec!["0b6f3c2e-8a47-4c1e-9f55-3f1a2d6b7c80"]);
    body["submissionId"] = json!("not-a-uuid");
    let res = app.client.post(&url).json(&body).send().await.unwrap();
    assert_eq!(res.status(), 422);
    assert_eq!(
        res.json::<Value>().await.unwrap()["error"],
        "submissionId: not a valid id"
    );
}
