//! The certificate robot: obtains the HTTPS certificate for `TLS_DOMAINS`
//! from an ACME CA (RFC 8555; Let's Encrypt unless `ACME_DIRECTORY` says
//! otherwise) and renews it, once for the whole fleet, which no one
//! member's fault may cost its certificate.
//!
//! The protocol and its signed requests are instant-acme's; its requests go
//! through reqwest (`edge::acme_http`), each with a connect timeout and an
//! overall one. The robot's own part is the schedule:
//!
//! 1. Once two thirds of the certificate's life have passed
//!    ([`CertInfo::renew_at`](crate::edge::certs::CertInfo::renew_at)), or
//!    when there is none, a member takes the database's order lease
//!    ([`LEASE`]) unless the fleet's back-off says not yet; the others
//!    wait, and put the new certificate in service when it appears in the
//!    database (`tls::Identity::sync`). Nothing is ordered while the
//!    database is unreachable.
//! 2. The lease's time is the database's clock, and taking it gives a
//!    generation ([`store::Hold`]). The holder renews it while it orders;
//!    once a renewal says it is lost, or none succeeded within the lease's
//!    TTL (a stalled process, a cut database), the order is abandoned
//!    before its next step with the CA ([`Fence`]). Every write the order
//!    makes (its challenge answers, the certificate, the back-off) holds
//!    only while its generation holds the lease, so a holder that lost it
//!    overwrites nothing of the next one's order.
//! 3. Every name is validated by the challenge `ACME_CHALLENGE` names.
//!    The answers are stored first; the CA is asked to look once every
//!    member seen lately says it holds them (`tls_members`), or after
//!    [`AcmeTiming::challenge_wait`] at most, naming the members that lag.
//!    The certificate goes to the database (newest issued wins: see
//!    `Identity::offer`), then into service here.
//! 4. A failure gives the lease up. One the CA answered (an order refused,
//!    a validation failed, a rate limit) pushes the fleet's back-off in the
//!    database ([`AcmeTiming::first_retry`], doubling up to [`LAST_RETRY`]),
//!    so the CA sees no more tries from the fleet than from one server, and
//!    the member that failed waits one step more, so another takes the next
//!    try. One that never reached the CA (no connection, a TLS or DNS
//!    failure) is the member's own: it backs off alone. A member whose tries
//!    keep failing says so in `/readyz` and `/metrics`; the certificate in
//!    service, and the HTTP port's redirect, go on meanwhile.
//!
//! Each order is counted by its kind and outcome (`acme_orders_total`,
//! with the time of the last success), on the process that made it.
//!
//! Nothing the robot logs holds a key.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use anyhow::Context;
use instant_acme::{
    Account, AccountCredentials, AuthorizationStatus, CertificateIdentifier, ChallengeType,
    Identifier, NewAccount, NewOrder, OrderStatus, RetryPolicy,
};
use tokio::time::Instant;

use super::store::{self, Challenge as StoredChallenge, Hold};
use super::{hex, Identity};
use crate::edge::acme::{usable, AcmeSettings, AcmeTiming, Challenge};
use crate::edge::acme_http::AcmeHttp;
use crate::edge::certs::{rfc3339, ServedCert};

/// The name of the lease whose holder orders certificates.
pub const LEASE: &str = "acme-order";
/// How often a process that does not hold the lease looks again.
const CHECK_EVERY: Duration = Duration::from_secs(2);
/// How long a stored answer is kept at most (an order is over sooner).
const CHALLENGE_TTL: Duration = Duration::from_secs(600);
/// The longest wait between two tries (Let's Encrypt allows 5 failed
/// validations per name an hour).
pub const LAST_RETRY: Duration = Duration::from_secs(3600);
/// The members an order waits for: those that read the shared state this
/// recently.
const MEMBER_FRESH: Duration = Duration::from_secs(10);

/// How an order ended, when it did not end with a certificate.
#[derive(Debug)]
enum Failure {
    /// The CA answered it (refused, invalid, limited): the fleet backs off.
    Ca(anyhow::Error),
    /// It never reached the CA: this member backs off alone.
    Own(anyhow::Error),
    /// The lease was lost: another member orders now.
    Abandoned(String),
}

/// A refusal the CA made in its answer (an order or authorization that
/// went invalid), as opposed to one it never got to make.
#[derive(Debug)]
struct CaAnswer(String);

impl std::fmt::Display for CaAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CaAnswer {}

impl Failure {
    /// A refusal the CA made in its answer, said as `why`.
    fn refused(why: String) -> Failure {
        Failure::Ca(anyhow::Error::new(CaAnswer(why)))
    }

    /// Whose fault `e` is: the CA's answer (a problem document, an order
    /// that went invalid, a validation still pending at the deadline), or
    /// this member's (no connection, TLS, DNS, its database).
    fn of(e: anyhow::Error) -> Failure {
        let answered = e.chain().any(|c| {
            c.is::<CaAnswer>()
                || matches!(
                    c.downcast_ref::<instant_acme::Error>(),
                    Some(instant_acme::Error::Api(_) | instant_acme::Error::Timeout(_))
                )
        });
        if answered {
            Failure::Ca(e)
        } else {
            Failure::Own(e)
        }
    }
}

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
        let request = match db.is_up() {
            true => store::request(&db, &settings.directory, &settings.names_key())
                .await
                .ok()
                .flatten(),
            false => None,
        };
        if request.is_none() {
            let due = identity.renew_at().unwrap_or(SystemTime::UNIX_EPOCH);
            if let Ok(wait) = due.duration_since(SystemTime::now()) {
                if !wait.is_zero() {
                    tokio::time::sleep(wait.min(CHECK_EVERY)).await;
                    continue;
                }
            }
        }
        if !db.is_up() {
            tokio::time::sleep(CHECK_EVERY).await;
            continue;
        }
        if own.next > Instant::now() {
            tokio::time::sleep((own.next - Instant::now()).min(CHECK_EVERY)).await;
            continue;
        }
        let hold = match may_order(&identity, &settings).await {
            Ok(Some(hold)) => hold,
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
        let fence = Fence::keep(db.clone(), hold.clone(), timing.lease_ttl, Instant::now());
        // Another holder may have just stored one: take it rather than order
        // (a request is done once the certificate it retires is replaced).
        let synced = identity.sync_certificate(&settings).await.is_ok();
        let serving = identity.certs.current().map(|c| c.info.serial.clone());
        let done = match &request {
            Some(r) => synced && serving.is_some() && r.serial.is_some() && serving != r.serial,
            None => synced && identity.renew_at().is_some_and(|at| at > SystemTime::now()),
        };
        if done {
            if let Some(r) = &request {
                let _ = store::settle_request(
                    &db,
                    &settings.directory,
                    &settings.names_key(),
                    r,
                    &hold,
                )
                .await;
            }
            fence.end().await;
            continue;
        }
        tracing::info!(domains = ?settings.domains, directory = %settings.directory, challenge = ?settings.challenge, generation = hold.generation, "HTTPS: ordering a certificate (this server holds the order lease)");
        let renewal = identity.certs.current().is_some();
        let before = identity.served.load_full();
        let outcome = match order(&identity, &settings, &http, &fence).await {
            Ok(issued) => fence.holds().map(|()| issued),
            Err(e) => Err(e),
        };
        identity.certs.clear_challenges();
        if let Err(e) = store::drop_challenges(&db, hold.generation).await {
            tracing::debug!(error = %e, "the order's challenges stay until they expire");
        }
        let stored = match outcome {
            Ok((served, pem, account)) => {
                let stored = store_issued(&identity, &settings, served, pem, &hold).await;
                if let (true, Some(r)) = (stored, &request) {
                    requested(&identity, &settings, r, before.as_deref(), &account, &hold).await;
                }
                stored
            }
            Err(failure) => {
                failed(&identity, &settings, failure, &hold, &mut own).await;
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
                Duration::ZERO,
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
) -> Result<Option<Hold>, sqlx::Error> {
    let db = &identity.db;
    let backoff = store::backoff(db, &settings.directory, &settings.names_key()).await?;
    let mut not_before = backoff.next_try_at;
    if backoff.failed_by.as_deref() == Some(identity.member.as_str()) {
        not_before += backoff.retry_ms;
    }
    if store::clock(db).await? < not_before {
        return Ok(None);
    }
    store::take_lease(db, LEASE, &identity.member, settings.timing.lease_ttl).await
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
    let mine = super::stored(&served, &pem);
    match identity.offer(settings, &mine, Some(hold)).await {
        Ok(super::Offer::Stored) => {
            tracing::info!(
                serial = %served.info.serial,
                valid_until = %rfc3339(served.info.not_after),
                "HTTPS: a new certificate is in service"
            );
            identity.put_in_service(settings, served, pem);
            true
        }
        Ok(super::Offer::Older) => {
            tracing::info!(%serial, "HTTPS: the database holds a certificate issued later than this order's; that one is served");
            false
        }
        Ok(super::Offer::Retired) => {
            tracing::warn!(%serial, "HTTPS: the CA issued a certificate that is retired; it is not served");
            false
        }
        Ok(super::Offer::Fenced) => {
            tracing::warn!(%serial, "HTTPS: the order lease was lost before the certificate was stored; it is not served (the next holder's order stands)");
            false
        }
        Err(e) => {
            tracing::warn!(%serial, error = %e, "HTTPS: the new certificate cannot be stored in the database; it is not served, and the next holder orders again");
            false
        }
    }
}

/// A failed order: logged, and the back-off it calls for.
async fn failed(
    identity: &Identity,
    settings: &AcmeSettings,
    failure: Failure,
    hold: &Hold,
    own: &mut OwnBackoff,
) {
    let timing = settings.timing;
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
            let retry = match before.retry_ms {
                0 => timing.first_retry,
                ms => (Duration::from_millis(ms as u64) * 2).min(LAST_RETRY),
            };
            identity.failed(&error);
            let kept = store::set_backoff(
                &identity.db,
                directory,
                &names,
                retry,
                Some((identity.member.as_str(), error.as_str())),
                hold,
            )
            .await;
            tracing::warn!(%error, retry_in = ?retry, shared = matches!(kept, Ok(true)), directory = %settings.directory, "HTTPS: the CA refused the order; the servers try again later");
        }
    }
}

/// The hold of the order lease while an order runs: renewed every third of
/// its TTL; [`Fence::holds`] says whether the order may take its next step.
struct Fence {
    db: crate::db::Db,
    hold: Hold,
    ttl: Duration,
    lost: Arc<AtomicBool>,
    /// When the last successful renewal (or the take) was asked for.
    renewed: Arc<Mutex<Instant>>,
    task: tokio::task::JoinHandle<()>,
}

impl Fence {
    fn keep(db: crate::db::Db, hold: Hold, ttl: Duration, taken: Instant) -> Fence {
        let lost = Arc::new(AtomicBool::new(false));
        let renewed = Arc::new(Mutex::new(taken));
        let task = {
            let (db, hold, lost, renewed) =
                (db.clone(), hold.clone(), lost.clone(), renewed.clone());
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(ttl / 3).await;
                    let asked = Instant::now();
                    match store::renew_lease(&db, &hold, ttl).await {
                        Ok(true) => *renewed.lock().unwrap_or_else(|p| p.into_inner()) = asked,
                        Ok(false) => {
                            lost.store(true, Ordering::Release);
                            tracing::warn!(generation = hold.generation, "HTTPS: the order lease is lost (it expired, or another server took it)");
                            return;
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "HTTPS: the order lease could not be renewed")
                        }
                    }
                }
            })
        };
        Fence {
            db,
            hold,
            ttl,
            lost,
            renewed,
            task,
        }
    }

    /// Ok while the lease is held: no renewal said it was lost, and one
    /// succeeded within its TTL (by this process's monotonic clock, which
    /// runs on while the process is stopped).
    fn holds(&self) -> Result<(), Failure> {
        if self.lost.load(Ordering::Acquire) {
            return Err(Failure::Abandoned(
                "the order lease passed to another server".into(),
            ));
        }
        let since = self
            .renewed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed();
        if since >= self.ttl {
            return Err(Failure::Abandoned(format!(
                "the order lease was not renewed for {since:?} (its TTL is {:?})",
                self.ttl
            )));
        }
        Ok(())
    }

    /// Stops renewing and gives the lease up.
    async fn end(self) {
        self.task.abort();
        if let Err(e) = store::release_lease(&self.db, &self.hold).await {
            tracing::debug!(error = %e, "the order lease expires by itself");
        }
    }
}

/// The CA's step `work`, taken only while the lease holds; its failure
/// classified ([`Failure::of`]).
async fn step<T>(
    fence: &Fence,
    work: impl std::future::Future<Output = anyhow::Result<T>>,
) -> Result<T, Failure> {
    fence.holds()?;
    work.await.map_err(Failure::of)
}

/// One order, from the account to the certificate (and its PEM: the key,
/// then the chain).
async fn order(
    identity: &Identity,
    settings: &AcmeSettings,
    http: &AcmeHttp,
    fence: &Fence,
) -> Result<(ServedCert, String, Account), Failure> {
    let account = step(fence, account(identity, settings, http)).await?;
    if let Some(profile) = &settings.profile {
        if !account.profiles().any(|p| p.name == profile) {
            let listed: Vec<&str> = account.profiles().map(|p| p.name).collect();
            return Err(Failure::Own(anyhow::anyhow!(
                "ACME_PROFILE: the directory {} lists no profile {profile:?} (it lists: {}); nothing is ordered",
                settings.directory,
                if listed.is_empty() { "none".to_owned() } else { listed.join(", ") }
            )));
        }
    }
    let ids: Vec<Identifier> = settings
        .domains
        .iter()
        .map(|d| Identifier::Dns(d.clone()))
        .collect();
    // The certificate this order replaces, named to a CA that keeps ARI.
    let current = identity.certs.current();
    let replaces = match identity.schedule_source() {
        "ari" => current
            .as_ref()
            .and_then(|c| c.key.cert.first())
            .and_then(|der| CertificateIdentifier::try_from(der).ok()),
        _ => None,
    };
    let new_order = |replaces: Option<CertificateIdentifier<'static>>| {
        let mut new = NewOrder::new(&ids);
        if let Some(profile) = &settings.profile {
            new = new.profile(profile);
        }
        if let Some(id) = replaces {
            new = new.replaces(id);
        }
        new
    };
    let placed = step(fence, async {
        account
            .new_order(&new_order(
                replaces.clone().map(CertificateIdentifier::into_owned),
            ))
            .await
            .context("placing the order")
    })
    .await;
    let mut order = match placed {
        Err(Failure::Ca(e)) if replaces.is_some() && already_replaced(&e) => {
            tracing::info!("HTTPS: the CA says the certificate in service was already replaced; ordering without naming it");
            step(fence, async {
                account
                    .new_order(&new_order(None))
                    .await
                    .context("placing the order")
            })
            .await?
        }
        other => other?,
    };
    let kind = match settings.challenge {
        Challenge::TlsAlpn01 => ChallengeType::TlsAlpn01,
        Challenge::Http01 => ChallengeType::Http01,
    };
    // The answers, stored first (the CA is asked to look once every member
    // holds them).
    let mut answered = Vec::new();
    let mut authorizations = order.authorizations();
    while let Some(authorization) = authorizations.next().await {
        fence.holds()?;
        let mut authorization = authorization
            .context("reading an authorization")
            .map_err(Failure::of)?;
        match authorization.status {
            AuthorizationStatus::Valid => continue,
            AuthorizationStatus::Pending => {}
            other => {
                return Err(Failure::refused(format!(
                    "the authorization for {} is {other:?}",
                    authorization.identifier()
                )))
            }
        }
        let domain = match authorization.identifier().identifier {
            Identifier::Dns(d) => d.clone(),
            other => {
                return Err(Failure::refused(format!(
                    "the CA asks to validate {other:?}, not a domain name"
                )))
            }
        };
        let challenge = authorization.challenge(kind.clone()).ok_or_else(|| {
            Failure::refused(format!(
                "the CA offers no {kind:?} challenge for {domain}; try the other ACME_CHALLENGE"
            ))
        })?;
        let key_authorization = challenge.key_authorization();
        let stored = match settings.challenge {
            Challenge::TlsAlpn01 => StoredChallenge {
                kind: "tls-alpn-01".into(),
                name: domain.to_ascii_lowercase(),
                answer: hex(key_authorization.digest().as_ref()),
                generation: fence.hold.generation,
            },
            Challenge::Http01 => StoredChallenge {
                kind: "http-01".into(),
                name: challenge.token.clone(),
                answer: key_authorization.as_str().to_owned(),
                generation: fence.hold.generation,
            },
        };
        let kept = store::put_challenge(&identity.db, &stored, CHALLENGE_TTL, &fence.hold)
            .await
            .with_context(|| format!("storing the answer for {domain} in the database"))
            .map_err(Failure::Own)?;
        if !kept {
            return Err(Failure::Abandoned(format!(
                "the answer for {domain} was refused: the lease is another server's now"
            )));
        }
        match settings.challenge {
            Challenge::TlsAlpn01 => identity
                .certs
                .set_alpn_challenge(&domain, key_authorization.digest().as_ref())
                .map_err(Failure::Own)?,
            Challenge::Http01 => identity
                .certs
                .set_http_challenge(&stored.name, &stored.answer),
        }
        answered.push(stored);
    }
    confirmed(identity, &answered, settings.timing).await;
    let mut authorizations = order.authorizations();
    while let Some(authorization) = authorizations.next().await {
        let mut authorization = authorization
            .context("reading an authorization")
            .map_err(Failure::of)?;
        if authorization.status != AuthorizationStatus::Pending {
            continue;
        }
        let domain = authorization.identifier().to_string();
        let Some(mut challenge) = authorization.challenge(kind.clone()) else {
            continue;
        };
        step(fence, async {
            challenge
                .set_ready()
                .await
                .with_context(|| format!("asking the CA to validate {domain}"))
        })
        .await?;
    }
    let patience = RetryPolicy::new()
        .initial_delay(Duration::from_millis(500))
        .timeout(Duration::from_secs(120));
    let status = step(fence, async {
        order
            .poll_ready(&patience)
            .await
            .context("waiting for the validation")
    })
    .await?;
    if status != OrderStatus::Ready {
        let mut why = Vec::new();
        let mut authorizations = order.authorizations();
        while let Some(Ok(a)) = authorizations.next().await {
            for c in a.challenges.iter().filter(|c| c.error.is_some()) {
                why.push(format!(
                    "{}: {}",
                    a.identifier(),
                    c.error.as_ref().map(|p| p.to_string()).unwrap_or_default()
                ));
            }
        }
        return Err(Failure::refused(format!(
            "the order is {status:?}: {}",
            if why.is_empty() {
                "the CA gave no reason".into()
            } else {
                why.join("; ")
            }
        )));
    }
    let key_pem = step(fence, async {
        order
            .finalize()
            .await
            .context("sending the certificate request")
    })
    .await?;
    let chain_pem = step(fence, async {
        order
            .poll_certificate(&patience)
            .await
            .context("downloading the certificate")
    })
    .await?;
    let pem = format!("{key_pem}\n{chain_pem}");
    let served = usable(settings, &pem, "the issued certificate").ok_or_else(|| {
        Failure::refused("the CA issued a certificate that cannot be served".into())
    })?;
    Ok((served, pem, account))
}

/// Whether the CA refused an order because the certificate it names was
/// already replaced (RFC 9773, section 5).
fn already_replaced(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<instant_acme::Error>(),
            Some(instant_acme::Error::Api(p)) if p.r#type.as_deref().is_some_and(|t| t.ends_with(":alreadyReplaced"))
        )
    })
}

/// An operator's request is done: the certificate it retires (the one
/// served before, `before`) is retired in the database, and revoked with
/// the CA if it asked.
async fn requested(
    identity: &Identity,
    settings: &AcmeSettings,
    r: &store::Request,
    before: Option<&store::StoredCert>,
    account: &Account,
    hold: &Hold,
) {
    let db = &identity.db;
    let old = r.serial.as_deref().or(before.map(|b| b.serial.as_str()));
    if let Some(serial) = old {
        match store::retire(db, store::Retired::Certificate, serial).await {
            Ok(()) => {
                tracing::info!(%serial, "HTTPS: the replaced certificate is retired (tls renew)")
            }
            Err(e) => {
                tracing::warn!(error = %e, %serial, "HTTPS: the replaced certificate could not be marked retired")
            }
        }
    }
    if r.revoke {
        let der = before
            .filter(|b| old == Some(b.serial.as_str()))
            .and_then(|b| {
                use rustls::pki_types::pem::PemObject;
                rustls::pki_types::CertificateDer::pem_slice_iter(b.pem.as_bytes())
                    .next()?
                    .ok()
            });
        match der {
            Some(der) => {
                let revocation = instant_acme::RevocationRequest {
                    certificate: &der,
                    reason: Some(instant_acme::RevocationReason::KeyCompromise),
                };
                match account.revoke(&revocation).await {
                    Ok(()) => {
                        tracing::info!(serial = ?old, "HTTPS: the replaced certificate is revoked with the CA (keyCompromise)")
                    }
                    Err(e) => {
                        tracing::error!(error = %e, serial = ?old, "HTTPS: the replaced certificate could not be revoked with the CA; revoke it by hand")
                    }
                }
            }
            None => {
                tracing::error!(serial = ?old, "HTTPS: the replaced certificate is not held here, so it could not be revoked with the CA; revoke it by hand")
            }
        }
    }
    if let Err(e) =
        store::settle_request(db, &settings.directory, &settings.names_key(), r, hold).await
    {
        tracing::warn!(error = %e, "HTTPS: the renewal request stays; the next holder settles it");
    }
}

/// Waits until every member seen in the last [`MEMBER_FRESH`] says it
/// holds `answers`, or `timing.challenge_wait` at most, then logs the
/// members that lag.
async fn confirmed(identity: &Identity, answers: &[StoredChallenge], timing: AcmeTiming) {
    let wanted: Vec<String> = answers.iter().map(StoredChallenge::key).collect();
    let started = Instant::now();
    let mut lagging = Vec::new();
    while started.elapsed() < timing.challenge_wait {
        match store::members(&identity.db, MEMBER_FRESH).await {
            Ok(members) => {
                lagging = members
                    .into_iter()
                    .filter(|m| !wanted.iter().all(|w| m.challenges.contains(w)))
                    .map(|m| m.member)
                    .collect();
                if lagging.is_empty() {
                    tracing::debug!(after = ?started.elapsed(), "HTTPS: every server holds the challenge answers");
                    return;
                }
            }
            Err(e) => lagging = vec![format!("(the members cannot be read: {e})")],
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tracing::warn!(?lagging, waited = ?timing.challenge_wait, "HTTPS: these servers do not hold the challenge answers yet; the CA is asked to validate anyway");
}

/// The account for this directory: the database's, else the one an older
/// version kept in `ACME_CACHE_DIR`, else a new one (stored at once; if
/// another server stored one meanwhile, that one is used). A stored account
/// that cannot be read is replaced by the new one.
pub(super) async fn account(
    identity: &Identity,
    settings: &AcmeSettings,
    http: &AcmeHttp,
) -> anyhow::Result<Account> {
    let stored = store::account(&identity.db, &settings.directory)
        .await
        .context("reading the ACME account from the database")?;
    let mut damaged = None;
    if let Some(text) = stored {
        match serde_json::from_str::<AccountCredentials>(&text) {
            Ok(credentials) => return from_credentials(http, credentials).await,
            Err(e) => {
                tracing::warn!(error = %e, "HTTPS: the ACME account in the database cannot be read; a new one replaces it");
                damaged = Some(text);
            }
        }
    }
    let contact: Vec<&str> = settings.contact.iter().map(String::as_str).collect();
    let new = NewAccount {
        contact: &contact,
        terms_of_service_agreed: true,
        only_return_existing: false,
    };
    let (account, credentials) = Account::builder_with_http(Box::new(http.clone()))
        .create(&new, settings.directory.clone(), None)
        .await
        .context("creating the ACME account")?;
    let json = serde_json::to_string(&credentials).context("serialising the account")?;
    let kept = match &damaged {
        Some(old) => store::replace_account(&identity.db, &settings.directory, old, &json).await,
        None => store::put_account(&identity.db, &settings.directory, &json).await,
    }
    .context("storing the ACME account in the database")?;
    if kept != json {
        let credentials: AccountCredentials =
            serde_json::from_str(&kept).context("reading the stored ACME account")?;
        return from_credentials(http, credentials).await;
    }
    tracing::info!(account = %account.id(), "HTTPS: ACME account created");
    Ok(account)
}

async fn from_credentials(
    http: &AcmeHttp,
    credentials: AccountCredentials,
) -> anyhow::Result<Account> {
    Account::builder_with_http(Box::new(http.clone()))
        .from_credentials(credentials)
        .await
        .context("reaching the ACME directory with the stored account")
}
