//! The real async-stripe client against a local stand-in for Stripe
//! (wiremock): prices on the pricing page, checkout, the success page, the
//! webhook.

use std::collections::HashMap;

use hmac::{Hmac, KeyInit, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use sqlx::Row;
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

use std::time::Duration;

use citizen_site::rate_limit::Rate;

use crate::api::helpers::{element, json_ld_of, spawn_app_with, title, visible_text, TestApp};
use crate::api::stripe_fixtures::{
    checkout_session, event, list, price, product, session_in_state, sign, WEBHOOK_SECRET,
};

async fn app_with_stripe(server: &MockServer) -> TestApp {
    app_with_stripe_on(server, None).await
}

async fn app_with_stripe_on(server: &MockServer, database_url: Option<String>) -> TestApp {
    let uri = server.uri();
    spawn_app_with(move |c| {
        if let Some(url) = database_url {
            c.database_url = url;
        }
        c.stripe_secret_key = Some("sk_test_123".into());
        c.stripe_api_base = uri;
        c.stripe_webhook_secret = Some(WEBHOOK_SECRET.into());
        c.site_url = "https://site.example".into();
    })
    .await
}

/// Light matches by product name, Standard by metadata.planName (its product
/// is named otherwise); both in euros. Pro is priced in US dollars, monthly
/// only; Light has no yearly price.
fn catalogue() -> Value {
    list(
        vec![
            price(
                "price_light_m",
                2900,
                "eur",
                "month",
                product("prod_l", "Community Light", None),
            ),
            price(
                "price_std_m",
                12000,
                "eur",
                "month",
                product("prod_s", "Citizen Hosting B", Some("Community Standard")),
            ),
            price(
                "price_std_y",
                120000,
                "eur",
                "year",
                product("prod_s", "Citizen Hosting B", Some("Community Standard")),
            ),
            price(
                "price_pro_m",
                9900,
                "usd",
                "month",
                product("prod_p", "Community Pro", None),
            ),
            price(
                "price_other_m",
                9900,
                "eur",
                "month",
                product("prod_x", "Something Else", Some("Other")),
            ),
        ],
        false,
    )
}

async fn mount_prices(server: &MockServer, times: u64) {
    Mock::given(method("GET"))
        .and(path("/v1/prices"))
        .respond_with(ResponseTemplate::new(200).set_body_json(catalogue()))
        .expect(times)
        .mount(server)
        .await;
}

fn plan_card(html: &str, plan: &str) -> String {
    let main = element(html, "main");
    let start = main
        .find(&format!(">{plan}</h3>"))
        .unwrap_or_else(|| panic!("no card for {plan}"));
    let end = main[start..].find("</article>").unwrap() + start;
    visible_text(&format!("<body>{}", &main[start..end]))
}

#[tokio::test]
async fn prices_match_plans_and_show_in_their_own_currency_with_one_stripe_call() {
    let server = MockServer::start().await;
    mount_prices(&server, 1).await; // cached: one call for everything below
    let app = app_with_stripe(&server).await;

    let (status, html) = app.get_text("/pricing").await;
    assert_eq!(status, 200);
    let light = plan_card(&html, "Community Light");
    assert!(light.contains("€29 /month"), "{light}");
    assert!(light.contains("€290 per year (save 2 months)"), "{light}");
    let standard = plan_card(&html, "Community Standard");
    assert!(
        standard.contains("€120 /month") && standard.contains("€1,200 per year (save 2 months)"),
        "metadata.planName match: {standard}"
    );
    // A dollar price on the same page: dollars, and no euro sign anywhere on its card.
    let pro = plan_card(&html, "Community Pro");
    assert!(
        pro.contains("$99 /month") && pro.contains("$990 per year (save 2 months)"),
        "{pro}"
    );
    assert!(!pro.contains('€'), "{pro}");
    assert!(html.contains(r#"name="priceId" value="price_light_m""#));
    let offers = offers(&html);
    assert_eq!(
        offers["Community Light"],
        ("29.00".to_owned(), "EUR".to_owned())
    );
    assert_eq!(
        offers["Community Pro"],
        ("99.00".to_owned(), "USD".to_owned())
    );

    let (_, html) = app.get_text("/pricing?billing=yearly").await;
    let standard = plan_card(&html, "Community Standard");
    assert!(
        standard.contains("€1,200 /year") && standard.contains("Save 1 months"),
        "{standard}"
    );
    assert!(
        plan_card(&html, "Community Light").contains("Contact us for pricing"),
        "no yearly Light price"
    );
    let pro = plan_card(&html, "Community Pro");
    assert!(
        pro.contains("Contact us for pricing") && pro.contains("Contact Us"),
        "{pro}"
    );

    let res = app.get("/api/get-stripe-prices").await;
    assert_eq!(res.status(), 200);
    let json: Value = res.json().await.unwrap();
    assert_eq!(json["prices"].as_array().unwrap().len(), 5);
    assert_eq!(
        json["prices"][1],
        json!({ "id": "price_std_m", "amount": 12000, "currency": "eur", "interval": "month",
        "product": { "name": "Citizen Hosting B", "metadata": { "planName": "Community Standard" } } })
    );
}

/// A new price list is a new version of /pricing: the page kept for its
/// path is out of date at once, and the next view shows the new
/// price (and keeps showing it, from the cache).
#[tokio::test]
async fn a_changed_price_list_shows_on_the_next_view_of_pricing() {
    let server = MockServer::start().await;
    mount_prices(&server, 1).await;
    let app = app_with_stripe(&server).await;
    let (_, html) = app.get_text("/pricing").await;
    assert!(plan_card(&html, "Community Light").contains("€29 /month"));
    server.reset().await;
    let cheaper = list(
        vec![price(
            "price_light_m",
            1900,
            "eur",
            "month",
            product("prod_l", "Community Light", None),
        )],
        false,
    );
    Mock::given(method("GET"))
        .and(path("/v1/prices"))
        .respond_with(ResponseTemplate::new(200).set_body_json(cheaper))
        .expect(1)
        .mount(&server)
        .await;
    app.state.payments.refresh_prices().await;
    for _ in 0..2 {
        let (status, html) = app.get_text("/pricing").await;
        assert_eq!(status, 200);
        assert!(
            plan_card(&html, "Community Light").contains("€19 /month"),
            "{}",
            plan_card(&html, "Community Light")
        );
    }
}

/// The pricing page's JSON-LD offers: product name -> (price, currency).
fn offers(html: &str) -> HashMap<String, (String, String)> {
    json_ld_of(html, "Product")
        .iter()
        .map(|n| {
            let o = &n["offers"];
            (
                n["name"].as_str().unwrap().to_owned(),
                (
                    o["price"].as_str().unwrap().to_owned(),
                    o["priceCurrency"].as_str().unwrap().to_owned(),
                ),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_zero_decimal_currency_is_counted_in_whole_units() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/prices"))
        .respond_with(ResponseTemplate::new(200).set_body_json(list(
            vec![price(
                "price_light_jpy",
                5000,
                "jpy",
                "month",
                product("prod_l", "Community Light", None),
            )],
            false,
        )))
        .mount(&server)
        .await;
    let app = app_with_stripe(&server).await;
    let (_, html) = app.get_text("/pricing").await;
    let light = plan_card(&html, "Community Light");
    assert!(
        light.contains("¥5,000 /month") && light.contains("¥50,000 per year"),
        "{light}"
    );
    assert_eq!(
        offers(&html)["Community Light"],
        ("5000".to_owned(), "JPY".to_owned())
    );
}

#[tokio::test]
async fn a_stripe_failure_shows_the_pricing_error_with_try_again() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/prices"))
        .respond_with(
            ResponseTemplate::new(500)
                .set_body_json(json!({ "error": { "type": "api_error", "message": "boom" } })),
        )
        .mount(&server)
        .await;
    let app = app_with_stripe(&server).await;
    let (status, html) = app.get_text("/pricing").await;
    assert_eq!(status, 200);
    let text = visible_text(element(&html, "main"));
    assert!(
        text.contains("Failed to load pricing information") && text.contains("Try Again"),
        "{text}"
    );
    let res = app.get("/api/get-stripe-prices").await;
    assert_eq!(res.status(), 502);
    assert_eq!(
        res.json::<Value>().await.unwrap()["error"],
        "Failed to load pricing information"
    );
    let metrics = app.get_text("/metrics").await.1;
    let series = r#"upstream_request_duration_seconds_count{upstream="stripe",operation="list_prices",outcome="error_status"}"#;
    assert!(metrics.contains(series), "{series} in\n{metrics}");
}

#[tokio::test]
async fn checkout_creates_a_subscription_session_and_answers_with_its_url_or_a_303() {
    let server = MockServer::start().await;
    mount_prices(&server, 1).await;
    Mock::given(method("POST"))
        .and(path("/v1/checkout/sessions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(checkout_session(
            "cs_test_a1",
            "unpaid",
            None,
        )))
        .expect(2)
        .mount(&server)
        .await;
    let app = app_with_stripe(&server).await;
    let url = format!("{}/api/create-checkout-session", app.base);

    let res = app
        .client
        .post(&url)
        .json(&json!({ "priceId": "price_std_m" }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert!(body["url"]
        .as_str()
        .unwrap()
        .starts_with("https://checkout.stripe.com/c/pay/cs_test_a1"));

    let sent = server.received_requests().await.unwrap();
    let create = sent
        .iter()
        .find(|r| r.url.path() == "/v1/checkout/sessions")
        .unwrap();
    let form: HashMap<String, String> = form_urlencoded::parse(&create.body).into_owned().collect();
    assert_eq!(form["mode"], "subscription");
    assert_eq!(form["line_items[0][price]"], "price_std_m");
    assert_eq!(form["line_items[0][quantity]"], "1");
    assert_eq!(
        form["success_url"],
        "https://site.example/success?session_id={CHECKOUT_SESSION_ID}"
    );
    assert_eq!(form["cancel_url"], "https://site.example/cancel");

    // Without JavaScript: the form posts, the server redirects to Checkout.
    let res = app
        .client
        .post(&url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("priceId=price_light_m")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    assert!(res.headers()["location"]
        .to_str()
        .unwrap()
        .starts_with("https://checkout.stripe.com/"));

    // A price that is not on sale never reaches Stripe's checkout.
    let res = app
        .client
        .post(&url)
        .json(&json!({ "priceId": "price_forged" }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let res = app.client.post(&url).json(&json!({})).send().await.unwrap();
    assert_eq!(res.status(), 400);
    // Two sessions made, one price list read: what /metrics counts.
    let metrics = app.get_text("/metrics").await.1;
    for line in [
        r#"upstream_request_duration_seconds_count{upstream="stripe",operation="create_checkout_session",outcome="ok"} 2"#,
        r#"upstream_request_duration_seconds_count{upstream="stripe",operation="list_prices",outcome="ok"} 1"#,
    ] {
        assert!(metrics.contains(line), "{line} in\n{metrics}");
    }
}

async fn mount_session(server: &MockServer, id: &str, body: Value) {
    Mock::given(method("GET"))
        .and(path(format!("/v1/checkout/sessions/{id}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(server)
        .await;
}

/// Stripe answers 404 for any other session.
async fn mount_no_such_session(server: &MockServer) {
    Mock::given(method("GET"))
        .and(path_regex("^/v1/checkout/sessions/"))
        .respond_with(ResponseTemplate::new(404).set_body_json(
            json!({ "error": { "type": "invalid_request_error", "code": "resource_missing", "message": "No such checkout.session" } }),
        ))
        .with_priority(10)
        .mount(server)
        .await;
}

async fn session_calls(server: &MockServer) -> usize {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path().starts_with("/v1/checkout/sessions/"))
        .count()
}

#[tokio::test]
async fn the_success_page_tells_paid_processing_and_failed_apart() {
    let server = MockServer::start().await;
    mount_session(
        &server,
        "cs_test_paid",
        checkout_session("cs_test_paid", "paid", Some("jenny@example.com")),
    )
    .await;
    mount_session(
        &server,
        "cs_test_trial",
        checkout_session(
            "cs_test_trial",
            "no_payment_required",
            Some("jenny@example.com"),
        ),
    )
    .await;
    mount_session(
        &server,
        "cs_test_sepa",
        checkout_session("cs_test_sepa", "unpaid", Some("lea@asbl.example")),
    )
    .await;
    mount_session(
        &server,
        "cs_test_open",
        session_in_state("cs_test_open", "open", "unpaid", None),
    )
    .await;
    mount_session(
        &server,
        "cs_test_expired",
        session_in_state("cs_test_expired", "expired", "unpaid", None),
    )
    .await;
    mount_no_such_session(&server).await;
    let app = app_with_stripe(&server).await;
    let page = |id: &str| {
        let url = if id.is_empty() {
            "/success".to_owned()
        } else {
            format!("/success?session_id={id}")
        };
        let app = &app;
        async move {
            let (status, html) = app.get_text(&url).await;
            (
                status,
                title(&html).to_owned(),
                visible_text(element(&html, "main")),
            )
        }
    };

    for id in ["cs_test_paid", "cs_test_trial"] {
        let (status, title, text) = page(id).await;
        assert_eq!(status, 200);
        assert!(
            text.contains("Payment Successful!")
                && text.contains("jenny@example.com")
                && text.contains("15.00 USD"),
            "{id}: {text}"
        );
        assert!(title.starts_with("Payment Successful"), "{id}: {title}");
    }

    // SEPA Direct Debit: checkout is complete, the money is not there yet.
    let (status, title, text) = page("cs_test_sepa").await;
    assert_eq!(status, 200);
    assert!(
        text.contains("Payment Processing")
            && text.contains("being confirmed")
            && text.contains("email"),
        "{text}"
    );
    assert!(
        text.contains("lea@asbl.example") && text.contains("15.00 USD"),
        "{text}"
    );
    assert!(!text.contains("Payment Successful"), "{text}");
    assert!(title.starts_with("Payment Processing"), "{title}");

    for id in ["cs_test_open", "cs_test_expired", "cs_test_gone"] {
        let (status, title, text) = page(id).await;
        assert_eq!(status, 200, "{id}");
        assert!(
            text.contains("Payment Verification Failed")
                && text.contains("Failed to verify payment session"),
            "{id}: {text}"
        );
        assert!(
            text.contains("Back to Pricing") && !text.contains("Payment Successful"),
            "{id}: {text}"
        );
        assert!(title.starts_with("Payment Verification"), "{id}: {title}");
    }
    let (_, _, text) = page("").await;
    assert!(
        text.contains("Payment Verification Failed") && text.contains("No session ID provided"),
        "{text}"
    );

    // Client-side navigation gets the same answers.
    let data: Value = app
        .get("/api/route-data?url=%2Fsuccess%3Fsession_id%3Dcs_test_sepa")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (
            data["data"]["state"].as_str(),
            data["data"]["session"]["status"].as_str()
        ),
        (Some("processing"), Some("complete"))
    );

    let verify = format!("{}/api/verify-checkout-session", app.base);
    let res = app
        .client
        .post(&verify)
        .json(&json!({ "sessionId": "cs_test_paid" }))
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({ "state": "paid", "session": {
        "customer_email": "jenny@example.com", "amount_total": 1500, "currency": "usd", "payment_status": "paid", "status": "complete" } })
    );
    let res = app
        .client
        .post(&verify)
        .json(&json!({ "sessionId": "cs_test_sepa" }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.json::<Value>().await.unwrap()["state"], "processing");
    let res = app
        .client
        .post(&verify)
        .json(&json!({ "sessionId": "" }))
        .send()
        .await
        .unwrap();
    assert_eq!(
        (
            res.status().as_u16(),
            res.json::<Value>().await.unwrap()["error"].clone()
        ),
        (400, json!("No session ID provided"))
    );
    let res = app
        .client
        .post(&verify)
        .json(&json!({ "sessionId": "cs_test_x" }))
        .send()
        .await
        .unwrap();
    assert_eq!(
        (
            res.status().as_u16(),
            res.json::<Value>().await.unwrap()["error"].clone()
        ),
        (404, json!("Failed to verify payment session"))
    );
}

#[tokio::test]
async fn ids_that_cannot_be_sessions_never_reach_stripe() {
    let server = MockServer::start().await;
    mount_no_such_session(&server).await;
    let app = app_with_stripe(&server).await;
    for id in [
        "x",
        "cs_1",
        "pi_test_123",
        "cs_test_a%2F..%2Fb",
        "cs_test_%00",
        &"cs_test_a".repeat(40),
    ] {
        let (status, html) = app.get_text(&format!("/success?session_id={id}")).await;
        assert_eq!(status, 200, "{id}");
        assert!(
            visible_text(element(&html, "main")).contains("Failed to verify payment session"),
            "{id}"
        );
    }
    assert_eq!(session_calls(&server).await, 0);
}

#[tokio::test]
async fn a_script_hammering_success_barely_reaches_stripe() {
    let server = MockServer::start().await;
    mount_session(
        &server,
        "cs_test_real",
        checkout_session("cs_test_real", "paid", Some("jenny@example.com")),
    )
    .await;
    mount_no_such_session(&server).await;
    let uri = server.uri();
    let app = spawn_app_with(move |c| {
        c.stripe_secret_key = Some("sk_test_123".into());
        c.stripe_api_base = uri;
        // Five lookups per client, and a period long enough that none
        // comes back during the test.
        c.session_lookup_rate = Rate {
            n: 5,
            period: Duration::from_secs(3600),
        };
        c.trusted_proxies = "127.0.0.1".parse().unwrap();
    })
    .await;
    let get = |url: String, from: &'static str| {
        app.client
            .get(format!("{}{url}", app.base))
            .header("x-forwarded-for", from)
            .send()
    };

    // 20 requests for one id, at once and then again: one Stripe call.
    let mut at_once = tokio::task::JoinSet::new();
    for _ in 0..10 {
        let (client, url) = (
            app.client.clone(),
            format!("{}/success?session_id=cs_test_real", app.base),
        );
        at_once.spawn(async move {
            client
                .get(url)
                .header("x-forwarded-for", "203.0.113.9")
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        });
    }
    while let Some(html) = at_once.join_next().await {
        assert!(html.unwrap().contains("Payment Successful!"));
    }
    for _ in 0..10 {
        assert!(
            get("/success?session_id=cs_test_real".into(), "203.0.113.9")
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
                .contains("Payment Successful!")
        );
    }
    assert_eq!(
        session_calls(&server).await,
        1,
        "one lookup for 20 requests"
    );

    // 50 random well-formed ids from one client: the limit's worth reach Stripe.
    let mut statuses = Vec::new();
    let mut waits = Vec::new();
    for n in 0..50 {
        let url = if n % 2 == 0 {
            format!(
                "/success?session_id=cs_test_{}",
                crate::api::helpers::uuid_like().replace('_', "")
            )
        } else {
            format!("/api/route-data?url=%2Fsuccess%3Fsession_id%3Dcs_live_random{n}")
        };
        let res = get(url, "198.51.100.4").await.unwrap();
        statuses.push(res.status().as_u16());
        if res.status() == 429 {
            waits.push(
                res.headers()["retry-after"]
                    .to_str()
                    .unwrap()
                    .parse::<u64>()
                    .unwrap(),
            );
            let body = res.text().await.unwrap();
            assert!(
                body.contains("Failed to verify payment session"),
                "the failure state: {body}"
            );
        }
    }
    assert_eq!(session_calls(&server).await, 1 + 5, "{statuses:?}");
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        5,
        "{statuses:?}"
    );
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 45);
    assert!(
        waits.iter().all(|w| (600..=720).contains(w)),
        "Retry-After: the next lookup in about 12 minutes: {waits:?}"
    );
    let (status, html) = (
        get("/success?session_id=cs_test_another".into(), "198.51.100.4")
            .await
            .unwrap()
            .status(),
        get("/success?session_id=cs_test_another".into(), "198.51.100.4")
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    );
    assert_eq!(status, 429);
    assert!(
        visible_text(element(&html, "main")).contains("try again in"),
        "the visitor is told to wait"
    );

    // A session already known is still shown to the limited client, and another client has its own budget.
    assert_eq!(
        get("/success?session_id=cs_test_real".into(), "198.51.100.4")
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        get("/success?session_id=cs_test_fresh".into(), "192.0.2.77")
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(session_calls(&server).await, 1 + 5 + 1);
    let metrics = app.get_text("/metrics").await.1;
    assert!(metrics.contains("http_rate_limited_total 47"), "{metrics}");
}

#[tokio::test]
async fn the_webhook_records_each_event_once_and_rejects_bad_signatures() {
    for (_, db) in
        crate::api::helpers::fresh_databases(crate::api::helpers::tempdir::TempDir::new().path())
            .await
    {
        webhook_on(Some(db.url.clone())).await;
    }
}

async fn webhook_on(database_url: Option<String>) {
    let server = MockServer::start().await;
    let app = app_with_stripe_on(&server, database_url).await;
    let url = format!("{}/api/stripe-webhook", app.base);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let payload = event(
        "evt_1",
        "checkout.session.completed",
        checkout_session("cs_test_done", "paid", Some("jenny@example.com")),
    )
    .to_string();
    let post = |sig: String, body: String| {
        app.client
            .post(&url)
            .header("stripe-signature", sig)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };

    let res = post(sign(&payload, now), payload.clone()).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({ "received": true, "duplicate": false })
    );
    // The same event again (Stripe retries): acknowledged, changes nothing.
    let res = post(sign(&payload, now), payload.clone()).await.unwrap();
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({ "received": true, "duplicate": true })
    );
    assert_eq!(
        citizen_site::payments::checkouts::count(&app.state.db)
            .await
            .unwrap(),
        1
    );

    // Tampered body, wrong secret, stale timestamp, no header.
    let tampered = payload.replace("jenny@example.com", "eve@example.com");
    assert_eq!(
        post(sign(&payload, now), tampered).await.unwrap().status(),
        400
    );
    let mut mac = Hmac::<Sha256>::new_from_slice(b"whsec_other").unwrap();
    mac.update(format!("{now}.{payload}").as_bytes());
    let wrong = format!("t={now},v1={}", hex::encode(mac.finalize().into_bytes()));
    assert_eq!(post(wrong, payload.clone()).await.unwrap().status(), 400);
    assert_eq!(
        post(sign(&payload, now - 3600), payload.clone())
            .await
            .unwrap()
            .status(),
        400
    );
    assert_eq!(
        post(String::new(), payload.clone()).await.unwrap().status(),
        400
    );
    assert_eq!(
        citizen_site::payments::checkouts::count(&app.state.db)
            .await
            .unwrap(),
        1
    );
}

#[tokio::test]
async fn delayed_payments_settle_through_the_webhook_and_the_success_page_follows() {
    for (_, db) in
        crate::api::helpers::fresh_databases(crate::api::helpers::tempdir::TempDir::new().path())
            .await
    {
        delayed_payments_on(db.url.clone()).await;
    }
}

async fn delayed_payments_on(database_url: String) {
    let server = MockServer::start().await;
    mount_session(
        &server,
        "cs_test_sepa",
        checkout_session("cs_test_sepa", "unpaid", Some("lea@asbl.example")),
    )
    .await;
    mount_session(
        &server,
        "cs_test_bounce",
        checkout_session("cs_test_bounce", "unpaid", Some("tom@asbl.example")),
    )
    .await;
    let app = app_with_stripe_on(&server, Some(database_url)).await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let deliver = |id: &str, kind: &str, session: Value| {
        let payload = event(id, kind, session).to_string();
        let req = app
            .client
            .post(format!("{}/api/stripe-webhook", app.base))
            .header("stripe-signature", sign(&payload, now))
            .header("content-type", "application/json")
            .body(payload);
        async move { req.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let stored = |id: &'static str| citizen_site::payments::checkouts::status(&app.state.db, id);
    let page = |id: &str| {
        let (app, url) = (&app, format!("/success?session_id={id}"));
        async move { visible_text(element(&app.get_text(&url).await.1, "main")) }
    };

    // Checkout completes with SEPA: unpaid, processing.
    let completed = deliver(
        "evt_c1",
        "checkout.session.completed",
        checkout_session("cs_test_sepa", "unpaid", Some("lea@asbl.example")),
    )
    .await;
    assert_eq!(completed["duplicate"], false);
    assert_eq!(
        stored("cs_test_sepa").await.unwrap().as_deref(),
        Some("unpaid")
    );
    assert!(page("cs_test_sepa").await.contains("Payment Processing"));

    // Days later the debit goes through: Stripe says paid...
    Mock::given(method("GET"))
        .and(path("/v1/checkout/sessions/cs_test_sepa"))
        .respond_with(ResponseTemplate::new(200).set_body_json(checkout_session(
            "cs_test_sepa",
            "paid",
            Some("lea@asbl.example"),
        )))
        .with_priority(1)
        .mount(&server)
        .await;
    assert!(
        page("cs_test_sepa").await.contains("Payment Processing"),
        "(the page remembers the last answer for a while)"
    );
    // ...and its webhook makes the page ask again.
    let succeeded = deliver(
        "evt_s1",
        "checkout.session.async_payment_succeeded",
        checkout_session("cs_test_sepa", "paid", Some("lea@asbl.example")),
    )
    .await;
    assert_eq!(succeeded["duplicate"], false);
    assert_eq!(
        stored("cs_test_sepa").await.unwrap().as_deref(),
        Some("paid")
    );
    assert!(page("cs_test_sepa").await.contains("Payment Successful!"));
    // Replayed, or an older event delivered late: nothing changes.
    assert_eq!(
        deliver(
            "evt_s1",
            "checkout.session.async_payment_succeeded",
            checkout_session("cs_test_sepa", "paid", None)
        )
        .await["duplicate"],
        true
    );
    assert_eq!(
        deliver(
            "evt_c1b",
            "checkout.session.completed",
            checkout_session("cs_test_sepa", "unpaid", None)
        )
        .await["duplicate"],
        false
    );
    assert_eq!(
        stored("cs_test_sepa").await.unwrap().as_deref(),
        Some("paid")
    );

    // Another debit bounces: Stripe still says unpaid, the page says it failed.
    deliver(
        "evt_c2",
        "checkout.session.completed",
        checkout_session("cs_test_bounce", "unpaid", None),
    )
    .await;
    assert!(page("cs_test_bounce").await.contains("Payment Processing"));
    let failed = deliver(
        "evt_f2",
        "checkout.session.async_payment_failed",
        checkout_session("cs_test_bounce", "unpaid", None),
    )
    .await;
    assert_eq!(failed["duplicate"], false);
    assert_eq!(
        stored("cs_test_bounce").await.unwrap().as_deref(),
        Some("failed")
    );
    let text = page("cs_test_bounce").await;
    assert!(
        text.contains("Payment Verification Failed") && text.contains("could not be completed"),
        "{text}"
    );
    assert_eq!(
        deliver(
            "evt_f2",
            "checkout.session.async_payment_failed",
            checkout_session("cs_test_bounce", "unpaid", None)
        )
        .await["duplicate"],
        true
    );
    assert_eq!(
        citizen_site::payments::checkouts::count(&app.state.db)
            .await
            .unwrap(),
        2
    );
    let events: i64 = sqlx::query("SELECT COUNT(*) AS n FROM stripe_events")
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap()
        .get("n");
    assert_eq!(events, 5, "each event recorded once");
}

#[tokio::test]
async fn without_a_stripe_key_the_endpoints_say_so_and_nothing_is_called() {
    let app = crate::api::helpers::spawn_app().await;
    let res = app.get("/api/get-stripe-prices").await;
    assert_eq!(res.json::<Value>().await.unwrap(), json!({ "prices": [] }));
    let res = app
        .client
        .post(format!("{}/api/create-checkout-session", app.base))
        .json(&json!({ "priceId": "price_x" }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 503);
    let res = app
        .client
        .post(format!("{}/api/stripe-webhook", app.base))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 503);
}
