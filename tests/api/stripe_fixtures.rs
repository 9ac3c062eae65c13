//! Stripe-shaped JSON fixtures (field sets as in Stripe's API reference examples).
#![allow(dead_code)]

use hmac::{Hmac, KeyInit, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

pub fn product(id: &str, name: &str, plan_name: Option<&str>) -> Value {
    let metadata = match plan_name {
        Some(p) => json!({ "planName": p }),
        None => json!({}),
    };
    json!({
        "id": id, "object": "product", "active": true, "created": 1_700_000_000,
        "default_price": null, "description": null, "images": [], "livemode": false,
        "marketing_features": [], "metadata": metadata, "name": name,
        "package_dimensions": null, "shippable": null, "statement_descriptor": null,
        "tax_code": null, "type": "service", "unit_label": null, "updated": 1_700_000_000,
        "url": null
    })
}

/// A recurring price of `amount` minor units of `currency` ("eur", "usd").
pub fn price(id: &str, amount: i64, currency: &str, interval: &str, product: Value) -> Value {
    json!({
        "id": id, "object": "price", "active": true, "billing_scheme": "per_unit",
        "created": 1_700_000_000, "currency": currency, "custom_unit_amount": null,
        "livemode": false, "lookup_key": null, "metadata": {}, "nickname": null,
        "product": product,
        "recurring": {
            "aggregate_usage": null, "interval": interval, "interval_count": 1,
            "meter": null, "trial_period_days": null, "usage_type": "licensed"
        },
        "tax_behavior": "unspecified", "tiers_mode": null, "transform_quantity": null,
        "type": "recurring", "unit_amount": amount, "unit_amount_decimal": amount.to_string()
    })
}

pub fn list(data: Vec<Value>, has_more: bool) -> Value {
    json!({ "object": "list", "url": "/v1/prices", "has_more": has_more, "data": data })
}

/// A session whose checkout is complete, paid or not (a delayed method
/// completes "unpaid"); 15.00 USD.
pub fn checkout_session(id: &str, payment_status: &str, email: Option<&str>) -> Value {
    session_in_state(id, "complete", payment_status, email)
}

/// A session in any state: "open" (never finished), "complete", "expired".
pub fn session_in_state(
    id: &str,
    status: &str,
    payment_status: &str,
    email: Option<&str>,
) -> Value {
    let customer_details = email.map(|e| {
        json!({
            "address": null, "email": e, "name": "Jenny Rosen", "phone": null,
            "tax_exempt": "none", "tax_ids": []
        })
    });
    json!({
        "id": id, "object": "checkout.session",
        "after_expiration": null, "allow_promotion_codes": null,
        "amount_subtotal": 1500, "amount_total": 1500,
        "automatic_tax": { "enabled": false, "liability": null, "provider": null, "status": null },
        "billing_address_collection": null,
        "cancel_url": "https://example.com/cancel",
        "client_reference_id": null, "consent": null, "consent_collection": null,
        "created": 1_700_000_000, "currency": "usd",
        "custom_fields": [],
        "custom_text": {
            "after_submit": null, "shipping_address": null, "submit": null,
            "terms_of_service_acceptance": null
        },
        "customer": null, "customer_creation": "always",
        "customer_details": customer_details,
        "customer_email": null,
        "expires_at": 1_700_086_400,
        "invoice": null, "invoice_creation": null,
        "livemode": false, "locale": null, "metadata": {},
        "mode": "subscription",
        "payment_intent": null, "payment_link": null,
        "payment_method_collection": "always",
        "payment_method_options": {},
        "payment_method_types": ["card"],
        "payment_status": payment_status,
        "phone_number_collection": { "enabled": false },
        "recovered_from": null, "setup_intent": null,
        "shipping_address_collection": null, "shipping_cost": null,
        "shipping_options": [],
        "status": status, "submit_type": null, "subscription": null,
        "success_url": "https://example.com/success?session_id={CHECKOUT_SESSION_ID}",
        "total_details": { "amount_discount": 0, "amount_shipping": 0, "amount_tax": 0 },
        "ui_mode": "hosted",
        "url": format!("https://checkout.stripe.com/c/pay/{id}#fidkdWxOYHwnPyd1blpxYHZxWjA0")
    })
}

pub fn event(id: &str, type_: &str, object: Value) -> Value {
    json!({
        "id": id, "object": "event", "api_version": "2025-03-31.basil",
        "created": 1_700_000_000,
        "data": { "object": object },
        "livemode": false, "pending_webhooks": 1,
        "request": { "id": null, "idempotency_key": null },
        "type": type_
    })
}

/// The webhook signing secret the tests give the server.
pub const WEBHOOK_SECRET: &str = "whsec_test_secret";

/// A `Stripe-Signature` header for `payload` sent at `t`, signed with [`WEBHOOK_SECRET`].
pub fn sign(payload: &str, t: i64) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(WEBHOOK_SECRET.as_bytes()).unwrap();
    mac.update(format!("{t}.{payload}").as_bytes());
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}
