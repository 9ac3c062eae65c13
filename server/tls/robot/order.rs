//! One order with the CA, from the account to the certificate: each step taken only while the lease holds, its failure classified ([`Failure`]).

use std::time::Duration;

use anyhow::Context;
use instant_acme::{
    Account, AccountCredentials, AuthorizationStatus, CertificateIdentifier, ChallengeType,
    Identifier, NewAccount, NewOrder, OrderStatus, RetryPolicy,
};
use tokio::time::Instant;

use super::failure::Failure;
use super::fence::Fence;
use crate::edge::acme::{usable, AcmeSettings, AcmeTiming, Challenge};
use crate::edge::acme_http::AcmeHttp;
use crate::edge::certs::ServedCert;
use crate::tls::identity::{at_ms, Identity};
use crate::tls::store::hex;
use crate::tls::store::{self, Challenge as StoredChallenge};

/// How long a stored answer is kept at most (an order is over sooner).
const CHALLENGE_TTL: Duration = Duration::from_secs(600);

/// The members an order waits for: those that read the shared state this
/// recently.
const MEMBER_FRESH: Duration = Duration::from_secs(10);

/// The CA's step `work`, taken only while the lease holds; its failure
/// classified ([`Failure::of`]).
async fn step<T>(
    fence: &Fence,
    work: impl std::future::Future<Output = anyhow::Result<T>>,
) -> Result<T, Failure> {
    fence.holds()?;
    work.await.map_err(Failure::of)
}

/// A step once the order exists: a slow or failing CA is the CA's
/// ([`Failure::of_placed`]).
async fn placed_step<T>(
    fence: &Fence,
    work: impl std::future::Future<Output = anyhow::Result<T>>,
) -> Result<T, Failure> {
    fence.holds()?;
    work.await.map_err(Failure::of_placed)
}

/// One order, from the account to the certificate (and its PEM: the key,
/// then the chain).
pub(super) async fn order(
    identity: &Identity,
    settings: &AcmeSettings,
    http: &AcmeHttp,
    fence: &Fence,
    answered: &mut Vec<StoredChallenge>,
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
    let mut authorizations = order.authorizations();
    while let Some(authorization) = authorizations.next().await {
        fence.holds()?;
        let mut authorization = authorization
            .context("reading an authorization")
            .map_err(Failure::of_placed)?;
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
    confirmed(identity, answered, settings.timing).await;
    let mut authorizations = order.authorizations();
    while let Some(authorization) = authorizations.next().await {
        let mut authorization = authorization
            .context("reading an authorization")
            .map_err(Failure::of_placed)?;
        if authorization.status != AuthorizationStatus::Pending {
            continue;
        }
        let domain = authorization.identifier().to_string();
        let Some(mut challenge) = authorization.challenge(kind.clone()) else {
            continue;
        };
        placed_step(fence, async {
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
    let status = placed_step(fence, async {
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
    let key_pem = placed_step(fence, async {
        order
            .finalize()
            .await
            .context("sending the certificate request")
    })
    .await?;
    let chain_pem = placed_step(fence, async {
        order
            .poll_certificate(&patience)
            .await
            .context("downloading the certificate")
    })
    .await?;
    let pem = format!("{key_pem}\n{chain_pem}");
    let now = store::clock(&identity.db)
        .await
        .map(at_ms)
        // The database away a moment: the certificate the CA just issued
        // is judged by this process's clock rather than thrown away.
        .unwrap_or_else(|_| std::time::SystemTime::now());
    let served = usable(settings, &pem, "the issued certificate", now).ok_or_else(|| {
        Failure::refused("the CA issued a certificate that cannot be served".into())
    })?;
    Ok((served, pem, account))
}

/// Whether the CA refused an order because the certificate it names was
/// already replaced (RFC 9773, section 5).
fn already_replaced(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<instant_acme::Error>()
            .is_some_and(|e| is_problem(e, ":alreadyReplaced"))
    })
}

/// Whether the CA's problem document is of the type ending in `suffix`.
pub(super) fn is_problem(e: &instant_acme::Error, suffix: &str) -> bool {
    matches!(e, instant_acme::Error::Api(p) if p.r#type.as_deref().is_some_and(|t| t.ends_with(suffix)))
}

/// Waits until every member under ACME seen in the last [`MEMBER_FRESH`]
/// says it holds `answers`, or `timing.challenge_wait` at most, then logs
/// the members that lag. One serving the operator's own files answers no
/// challenge and is not waited for.
async fn confirmed(identity: &Identity, answers: &[StoredChallenge], timing: AcmeTiming) {
    let wanted: Vec<String> = answers.iter().map(StoredChallenge::key).collect();
    if let Err(e) = store::forget_gone_members(&identity.db).await {
        tracing::debug!(error = %e, "members gone for a day stay listed a while longer");
    }
    let started = Instant::now();
    let mut lagging = Vec::new();
    while started.elapsed() < timing.challenge_wait {
        match store::acme_members(&identity.db, MEMBER_FRESH).await {
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
pub(in crate::tls) async fn account(
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
