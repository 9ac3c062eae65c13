//! Where a visitor's payment stands: the verdict the success page and the
//! verify endpoint both show, from Stripe's Checkout Session (through the
//! session cache and the per-client lookup limit of [`Payments::session`])
//! and what the webhook recorded.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::db::Db;
use crate::messages::messages;
use crate::payments::stripe::{PaymentState, VerifiedSession};
use crate::payments::{checkouts, Payments, PaymentsError};

/// Why a lookup has no session to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Miss {
    /// Stripe has no session by that id (or the id cannot be one).
    Unknown,
    /// This client looked up too many sessions: it may ask again after this.
    RateLimited(Duration),
    /// Stripe is off (no key).
    Off,
    /// Stripe failed or did not answer.
    Upstream,
}

/// What the success page and the verify endpoint say about a session.
#[derive(Debug)]
pub struct Verdict {
    pub state: PaymentState,
    /// The session, when Stripe has it.
    pub session: Option<Arc<VerifiedSession>>,
    /// Failed: the line under the heading.
    pub reason: Option<&'static str>,
    /// Set when there is no session to show, and why.
    pub miss: Option<Miss>,
}

impl Verdict {
    fn missed(miss: Miss) -> Verdict {
        Verdict {
            state: PaymentState::Failed,
            session: None,
            reason: Some(&messages().verify_failed),
            miss: Some(miss),
        }
    }

    /// "paid" | "processing" | "failed", as the page's data says it.
    pub fn state_name(&self) -> &'static str {
        match self.state {
            PaymentState::Paid => "paid",
            PaymentState::Processing => "processing",
            PaymentState::Failed => "failed",
        }
    }

    /// How long the client is asked to wait (a lookup over its limit).
    pub fn retry_after(&self) -> Option<Duration> {
        match self.miss {
            Some(Miss::RateLimited(wait)) => Some(wait),
            _ => None,
        }
    }
}

impl Payments {
    /// Looks up a Checkout Session for `client` and says where the payment
    /// stands. A session that Stripe still calls unpaid but whose delayed
    /// payment a webhook reported as failed is failed.
    pub async fn verdict(&self, db: &Db, id: &str, client: IpAddr) -> Verdict {
        let session = match self.session(id, client).await {
            Ok(Some(session)) => session,
            Ok(None) => {
                tracing::info!(session = %crate::telemetry::shorten(id), "no such checkout session");
                return Verdict::missed(Miss::Unknown);
            }
            Err(PaymentsError::RateLimited(wait)) => {
                tracing::warn!(client = %client, retry_after = wait.as_secs(), "session lookup limit reached");
                return Verdict::missed(Miss::RateLimited(wait));
            }
            Err(e) => {
                tracing::error!(error = %e, "Error verifying payment session");
                return Verdict::missed(if matches!(e, PaymentsError::Off) {
                    Miss::Off
                } else {
                    Miss::Upstream
                });
            }
        };
        let mut verdict = Verdict {
            state: session.state(),
            session: Some(session),
            reason: None,
            miss: None,
        };
        match verdict.state {
            PaymentState::Failed => verdict.reason = Some(&messages().verify_failed),
            PaymentState::Processing
                if recorded_status(db, id).await.as_deref() == Some("failed") =>
            {
                verdict.state = PaymentState::Failed;
                verdict.reason = Some(&messages().payment_failed);
            }
            _ => {}
        }
        verdict
    }
}

/// The status a webhook recorded for a session, if any (None too when the
/// database cannot say: the page then tells what Stripe says).
async fn recorded_status(db: &Db, id: &str) -> Option<String> {
    match checkouts::status(db, id).await {
        Ok(status) => status,
        Err(e) => {
            tracing::warn!(error = %e, "could not read a recorded checkout status");
            None
        }
    }
}
