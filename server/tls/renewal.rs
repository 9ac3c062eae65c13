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
//! already begun gives a point in what is left of it, and one that runs
//! past the certificate's end is cut short of it ([`within_life`]). Without ARI, the
//! lifetime rule stays: two thirds of the certificate's life
//! ([`CertInfo::renew_at`](crate::edge::certs::CertInfo::renew_at)).
//!
//! The source of the time and the CA's explanation URL go to the log, the
//! time to `/metrics` (`tls_certificate_renewal_timestamp_seconds`).

use std::sync::Arc;
use std::time::Duration;

use instant_acme::CertificateIdentifier;

use super::identity::{at_ms, unix_ms, Identity};
use super::robot::account;
use super::store::{self, Schedule};
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
    // Time to ask. Only a member serving the stored certificate does: one
    // still on the one before (it reads the new one within a second) would
    // set the schedule back to its own serial, and the point chosen again
    // each time the two took turns.
    let stored = store::certificate_stamp(db, &settings.directory, &names).await?;
    if stored.is_some_and(|(serial, _)| serial != cert.info.serial) {
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
    // A failed poll keeps the schedule but asks again no sooner than the
    // floor: the kept `poll_at` is past, and written back it would have
    // every member ask every round.
    let again = |kept: Option<&Schedule>| {
        let mut s = kept.cloned().unwrap_or_else(|| lifetime(min_poll));
        s.poll_at = now + min_poll.as_millis() as i64;
        s
    };
    let account = match account(identity, settings, http).await {
        Ok(a) => a,
        Err(e) => {
            tracing::debug!(error = %format!("{e:#}"), "HTTPS: the CA's renewal information cannot be asked now");
            return again(kept);
        }
    };
    let id = match cert.key.cert.first().map(CertificateIdentifier::try_from) {
        Some(Ok(id)) => id,
        _ => return lifetime(NO_ARI_AGAIN),
    };
    match account.renewal_info(&id).await {
        Ok((info, retry_after)) => {
            let suggested = (
                (info.suggested_window.start.unix_timestamp_nanos() / 1_000_000) as i64,
                (info.suggested_window.end.unix_timestamp_nanos() / 1_000_000) as i64,
            );
            let life = (unix_ms(cert.info.not_before), unix_ms(cert.info.not_after));
            let window = within_life(suggested, life);
            // Said once for a window, not at every poll.
            if window != suggested && kept.map(|k| k.window) != Some(Some(window)) {
                tracing::warn!(
                    serial = %cert.info.serial,
                    suggested = ?(rfc3339(at_ms(suggested.0)), rfc3339(at_ms(suggested.1))),
                    valid_until = %rfc3339(cert.info.not_after),
                    "HTTPS: the CA's renewal window runs past the certificate's end (less a margin); the fleet renews before it"
                );
            }
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
                poll_at: now
                    + retry_after
                        .clamp(
                            min_poll,
                            Duration::from_secs(crate::edge::acme_http::RETRY_AFTER_CAP),
                        )
                        .as_millis() as i64,
            }
        }
        Err(instant_acme::Error::Unsupported(_)) => lifetime(NO_ARI_AGAIN),
        Err(e) => {
            tracing::warn!(error = %e, "HTTPS: the CA's renewal information cannot be read; the schedule stays as it was");
            again(kept)
        }
    }
}

/// The CA's window `suggested`, ending no later than the certificate's
/// end (`life`: its start and end) less a tenth of its life, a day at most:
/// a window past the end (a CA's mistake, or a clock of its own) would
/// leave the site without a certificate, with a day of retries to spare.
fn within_life(suggested: (i64, i64), (not_before, not_after): (i64, i64)) -> (i64, i64) {
    let margin = ((not_after - not_before) / 10).clamp(0, 86_400_000);
    let latest = not_after - margin;
    (suggested.0.min(latest), suggested.1.min(latest))
}

/// A point in the part of the window still to come, uniformly at random
/// (RFC 9773, section 4.2): a window already begun gives a point between
/// now and its end, not now itself, so fleets (and the CA's other
/// clients) that see it begin do not all order at once. A window over
/// gives now.
fn random_point((start, end): (i64, i64), now: i64) -> i64 {
    let start = start.max(now);
    if end <= start {
        return start;
    }
    let span = (end - start) as u64;
    let random = (uuid::Uuid::new_v4().as_u128() as u64) % (span + 1);
    start + random as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::sync::tests::{issued, member, settings};

    /// The schedule a member keeps: a poll that fails asks again no
    /// sooner than the floor (the kept time is past, and written back it
    /// would have every member ask every round); a member still serving
    /// another certificate than the stored one leaves it alone.
    #[tokio::test]
    async fn a_failed_poll_waits_the_floor_and_a_lagging_member_leaves_the_schedule() {
        let (dir, db, identity) = member("renewal").await;
        let mut settings = settings(&dir);
        // Nothing listens there: the CA cannot be asked.
        settings.directory = "https://127.0.0.1:9/dir".into();
        let names = settings.names_key();
        let http = AcmeHttp::new(None).unwrap();
        let served = |c: &store::StoredCert| {
            crate::edge::certs::parse(c.pem.as_bytes(), c.pem.as_bytes(), ("c", "k")).unwrap()
        };
        let stored = issued(-1, 30);
        assert!(
            store::put_certificate(&db, &settings.directory, &names, &stored, None, None)
                .await
                .unwrap()
        );
        let hold = store::take_lease(&db, LEASE, "earlier", Duration::from_secs(5))
            .await
            .unwrap()
            .unwrap();
        let past = Schedule {
            serial: stored.serial.clone(),
            renew_at: 5_000,
            source: "ari".into(),
            window: Some((4_000, 6_000)),
            explanation: None,
            poll_at: 1,
        };
        assert!(
            store::set_schedule(&db, &settings.directory, &names, &past, &hold)
                .await
                .unwrap()
        );
        store::release_lease(&db, &hold).await.unwrap();

        round(&identity, &settings, &http, &served(&stored))
            .await
            .unwrap();
        let now = store::clock(&db).await.unwrap();
        let kept = store::schedule(&db, &settings.directory, &names)
            .await
            .unwrap()
            .unwrap();
        let floor = settings.timing.ari_min_poll.as_millis() as i64;
        assert!(
            kept.poll_at > now + floor - 2_000,
            "asked again at {} (now {now})",
            kept.poll_at
        );
        assert_eq!(
            (kept.renew_at, kept.window),
            (past.renew_at, past.window),
            "the CA's word stays"
        );

        // A member on the certificate before: the schedule stays the stored one's.
        let lagging = issued(-2, 30);
        round(&identity, &settings, &http, &served(&lagging))
            .await
            .unwrap();
        let after = store::schedule(&db, &settings.directory, &names)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(after, kept);
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A window within the certificate's life stands; one past its end
    /// ends a tenth of its life before (a day at most), and one wholly past
    /// it becomes that point.
    #[test]
    fn a_window_past_the_certificates_end_is_cut_to_it() {
        let hour = 3_600_000;
        let life = (0, 90 * 24 * hour);
        let end = life.1;
        let latest = end - 24 * hour;
        assert_eq!(
            within_life((10 * hour, 20 * hour), life),
            (10 * hour, 20 * hour)
        );
        assert_eq!(
            within_life((latest - hour, end + hour), life),
            (latest - hour, latest)
        );
        assert_eq!(
            within_life((end + hour, end + 2 * hour), life),
            (latest, latest)
        );
        // A six-day certificate: a tenth of it.
        let short = (0, 144 * hour);
        assert_eq!(
            within_life((0, 200 * hour), short),
            (0, 144 * hour - 144 * hour / 10)
        );
    }

    #[test]
    fn a_point_in_what_is_left_of_the_window() {
        for _ in 0..100 {
            let at = random_point((1_000, 2_000), 0);
            assert!((1_000..=2_000).contains(&at), "{at}");
        }
        // Begun: spread over what is left, not all at now.
        let points: std::collections::BTreeSet<i64> = (0..100)
            .map(|_| random_point((1_000, 2_000), 1_500))
            .collect();
        assert!(
            points.iter().all(|at| (1_500..=2_000).contains(at)),
            "{points:?}"
        );
        assert!(points.len() > 10, "{points:?}");
        // Over: now.
        assert_eq!(random_point((1_000, 2_000), 2_500), 2_500);
        assert_eq!(random_point((1_000, 1_000), 10), 1_000);
    }
}
