//! Session tickets that every server of the site can open: the keys come
//! from the site's database (kept current by `tls::tickets`), so a visitor
//! who resumed on one server, or before a publish, resumes on another, or
//! after it.
//!
//! A ticket is `key id (8 bytes) | nonce (12) | ChaCha20-Poly1305 of the
//! session`, the key id authenticated with it. [`TicketKeys`] holds the
//! keys this process knows, swapped in whole; a handshake reads them
//! without a lock or a system call beyond the nonce's random bytes (as
//! rustls's own ticketer does). Which key seals is decided by time alone: a
//! key seals from its start, the latest start that has passed wins, so
//! every process seals with the same key once it holds it, and a key is
//! published a whole period before its start (see `tls::tickets`).
//!
//! Until the database answers, a process seals with a key of its own
//! (whose tickets resume on it alone): HTTPS never waits for the database.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use ring::aead::{self, LessSafeKey, UnboundKey, CHACHA20_POLY1305};
use ring::rand::{SecureRandom, SystemRandom};
use rustls::server::ProducesTickets;

/// The bytes that name the key a ticket is sealed with.
const ID_LEN: usize = 8;
const NONCE_LEN: usize = 12;
/// The id of the process's own key (database keys are numbered by period).
pub const LOCAL_KEY: u64 = u64::MAX;

/// One key: its id, when it was made, when it starts sealing, when it is
/// forgotten.
pub struct TicketKey {
    pub id: u64,
    /// Unix milliseconds at which it was made: by a server, a period before
    /// it seals, or by `citizen-site tls rotate-tickets` (the database's
    /// `created_at`); this process's own key, as the process started.
    pub made_ms: i64,
    /// Unix milliseconds from which it seals new tickets.
    pub starts_ms: i64,
    /// Unix milliseconds after which a ticket it sealed is refused.
    pub ends_ms: i64,
    key: LessSafeKey,
}

impl TicketKey {
    /// A key from its 32 secret bytes, made at `made_ms`, sealing from
    /// `starts_ms`, forgotten at `ends_ms`.
    pub fn new(
        id: u64,
        made_ms: i64,
        (starts_ms, ends_ms): (i64, i64),
        secret: &[u8; 32],
    ) -> TicketKey {
        let key = UnboundKey::new(&CHACHA20_POLY1305, secret)
            .expect("a ChaCha20-Poly1305 key is 32 bytes");
        TicketKey {
            id,
            made_ms,
            starts_ms,
            ends_ms,
            key: LessSafeKey::new(key),
        }
    }
}

impl std::fmt::Debug for TicketKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TicketKey")
            .field("id", &self.id)
            .field("made_ms", &self.made_ms)
            .field("starts_ms", &self.starts_ms)
            .field("ends_ms", &self.ends_ms)
            .finish_non_exhaustive()
    }
}

/// Milliseconds since 1970 by this process's clock: when a key seals is
/// decided by time alone (the database's rows use the same scale).
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// 32 bytes from the system's random source.
pub fn random_secret() -> Option<[u8; 32]> {
    let mut secret = [0u8; 32];
    SystemRandom::new().fill(&mut secret).ok()?;
    Some(secret)
}

/// The keys this process knows (see the module doc).
#[derive(Debug)]
pub struct TicketKeys {
    keys: ArcSwap<Vec<TicketKey>>,
    /// The lifetime told to clients, in seconds.
    lifetime: u32,
    /// How far the fleet's clock (the database's) runs ahead of this
    /// process's, in milliseconds, as last read ([`TicketKeys::set_clock`]).
    /// Which key seals, and until when one opens, is the fleet's time, so
    /// that a member whose clock is off seals with the key the others
    /// seal with.
    offset_ms: std::sync::atomic::AtomicI64,
}

impl TicketKeys {
    /// A store holding this process's own key, valid from the epoch (so
    /// any key from the database starts later and wins) for `keep`.
    pub fn new(lifetime: Duration, keep: Duration) -> Result<Arc<TicketKeys>, rustls::Error> {
        let secret = random_secret().ok_or(rustls::Error::FailedToGetRandomBytes)?;
        let now = now_ms();
        let ends = now + keep.as_millis() as i64;
        Ok(Arc::new(TicketKeys {
            keys: ArcSwap::from_pointee(vec![TicketKey::new(LOCAL_KEY, now, (0, ends), &secret)]),
            lifetime: lifetime.as_secs().min(u64::from(u32::MAX)) as u32,
            offset_ms: Default::default(),
        }))
    }

    /// The fleet's time is `fleet_ms` now (the database's clock, just read).
    /// This process's own key, whose end its own clock set, moves with the
    /// offset: a process hours ahead does not keep it, and open its
    /// tickets, hours past its time.
    pub fn set_clock(&self, fleet_ms: i64) {
        let offset = fleet_ms - now_ms();
        let was = self
            .offset_ms
            .swap(offset, std::sync::atomic::Ordering::Relaxed);
        let moved = offset - was;
        if moved == 0 {
            return;
        }
        let current = self.keys.load();
        if current.iter().any(|k| k.id == LOCAL_KEY) {
            let keys = current
                .iter()
                .map(|k| TicketKey {
                    id: k.id,
                    made_ms: k.made_ms,
                    starts_ms: k.starts_ms,
                    ends_ms: match k.id {
                        LOCAL_KEY => k.ends_ms.saturating_add(moved),
                        _ => k.ends_ms,
                    },
                    key: k.key.clone(),
                })
                .collect();
            self.keys.store(Arc::new(keys));
        }
    }

    /// The fleet's time, in Unix milliseconds: this process's clock moved
    /// by the offset last read (none before the database answers).
    pub fn clock_ms(&self) -> i64 {
        now_ms() + self.offset_ms.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Replaces the keys: `keys` from the database, and this process's own
    /// key for as long as it lives (its tickets are still out there).
    pub fn replace(&self, keys: Vec<TicketKey>) {
        self.replace_keeping(keys, true);
    }

    /// Replaces every key, this process's own too: the keys were rotated
    /// (`citizen-site tls rotate-tickets`), and no ticket sealed before opens.
    pub fn replace_all(&self, keys: Vec<TicketKey>) {
        self.replace_keeping(keys, false);
    }

    fn replace_keeping(&self, mut keys: Vec<TicketKey>, own: bool) {
        let now = self.clock_ms();
        let current = self.keys.load();
        if let Some(local) = current
            .iter()
            .find(|k| own && k.id == LOCAL_KEY && k.ends_ms > now)
        {
            keys.push(TicketKey {
                id: LOCAL_KEY,
                made_ms: local.made_ms,
                starts_ms: 0,
                ends_ms: local.ends_ms,
                key: local.key.clone(),
            });
        }
        keys.sort_by_key(|k| std::cmp::Reverse(k.starts_ms));
        self.keys.store(Arc::new(keys));
    }

    /// The ids of the keys held, newest start first.
    pub fn ids(&self) -> Vec<u64> {
        self.keys.load().iter().map(|k| k.id).collect()
    }

    /// The id of the key that seals at `now_ms`.
    pub fn sealing(&self, now_ms: i64) -> Option<u64> {
        sealing(&self.keys.load(), now_ms).map(|k| k.id)
    }

    /// How long ago the key that seals at `now_ms` was made (or rotated
    /// in: `tls rotate-tickets` makes new ones), in milliseconds; not less
    /// than 0 (a database's clock a little ahead of this process's). As
    /// `citizen-site tls status` counts it: a key made a period before it
    /// seals is a period old when it starts, two when it ends.
    pub fn sealing_key_age_ms(&self, now_ms: i64) -> Option<i64> {
        sealing(&self.keys.load(), now_ms).map(|k| (now_ms - k.made_ms).max(0))
    }

    /// rustls's view of these keys.
    pub fn ticketer(self: &Arc<Self>) -> Arc<dyn ProducesTickets> {
        Arc::new(Ticketer(self.clone()))
    }
}

/// The key with the latest start that has passed and an end that has not.
fn sealing(keys: &[TicketKey], now_ms: i64) -> Option<&TicketKey> {
    keys.iter()
        .find(|k| k.starts_ms <= now_ms && now_ms < k.ends_ms)
}

#[derive(Debug)]
struct Ticketer(Arc<TicketKeys>);

impl ProducesTickets for Ticketer {
    fn enabled(&self) -> bool {
        true
    }

    fn lifetime(&self) -> u32 {
        self.0.lifetime
    }

    fn encrypt(&self, message: &[u8]) -> Option<Vec<u8>> {
        let keys = self.0.keys.load();
        let key = sealing(&keys, self.0.clock_ms())?;
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new().fill(&mut nonce).ok()?;
        let id = key.id.to_be_bytes();
        let mut out =
            Vec::with_capacity(ID_LEN + NONCE_LEN + message.len() + CHACHA20_POLY1305.tag_len());
        out.extend_from_slice(&id);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(message);
        let tag = key
            .key
            .seal_in_place_separate_tag(
                aead::Nonce::assume_unique_for_key(nonce),
                aead::Aad::from(id),
                &mut out[ID_LEN + NONCE_LEN..],
            )
            .ok()?;
        out.extend_from_slice(tag.as_ref());
        Some(out)
    }

    fn decrypt(&self, ticket: &[u8]) -> Option<Vec<u8>> {
        if ticket.len() < ID_LEN + NONCE_LEN + CHACHA20_POLY1305.tag_len() {
            return None;
        }
        let (id, rest) = ticket.split_at(ID_LEN);
        let (nonce, sealed) = rest.split_at(NONCE_LEN);
        let id: [u8; ID_LEN] = id.try_into().ok()?;
        let keys = self.0.keys.load();
        let now = self.0.clock_ms();
        let key = keys
            .iter()
            .find(|k| k.id == u64::from_be_bytes(id) && now < k.ends_ms)?;
        let mut out = sealed.to_vec();
        let len = key
            .key
            .open_in_place(
                aead::Nonce::try_assume_unique_for_key(nonce).ok()?,
                aead::Aad::from(id),
                &mut out,
            )
            .ok()?
            .len();
        out.truncate(len);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> Arc<TicketKeys> {
        TicketKeys::new(Duration::from_secs(600), Duration::from_secs(3600)).unwrap()
    }

    /// A process whose clock runs six hours ahead of the fleet's keeps its
    /// own key (an hour here) for an hour of the fleet's time, not seven.
    #[test]
    fn a_process_ahead_keeps_its_own_key_for_its_time_by_the_fleets_clock() {
        let keys = store();
        let hour = 3_600_000;
        keys.set_clock(now_ms() - 6 * hour);
        let fleet = keys.clock_ms();
        assert!((now_ms() - 6 * hour - fleet).abs() < 1_000, "{fleet}");
        assert_eq!(keys.sealing(fleet), Some(LOCAL_KEY));
        assert_eq!(keys.sealing(fleet + hour - 5_000), Some(LOCAL_KEY));
        assert_eq!(
            keys.sealing(fleet + hour + 5_000),
            None,
            "an hour, not seven"
        );
        // Read again a little later: it does not move for nothing.
        keys.set_clock(now_ms() - 6 * hour);
        assert_eq!(keys.sealing(fleet + hour + 5_000), None);
        assert_eq!(keys.sealing(fleet + hour - 5_000), Some(LOCAL_KEY));
    }

    #[test]
    fn a_ticket_opens_on_another_process_holding_the_same_key_and_nowhere_else() {
        let now = now_ms();
        let secret = [9u8; 32];
        let (a, b, c) = (store(), store(), store());
        let span = (now - 1000, now + 60_000);
        a.replace(vec![TicketKey::new(7, now - 2000, span, &secret)]);
        b.replace(vec![TicketKey::new(7, now - 2000, span, &secret)]);
        c.replace(vec![TicketKey::new(7, now - 2000, span, &[1u8; 32])]);
        let ticket = a.ticketer().encrypt(b"the session").unwrap();
        assert_eq!(&ticket[..8], &7u64.to_be_bytes());
        assert_eq!(b.ticketer().decrypt(&ticket).unwrap(), b"the session");
        assert_eq!(c.ticketer().decrypt(&ticket), None, "another secret");
        let mut altered = ticket.clone();
        *altered.last_mut().unwrap() ^= 1;
        assert_eq!(b.ticketer().decrypt(&altered), None, "an altered ticket");
        assert_eq!(b.ticketer().decrypt(&ticket[..20]), None, "a short one");
    }

    #[test]
    fn the_latest_started_key_seals_a_published_key_waits_and_an_ended_one_is_forgotten() {
        // The store's own key is made as it starts: `now` after it, so the
        // key's age is never read from before it existed (4999 ms once, on
        // a loaded machine).
        let keys = store();
        let now = now_ms();
        assert_eq!(keys.sealing(now), Some(LOCAL_KEY), "its own key at first");
        let age = keys.sealing_key_age_ms(now + 5_000).unwrap();
        assert!((5_000..6_000).contains(&age), "since it was made: {age}");
        let own = keys.ticketer().encrypt(b"early").unwrap();
        // Each key made a while before it seals (3 by a database whose
        // clock is ahead of this process's).
        keys.replace(vec![
            TicketKey::new(1, now - 40_000, (now - 20_000, now - 1), &[1; 32]),
            TicketKey::new(2, now - 25_000, (now - 10_000, now + 60_000), &[2; 32]),
            TicketKey::new(3, now + 12_000, (now + 10_000, now + 90_000), &[3; 32]),
        ]);
        assert_eq!(keys.sealing(now), Some(2), "3 is published, not started");
        assert_eq!(keys.sealing(now + 10_000), Some(3));
        assert_eq!(
            keys.sealing_key_age_ms(now),
            Some(25_000),
            "2 was made 25 s ago, though it seals since 10 s"
        );
        assert_eq!(keys.sealing_key_age_ms(now + 15_000), Some(3_000));
        assert_eq!(keys.sealing_key_age_ms(now + 11_000), Some(0), "not less");
        assert_eq!(keys.ids(), [3, 2, 1, LOCAL_KEY]);
        assert_eq!(
            keys.ticketer().decrypt(&own).unwrap(),
            b"early",
            "its own key still opens the tickets it sealed"
        );
        let mut old = 1u64.to_be_bytes().to_vec();
        old.extend([0u8; 40]);
        assert_eq!(keys.ticketer().decrypt(&old), None, "key 1 has ended");
    }
}
