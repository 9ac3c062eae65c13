//! `citizen-site tls renew`: the stored certificate it is for, the request
//! recorded, and the wait until every running server serves the new one,
//! saying what became of the old one.

use std::time::Duration;

use anyhow::{bail, Context};
use serde_json::json;

use super::members::{member_json, ALIVE};
use crate::cli::output::{print_json, table, utc, Reported};
use crate::db::Db;
use crate::tls::store;

/// Which stored certificate a renewal is for.
pub(super) struct Which<'a> {
    pub(super) names: Option<&'a str>,
    pub(super) directory: Option<&'a str>,
}

/// The stored certificate `which` names: among several, the one the
/// running servers serve (a move from a staging CA leaves the old
/// directory's behind).
async fn chosen(db: &Db, which: &Which<'_>) -> anyhow::Result<(String, String, store::StoredCert)> {
    let stored = store::certificates(db).await?;
    let mut candidates: Vec<_> = stored
        .into_iter()
        .filter(|(d, n, _)| {
            which.names.is_none_or(|want| want == n) && which.directory.is_none_or(|want| want == d)
        })
        .collect();
    if candidates.len() > 1 {
        let serving: Vec<String> = store::acme_members(db, ALIVE)
            .await?
            .into_iter()
            .filter_map(|m| m.serial)
            .collect();
        let served: Vec<_> = candidates
            .iter()
            .filter(|(_, _, c)| serving.contains(&c.serial))
            .cloned()
            .collect();
        if served.len() == 1 {
            candidates = served;
        }
    }
    let listed = |c: &[(String, String, store::StoredCert)]| {
        c.iter()
            .map(|(d, n, _)| format!("{n} (from {d})"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    match candidates.len() {
        1 => Ok(candidates.remove(0)),
        0 if which.names.is_some() || which.directory.is_some() => bail!(
            "no certificate is stored for{}{}; `citizen-site tls status` lists those stored",
            which.names.map(|n| format!(" the names {n:?}")).unwrap_or_default(),
            which.directory.map(|d| format!(" from {d}")).unwrap_or_default(),
        ),
        0 => {
            let running = store::members(db, ALIVE).await?;
            if !running.is_empty() && running.iter().all(|m| m.source == store::Source::File) {
                bail!(
                    "no certificate is stored, and nothing is ordered: the running servers serve their own TLS_CERT files; {}",
                    replace_files()
                );
            }
            bail!("no certificate is stored: the servers order one by themselves once they run with TLS_DOMAINS")
        }
        _ => bail!(
            "the database holds several certificates ({}), and the running servers serve none of them alone: say which with --names and --directory (ACME_DIRECTORY)",
            listed(&candidates)
        ),
    }
}

/// What renews the certificate of a server serving its own files: its
/// operator, replacing them.
fn replace_files() -> String {
    format!(
        "to serve a new certificate, replace TLS_CERT and TLS_KEY on each server with the new pair: a server puts it in service within {} s, and `citizen-site tls status` lists its serial",
        crate::edge::certs::FILE_CHECK_EVERY.as_secs()
    )
}

/// The certificate of a stored PEM text (its key and chain), without the
/// key: what a renewal request keeps to revoke it.
fn leaf_pem(pem: &str) -> Option<&str> {
    const END: &str = "-----END CERTIFICATE-----";
    let start = pem.find("-----BEGIN CERTIFICATE-----")?;
    let end = start + pem[start..].find(END)? + END.len();
    Some(&pem[start..end])
}

pub(super) async fn renew(
    db: &Db,
    revoke: bool,
    at_once: bool,
    which: Which<'_>,
    wait: Duration,
    json: bool,
) -> anyhow::Result<()> {
    let (directory, names, old) = chosen(db, &which).await?;
    let request = store::request_renewal(
        db,
        &directory,
        &names,
        Some(&old.serial),
        leaf_pem(&old.pem),
        revoke,
    )
    .await
    .context("recording the request")?;
    // A back-off after the CA's refusal stands unless `--now` lifts it: a
    // request is no fresh try at a CA that limits this site (its limits
    // count every try).
    if at_once {
        store::lift_backoff(db, &directory, &names)
            .await
            .context("lifting the fleet's back-off")?;
    }
    let backoff = store::backoff(db, &directory, &names).await?;
    let now = store::clock(db).await?;
    // The member that failed waits a step more: alone, it is the fleet.
    let alive = store::acme_members(db, ALIVE).await?;
    let next_try = match &backoff.failed_by {
        Some(by) if !alive.is_empty() && alive.iter().all(|m| m.member == *by) => {
            backoff.next_try_at + backoff.retry_ms
        }
        _ => backoff.next_try_at,
    };
    let held = (next_try > now).then(|| {
        format!(
            "; the CA refused the last try ({}), and the servers try again at {} UTC, not sooner (--now tries at once, and the CA's limits count that try)",
            backoff.error.as_deref().unwrap_or("-"),
            utc(next_try)
        )
    });
    let held = held.as_deref().unwrap_or("");
    if alive.is_empty() {
        if !store::members(db, ALIVE).await?.is_empty() {
            bail!(
                "no running server of the site orders certificates (those running serve their own TLS_CERT files): the request is kept, and the first server to start with TLS_DOMAINS orders the new certificate and retires {}{held}; {}",
                old.serial,
                replace_files()
            );
        }
        bail!(
            "no server of the site is running (none has read the database in the last {} s): the request is kept, and the first server to start orders the new certificate and retires {}{held}",
            ALIVE.as_secs(),
            old.serial
        );
    }
    if next_try > now + wait.as_millis() as i64 {
        bail!(
            "the request is kept, and no new certificate comes within this command's wait ({} s){held}",
            wait.as_secs()
        );
    }
    // A pending request for the same certificate that asked to revoke it
    // keeps asking (`store::request_renewal`).
    let revoke = request.revoke;
    if !json {
        println!("requested: a new certificate for {names}, retiring {} (revoked too: {revoke}){held}; waiting for the servers…", old.serial);
    }
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = store::clock(db).await?;
        let current = store::certificate_stamp(db, &directory, &names).await?;
        let members = store::acme_members(db, ALIVE).await?;
        let outcome = store::outcome(db, &directory, &names, request.requested_at).await?;
        if outcome.is_none() {
            gone(
                db,
                &directory,
                &names,
                &request,
                current.as_ref(),
                &old.serial,
            )
            .await?;
        }
        if let (Some((serial, _)), Some(outcome)) =
            (current.filter(|(s, _)| *s != old.serial), outcome)
        {
            let serving = members
                .iter()
                .all(|m| m.serial.as_deref() == Some(serial.as_str()));
            if serving && !members.is_empty() {
                let after = store::stored_at(db, &directory, &names, &serial)
                    .await?
                    .map(|at| now - at);
                if json {
                    print_json(&json!({
                        "ok": outcome.done(),
                        "retired": outcome.retired.then(|| old.serial.clone()),
                        "old": old.serial,
                        "serial": serial,
                        "revoke": revoke,
                        "revoked": outcome.revoked,
                        "said": outcome.said,
                        "carried_out_by": outcome.by,
                        "served_everywhere_ms": after,
                        "members": members.iter().map(|m| member_json(m, true)).collect::<Vec<_>>(),
                    }));
                } else {
                    let rows: Vec<Vec<String>> = members
                        .iter()
                        .map(|m| vec![m.member.clone(), serial.clone()])
                        .collect();
                    println!("{}", table(&["SERVER", "SERVES"], &rows));
                    println!(
                        "renewed: {serial} is served by every running server ({} ms after it was stored)",
                        after.unwrap_or(0),
                    );
                    println!("{}: {} (by {})", old.serial, outcome.said, outcome.by);
                }
                if !outcome.done() {
                    // Said above, in the report.
                    if !json {
                        eprintln!(
                            "error: the renewal did not do all it was asked: {}",
                            outcome.said
                        );
                    }
                    return Err(Reported.into());
                }
                return Ok(());
            }
        }
        if tokio::time::Instant::now() >= deadline {
            bail!(
                "no new certificate served everywhere within {} s: the request is kept and the servers go on trying{held}; `citizen-site tls status` shows where it stands",
                wait.as_secs()
            );
        }
    }
}

/// When this command's request is no longer pending and no outcome of it
/// is kept, it was not carried out as asked: a later `tls renew` replaced
/// it, or a server of an older version cleared it keeping no outcome. An
/// error saying which, rather than waiting for an answer that never comes.
pub(super) async fn gone(
    db: &Db,
    directory: &str,
    names: &str,
    mine: &store::Request,
    current: Option<&(String, i64)>,
    old: &str,
) -> anyhow::Result<()> {
    let pending = store::request(db, directory, names).await?;
    match pending {
        Some(p) if p.requested_at == mine.requested_at => Ok(()),
        Some(p) => bail!(
            "a later `citizen-site tls renew` (at {} UTC) replaced this request: that one is carried out instead; `citizen-site tls status` shows it",
            utc(p.requested_at)
        ),
        None => match store::last_outcome(db, directory, names).await? {
            // Settled since the caller looked for its outcome: read next round.
            Some((at, _)) if at == mine.requested_at => Ok(()),
            Some((at, o)) => bail!(
                "a later `citizen-site tls renew` (at {} UTC) replaced this request and was carried out: {} (by {})",
                utc(at),
                o.said,
                o.by
            ),
            _ if current.is_some_and(|(serial, _)| serial != old) => bail!(
                "the request was carried out by a server that keeps no record of what became of {old} (an older citizen-site): that server's log says whether it was retired and revoked"
            ),
            _ => Ok(()),
        },
    }
}
