//! Per-client limits on the POST endpoints (governor's GCRA, keyed by the
//! client IP from [`crate::client_ip`]). A client gets a burst of `n`
//! requests and then `n` per minute; beyond that the endpoint answers 429
//! with `Retry-After`. The Stripe webhook is not limited: it is signed, and
//! a refused delivery would only make Stripe retry.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

pub struct PostLimiter {
    /// None: limits are off (`RATE_LIMIT_PER_MINUTE=0`).
    inner: Option<DefaultKeyedRateLimiter<IpAddr>>,
}

impl PostLimiter {
    pub fn new(per_minute: u32) -> PostLimiter {
        PostLimiter { inner: NonZeroU32::new(per_minute).map(|n| RateLimiter::keyed(Quota::per_minute(n))) }
    }

    /// Counts one request from `client`; `Err(wait)` when it is over its
    /// limit and may try again after `wait` (whole seconds, at least 1).
    pub fn check(&self, client: IpAddr) -> Result<(), Duration> {
        let Some(limiter) = &self.inner else { return Ok(()) };
        limiter.check_key(&client).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            Duration::from_secs(wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(Duration::from_secs(1))
        })
    }

    /// Forgets clients whose budget is full again, so memory follows the
    /// number of recent clients, not of all clients ever.
    pub fn forget_idle(&self) {
        if let Some(limiter) = &self.inner {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_has_its_own_budget() {
        let limiter = PostLimiter::new(3);
        let a: IpAddr = "203.0.113.1".parse().unwrap();
        let b: IpAddr = "203.0.113.2".parse().unwrap();
        for _ in 0..3 {
            assert!(limiter.check(a).is_ok());
        }
        let wait = limiter.check(a).unwrap_err();
        // 3 per minute: the next one is due in about 20 s.
        assert!((Duration::from_secs(1)..=Duration::from_secs(20)).contains(&wait), "{wait:?}");
        assert!(limiter.check(b).is_ok(), "another client is not affected");
        assert!(PostLimiter::new(0).check(a).is_ok(), "0 turns limits off");
    }
}
