//! The payments service behind the pricing and success pages and the Stripe
//! endpoints: one place that knows the key, the site URL and the price cache.

use std::sync::Arc;
use std::time::Duration;

use moka::future::Cache;

use crate::config::Config;
use crate::integrations::stripe::{self, PriceRecord, VerifiedSession, WebhookEvent};

/// How long the price list is reused: a busy pricing page calls Stripe at
/// most this often.
pub const PRICE_CACHE_TTL: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum PaymentsError {
    #[error("Stripe is not configured (STRIPE_SECRET_KEY is unset)")]
    Off,
    #[error("unknown or inactive price {0:?}")]
    UnknownPrice(String),
    #[error("Stripe did not answer within {0:?}")]
    Timeout(Duration),
    #[error(transparent)]
    Stripe(#[from] stripe::Error),
    #[error("{0}")]
    Shared(Arc<PaymentsError>),
}

pub struct Payments {
    client: Option<stripe::Client>,
    /// Outer bound on one Stripe call, pagination included (the client
    /// also bounds each HTTP attempt, connecting included).
    call_timeout: Duration,
    site_url: String,
    webhook_secret: Option<String>,
    prices: Cache<(), Arc<Vec<PriceRecord>>>,
}

impl Payments {
    pub fn new(config: &Config) -> Payments {
        let client = match &config.stripe_secret_key {
            Some(key) => Some(
                stripe::try_build_client(key, &config.stripe_api_base, config.timeouts.stripe)
                    .unwrap_or_else(|e| panic!("STRIPE_SECRET_KEY or STRIPE_API_BASE is unusable: {e}")),
            ),
            None => {
                tracing::info!("Stripe is off (STRIPE_SECRET_KEY unset): every plan shows 'Contact us for pricing'");
                None
            }
        };
        Payments {
            client,
            call_timeout: config.timeouts.stripe + config.timeouts.stripe / 2,
            site_url: config.site_url.clone(),
            webhook_secret: config.stripe_webhook_secret.clone(),
            prices: Cache::builder().max_capacity(1).time_to_live(PRICE_CACHE_TTL).build(),
        }
    }

    fn client(&self) -> Result<&stripe::Client, PaymentsError> {
        self.client.as_ref().ok_or(PaymentsError::Off)
    }

    /// Active prices with their products; empty when Stripe is off. One
    /// Stripe call per TTL, however many visitors ask at once.
    pub async fn prices(&self) -> Result<Arc<Vec<PriceRecord>>, PaymentsError> {
        let Ok(client) = self.client() else { return Ok(Arc::new(Vec::new())) };
        self.prices
            .try_get_with((), async {
                let list = timed(self.call_timeout, stripe::list_active_prices(client)).await?;
                Ok::<_, PaymentsError>(Arc::new(list))
            })
            .await
            .map_err(PaymentsError::Shared)
    }

    /// A subscription Checkout session for an active price; its URL.
    pub async fn checkout(&self, price_id: &str) -> Result<String, PaymentsError> {
        let client = self.client()?;
        if !self.prices().await?.iter().any(|p| p.id == price_id) {
            return Err(PaymentsError::UnknownPrice(price_id.to_owned()));
        }
        let success = format!("{}/success?session_id={{CHECKOUT_SESSION_ID}}", self.site_url);
        let cancel = format!("{}/cancel", self.site_url);
        timed(self.call_timeout, stripe::create_subscription_checkout(client, price_id, &success, &cancel)).await
    }

    pub async fn verify(&self, session_id: &str) -> Result<VerifiedSession, PaymentsError> {
        timed(self.call_timeout, stripe::retrieve_session(self.client()?, session_id)).await
    }

    pub fn webhooks_on(&self) -> bool {
        self.webhook_secret.is_some()
    }

    /// Checks a webhook's `Stripe-Signature`; None when no secret is set.
    pub fn verify_webhook(&self, payload: &str, signature: &str) -> Option<Result<WebhookEvent, stripe::Error>> {
        let secret = self.webhook_secret.as_deref()?;
        Some(stripe::verify_webhook(payload, signature, secret))
    }
}

async fn timed<T>(bound: Duration, call: impl std::future::Future<Output = Result<T, stripe::Error>>) -> Result<T, PaymentsError> {
    match tokio::time::timeout(bound, call).await {
        Ok(r) => Ok(r?),
        Err(_) => Err(PaymentsError::Timeout(bound)),
    }
}
