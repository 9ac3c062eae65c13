//! The certificate robot: obtains the HTTPS certificate for `TLS_DOMAINS`
//! from an ACME CA (RFC 8555; Let's Encrypt unless `ACME_DIRECTORY` says
//! otherwise) and renews it, once for the whole fleet, which no one
//! member's fault may cost its certificate.
//!
//! The protocol and its signed requests are instant-acme's; its requests go
//! through reqwest (`edge::acme_http`), each with a connect timeout and an
//! overall one. The robot's own part is the schedule:
//!
//! 1. Once the fleet's renewal time has come by the database's clock (the
//!    CA's window, `renewal`, else two thirds of the certificate's life:
//!    [`CertInfo::renew_at`](crate::edge::certs::CertInfo::renew_at)), or
//!    when there is none, or an operator asked (`tls renew`,
//!    [`request`]), a member takes the database's order lease
//!    ([`LEASE`]) unless the fleet's back-off says not yet; the others
//!    wait, and put the new certificate in service when it appears in the
//!    database (`tls::Identity::sync`). Nothing is ordered while the
//!    database is unreachable.
//! 2. The lease's time is the database's clock, and taking it gives a
//!    generation ([`store::Hold`]). The holder renews it while it orders;
//!    once a renewal says it is lost, or none succeeded within the lease's
//!    TTL (a stalled process, a cut database), the order is abandoned
//!    before its next step with the CA ([`Fence`]). The TTL counts from
//!    before each take or renewal was asked, never from its answer. Every write the order
//!    makes (its challenge answers, the certificate, the back-off) holds
//!    only while its generation holds the lease, so a holder that lost it
//!    overwrites nothing of the next one's order.
//! 3. Every name is validated by the challenge `ACME_CHALLENGE` names.
//!    The answers are stored first; the CA is asked to look once every
//!    member under ACME seen lately says it holds them (`tls_members`), or after
//!    [`AcmeTiming::challenge_wait`] at most, naming the members that lag.
//!    The certificate goes to the database (newest issued wins: see
//!    `Identity::offer`), then into service here.
//! 4. A failure gives the lease up. One the CA answered (an order refused,
//!    a validation failed, a rate limit) pushes the fleet's back-off in the
//!    database ([`AcmeTiming::first_retry`], doubling up to [`LAST_RETRY`],
//!    and never shorter than the refusal's `Retry-After`, itself at most a
//!    day), so the CA sees no more tries from the fleet than from one server, and
//!    the member that failed waits one step more, so another takes the next
//!    try. So is a CA that answers a step of an existing order late, or
//!    with an error page. One that never reached the CA (no connection, a
//!    TLS or DNS failure) is the member's own: it backs off alone. A
//!    panic ends the order's lease with it (the [`Fence`] is a drop guard),
//!    and the robot starts again (`tls::supervised`). A member whose tries
//!    keep failing says so in `/readyz` and `/metrics`; the certificate in
//!    service, and the HTTP port's redirect, go on meanwhile.
//!
//! Each order is counted by its kind and outcome (`acme_orders_total`,
//! with the time of the last success), on the process that made it.
//!
//! Nothing the robot logs holds a key.

mod failure;
mod fence;
mod order;
mod request;

use failure::Failure;
use fence::Fence;
pub(super) use order::account;
use order::order;
use request::requested;

use super::identity::{stored, unix_ms, Identity, Offer};
use super::store::{self, Hold};
use crate::edge::acme::AcmeSettings;
use crate::edge::acme_http::AcmeHttp;
use crate::edge::certs::{rfc3339, ServedCert};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// The name of the lease whose holder orders certificates.
pub const LEASE: &str = "acme-order";

/// How often a process that does not hold the lease looks again.
const CHECK_EVERY: Duration = Duration::from_secs(2);

/// The longest wait between two tries (Let's Encrypt allows 5 failed
/// validations per name an hour).
pub const LAST_RETRY: Duration = Duration::from_secs(3600);

/// This member's own back-off, after failures that never reached the CA.
struct OwnBackoff {
    next: Instant,
    retry: Duration,
}

/// Runs the robot until the process ends.
pub async fn run(identity: Arc<Identity>, settings: AcmeSettings, http: AcmeHttp) {
    let db = identity.db.clone();
    let timing = settings.timing;
    let mut own = OwnBackoff {
        next: Instant::now(),
        retry: timing.first_retry,
    };
    loop {
        if !db.is_up() {
            tokio::time::sleep(CHECK_EVERY).await;
            continue;
        }
        // Whether an operator asked (read again, whole, under the lease).
        let requested_now = store::request(&db, &settings.directory, &settings.names_key())
            .await
            .is_ok_and(|r| r.is_some());
        // Whether it is time, by the database's clock: one clock for the
        // fleet, so a member whose own runs ahead does not order early
        // (with short-lived certificates, again and again).
        let Ok(now) = store::clock(&db).await else {
            tokio::time::sleep(CHECK_EVERY).await;
            continue;
        };
        let due = identity.renew_at().map_or(0, unix_ms);
        if !requested_now && due > now {
            let wait = Duration::from_millis((due - now) as u64);
            tokio::time::sleep(wait.min(CHECK_EVERY)).await;
            continue;
        }
        if own.next > Instant::now() {
            tokio::time::sleep((own.next - Instant::now()).min(CHECK_EVERY)).await;
            continue;
        }
        let fence = match may_order(&identity, &settings).await {
            Ok(Some(fence)) => fence,
            Ok(None) => {
                tokio::time::sleep(CHECK_EVERY).await;
                continue;
            }
            Err(e) => {
                tracing::warn!(error = %e, "HTTPS: the order lease cannot be read");
                tokio::time::sleep(CHECK_EVERY).await;
                continue;
            }
        };
        let hold = fence.hold.clone();
        // Read again under the lease: the previous holder may have carried
        // it out, or a later `tls renew` replaced it, since.
        let (directory, names) = (&settings.directory, settings.names_key());
        let request = match store::request_with_cert(&db, directory, &names).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "HTTPS: the renewal request cannot be read");
                fence.end().await;
                tokio::time::sleep(CHECK_EVERY).await;
                continue;
            }
        };
        // Another holder may have just stored one: take it rather than order
        // (a request is done once the certificate it retires is replaced by
        // one stored after it was made).
        let synced = identity.sync_certificate(&settings).await.is_ok();
        let serving = identity.certs.current().map(|c| c.info.serial.clone());
        let done = match (&request, &serving) {
            (Some(r), Some(serial))
                if synced && r.serial.is_some() && Some(serial) != r.serial.as_ref() =>
            {
                store::stored_at(&db, directory, &names, serial)
                    .await
                    .ok()
                    .flatten()
                    .is_some_and(|at| at >= r.requested_at)
            }
            (Some(_), _) => false,
            (None, _) => match identity.renew_at() {
                Some(at) if synced => store::clock(&db).await.is_ok_and(|now| unix_ms(at) > now),
                _ => false,
            },
        };
        if done {
            if let Some(r) = &request {
                // The certificate it names was replaced already: by an
                // order that was running when it was made, or by a holder
                // that died before it retired it. Retired, and revoked if
                // asked, all the same.
                let account = match r.revoke {
                    true => account(&identity, &settings, &http)
                        .await
                        .map_err(|e| format!("{e:#}")),
                    false => Err("not asked".into()),
                };
                requested(&identity, &settings, r, None, account.as_ref(), &hold).await;
            }
            fence.end().await;
            continue;
        }
        tracing::info!(domains = ?settings.domains, directory = %settings.directory, challenge = ?settings.challenge, generation = hold.generation, "HTTPS: ordering a certificate (this server holds the order lease)");
        let renewal = identity.certs.current().is_some();
        let before = identity.served.load_full();
        let mut answered = Vec::new();
        // Its own client: the waits the CA's refusals ask for are this
        // order's.
        let http = http.for_one_order();
        let outcome = match order(&identity, &settings, &http, &fence, &mut answered).await {
            Ok(issued) => fence.holds().map(|()| issued),
            Err(e) => Err(e),
        };
        identity.forget_answers(&answered);
        if let Err(e) = store::drop_challenges(&db, hold.generation).await {
            tracing::debug!(error = %e, "the order's challenges stay until they expire");
        }
        let stored = match outcome {
            Ok((served, pem, account)) => {
                let stored = store_issued(&identity, &settings, served, pem, &hold).await;
                if let (true, Some(r)) = (stored, &request) {
                    requested(
                        &identity,
                        &settings,
                        r,
                        before.as_deref(),
                        Ok(&account),
                        &hold,
                    )
                    .await;
                }
                stored
            }
            Err(failure) => {
                let asked = http.refused_wait();
                failed(&identity, &settings, failure, asked, &hold, &mut own).await;
                false
            }
        };
        identity.orders.record(renewal, stored);
        if stored {
            own.retry = timing.first_retry;
            identity.succeeded();
            if let Err(e) = store::set_backoff(
                &db,
                &settings.directory,
                &settings.names_key(),
                (Duration::ZERO, Duration::ZERO),
                None,
                &hold,
            )
            .await
            {
                tracing::debug!(error = %e, "the fleet's back-off stays until the next success");
            }
        }
        fence.end().await;
    }
}

/// Takes the order lease unless the fleet's back-off says not yet (a member
/// whose try failed last waits one step more than the others).
async fn may_order(
    identity: &Identity,
    settings: &AcmeSettings,
) -> Result<Option<Fence>, sqlx::Error> {
    let db = &identity.db;
    let backoff = store::backoff(db, &settings.directory, &settings.names_key()).await?;
    let mut not_before = backoff.next_try_at;
    if backoff.failed_by.as_deref() == Some(identity.member.as_str()) {
        not_before += backoff.retry_ms;
    }
    if store::clock(db).await? < not_before {
        return Ok(None);
    }
    Fence::take(db, LEASE, &identity.member, settings.timing.lease_ttl).await
}

/// The issued certificate to the database (only while the lease holds) and
/// into service. True when it was stored.
async fn store_issued(
    identity: &Identity,
    settings: &AcmeSettings,
    served: ServedCert,
    pem: String,
    hold: &Hold,
) -> bool {
    let serial = served.info.serial.clone();
    let mine = stored(&served, &pem);
    match identity.offer(settings, &mine, Some(hold)).await {
        Ok(Offer::Stored) => {
            tracing::info!(
                serial = %served.info.serial,
                valid_until = %rfc3339(served.info.not_after),
                "HTTPS: a new certificate is in service"
            );
            identity.put_in_service(settings, served, pem);
            true
        }
        Ok(Offer::Older) => {
            tracing::info!(%serial, "HTTPS: the database holds a certificate issued later than this order's; that one is served");
            false
        }
        Ok(Offer::Retired) => {
            tracing::warn!(%serial, "HTTPS: the CA issued a certificate that is retired; it is not served");
            false
        }
        Ok(Offer::Fenced) => {
            tracing::warn!(%serial, "HTTPS: the order lease was lost before the certificate was stored; it is not served (the next holder's order stands)");
            false
        }
        Err(e) => {
            tracing::warn!(%serial, error = %e, "HTTPS: the new certificate cannot be stored in the database; it is not served, and the next holder orders again");
            false
        }
    }
}

/// The fleet's back-off after a refusal, as (wait, step): the step is the
/// first retry, else twice the last one up to [`LAST_RETRY`]; the wait is
/// the step, or the wait the CA's refusal asked for (`Retry-After`, at
/// most a day) when longer, but never more than a quarter of `time_left`,
/// the certificate in service's (a CA that asks a day of every refusal
/// would let a six-day certificate end). The step alone is stored for the
/// doubling, so the member that failed waits one step more, not the CA's
/// wait twice.
fn refusal_backoff(
    first: Duration,
    last_ms: i64,
    asked: Option<Duration>,
    time_left: Option<Duration>,
) -> (Duration, Duration) {
    let step = match last_ms {
        ..=0 => first,
        ms => (Duration::from_millis(ms as u64) * 2).min(LAST_RETRY),
    };
    let asked = match time_left {
        Some(left) => asked.map(|a| a.min(left / 4)),
        None => asked,
    };
    (step.max(asked.unwrap_or_default()), step)
}

/// A failed order: logged, and the back-off it calls for (`asked`: the
/// wait the CA's last answer asked for).
async fn failed(
    identity: &Identity,
    settings: &AcmeSettings,
    failure: Failure,
    asked: Option<Duration>,
    hold: &Hold,
    own: &mut OwnBackoff,
) {
    let timing = settings.timing;
    // An answer that asked for a wait (a 503 page with `Retry-After`, say)
    // was the CA's, whatever instant-acme made of it.
    let failure = match failure {
        Failure::Own(e) if asked.is_some() => Failure::Ca(e),
        failure => failure,
    };
    match failure {
        Failure::Abandoned(why) => {
            tracing::warn!(
                generation = hold.generation,
                "HTTPS: the order is abandoned: {why}"
            );
        }
        Failure::Own(e) => {
            let error = format!("{e:#}");
            tracing::warn!(%error, retry_in = ?own.retry, directory = %settings.directory, "HTTPS: this server could not reach the CA (ACME_DIRECTORY); it tries again later, and any other server may order meanwhile");
            identity.failed(&error);
            own.next = Instant::now() + own.retry;
            own.retry = (own.retry * 2).min(LAST_RETRY);
        }
        Failure::Ca(e) => {
            let error = format!("{e:#}");
            let (directory, names) = (&settings.directory, settings.names_key());
            let before = store::backoff(&identity.db, directory, &names)
                .await
                .unwrap_or_default();
            let time_left = match (identity.certs.current(), store::clock(&identity.db).await) {
                (Some(cert), Ok(now)) => Some(Duration::from_millis(
                    (unix_ms(cert.info.not_after) - now).max(0) as u64,
                )),
                _ => None,
            };
            let (retry, step) =
                refusal_backoff(timing.first_retry, before.retry_ms, asked, time_left);
            identity.failed(&error);
            let kept = store::set_backoff(
                &identity.db,
                directory,
                &names,
                (retry, step),
                Some((identity.member.as_str(), error.as_str())),
                hold,
            )
            .await;
            tracing::warn!(%error, retry_in = ?retry, retry_after = ?asked, shared = matches!(kept, Ok(true)), directory = %settings.directory, "HTTPS: the CA refused the order; the servers try again later");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal backs the fleet off from the first retry, doubling up to
    /// the last, and never for less than the CA's `Retry-After` asked,
    /// unless that is more than a quarter of the certificate's time left;
    /// the step the doubling goes on from is its own.
    #[test]
    fn a_refusal_waits_at_least_what_the_ca_asked() {
        let (first, secs) = (Duration::from_secs(5), Duration::from_secs);
        let wait = |last, asked, left| refusal_backoff(first, last, asked, left);
        assert_eq!(wait(0, None, None), (secs(5), secs(5)));
        assert_eq!(wait(20_000, None, None), (secs(40), secs(40)));
        assert_eq!(wait(3_000_000, None, None), (LAST_RETRY, LAST_RETRY));
        assert_eq!(wait(0, Some(secs(3)), None), (secs(5), secs(5)));
        assert_eq!(wait(0, Some(secs(600)), None), (secs(600), secs(5)));
        assert_eq!(
            wait(3_000_000, Some(secs(86_400)), Some(secs(90 * 86_400))),
            (secs(86_400), LAST_RETRY),
            "a day asked is a day waited, past the last retry"
        );
        assert_eq!(
            wait(0, Some(secs(86_400)), Some(secs(14 * 3600))),
            (secs(14 * 900), secs(5)),
            "a quarter of the 14 h a certificate has left"
        );
        assert_eq!(wait(0, Some(secs(600)), Some(secs(0))), (secs(5), secs(5)));
    }
}
