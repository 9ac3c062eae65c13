//! The certificate robot: obtains the HTTPS certificate for `TLS_DOMAINS`
//! from an ACME CA (RFC 8555; Let's Encrypt unless `ACME_DIRECTORY` says
//! otherwise) and renews it, once for the whole fleet.
//!
//! The protocol and its signed requests are instant-acme's; its requests go
//! through reqwest (`edge::acme_http`), each with a connect timeout and an
//! overall one. The robot's own part is the schedule:
//!
//! 1. Once two thirds of the certificate's life have passed
//!    ([`CertInfo::renew_at`](crate::edge::certs::CertInfo::renew_at)), or
//!    when there is none, a process takes the database's order lease
//!    ([`LEASE`]); the others wait, and put the new certificate in service
//!    when it appears in the database (`tls::Identity::sync`). Nothing is
//!    ordered while the database is unreachable.
//! 2. The holder keeps its lease alive while it orders. Every name is
//!    validated by the challenge `ACME_CHALLENGE` names; each answer is
//!    stored in the database before the CA is told to look, and the holder
//!    waits until every server has read it ([`PROPAGATION`]), so whichever
//!    server the CA reaches answers. The certificate goes to the database,
//!    then into service here. A holder that dies mid-order leaves a lease
//!    that expires within [`LEASE_TTL`]; another process then orders.
//! 3. A failure (directory unreachable, order refused, validation failed)
//!    is logged, and the holder keeps the lease through its wait
//!    ([`FIRST_RETRY`], doubling up to [`LAST_RETRY`]), so the fleet does
//!    not retry faster than one process would; the certificate in service,
//!    and the HTTP port's redirect, go on meanwhile.
//!
//! Each order is counted by its kind and outcome (`acme_orders_total`,
//! with the time of the last success), on the process that made it.
//!
//! Nothing the robot logs holds a key.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::Context;
use instant_acme::{
    Account, AccountCredentials, AuthorizationStatus, ChallengeType, Identifier, NewAccount,
    NewOrder, OrderStatus, RetryPolicy,
};

use super::store::{self, Challenge as StoredChallenge};
use super::{hex, Identity, SYNC_EVERY};
use crate::edge::acme::{usable, AcmeSettings, Challenge};
use crate::edge::acme_http::AcmeHttp;
use crate::edge::certs::{rfc3339, ServedCert};

/// The name of the lease whose holder orders certificates.
pub const LEASE: &str = "acme-order";
/// How long a lease lasts unless its holder renews it.
pub const LEASE_TTL: Duration = Duration::from_secs(30);
/// How often a process that does not hold the lease looks again.
const CHECK_EVERY: Duration = Duration::from_secs(2);
/// From storing a challenge's answer to telling the CA to look: every
/// server reads the answers every [`SYNC_EVERY`].
pub const PROPAGATION: Duration = Duration::from_millis(SYNC_EVERY.as_millis() as u64 * 2 + 500);
/// How long a stored answer is kept at most (an order is over sooner).
const CHALLENGE_TTL: Duration = Duration::from_secs(600);
/// The wait after a first failure; it doubles with each next one.
pub const FIRST_RETRY: Duration = Duration::from_secs(5);
/// The longest wait between two tries (Let's Encrypt allows 5 failed
/// validations per name an hour).
pub const LAST_RETRY: Duration = Duration::from_secs(3600);

/// Runs the robot until the process ends.
pub async fn run(identity: Arc<Identity>, settings: AcmeSettings, http: AcmeHttp) {
    let holder = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4().simple());
    let db = identity.db.clone();
    let mut retry = FIRST_RETRY;
    loop {
        let due = identity
            .certs
            .current()
            .map(|s| s.info.renew_at())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        if let Ok(wait) = due.duration_since(SystemTime::now()) {
            if !wait.is_zero() {
                tokio::time::sleep(wait.min(CHECK_EVERY)).await;
                continue;
            }
        }
        if !db.is_up() {
            tokio::time::sleep(CHECK_EVERY).await;
            continue;
        }
        match store::take_lease(&db, LEASE, &holder, LEASE_TTL).await {
            Ok(true) => {}
            Ok(false) => {
                tokio::time::sleep(CHECK_EVERY).await;
                continue;
            }
            Err(e) => {
                tracing::warn!(error = %e, "HTTPS: the order lease cannot be read");
                tokio::time::sleep(CHECK_EVERY).await;
                continue;
            }
        }
        // Another holder may have just stored one: take it rather than order.
        if identity.sync_certificate(&settings).await.is_ok()
            && identity
                .certs
                .current()
                .is_some_and(|s| s.info.renew_at() > SystemTime::now())
        {
            let _ = store::release_lease(&db, LEASE, &holder).await;
            continue;
        }
        tracing::info!(domains = ?settings.domains, directory = %settings.directory, challenge = ?settings.challenge, "HTTPS: ordering a certificate (this server holds the order lease)");
        let keep = {
            let (db, holder) = (db.clone(), holder.clone());
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(LEASE_TTL / 3).await;
                    if let Err(e) = store::take_lease(&db, LEASE, &holder, LEASE_TTL).await {
                        tracing::warn!(error = %e, "HTTPS: the order lease could not be renewed");
                    }
                }
            })
        };
        let renewal = identity.certs.current().is_some();
        let mut answered = Vec::new();
        let outcome = order(&identity, &settings, &http, &mut answered).await;
        identity.orders.record(renewal, outcome.is_ok());
        keep.abort();
        identity.certs.clear_challenges();
        if let Err(e) = store::drop_challenges(&db, &answered).await {
            tracing::debug!(error = %e, "the order's challenges stay until they expire");
        }
        match outcome {
            Ok((served, pem)) => {
                let stored = super::stored(&served, &pem);
                if let Err(e) =
                    store::put_certificate(&db, &settings.directory, &settings.names_key(), &stored)
                        .await
                {
                    tracing::warn!(error = %e, "HTTPS: the new certificate is not in the database yet; it is stored once the database answers");
                }
                tracing::info!(
                    serial = %served.info.serial,
                    valid_until = %rfc3339(served.info.not_after),
                    renew_from = %rfc3339(served.info.renew_at()),
                    "HTTPS: a new certificate is in service"
                );
                identity.put_in_service(&settings, served, pem);
                let _ = store::release_lease(&db, LEASE, &holder).await;
                retry = FIRST_RETRY;
            }
            Err(e) => {
                let error = format!("{e:#}");
                tracing::warn!(%error, retry_in = ?retry, directory = %settings.directory, "HTTPS: could not obtain a certificate from ACME_DIRECTORY; trying again later");
                // Held through the wait: no other server retries sooner.
                let _ = store::take_lease(&db, LEASE, &holder, retry + LEASE_TTL).await;
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(LAST_RETRY);
            }
        }
    }
}

/// One order, from the account to the certificate (and its PEM: the key,
/// then the chain). The challenges it stored are pushed to `answered`.
async fn order(
    identity: &Identity,
    settings: &AcmeSettings,
    http: &AcmeHttp,
    answered: &mut Vec<StoredChallenge>,
) -> anyhow::Result<(ServedCert, String)> {
    let account = account(identity, settings, http).await?;
    let ids: Vec<Identifier> = settings
        .domains
        .iter()
        .map(|d| Identifier::Dns(d.clone()))
        .collect();
    let mut order = account
        .new_order(&NewOrder::new(&ids))
        .await
        .context("placing the order")?;
    let kind = match settings.challenge {
        Challenge::TlsAlpn01 => ChallengeType::TlsAlpn01,
        Challenge::Http01 => ChallengeType::Http01,
    };
    let mut authorizations = order.authorizations();
    while let Some(authorization) = authorizations.next().await {
        let mut authorization = authorization.context("reading an authorization")?;
        match authorization.status {
            AuthorizationStatus::Valid => continue,
            AuthorizationStatus::Pending => {}
            other => anyhow::bail!(
                "the authorization for {} is {other:?}",
                authorization.identifier()
            ),
        }
        let domain = match authorization.identifier().identifier {
            Identifier::Dns(d) => d.clone(),
            other => anyhow::bail!("the CA asks to validate {other:?}, not a domain name"),
        };
        let mut challenge = authorization.challenge(kind.clone()).with_context(|| {
            format!(
                "the CA offers no {kind:?} challenge for {domain}; try the other ACME_CHALLENGE"
            )
        })?;
        let key_authorization = challenge.key_authorization();
        let stored = match settings.challenge {
            Challenge::TlsAlpn01 => StoredChallenge {
                kind: "tls-alpn-01".into(),
                name: domain.to_ascii_lowercase(),
                answer: hex(key_authorization.digest().as_ref()),
            },
            Challenge::Http01 => StoredChallenge {
                kind: "http-01".into(),
                name: challenge.token.clone(),
                answer: key_authorization.as_str().to_owned(),
            },
        };
        store::put_challenge(&identity.db, &stored, CHALLENGE_TTL)
            .await
            .with_context(|| format!("storing the answer for {domain} in the database"))?;
        match settings.challenge {
            Challenge::TlsAlpn01 => identity
                .certs
                .set_alpn_challenge(&domain, key_authorization.digest().as_ref())?,
            Challenge::Http01 => identity
                .certs
                .set_http_challenge(&stored.name, &stored.answer),
        }
        answered.push(stored);
        // Every server reads the answer before the CA may ask any of them.
        tokio::time::sleep(PROPAGATION).await;
        challenge
            .set_ready()
            .await
            .with_context(|| format!("asking the CA to validate {domain}"))?;
    }
    let patience = RetryPolicy::new()
        .initial_delay(Duration::from_millis(500))
        .timeout(Duration::from_secs(120));
    let status = order
        .poll_ready(&patience)
        .await
        .context("waiting for the validation")?;
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
        anyhow::bail!(
            "the order is {status:?}: {}",
            if why.is_empty() {
                "the CA gave no reason".into()
            } else {
                why.join("; ")
            }
        );
    }
    let key_pem = order
        .finalize()
        .await
        .context("sending the certificate request")?;
    let chain_pem = order
        .poll_certificate(&patience)
        .await
        .context("downloading the certificate")?;
    let pem = format!("{key_pem}\n{chain_pem}");
    let served = usable(settings, &pem, "the issued certificate")
        .context("the CA issued a certificate that cannot be served")?;
    Ok((served, pem))
}

/// The account for this directory: the database's, else the one an older
/// version kept in `ACME_CACHE_DIR`, else a new one (stored at once; if
/// another server stored one meanwhile, that one is used).
async fn account(
    identity: &Identity,
    settings: &AcmeSettings,
    http: &AcmeHttp,
) -> anyhow::Result<Account> {
    let stored = store::account(&identity.db, &settings.directory)
        .await
        .context("reading the ACME account from the database")?;
    let stored = stored.or_else(|| std::fs::read_to_string(settings.account_file()).ok());
    if let Some(text) = stored {
        match serde_json::from_str::<AccountCredentials>(&text) {
            Ok(credentials) => {
                store::put_account(&identity.db, &settings.directory, &text)
                    .await
                    .context("storing the ACME account in the database")?;
                return Account::builder_with_http(Box::new(http.clone()))
                    .from_credentials(credentials)
                    .await
                    .context("reaching the ACME directory with the stored account");
            }
            Err(_) => {
                tracing::warn!("HTTPS: the stored ACME account cannot be read; creating a new one")
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
    let kept = store::put_account(&identity.db, &settings.directory, &json)
        .await
        .context("storing the ACME account in the database")?;
    if kept != json {
        let credentials: AccountCredentials =
            serde_json::from_str(&kept).context("reading the stored ACME account")?;
        return Account::builder_with_http(Box::new(http.clone()))
            .from_credentials(credentials)
            .await
            .context("reaching the ACME directory with the stored account");
    }
    tracing::info!(account = %account.id(), "HTTPS: ACME account created");
    Ok(account)
}
