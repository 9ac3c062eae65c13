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
    /// The key or the API address cannot be used.
    #[error("{0}")]
    Config(String),
}

impl Error {
    /// What `/metrics` calls this failure of a call (`upstream_request_duration_seconds`).
    pub fn outcome(&self) -> &'static str {
        match self {
            Error::Stripe(StripeError::Stripe(..)) => "error_status",
            Error::Stripe(StripeError::Timeout) => "timeout",
            Error::Stripe(StripeError::JSONDeserialize(_)) | Error::Unexpected(_) => "bad_answer",
            Error::Stripe(_) | Error::Webhook(_) | Error::Config(_) => "unreachable",
        }
    }
}

/// A price's product, as far as the pricing page reads it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct ProductInfo {
    pub name: String,
    pub metadata: ProductMetadata,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ProductMetadata {
    /// `product.metadata["planName"]`: the plan this product is, when its
    /// name alone does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub plan_name: Option<String>,
}

/// How often a recurring price is billed (`recurring.interval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum PriceInterval {
    Day,
    Week,
    Month,
    Year,
}

impl PriceInterval {
    pub fn as_str(self) -> &'static str {
        match self {
            PriceInterval::Day => "day",
            PriceInterval::Week => "week",
            PriceInterval::Month => "month",
            PriceInterval::Year => "year",
        }
    }
}

/// An active recurring price, with its product.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct PriceRecord {
    pub id: String,
    /// `unit_amount`, in the currency's minor unit (cents; see [`minor_unit_digits`]).
    #[ts(type = "number")]
    pub amount: i64,
    /// Lower-case ISO code as Stripe sends it, e.g. "eur".
    pub currency: String,
    pub interval: PriceInterval,
    pub product: ProductInfo,
}

/// A Checkout Session, as the success page shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct VerifiedSession {
    /// `customer_details.email`, falling back to `customer_email`.
    pub customer_email: Option<String>,
    /// In the currency's minor unit.
    #[ts(type = "number")]
    pub amount_total: i64,
    /// Lower-case ISO code as Stripe sends it, e.g. "usd".
    pub currency: String,
    /// "paid" | "unpaid" | "no_payment_required" (or any new value Stripe adds).
    pub payment_status: String,
    /// The session's own state: "open" | "complete" | "expired".
    pub status: Option<String>,
}

/// Where a checkout stands, as the success page tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum PaymentState {
    /// Paid, or nothing to pay (a trial).
    Paid,
    /// Checkout is complete but the money is not there yet: a delayed
    /// method such as SEPA Direct Debit, confirmed days later.
    Processing,
    /// Open (never finished), expired, or anything else.
    Failed,
}

impl VerifiedSession {
    pub fn state(&self) -> PaymentState {
        // Sessions from API versions without `status` are judged by payment alone.
        match (self.status.as_deref(), self.payment_status.as_str()) {
            (Some("complete") | None, "paid" | "no_payment_required") => PaymentState::Paid,
            (Some("complete"), "unpaid") => PaymentState::Processing,
            _ => PaymentState::Failed,
        }
    }
}

/// Whether `id` can be a Checkout Session id (`cs_test_...`, `cs_live_...`):
/// anything else is answered without asking Stripe.
pub fn is_session_id(id: &str) -> bool {
    let rest = id
        .strip_prefix("cs_test_")
        .or_else(|| id.strip_prefix("cs_live_"));
    rest.is_some_and(|r| {
        (1..=200).contains(&r.len()) && r.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

/// Digits after the decimal point in Stripe's amounts for `currency`: its
/// zero-decimal currencies count whole units, its three-decimal ones
/// thousandths, every other currency hundredths (Stripe's "Supported
/// currencies" page). The client's formatter (client/lib/money.ts) follows
/// the same lists.
pub fn minor_unit_digits(currency: &str) -> u32 {
    const ZERO: [&str; 16] = [
        "bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv",
        "xaf", "xof", "xpf",
    ];
    const THREE: [&str; 5] = ["bhd", "jod", "kwd", "omr", "tnd"];
    let listed = |list: &[&str]| list.iter().any(|c| c.eq_ignore_ascii_case(currency));
    if listed(&ZERO) {
        0
    } else if listed(&THREE) {
        3
    } else {
        2
    }
}

/// `amount` minor units as a decimal in the currency's major unit, e.g.
/// 2900 eur -> "29.00", 5000 jpy -> "5000" (schema.org offers want this).
pub fn major_units(amount: i64, currency: &str) -> String {
    let digits = minor_unit_digits(currency);
    if digits == 0 {
        return amount.to_string();
    }
    let scale = 10i64.pow(digits);
    let sign = if amount < 0 { "-" } else { "" };
    let a = amount.unsigned_abs();
    format!(
        "{sign}{}.{:0width$}",
        a / scale as u64,
        a % scale as u64,
        width = digits as usize
    )
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
/// A key that is not a secret or restricted key is refused here, before any
/// call, with a message that names the problem but never the key.
pub fn try_build_client(
    secret_key: &str,
    api_base: &str,
    timeout: Duration,
) -> Result<Client, Error> {
    check_secret_key(secret_key)?;
    // The client builds request URLs as `format!("{api_base}v1{path}")`, so the base must end
    // with exactly one '/'. ("http://h:1" displays as "http://h:1/" anyway, but a base with a
    // path prefix such as "http://h:1/stripe" would otherwise become ".../stripev1/prices".)
    let base = format!("{}/", api_base.trim_end_matches('/'));
    ClientBuilder::new(secret_key)
        .url(base)
        // Per attempt, covers connect + headers + body; on expiry -> StripeError::Timeout.
        .timeout(timeout)
        .build()
        .map_err(|e| Error::Config(format!("STRIPE_API_BASE {api_base:?} is not usable: {e}")))
}

fn check_secret_key(key: &str) -> Result<(), Error> {
    crate::config::stripe_key_shape(key)
        .map_err(|why| Error::Config(format!("STRIPE_SECRET_KEY is not usable: {why}")))
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
    Err(Error::Unexpected(format!(
        "price list longer than {MAX_PAGES} pages"
    )))
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
        currency: price.currency.to_string(),
        interval: match recurring.interval.as_str() {
            "day" => PriceInterval::Day,
            "week" => PriceInterval::Week,
            "month" => PriceInterval::Month,
            "year" => PriceInterval::Year,
            other => {
                // One the site has no words for: left out, the others stay.
                tracing::warn!(
                    price = price.id.as_str(),
                    interval = other,
                    "price with an unknown interval left out"
                );
                return Ok(None);
            }
        },
        product: ProductInfo {
            name: product.name.clone(),
            metadata: ProductMetadata {
                plan_name: product.metadata.get("planName").cloned(),
            },
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
        Error::Unexpected(format!(
            "checkout session {} has no url",
            session.id.as_str()
        ))
    })
}

/// Fetch a Checkout Session (e.g. from the success page's `session_id` query
/// parameter); None when Stripe has no such session (404).
pub async fn retrieve_session(
    client: &Client,
    session_id: &str,
) -> Result<Option<VerifiedSession>, Error> {
    let s = match RetrieveCheckoutSession::new(CheckoutSessionId::from(session_id))
        .send(client)
        .await
    {
        Ok(s) => s,
        Err(StripeError::Stripe(_, 404)) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    Ok(Some(VerifiedSession {
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
        status: s.status.as_ref().map(|st| st.as_str().to_string()),
    }))
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
            Error::Webhook(WebhookError::BadParse(format!(
                "{why}; not an event envelope either"
            )))
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
    Some(WebhookEvent {
        id,
        event_type,
        checkout_session_id,
        sdk_parsed: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(status: Option<&str>, payment_status: &str) -> VerifiedSession {
        VerifiedSession {
            customer_email: None,
            amount_total: 4900,
            currency: "eur".into(),
            payment_status: payment_status.into(),
            status: status.map(Into::into),
        }
    }

    #[test]
    fn only_paid_or_free_complete_sessions_count_as_paid() {
        assert_eq!(
            session(Some("complete"), "paid").state(),
            PaymentState::Paid
        );
        assert_eq!(
            session(Some("complete"), "no_payment_required").state(),
            PaymentState::Paid
        );
        assert_eq!(
            session(Some("complete"), "unpaid").state(),
            PaymentState::Processing
        );
        assert_eq!(
            session(Some("open"), "unpaid").state(),
            PaymentState::Failed
        );
        assert_eq!(
            session(Some("expired"), "unpaid").state(),
            PaymentState::Failed
        );
        assert_eq!(session(None, "unpaid").state(), PaymentState::Failed);
    }

    #[test]
    fn session_ids_have_stripes_shape() {
        assert!(is_session_id("cs_test_a1B2c3"));
        assert!(is_session_id(&format!("cs_live_{}", "a".repeat(58))));
        for bad in [
            "",
            "cs_test_",
            "cs_1",
            "pi_test_abc",
            "cs_test_a/../b",
            "cs_test_a b",
            "cs_test_é",
            &format!("cs_test_{}", "a".repeat(201)),
        ] {
            assert!(!is_session_id(bad), "{bad:?}");
        }
    }

    #[test]
    fn amounts_use_each_currencys_minor_unit() {
        assert_eq!(major_units(2900, "eur"), "29.00");
        assert_eq!(major_units(120_005, "USD"), "1200.05");
        assert_eq!(major_units(5000, "jpy"), "5000");
        assert_eq!(major_units(1500, "kwd"), "1.500");
        assert_eq!(major_units(-250, "eur"), "-2.50");
    }

    #[test]
    fn keys_that_cannot_work_are_refused_with_a_reason_but_never_echoed() {
        assert!(check_secret_key("sk_test_51Habc").is_ok());
        assert!(check_secret_key("rk_live_51Habc").is_ok());
        for (key, says) in [
            ("pk_live_51Hsecretish", "publishable"),
            ("51Habc", "starts with sk_test_"),
            ("sk_test_", "only the prefix"),
            ("sk_test_51H abc\n", "characters"),
        ] {
            let e = check_secret_key(key).unwrap_err().to_string();
            assert!(e.contains(says), "{key:?}: {e}");
            assert!(
                !e.contains("51H"),
                "the key itself is not in the message: {e}"
            );
        }
    }
}
