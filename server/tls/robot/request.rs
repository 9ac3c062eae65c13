//! An operator's renewal request carried out (`citizen-site tls renew`): the certificate it names retired, and revoked with the CA if it asked, and what happened kept for the command.

use instant_acme::Account;

use super::order::is_problem;
use crate::edge::acme::AcmeSettings;
use crate::edge::certs::first_certificate;
use crate::tls::identity::Identity;
use crate::tls::store::{self, Hold};

/// An operator's request is carried out: the certificate it names (else
/// the one served before, `before`) is retired in the database, and
/// revoked with the CA if it asked, from the copy the request keeps (so
/// even once another certificate replaced it). What happened, the CA's
/// answer included, is stored with the request's settling, for `tls renew`
/// to report.
pub(super) async fn requested(
    identity: &Identity,
    settings: &AcmeSettings,
    r: &store::Request,
    before: Option<&store::StoredCert>,
    account: Result<&Account, &String>,
    hold: &Hold,
) {
    let db = &identity.db;
    let old = r.serial.as_deref().or(before.map(|b| b.serial.as_str()));
    let mut said = Vec::new();
    let retired = match old {
        Some(serial) => match store::retire(db, store::Retired::Certificate, serial).await {
            Ok(()) => {
                tracing::info!(%serial, "HTTPS: the replaced certificate is retired (tls renew)");
                said.push(format!("{serial} is retired"));
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, %serial, "HTTPS: the replaced certificate could not be marked retired");
                said.push(format!("{serial} could not be marked retired: {e}"));
                false
            }
        },
        None => {
            said.push("no certificate was named, so none is retired".into());
            false
        }
    };
    let revoked = match r.revoke {
        false => None,
        true => {
            let der = r.cert.as_deref().and_then(first_certificate).or_else(|| {
                before
                    .filter(|b| old == Some(b.serial.as_str()))
                    .and_then(|b| first_certificate(&b.pem))
            });
            let (revoked, why) = match (der, account) {
                (None, _) => (
                    false,
                    "it is not revoked: no copy of it is kept (revoke it by hand)".to_owned(),
                ),
                (Some(_), Err(e)) => (
                    false,
                    format!("it is not revoked: the CA cannot be reached ({e}); revoke it by hand"),
                ),
                (Some(der), Ok(account)) => {
                    let revocation = instant_acme::RevocationRequest {
                        certificate: &der,
                        reason: Some(instant_acme::RevocationReason::KeyCompromise),
                    };
                    match account.revoke(&revocation).await {
                        Ok(()) => (true, "it is revoked with the CA (keyCompromise)".to_owned()),
                        Err(e) if is_problem(&e, ":alreadyRevoked") => {
                            (true, "the CA says it was revoked already".to_owned())
                        }
                        Err(e) => (
                            false,
                            format!("it is not revoked: the CA answered: {e}; revoke it by hand"),
                        ),
                    }
                }
            };
            match revoked {
                true => tracing::info!(serial = ?old, "HTTPS: the replaced certificate: {why}"),
                false => tracing::error!(serial = ?old, "HTTPS: the replaced certificate: {why}"),
            }
            said.push(why);
            Some(revoked)
        }
    };
    let outcome = store::Outcome {
        retired,
        revoked,
        said: said.join("; "),
        by: identity.member.clone(),
    };
    match store::settle_request(
        db,
        &settings.directory,
        &settings.names_key(),
        r,
        &outcome,
        hold,
    )
    .await
    {
        Ok(true) => {}
        Ok(false) => tracing::warn!(
            "HTTPS: the renewal request was settled by another server, or replaced by a later one"
        ),
        Err(e) => {
            tracing::warn!(error = %e, "HTTPS: the renewal request stays; the next holder carries it out again")
        }
    }
}
