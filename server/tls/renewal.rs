//! When the fleet renews: the CA's word where it gives one.
//!
//! Where the directory offers ACME Renewal Information (RFC 9773,
//! `renewalInfo`), the renewal time is a random point in the window the CA
//! suggests for the certificate in service, chosen once for the fleet and
//! kept in the database (`tls_orders`): one point for all, not one per
//! member, where the earliest would win. One member at a time asks, under a
//! lease of its own ([`LEASE`]), at the `Retry-After` the CA gives (never
//! sooner than a minute, as RFC 9773 says; tests shorten it). A window the
//! CA moves (before revoking a certificate, say) moves the renewal; a window
//! already begun means now. Without ARI, the lifetime rule stays: two
//! thirds of the certificate's life
//! ([`CertInfo::renew_at`](crate::edge::certs::CertInfo::renew_at)).
//!
//! The source of the time and the CA's explanation URL go to the log, the
//! time to `/metrics` (`tls_certificate_renewal_timestamp_seconds`).

use std::sync::Arc;
use std::time::Duration;

use instant_acme::CertificateIdentifier;

use super::store::{self, Schedule};
use super::{at_ms, unix_ms, Identity};
use crate::edge::acme::AcmeSettings;
use crate::edge::acme_http::AcmeHttp;
use crate::edge::certs::{rfc3339, ServedCert};

/// The lease of the member that asks the CA.
pub const LEASE: &str = "acme-renewal-info";
/// How often a member looks whether the CA is due to be asked.
const CHECK_EVERY: Duration = Duration::from_secs(2);
/// How long a directory without ARI waits to be asked again (it may add it).
const NO_ARI_AGAIN: Duration = Duration::from_secs(86_400);

/// Asks the CA for the renewal window of the certificate in service when
/// the fleet's schedule says it is time, until the process ends.
pub async fn run(identity: Arc<Identity>, settings: AcmeSettings, http: AcmeHttp) {
    loop {
        tokio::time::sleep(CHECK_EVERY).await;
        if !identity.db.is_up() {
            continue;
        }
        let Some(cert) = identity.certs.current() else {
            continue;
        };
        if let Err(e) = round(&identity, &settings, &http, &cert).await {
            tracing::debug!(error = %e, "HTTPS: the renewal schedule cannot be read or kept now");
        }
    }
}

async fn round(
    identity: &Identity,
    settings: &AcmeSettings,
    http: &AcmeHttp,
    cert: &ServedCert,
) -> Result<(), sqlx::Error> {
    let db = &identity.db;
    let names = settings.names_key();
    let now = store::clock(db).await?;
    let kept = store::schedule(db, &settings.directory, &names)
        .await?
        .filter(|s| s.serial == cert.info.serial);
    if let Some(s) = kept.as_ref().filter(|s| s.poll_at > now) {
        identity.set_schedule(s.clone());
        return Ok(());
    }
    let Some(hold) =
        store::take_lease(db, LEASE, &identity.member, settings.timing.lease_ttl).await?
    else {
        return Ok(());
    };
    let next = ask(identity, settings, http, cert, kept.as_ref(), now).await;
    if kept.as_ref().map(|k| (k.renew_at, &k.source, k.window))
        != Some((next.renew_at, &next.source, next.window))
    {
        tracing::info!(
            serial = %cert.info.serial,
            renew_at = %rfc3339(at_ms(next.renew_at)),
            source = %next.source,
            window = ?next.window.map(|(a, b)| (rfc3339(at_ms(a)), rfc3339(at_ms(b)))),
            explanation = next.explanation.as_deref().unwrap_or("-"),
            "HTTPS: the fleet's renewal time is set"
        );
    }
    if store::set_schedule(db, &settings.directory, &names, &next, &hold).await? {
        identity.set_schedule(next);
    }
    store::release_lease(db, &hold).await
}

/// The schedule the CA's answer gives (or the lifetime rule's, without
/// ARI). `kept` is the fleet's schedule for this certificate so far: its
/// point stays while the CA's window does.
async fn ask(
    identity: &Identity,
    settings: &AcmeSettings,
    http: &AcmeHttp,
    cert: &ServedCert,
    kept: Option<&Schedule>,
    now: i64,
) -> Schedule {
    let lifetime = |poll_in: Duration| Schedule {
        serial: cert.info.serial.clone(),
        renew_at: unix_ms(cert.info.renew_at()),
        source: "lifetime".into(),
        window: None,
        explanation: None,
        poll_at: now + poll_in.as_millis() as i64,
    };
    let min_poll = settings.timing.ari_min_poll;
    let account = match super::robot::account(identity, settings, http).await {
        Ok(a) => a,
        Err(e) => {
            tracing::debug!(error = %format!("{e:#}"), "HTTPS: the CA's renewal information cannot be asked now");
            return kept.cloned().unwrap_or_else(|| lifetime(min_poll));
        }
    };
    let id = match cert.key.cert.first().map(CertificateIdentifier::try_from) {
        Some(Ok(id)) => id,
        _ => return lifetime(NO_ARI_AGAIN),
    };
    match account.renewal_info(&id).await {
        Ok((info, retry_after)) => {
            let window = (
                (info.suggested_window.start.unix_timestamp_nanos() / 1_000_000) as i64,
                (info.suggested_window.end.unix_timestamp_nanos() / 1_000_000) as i64,
            );
            let renew_at = match kept {
                Some(k) if k.window == Some(window) && k.source == "ari" => k.renew_at,
                _ => random_point(window, now),
            };
            Schedule {
                serial: cert.info.serial.clone(),
                renew_at,
                source: "ari".into(),
                window: Some(window),
                explanation: info.explanation_url,
                poll_at: now + retry_after.max(min_poll).as_millis() as i64,
            }
        }
        Err(instant_acme::Error::Unsupported(_)) => lifetime(NO_ARI_AGAIN),
        Err(e) => {
            tracing::warn!(error = %e, "HTTPS: the CA's renewal information cannot be read; the schedule stays as it was");
            let mut s = kept.cloned().unwrap_or_else(|| lifetime(min_poll));
            s.poll_at = now + min_poll.as_millis() as i64;
            s
        }
    }
}

/// A point in the window, uniformly at random; now if the window has begun
/// (RFC 9773, section 4.2).
fn random_point((start, end): (i64, i64), now: i64) -> i64 {
    if start <= now {
        return now;
    }
    let span = (end - start).max(0) as u64;
    let random = (uuid::Uuid::new_v4().as_u128() as u64) % (span + 1);
    start + random as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_in_the_window_or_now_once_it_has_begun() {
        for _ in 0..100 {
            let at = random_point((1_000, 2_000), 0);
            assert!((1_000..=2_000).contains(&at), "{at}");
        }
        assert_eq!(random_point((1_000, 2_000), 1_500), 1_500);
        assert_eq!(random_point((1_000, 1_000), 10), 1_000);
    }
}
