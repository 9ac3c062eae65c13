//! Payments: the service behind the pricing and success pages and the
//! Stripe endpoints (this file: one place that knows the key, the site URL
//! and the caches), the Stripe client ([`stripe`], async-stripe), where a
//! visitor's payment stands ([`sessions`]) and what the webhook records
//! ([`checkouts`], the SQL of payments).
//!
//! The success page's session lookups are the one Stripe call a visitor can
//! cause at will, so they are guarded three ways: an id that cannot be a
//! Checkout Session id never reaches Stripe; a session seen lately comes
//! from a cache (concurrent lookups of one id share one call); and the
//! calls one client causes are limited ([`ClientLimiter`]).

pub mod checkouts;
pub mod sessions;
pub mod stripe;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use moka::future::Cache;
use moka::Expiry;

use self::stripe::{PaymentState, PriceRecord, VerifiedSession, WebhookEvent};
use crate::config::Config;
use crate::live::{Live, Snapshot};
use crate::metrics::{UpstreamCalls, UpstreamLabels};
use crate::rate_limit::ClientLimiter;

/// How often the price list is read again from Stripe (in the background:
/// visitors never wait on it, and a busy pricing page calls Stripe no more
/// often than this).
pub const PRICE_REFRESH: Duration = Duration::from_secs(60);
/// How soon a price list that could not be read is tried again.
pub const PRICE_RETRY: Duration = Duration::from_secs(5);
/// How long a paid session is reused: it cannot change any more (a refund
/// is not the success page's business).
pub const PAID_SESSION_TTL: Duration = Duration::from_secs(30 * 60);
/// How long any other lookup is reused (an unpaid session may be paid any
/// minute; one Stripe does not know may be a typo being corrected). A
/// webhook about a session drops it sooner.
pub const SESSION_TTL: Duration = Duration::from_secs(60);
/// Sessions kept at most.
const SESSION_CACHE_CAPACITY: u64 = 10_000;

/// A session lookup's answer: the session, or None when Stripe has none by
/// that id (or the id cannot be one).
pub type Lookup = Option<Arc<VerifiedSession>>;

/// The price list as last read from Stripe: the active prices, or why they
/// could not be read. Pages show either (the spec's 'Failed to load pricing
/// information' for the second).
pub type PriceList = Result<Arc<Vec<PriceRecord>>, Arc<str>>;

#[derive(Debug, thiserror::Error)]
pub enum PaymentsError {
    #[error("Stripe is not configured (STRIPE_SECRET_KEY is unset)")]
    Off,
    #[error("unknown or inactive price {0:?}")]
    UnknownPrice(String),
    #[error("this client has looked up too many sessions; next in {0:?}")]
    RateLimited(Duration),
    #[error("Stripe did not answer within {0:?}")]
    Timeout(Duration),
    #[error(transparent)]
    Stripe(#[from] stripe::Error),
    #[error("{0}")]
    Shared(Arc<PaymentsError>),
    #[error("the price list could not be read: {0}")]
    Prices(Arc<str>),
}

/// Where Stripe's Checkout sends the visitor back: absolute URLs, the
/// success page's with Stripe's `{CHECKOUT_SESSION_ID}` placeholder (the
/// HTTP layer makes them from the route table).
#[derive(Debug, Clone)]
pub struct Returns {
    pub success: String,
    pub cancel: String,
}

pub struct Payments {
    client: Option<stripe::Client>,
    /// Outer bound on one Stripe call, pagination included (the client
    /// also bounds each HTTP attempt, connecting included).
    call_timeout: Duration,
    /// Each call's operation, outcome and duration (`/metrics`).
    calls: UpstreamCalls,
    webhook_secret: Option<String>,
    /// None until first read (always `Ok([])` when Stripe is off).
    prices: Live<Option<PriceList>>,
    /// One read of the price list at a time.
    price_read: tokio::sync::Mutex<()>,
    sessions: Cache<String, Lookup>,
    /// Session lookups that reach Stripe, per client.
    lookup_limiter: ClientLimiter,
}

/// A paid session is kept longer than anything else.
struct SessionExpiry;

impl Expiry<String, Lookup> for SessionExpiry {
    fn expire_after_create(&self, _id: &String, found: &Lookup, _at: Instant) -> Option<Duration> {
        let paid = found
            .as_ref()
            .is_some_and(|s| s.state() == PaymentState::Paid);
        Some(if paid { PAID_SESSION_TTL } else { SESSION_TTL })
    }
}

impl Payments {
    /// Fails when a Stripe key is set but cannot work (a publishable key, a
    /// stray line break): a configuration error at start, not a panic.
    pub fn new(config: &Config, calls: UpstreamCalls) -> Result<Payments, stripe::Error> {
        let client = match &config.stripe_secret_key {
            Some(key) => Some(stripe::try_build_client(
                key,
                &config.stripe_api_base,
                config.timeouts.stripe,
            )?),
            None => {
                tracing::info!("Stripe is off (STRIPE_SECRET_KEY unset): every plan shows the pricing page's text for a plan without a price (PRICING_TEXT.noPrice in client/features/pricing/content.ts)");
                None
            }
        };
        let stripe_on = client.is_some();
        Ok(Payments {
            client,
            call_timeout: config.timeouts.stripe + config.timeouts.stripe / 2,
            calls,
            webhook_secret: config.stripe_webhook_secret.clone(),
            prices: Live::new(if stripe_on {
                None
            } else {
                Some(Ok(Arc::new(Vec::new())))
            }),
            price_read: tokio::sync::Mutex::new(()),
            sessions: Cache::builder()
                .max_capacity(SESSION_CACHE_CAPACITY)
                .expire_after(SessionExpiry)
                .build(),
            lookup_limiter: ClientLimiter::new(config.session_lookup_rate),
        })
    }

    fn client(&self) -> Result<&stripe::Client, PaymentsError> {
        self.client.as_ref().ok_or(PaymentsError::Off)
    }

    /// Active prices with their products (empty when Stripe is off), as
    /// last read; read first if they never were.
    pub async fn prices(&self) -> Result<Arc<Vec<PriceRecord>>, PaymentsError> {
        let list = self.price_list().await;
        list.value
            .clone()
            .unwrap_or_else(|| Err("not read yet".into()))
            .map_err(PaymentsError::Prices)
    }

    /// The price list's snapshot (its version keys the pricing page in the
    /// page cache); read from Stripe first if it never was.
    pub async fn price_list(&self) -> Arc<Snapshot<Option<PriceList>>> {
        let now = self.prices.get();
        if now.value.is_some() {
            return now;
        }
        self.refresh_prices().await;
        self.prices.get()
    }

    /// The price list's version, without reading it (0 before the first read).
    pub fn prices_version(&self) -> u64 {
        self.prices.version()
    }

    /// Reads the price list from Stripe and keeps it (a new version only if
    /// it changed). Concurrent callers share one read. Returns when to read
    /// it again: [`PRICE_REFRESH`], or [`PRICE_RETRY`] after a failure; None
    /// when Stripe is off.
    pub async fn refresh_prices(&self) -> Option<Duration> {
        let client = self.client.as_ref()?;
        let before = self.prices.version();
        let _reading = self.price_read.lock().await;
        if self.prices.version() != before {
            // Another caller read it while this one waited.
            return Some(self.next_read());
        }
        let list: PriceList = match self
            .timed("list_prices", stripe::list_active_prices(client))
            .await
        {
            Ok(list) => Ok(Arc::new(list)),
            Err(e) => {
                tracing::error!(error = %e, "Error fetching prices");
                Err(e.to_string().into())
            }
        };
        if let Some(version) = self.prices.set(Some(list)) {
            tracing::info!(version, "price list changed");
        }
        Some(self.next_read())
    }

    /// When to read the price list again, by what the last read gave.
    fn next_read(&self) -> Duration {
        let failed = self.prices.get().value.as_ref().is_some_and(Result::is_err);
        if failed {
            PRICE_RETRY
        } else {
            PRICE_REFRESH
        }
    }

    /// A subscription Checkout session for an active price, returning to
    /// `returns`; its URL.
    pub async fn checkout(
        &self,
        price_id: &str,
        returns: &Returns,
    ) -> Result<String, PaymentsError> {
        let client = self.client()?;
        if !self.prices().await?.iter().any(|p| p.id == price_id) {
            return Err(PaymentsError::UnknownPrice(price_id.to_owned()));
        }
        self.timed(
            "create_checkout_session",
            stripe::create_subscription_checkout(
                client,
                price_id,
                &returns.success,
                &returns.cancel,
            ),
        )
        .await
    }

    /// The Checkout Session `id`, for `client`: from the cache when it was
    /// looked up lately; otherwise from Stripe, one call however many ask
    /// at once, charged to the client that caused it (over its limit:
    /// [`PaymentsError::RateLimited`], and Stripe is not called). An id that
    /// cannot be a session id is None at once.
    pub async fn session(&self, id: &str, client: IpAddr) -> Result<Lookup, PaymentsError> {
        if !stripe::is_session_id(id) {
            return Ok(None);
        }
        let stripe = self.client()?;
        self.sessions
            .try_get_with_by_ref(id, async {
                self.lookup_limiter
                    .check(client)
                    .map_err(PaymentsError::RateLimited)?;
                let found = self
                    .timed(
                        "retrieve_checkout_session",
                        stripe::retrieve_session(stripe, id),
                    )
                    .await?;
                Ok::<_, PaymentsError>(found.map(Arc::new))
            })
            .await
            .map_err(|e| match *e {
                PaymentsError::RateLimited(wait) => PaymentsError::RateLimited(wait),
                _ => PaymentsError::Shared(e),
            })
    }

    /// Drops what is known of a session (a webhook says it changed).
    pub async fn forget_session(&self, id: &str) {
        self.sessions.invalidate(id).await;
    }

    /// Forgets clients whose lookup budget is full again.
    pub fn forget_idle(&self) {
        self.lookup_limiter.forget_idle();
    }

    pub fn webhooks_on(&self) -> bool {
        self.webhook_secret.is_some()
    }

    /// Checks a webhook's `Stripe-Signature`; None when no secret is set.
    pub fn verify_webhook(
        &self,
        payload: &str,
        signature: &str,
    ) -> Option<Result<WebhookEvent, stripe::Error>> {
        let secret = self.webhook_secret.as_deref()?;
        Some(stripe::verify_webhook(payload, signature, secret))
    }
}

impl Payments {
    /// `call` to Stripe, bounded by the call timeout, counted as
    /// `operation` with its outcome and duration.
    async fn timed<T>(
        &self,
        operation: &'static str,
        call: impl std::future::Future<Output = Result<T, stripe::Error>>,
    ) -> Result<T, PaymentsError> {
        let started = Instant::now();
        let result = tokio::time::timeout(self.call_timeout, call).await;
        let outcome = match &result {
            Ok(Ok(_)) => "ok",
            Ok(Err(e)) => e.outcome(),
            Err(_) => "timeout",
        };
        let labels = UpstreamLabels {
            upstream: "stripe",
            operation,
            outcome,
        };
        self.calls.record(labels, started.elapsed().as_secs_f64());
        match result {
            Ok(r) => Ok(r?),
            Err(_) => Err(PaymentsError::Timeout(self.call_timeout)),
        }
    }
}
