//! The session-ticket keys every server shares, rotated without a gap.
//!
//! Time, the fleet's (the database's clock: a member whose own runs hours
//! ahead seals and forgets as the others do), is cut into periods
//! ([`TicketSchedule::period`], 6 hours). The key
//! of period `n` seals every new ticket from the start of `n` to the start
//! of `n + 1`, on every server. It is stored a whole period before it seals:
//! while `n` runs, each server makes sure `n + 1` has its key (the first to
//! store one wins; everyone reads it back), and reads the keys every few
//! seconds (`tls::TICKET_SYNC_EVERY`, or a quarter of a shorter period).
//! So every server holds a key before any server seals with it, and a
//! ticket opens wherever the visitor lands. A key still opens tickets for
//! [`TicketSchedule::lifetime`] after its period ends (the lifetime clients
//! are told), then it is forgotten, in memory and in the database.
//!
//! A server also writes back a key it holds that the database lacks (a
//! restored database), so the fleet's keys never go back; but never a key
//! retired by `citizen-site tls rotate-tickets`, which replaces every key
//! at once: a server that finds a period's key changed forgets every key
//! it held, its own too, and tickets sealed before open nowhere.
//!
//! A key's age (`/metrics`, `citizen-site tls status`) counts from when it
//! was made, as the database recorded it: the key sealing is a period old
//! when it starts and two as it stops, and seconds old after a rotation.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::db::Db;
use crate::edge::tickets::{random_secret, TicketKey, TicketKeys};

use super::store::{self, hex, unhex, Retired, StoredKey};

/// How often each process reads the session-ticket keys (more often when a period is
/// shorter than four times this, as in tests).
pub const TICKET_SYNC_EVERY: Duration = Duration::from_secs(5);

/// The periods and the lifetime of tickets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TicketSchedule {
    pub period: Duration,
    pub lifetime: Duration,
}

impl TicketSchedule {
    /// A schedule whose period is `period` and lifetime twice that.
    pub fn every(period: Duration) -> TicketSchedule {
        TicketSchedule {
            period,
            lifetime: period * 2,
        }
    }

    /// How long a process's own key (before the database answers) lives.
    pub fn keep(&self) -> Duration {
        self.period + self.lifetime
    }

    /// How often a server reads the keys: every `tls::TICKET_SYNC_EVERY`,
    /// or a quarter of a shorter period.
    pub fn read_every(&self) -> Duration {
        (self.period / 4).min(TICKET_SYNC_EVERY)
    }

    fn period_ms(&self) -> i64 {
        (self.period.as_millis() as i64).max(1)
    }
}

/// A new key for `period` (of `period_ms`), from the system's random
/// source; None when it gives no bytes.
pub fn new_key(period: i64, period_ms: i64) -> Option<StoredKey> {
    Some(StoredKey {
        period,
        period_ms,
        secret: hex(&random_secret()?),
    })
}

/// What a process last read, to tell a change.
pub type Seen = BTreeMap<(i64, i64), String>;

/// One round: the current and next periods get their keys, ended keys are
/// forgotten, keys this process holds that the database lacks go back,
/// and `keys` takes the database's set if it changed since `seen`.
pub async fn sync(
    db: &Db,
    schedule: TicketSchedule,
    keys: &TicketKeys,
    seen: &mut Seen,
) -> Result<(), sqlx::Error> {
    // The fleet's time, not this process's: a member whose clock runs
    // hours ahead would forget the keys the others still seal with.
    let now = store::clock(db).await?;
    keys.set_clock(now);
    let length = schedule.period_ms();
    let lifetime = schedule.lifetime.as_millis() as i64;
    let (mut stored, mut made) = read_keys(db).await?;
    let current = now / length;
    let mut wrote = false;
    // Keys this process had that the database lost (a restore), if live
    // and not retired (`citizen-site tls rotate-tickets`).
    for ((period, period_ms), secret) in seen.iter() {
        let live = (period + 1) * period_ms + lifetime > now;
        if live
            && !stored.iter().any(|k| k.period == *period)
            && !store::is_retired(db, Retired::TicketKey, &store::key_id(secret)).await?
        {
            let key = StoredKey {
                period: *period,
                period_ms: *period_ms,
                secret: secret.clone(),
            };
            store::put_ticket_key(db, &key).await?;
            stored.push(key);
            wrote = true;
        }
    }
    for period in [current, current + 1] {
        if !stored
            .iter()
            .any(|k| k.period == period && k.period_ms == length)
        {
            let Some(key) = new_key(period, length) else {
                tracing::warn!("no random bytes for a session-ticket key; trying again");
                return Ok(());
            };
            store::put_ticket_key(db, &key).await?;
            wrote = true;
        }
    }
    if stored
        .iter()
        .any(|k| (k.period + 1) * k.period_ms < now - lifetime)
    {
        store::forget_ticket_keys(db, now - lifetime).await?;
    }
    if wrote {
        (stored, made) = read_keys(db).await?;
    }
    let read: Seen = stored
        .iter()
        .filter(|k| (k.period + 1) * k.period_ms + lifetime > now)
        .map(|k| ((k.period, k.period_ms), k.secret.clone()))
        .collect();
    if &read != seen {
        // A period whose key changed: the keys were rotated, and every key
        // held before goes, this process's own too.
        let rotated = read
            .iter()
            .any(|(period, secret)| seen.get(period).is_some_and(|was| was != secret));
        let loaded: Vec<TicketKey> = read
            .iter()
            .filter_map(|((period, period_ms), secret)| {
                let secret: [u8; 32] = unhex(secret)?.try_into().ok()?;
                let starts = period * period_ms;
                Some(TicketKey::new(
                    *period as u64,
                    made.get(&(*period, *period_ms)).copied().unwrap_or(now),
                    (starts, starts + period_ms + lifetime),
                    &secret,
                ))
            })
            .collect();
        tracing::debug!(
            keys = loaded.len(),
            "session-ticket keys read from the database"
        );
        if rotated {
            tracing::warn!(
                "HTTPS: the session-ticket keys were rotated; every key held before is forgotten"
            );
            keys.replace_all(loaded);
        } else {
            keys.replace(loaded);
        }
        *seen = read;
    }
    Ok(())
}

/// The stored keys, and when each was made (by period and length): the
/// age `/metrics` gives the key that seals.
async fn read_keys(db: &Db) -> Result<(Vec<StoredKey>, BTreeMap<(i64, i64), i64>), sqlx::Error> {
    let rows = store::ticket_keys_made(db).await?;
    let made = rows
        .iter()
        .map(|(k, at)| ((k.period, k.period_ms), *at))
        .collect();
    Ok((rows.into_iter().map(|(k, _)| k).collect(), made))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::now_ms;
    use crate::edge::tickets::LOCAL_KEY;

    #[tokio::test]
    async fn two_servers_seal_with_the_same_key_and_the_next_one_is_stored_before_it_seals() {
        let (db, dir) = crate::db::scratch("tickets").await;
        let schedule = TicketSchedule::every(Duration::from_secs(3600));
        let new = || TicketKeys::new(schedule.lifetime, schedule.keep()).unwrap();
        let (a, b) = (new(), new());
        let (mut seen_a, mut seen_b) = (Seen::new(), Seen::new());
        sync(&db, schedule, &a, &mut seen_a).await.unwrap();
        sync(&db, schedule, &b, &mut seen_b).await.unwrap();
        let now = now_ms();
        let current = (now / 3_600_000) as u64;
        assert_eq!(a.ids(), [current + 1, current, LOCAL_KEY]);
        assert_eq!(seen_a, seen_b, "one key per period, whoever stored it");
        assert_eq!(a.sealing(now), Some(current));
        assert_eq!(
            a.sealing((current as i64 + 1) * 3_600_000),
            Some(current + 1)
        );
        let ticket = a.ticketer().encrypt(b"session").unwrap();
        assert_eq!(b.ticketer().decrypt(&ticket).unwrap(), b"session");
        // Made just now (by the database's clock), whenever its period began.
        let age = a.sealing_key_age_ms(now_ms()).unwrap();
        assert!(age < 5_000, "a key made just now is {age} ms old");

        // A restored database lost the keys: they are written back.
        sqlx::query("DELETE FROM tls_ticket_keys")
            .execute(&db.pool)
            .await
            .unwrap();
        sync(&db, schedule, &a, &mut seen_a).await.unwrap();
        let c = new();
        sync(&db, schedule, &c, &mut Seen::new()).await.unwrap();
        assert_eq!(c.ticketer().decrypt(&ticket).unwrap(), b"session");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_secret_survives_its_text_form() {
        let secret = random_secret().unwrap();
        assert_eq!(unhex(&hex(&secret)), Some(secret.to_vec()));
        assert_eq!(unhex("zz"), None);
        assert_eq!(unhex("abc"), None);
    }
}
