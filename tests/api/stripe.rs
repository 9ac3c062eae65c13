//! The real async-stripe client against a local stand-in for Stripe
//! (wiremock): prices on the pricing page, checkout, the success page, the
//! webhook.

use std::collections::HashMap;

use hmac::{Hmac, KeyInit, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::helpers::{element, spawn_app_with, visible_text, TestApp};
use crate::stripe_fixtures::{checkout_session, event, list, price, product};

const WEBHOOK_SECRET: &str = "whsec_test_secret";

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
/// is named otherwise), Pro has no price at all.
fn catalogue() -> Value {
    list(
        vec![
            price("price_light_m", 2900, "month", product("prod_l", "Community Light", None)),
            price("price_std_m", 4900, "month", product("prod_s", "Citizen Hosting B", Some("Community Standard"))),
            price("price_std_y", 49000, "year", product("prod_s", "Citizen Hosting B", Some("Community Standard"))),
            price("price_other_m", 9900, "month", product("prod_x", "Something Else", Some("Other"))),
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
    let start = main.find(&format!(">{plan}</h3>")).unwrap_or_else(|| panic!("no card for {plan}"));
    let end = main[start..].find("</article>").unwrap() + start;
    visible_text(&format!("<body>{}", &main[start..end]))
}

#[tokio::test]
async fn prices_match_plans_and_format_in_both_intervals_with_one_stripe_call() {
    let server = MockServer::start().await;
    mount_prices(&server, 1).await; // cached: one call for everything below
    let app = app_with_stripe(&server).await;

    let (status, html) = app.get_text("/pricing").await;
    assert_eq!(status, 200);
    let light = plan_card(&html, "Community Light");
    assert!(light.contains("€29") && light.contains("/month"), "{light}");
    assert!(light.contains("€290 per year (save 2 months)"), "{light}");
    let standard = plan_card(&html, "Community Standard");
    assert!(standard.contains("€49") && standard.contains("€490 per year (save 2 months)"), "metadata.planName match: {standard}");
    let pro = plan_card(&html, "Community Pro");
    assert!(pro.contains("Contact us for pricing") && pro.contains("Contact Us"), "{pro}");
    assert!(html.contains(r#"name="priceId" value="price_light_m""#));

    let (_, html) = app.get_text("/pricing?billing=yearly").await;
    let standard = plan_card(&html, "Community Standard");
    assert!(standard.contains("€490") && standard.contains("/year") && standard.contains("Save 1 months"), "{standard}");
    assert!(plan_card(&html, "Community Light").contains("Contact us for pricing"), "no yearly Light price");

    let res = app.get("/api/get-stripe-prices").await;
    assert_eq!(res.status(), 200);
    let json: Value = res.json().await.unwrap();
    assert_eq!(json["prices"].as_array().unwrap().len(), 4);
    assert_eq!(json["prices"][1], json!({ "id": "price_std_m", "amount": 4900, "interval": "month",
        "product": { "name": "Citizen Hosting B", "metadata": { "planName": "Community Standard" } } }));
}

#[tokio::test]
async fn a_stripe_failure_shows_the_pricing_error_with_try_again() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/prices"))
        .respond_with(ResponseTemplate::new(500).set_body_json(json!({ "error": { "type": "api_error", "message": "boom" } })))
        .mount(&server)
        .await;
    let app = app_with_stripe(&server).await;
    let (status, html) = app.get_text("/pricing").await;
    assert_eq!(status, 200);
    let text = visible_text(element(&html, "main"));
    assert!(text.contains("Failed to load pricing information") && text.contains("Try Again"), "{text}");
    let res = app.get("/api/get-stripe-prices").await;
    assert_eq!(res.status(), 502);
    assert_eq!(res.json::<Value>().await.unwrap()["error"], "Failed to load pricing information");
}

#[tokio::test]
async fn checkout_creates_a_subscription_session_and_answers_with_its_url_or_a_303() {
    let server = MockServer::start().await;
    mount_prices(&server, 1).await;
    Mock::given(method("POST"))
        .and(path("/v1/checkout/sessions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(checkout_session("cs_test_a1", "unpaid", None)))
        .expect(2)
        .mount(&server)
        .await;
    let app = app_with_stripe(&server).await;
    let url = format!("{}/api/create-checkout-session", app.base);

    let res = app.client.post(&url).json(&json!({ "priceId": "price_std_m" })).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert!(body["url"].as_str().unwrap().starts_with("https://checkout.stripe.com/c/pay/cs_test_a1"));

    let sent = server.received_requests().await.unwrap();
    let create = sent.iter().find(|r| r.url.path() == "/v1/checkout/sessions").unwrap();
    let form: HashMap<String, String> = form_urlencoded::parse(&create.body).into_owned().collect();
    assert_eq!(form["mode"], "subscription");
    assert_eq!(form["line_items[0][price]"], "price_std_m");
    assert_eq!(form["line_items[0][quantity]"], "1");
    assert_eq!(form["success_url"], "https://site.example/success?session_id={CHECKOUT_SESSION_ID}");
    assert_eq!(form["cancel_url"], "https://site.example/cancel");

    // Without JavaScript: the form posts, the server redirects to Checkout.
    let res = app.client.post(&url).header("content-type", "application/x-www-form-urlencoded").body("priceId=price_light_m").send().await.unwrap();
    assert_eq!(res.status(), 303);
    assert!(res.headers()["location"].to_str().unwrap().starts_with("https://checkout.stripe.com/"));

    // A price that is not on sale never reaches Stripe's checkout.
    let res = app.client.post(&url).json(&json!({ "priceId": "price_forged" })).send().await.unwrap();
    assert_eq!(res.status(), 400);
    let res = app.client.post(&url).json(&json!({})).send().await.unwrap();
    assert_eq!(res.status(), 400);
}

#[tokio::test]
async fn the_success_page_shows_paid_failed_and_missing_session_states() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/checkout/sessions/cs_test_paid"))
        .respond_with(ResponseTemplate::new(200).set_body_json(checkout_session("cs_test_paid", "paid", Some("jenny@example.com"))))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex("^/v1/checkout/sessions/cs_test_(gone|x)$"))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({ "error": { "type": "invalid_request_error", "message": "No such checkout.session" } })))
        .mount(&server)
        .await;
    let app = app_with_stripe(&server).await;

    let (_, html) = app.get_text("/success?session_id=cs_test_paid").await;
    let text = visible_text(element(&html, "main"));
    assert!(text.contains("Payment Successful!") && text.contains("jenny@example.com"), "{text}");
    assert!(text.contains("15.00 USD") && text.contains("paid"), "{text}");

    let (_, html) = app.get_text("/success?session_id=cs_test_gone").await;
    let text = visible_text(element(&html, "main"));
    assert!(text.contains("Payment Verification Failed") && text.contains("Failed to verify payment session"), "{text}");
    assert!(html.contains(r#"href="/pricing""#) && text.contains("Back to Pricing"));

    let (_, html) = app.get_text("/success").await;
    assert!(visible_text(element(&html, "main")).contains("No session ID provided"));

    let verify = format!("{}/api/verify-checkout-session", app.base);
    let res = app.client.post(&verify).json(&json!({ "sessionId": "cs_test_paid" })).send().await.unwrap();
    assert_eq!(res.json::<Value>().await.unwrap()["session"], json!({
        "customer_email": "jenny@example.com", "amount_total": 1500, "currency": "usd", "payment_status": "paid" }));
    let res = app.client.post(&verify).json(&json!({ "sessionId": "" })).send().await.unwrap();
    assert_eq!((res.status().as_u16(), res.json::<Value>().await.unwrap()["error"].clone()), (400, json!("No session ID provided")));
    let res = app.client.post(&verify).json(&json!({ "sessionId": "cs_test_x" })).send().await.unwrap();
    assert_eq!(res.json::<Value>().await.unwrap()["error"], "Failed to verify payment session");
}

fn sign(payload: &str, t: i64) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(WEBHOOK_SECRET.as_bytes()).unwrap();
    mac.update(format!("{t}.{payload}").as_bytes());
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

#[tokio::test]
async fn the_webhook_records_a_completed_checkout_once_and_rejects_bad_signatures() {
    for (_, db) in crate::helpers::fresh_databases(crate::helpers::tempdir::TempDir::new().path()).await {
        webhook_on(Some(db)).await;
    }
}

async fn webhook_on(database_url: Option<String>) {
    let server = MockServer::start().await;
    let app = app_with_stripe_on(&server, database_url).await;
    let url = format!("{}/api/stripe-webhook", app.base);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let payload = event("evt_1", "checkout.session.completed", checkout_session("cs_test_done", "paid", Some("jenny@example.com"))).to_string();
    let post = |sig: String, body: String| app.client.post(&url).header("stripe-signature", sig).header("content-type", "application/json").body(body).send();

    let res = post(sign(&payload, now), payload.clone()).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.unwrap(), json!({ "received": true, "duplicate": false }));
    // The same event again (Stripe retries): acknowledged, changes nothing.
    let res = post(sign(&payload, now), payload.clone()).await.unwrap();
    assert_eq!(res.json::<Value>().await.unwrap(), json!({ "received": true, "duplicate": true }));
    assert_eq!(citizen_site::routes::api::stripe::completed_checkouts(&app.state).await.unwrap(), 1);

    // Tampered body, wrong secret, stale timestamp, no header.
    let tampered = payload.replace("jenny@example.com", "eve@example.com");
    assert_eq!(post(sign(&payload, now), tampered).await.unwrap().status(), 400);
    let mut mac = Hmac::<Sha256>::new_from_slice(b"whsec_other").unwrap();
    mac.update(format!("{now}.{payload}").as_bytes());
    let wrong = format!("t={now},v1={}", hex::encode(mac.finalize().into_bytes()));
    assert_eq!(post(wrong, payload.clone()).await.unwrap().status(), 400);
    assert_eq!(post(sign(&payload, now - 3600), payload.clone()).await.unwrap().status(), 400);
    assert_eq!(post(String::new(), payload.clone()).await.unwrap().status(), 400);
    assert_eq!(citizen_site::routes::api::stripe::completed_checkouts(&app.state).await.unwrap(), 1);
}

#[tokio::test]
async fn without_a_stripe_key_the_endpoints_say_so_and_nothing_is_called() {
    let app = crate::helpers::spawn_app().await;
    let res = app.get("/api/get-stripe-prices").await;
    assert_eq!(res.json::<Value>().await.unwrap(), json!({ "prices": [] }));
    let res = app.client.post(format!("{}/api/create-checkout-session", app.base)).json(&json!({ "priceId": "price_x" })).send().await.unwrap();
    assert_eq!(res.status(), 503);
    let res = app.client.post(format!("{}/api/stripe-webhook", app.base)).body("{}").send().await.unwrap();
    assert_eq!(res.status(), 503);
}
