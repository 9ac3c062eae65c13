//! Per-client limits (governor's GCRA, keyed by the client IP from
//! [`crate::client_ip`]): one on the POST endpoints, one on the Stripe
//! session lookups the success page makes (see [`crate::payments`]). A
//! client gets a burst of `n` requests and then `n` per period; beyond that
//! the endpoint answers 429 with `Retry-After`. The Stripe webhook is not
//! limited: it is signed, and a refused delivery would only make Stripe retry.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// `n` requests per `period` for each client, `n` of them at once; `n = 0`
/// turns the limit off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub n: u32,
    pub period: std::time::Duration,
}

impl Rate {
    pub fn per_minute(n: u32) -> Rate {
        Rate {
            n,
            period: Duration::from_secs(60),
        }
    }
}

pub struct ClientLimiter {
    /// None: limits are off (a rate of 0).
    inner: Option<DefaultKeyedRateLimiter<IpAddr>>,
}

impl ClientLimiter {
    pub fn new(rate: Rate) -> ClientLimiter {
        let quota = NonZeroU32::new(rate.n).and_then(|n| {
            let each = rate.period.checked_div(n.get()).filter(|d| !d.is_zero())?;
            Some(Quota::with_period(each)?.allow_burst(n))
        });
        ClientLimiter {
            inner: quota.map(RateLimiter::keyed),
        }
    }

    /// Counts one request from `client`; `Err(wait)` when it is over its
    /// limit and may try again after `wait` (whole seconds, at least 1).
    pub fn check(&self, client: IpAddr) -> Result<(), Duration> {
        let Some(limiter) = &self.inner else {
            return Ok(());
        };
        limiter.check_key(&client).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            Duration::from_secs(wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
                .max(Duration::from_secs(1))
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
        let limiter = ClientLimiter::new(Rate::per_minute(3));
        let a: IpAddr = "203.0.113.1".parse().unwrap();
        let b: IpAddr = "203.0.113.2".parse().unwrap();
        for _ in 0..3 {
            assert!(limiter.check(a).is_ok());
        }
        let wait = limiter.check(a).unwrap_err();
        // 3 per minute: the next one is due in about 20 s.
        assert!(
            (Duration::from_secs(1)..=Duration::from_secs(20)).contains(&wait),
            "{wait:?}"
        );
        assert!(limiter.check(b).is_ok(), "another client is not affected");
        assert!(
            ClientLimiter::new(Rate::per_minute(0)).check(a).is_ok(),
            "0 turns limits off"
        );
        // A test's hour-long period: five, then nothing for twelve minutes.
        let hourly = ClientLimiter::new(Rate {
            n: 5,
            period: Duration::from_secs(3600),
        });
        assert_eq!((0..8).filter(|_| hourly.check(a).is_ok()).count(), 5);
        assert!(hourly.check(a).unwrap_err() > Duration::from_secs(700));
    }
}
