//! Stripe through async-stripe 1.0 (split crates, hyper + rustls/ring): the
//! price list, subscription checkout sessions, session retrieval and webhook
//! signature checks. The API base URL is configurable so tests can point the
//! real client at a local stand-in.
//!
//! Crate names in code: `async-stripe` -> `stripe`, `async-stripe-product` -> `stripe_product`,
//! `async-stripe-checkout` -> `stripe_checkout`, `async-stripe-webhook` -> `stripe_webhook`.

use std::time::Duration;

use stripe::{ClientBuilder, StripeError};
use stripe_checkout::checkout_session::{
    CreateCheckoutSession, CreateCheckoutSessionLineItems, RetrieveCheckoutSession,
};
use stripe_checkout::{CheckoutSessionId, CheckoutSessionMode};
use stripe_product::price::ListPrice;
use stripe_product::{Price, PriceType};
use stripe_webhook::{EventObject, Webhook, WebhookError};

pub use stripe::Client;

/// Page size for list calls (Stripe's maximum).
const PAGE_LIMIT: i64 = 100;
/// Hard cap on pages fetched by [`list_active_prices`] (10 000 prices), so a misbehaving
/// server that always says `has_more: true` cannot loop us forever.
const MAX_PAGES: usize = 100;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Transport error, timeout, non-2xx answer from Stripe, or undecodable response body.
    #[error(transparent)]
    Stripe(#[from] StripeError),
    /// Bad `Stripe-Signature` header, wrong signature, stale timestamp, or unparseable event.
    #[error(transparent)]
    Webhook(#[from] WebhookError),
    /// Stripe answered 2xx but a field we rely on was absent.
    #[error("unexpected Stripe response: {0}")]
    Unexpected(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductInfo {
    pub name: String,
    /// `product.metadata["planName"]`
    pub metadata_plan_name: Option<String>,
}

/// `{ name, metadata: { planName } }`, the shape the pricing page reads.
impl serde::Serialize for ProductInfo {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde_json::json!({
            "name": self.name,
            "metadata": match &self.metadata_plan_name {
                Some(p) => serde_json::json!({ "planName": p }),
                None => serde_json::json!({}),
            },
        })
        .serialize(s)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PriceRecord {
    pub id: String,
    /// `unit_amount`, in the currency's minor unit (cents).
    pub amount: i64,
    /// `recurring.interval`: "month" | "year" (or "week" | "day").
    pub interval: String,
    pub product: ProductInfo,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VerifiedSession {
    /// `customer_details.email`, falling back to `customer_email`.
    pub customer_email: Option<String>,
    pub amount_total: i64,
    /// Lower-case ISO code as Stripe sends it, e.g. "usd".
    pub currency: String,
    /// "paid" | "unpaid" | "no_payment_required" (or any new value Stripe adds).
    pub payment_status: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEvent {
    pub id: String,
    /// e.g. "checkout.session.completed"
    pub event_type: String,
    /// Set for `checkout.session.completed` (and the other `checkout.session.*` events).
    pub checkout_session_id: Option<String>,
    /// false when the SDK's typed parse of `data.object` failed and the envelope was read
    /// with serde_json instead (signature was verified either way).
    pub sdk_parsed: bool,
}

/// A client for `api_base` ("https://api.stripe.com" or "http://127.0.0.1:PORT")
/// whose every HTTP attempt, connecting included, is cut off after `timeout`.
pub fn try_build_client(
    secret_key: &str,
    api_base: &str,
    timeout: Duration,
) -> Result<Client, Error> {
    // The client builds request URLs as `format!("{api_base}v1{path}")`, so the base must end
    // with exactly one '/'. ("http://h:1" displays as "http://h:1/" anyway, but a base with a
    // path prefix such as "http://h:1/stripe" would otherwise become ".../stripev1/prices".)
    let base = format!("{}/", api_base.trim_end_matches('/'));
    Ok(ClientBuilder::new(secret_key)
        .url(base)
        // Per attempt, covers connect + headers + body; on expiry -> StripeError::Timeout.
        .timeout(timeout)
        .build()?)
}

/// All active recurring prices, product expanded, following `has_more` pagination
/// (100 per page). Prices without a flat `unit_amount` (tiered / custom-amount) are skipped.
pub async fn list_active_prices(client: &Client) -> Result<Vec<PriceRecord>, Error> {
    let mut out = Vec::new();
    let mut starting_after: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut req = ListPrice::new()
            .active(true)
            .type_(PriceType::Recurring)
            .limit(PAGE_LIMIT)
            .expand(vec!["data.product".to_string()]);
        if let Some(cursor) = &starting_after {
            req = req.starting_after(cursor.clone());
        }
        let page = req.send(client).await?;
        for price in &page.data {
            if let Some(rec) = price_record(price)? {
                out.push(rec);
            }
        }
        match (page.has_more, page.data.last()) {
            (true, Some(last)) => starting_after = Some(last.id.as_str().to_string()),
            _ => return Ok(out),
        }
    }
    Err(Error::Unexpected(format!("price list longer than {MAX_PAGES} pages")))
}

fn price_record(price: &Price) -> Result<Option<PriceRecord>, Error> {
    let (Some(amount), Some(recurring)) = (price.unit_amount, price.recurring.as_ref()) else {
        return Ok(None);
    };
    let product = price.product.as_object().ok_or_else(|| {
        Error::Unexpected(format!("price {}: product not expanded", price.id.as_str()))
    })?;
    Ok(Some(PriceRecord {
        id: price.id.as_str().to_string(),
        amount,
        interval: recurring.interval.as_str().to_string(),
        product: ProductInfo {
            name: product.name.clone(),
            metadata_plan_name: product.metadata.get("planName").cloned(),
        },
    }))
}

/// Create a subscription-mode Checkout Session for one unit of `price_id`; returns its URL.
/// Put the literal `{CHECKOUT_SESSION_ID}` in `success_url`; Stripe substitutes it.
pub async fn create_subscription_checkout(
    client: &Client,
    price_id: &str,
    success_url: &str,
    cancel_url: &str,
) -> Result<String, Error> {
    let mut item = CreateCheckoutSessionLineItems::new();
    item.price = Some(price_id.to_string());
    item.quantity = Some(1);
    let session = CreateCheckoutSession::new()
        .mode(CheckoutSessionMode::Subscription)
        .line_items(vec![item])
        .success_url(success_url)
        .cancel_url(cancel_url)
        .send(client)
        .await?;
    session.url.ok_or_else(|| {
        Error::Unexpected(format!("checkout session {} has no url", session.id.as_str()))
    })
}

/// Fetch a Checkout Session (e.g. from the success page's `session_id` query parameter).
pub async fn retrieve_session(client: &Client, session_id: &str) -> Result<VerifiedSession, Error> {
    let s = RetrieveCheckoutSession::new(CheckoutSessionId::from(session_id)).send(client).await?;
    Ok(VerifiedSession {
        customer_email: s
            .customer_details
            .as_ref()
            .and_then(|d| d.email.clone())
            .or_else(|| s.customer_email.clone()),
        amount_total: s
            .amount_total
            .ok_or_else(|| Error::Unexpected(format!("session {session_id}: no amount_total")))?,
        currency: s
            .currency
            .as_ref()
            .map(|c| c.to_string())
            .ok_or_else(|| Error::Unexpected(format!("session {session_id}: no currency")))?,
        payment_status: s.payment_status.as_str().to_string(),
    })
}

/// Verify a webhook (`Stripe-Signature: t=...,v1=...`, HMAC-SHA256 over "{t}.{payload}",
/// 300 s tolerance, any matching `v1` accepted) with async-stripe-webhook's
/// `Webhook::construct_event`. `payload` must be the raw request body, byte for byte.
///
/// `construct_event` also deserializes `data.object` into the SDK's generated type for every
/// event type it knows, and fails with `BadParse` if any field the SDK treats as required is
/// missing (API-version drift, trimmed test payloads). It only parses *after* the signature and
/// timestamp checks pass (rc.10 source; guarded by tests), so on `BadParse` the payload is
/// authentic and we fall back to reading `id`, `type` and `data.object.id` with serde_json,
/// instead of answering Stripe with an error and having it retry for days.
pub fn verify_webhook(
    payload: &str,
    signature_header: &str,
    secret: &str,
) -> Result<WebhookEvent, Error> {
    match Webhook::construct_event(payload, signature_header, secret) {
        Ok(event) => {
            let checkout_session_id = match &event.data.object {
                EventObject::CheckoutSessionCompleted(s)
                | EventObject::CheckoutSessionAsyncPaymentSucceeded(s)
                | EventObject::CheckoutSessionAsyncPaymentFailed(s)
                | EventObject::CheckoutSessionExpired(s) => Some(s.id.as_str().to_string()),
                _ => None,
            };
            Ok(WebhookEvent {
                id: event.id.as_str().to_string(),
                event_type: event.type_.as_str().to_string(),
                checkout_session_id,
                sdk_parsed: true,
            })
        }
        Err(WebhookError::BadParse(why)) => lenient_event(payload).ok_or_else(|| {
            Error::Webhook(WebhookError::BadParse(format!("{why}; not an event envelope either")))
        }),
        Err(e) => Err(e.into()),
    }
}

/// Envelope-only parse of an already verified payload.
fn lenient_event(payload: &str) -> Option<WebhookEvent> {
    let v: serde_json::Value = serde_json::from_str(payload).ok()?;
    let id = v.get("id")?.as_str()?.to_string();
    let event_type = v.get("type")?.as_str()?.to_string();
    let checkout_session_id = if event_type.starts_with("checkout.session.") {
        let obj = v.get("data")?.get("object")?;
        Some(obj.get("id")?.as_str()?.to_string())
    } else {
        None
    };
    Some(WebhookEvent { id, event_type, checkout_session_id, sdk_parsed: false })
}
