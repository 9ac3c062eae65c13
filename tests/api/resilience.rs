//! Bad days elsewhere: the database unreachable at start or gone mid-run,
//! Stripe and Notion that accept a connection and never answer. Pages keep
//! rendering, the visitor gets the spec's error instead of a pretended
//! success, and everything works again when the service is back.
//!
//! No test here reads a clock. "Bounded" is shown by order: the answer comes
//! while the service is still silent (a hung service never answers, so the
//! server gave up on it), and "never waits" by a page answered while the
//! database hangs with timeouts longer than the client's own.

use std::time::Duration;

use citizen_site::db::Db;
use citizen_site::intake::store;
use citizen_site::team::NewMember;
use serde_json::{json, Value};

use crate::api::helpers::{
    bootstrap_json, eventually, fresh_postgres, spawn_app_with, visible_text, Blackhole,
    FlakyProxy, Link, TestApp,
};

const SUBMIT_FAILED: &str = "Failed to submit form. Please try again.";

async fn submit(app: &TestApp, n: usize) -> (u16, Value) {
    let res = app
        .client
        .post(format!("{}/api/save-to-notion", app.base))
        .json(&json!({ "name": format!("Community {n}"), "email": format!("c{n}@example.org") }))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap())
}

async fn readiness(app: &TestApp) -> (u16, Value) {
    let res = app.get("/readyz").await;
    let status = res.status().as_u16();
    (status, res.json().await.unwrap())
}

/// /about renders, with an empty team.
async fn about_renders_without_the_team(app: &TestApp) {
    let (status, html) = app.get_text("/about").await;
    assert_eq!(status, 200);
    assert!(visible_text(&html).contains("Meet Our Team"));
    assert_eq!(bootstrap_json(&html)["data"]["team"], json!([]));
}

#[tokio::test]
async fn the_site_serves_through_a_database_outage_and_recovers() {
    let Some(fresh) = fresh_postgres().await else {
        return;
    };
    let real = &fresh.url;
    let (prefix, rest) = real.split_once("@").unwrap();
    let (host_port, database) = rest.split_once('/').unwrap();
    let upstream = tokio::net::lookup_host(host_port)
        .await
        .unwrap()
        .next()
        .unwrap();
    let proxy = FlakyProxy::start(upstream, Link::Down).await;
    let via_proxy = format!("{prefix}@{}/{database}", proxy.addr);
    let app = spawn_app_with(|c| {
        c.database_url = via_proxy.clone();
        c.timeouts.db_connect = Duration::from_secs(1);
        c.timeouts.db_query = Duration::from_secs(2);
    })
    .await;

    // Unreachable at start: pages render, readiness says why, submissions are refused honestly.
    about_renders_without_the_team(&app).await;
    assert_eq!(app.get_text("/").await.0, 200);
    let (status, body) = readiness(&app).await;
    assert_eq!(
        (status, &body["database"], &body["isolates"]),
        (503, &json!(false), &json!(true)),
        "{body}"
    );
    let (status, body) = submit(&app, 1).await;
    assert_eq!(
        (status, body),
        (503, json!({ "success": false, "error": SUBMIT_FAILED }))
    );

    // It comes back: migrated, ready, and submissions are stored again.
    proxy.set(Link::Up);
    assert!(
        eventually(15, || async { readiness(&app).await.0 == 200 }).await,
        "ready once the database is back"
    );
    let (status, _) = submit(&app, 2).await;
    assert_eq!(status, 200);

    // It hangs mid-run (accepts, never answers): bounded, and the same honest error.
    proxy.set(Link::Hanging);
    let (status, body) = submit(&app, 3).await;
    assert_eq!(
        (status, body),
        (503, json!({ "success": false, "error": SUBMIT_FAILED }))
    );
    assert!(
        proxy.frozen() > 0,
        "refused while the database it asked still had not answered: the server gave up on it"
    );
    assert!(
        eventually(10, || async { readiness(&app).await.0 == 503 }).await,
        "not ready while the database hangs"
    );
    about_renders_without_the_team(&app).await;

    // Back again.
    proxy.set(Link::Up);
    assert!(eventually(15, || async { readiness(&app).await.0 == 200 }).await);
    let (status, _) = submit(&app, 4).await;
    assert_eq!(status, 200);

    // Exactly the two requests the visitor was told were stored are stored.
    let direct = Db::connect_lazy(real).unwrap();
    assert_eq!(store::pending_count(&direct).await.unwrap(), 2);
    app.stop().await;
}

#[tokio::test]
async fn a_page_view_never_waits_on_a_database_that_hangs() {
    let Some(fresh) = fresh_postgres().await else {
        return;
    };
    let (prefix, rest) = fresh.url.split_once("@").unwrap();
    let (host_port, database) = rest.split_once('/').unwrap();
    let upstream = tokio::net::lookup_host(host_port)
        .await
        .unwrap()
        .next()
        .unwrap();
    let proxy = FlakyProxy::start(upstream, Link::Up).await;
    let via_proxy = format!("{prefix}@{}/{database}", proxy.addr);
    // The site's own database timeouts outlast this test's client (30 s): a
    // page that waited on the database could not be answered in time.
    let app = spawn_app_with(|c| {
        c.database_url = via_proxy.clone();
        c.timeouts.db_connect = Duration::from_secs(600);
        c.timeouts.db_query = Duration::from_secs(600);
    })
    .await;
    let member = NewMember {
        name: "Ada Hang".into(),
        ..Default::default()
    };
    citizen_site::team::import(&app.state.db, &[member], true)
        .await
        .unwrap();
    app.state.refresh_team().await;

    proxy.set(Link::Hanging);
    // The health monitor asks the database every two seconds and now waits on it.
    assert!(
        eventually(15, || async { proxy.frozen() > 0 }).await,
        "the site asked the hanging database something"
    );
    for _ in 0..3 {
        let (status, html) = app.get_text("/about").await;
        assert_eq!(status, 200);
        assert_eq!(
            bootstrap_json(&html)["data"]["team"][0]["name"],
            "Ada Hang",
            "the team as last read"
        );
        assert_eq!(app.get_text("/").await.0, 200);
        assert!(
            proxy.frozen() > 0,
            "answered while the database still had not answered"
        );
    }
    // A scrape is not held either: its backlog reading waits on the
    // database, and it answers with the reading before.
    for _ in 0..2 {
        let (status, metrics) = app.get_text("/metrics").await;
        assert_eq!(status, 200);
        assert!(
            metrics.contains("\nintro_requests_pending 0\n"),
            "{metrics}"
        );
        assert!(proxy.frozen() > 0);
    }
    proxy.set(Link::Up);
    app.stop().await;
}

#[tokio::test]
async fn stripe_that_never_answers_is_cut_off_and_the_pricing_page_says_so() {
    let stripe = Blackhole::start().await;
    let app = spawn_app_with(|c| {
        c.stripe_secret_key = Some("sk_test_x".into());
        c.stripe_api_base = stripe.url();
        c.timeouts.stripe = Duration::from_secs(1);
    })
    .await;
    // Stripe never answers and is never released while the site is asked:
    // each answer below came while every call it made to Stripe still hung.
    let (status, html) = app.get_text("/pricing").await;
    assert_eq!(status, 200);
    assert!(visible_text(&html).contains("Failed to load pricing information"));
    assert!(stripe.accepted() > 0, "the price list was asked of Stripe");
    let before = stripe.accepted();
    let res = app
        .client
        .post(format!("{}/api/verify-checkout-session", app.base))
        .json(&json!({ "sessionId": "cs_test_1" }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 502);
    assert_eq!(
        res.json::<Value>().await.unwrap()["error"],
        "Failed to verify payment session"
    );
    assert!(
        stripe.accepted() > before,
        "the session was asked of Stripe, which never answered"
    );
    let metrics = app.get_text("/metrics").await.1;
    for series in [
        r#"upstream_request_duration_seconds_count{upstream="stripe",operation="list_prices",outcome="timeout"}"#,
        r#"upstream_request_duration_seconds_count{upstream="stripe",operation="retrieve_checkout_session",outcome="timeout"} 1"#,
    ] {
        assert!(metrics.contains(series), "{series} in\n{metrics}");
    }
}

#[tokio::test]
async fn notion_that_never_answers_is_cut_off_and_the_request_kept() {
    let notion = Blackhole::start().await;
    let app = spawn_app_with(|c| {
        c.notion_token = Some("secret_test".into());
        c.notion_database_id = Some("db123".into());
        c.notion_api_base = notion.url();
        c.timeouts.notion_request = Duration::from_millis(500);
    })
    .await;
    let (status, _) = submit(&app, 1).await;
    assert_eq!(
        status, 200,
        "stored first: the visitor is not kept waiting on Notion"
    );
    use sqlx::Row;
    let db = app.state.db.clone();
    let tried = eventually(10, || async {
        let row = sqlx::query("SELECT attempts, last_error FROM intro_requests")
            .fetch_one(&db.pool)
            .await
            .unwrap();
        row.get::<i64, _>("attempts") >= 2
            && row
                .get::<Option<String>, _>("last_error")
                .is_some_and(|e| e.contains("timed out"))
    })
    .await;
    assert!(tried, "each try is cut off and recorded");
    let metrics = app.get_text("/metrics").await.1;
    let timeouts = metrics
        .lines()
        .find_map(|l| {
            l.strip_prefix(r#"upstream_request_duration_seconds_count{upstream="notion",operation="query",outcome="timeout"} "#)
        })
        .and_then(|n| n.parse::<u64>().ok());
    assert!(timeouts >= Some(2), "{metrics}");
    assert_eq!(
        store::pending_count(&app.state.db).await.unwrap(),
        1,
        "still pending, not dropped"
    );
    app.stop().await;
}
