//! The cap on one client's open connections (`MAX_CONNECTIONS_PER_CLIENT`),
//! as every listener applies it: the TCP ports' accept loops and the QUIC
//! endpoint, each with counts of its own.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use crate::client_ip::Networks;
use crate::telemetry::LogSampler;

/// Open connections per client address on one listener, up to `max`
/// (None: no cap); the `exempt` networks (trusted proxies) are not counted.
pub(super) struct PerClient {
    counts: Mutex<HashMap<IpAddr, usize>>,
    max: Option<usize>,
    exempt: Networks,
    /// The refusals' warnings, a few a minute.
    refusals: LogSampler,
    /// What it counts, for those warnings: "TCP" or "QUIC".
    transport: &'static str,
}

/// What an admitted connection holds until dropped: one of its client's
/// share, or nothing when its client is not counted.
pub(super) struct ClientSlot(Option<(IpAddr, Arc<PerClient>)>);

impl PerClient {
    pub(super) fn new(max: Option<usize>, exempt: Networks, transport: &'static str) -> Self {
        PerClient {
            counts: Mutex::default(),
            max,
            exempt,
            refusals: LogSampler::new(6),
            transport,
        }
    }

    /// A new connection of `ip`: its slot, or None (and a sampled warning)
    /// when `ip` already holds its maximum.
    pub(super) fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<ClientSlot> {
        let Some(max) = self.max.filter(|_| !self.exempt.contains(ip)) else {
            return Some(ClientSlot(None));
        };
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let n = counts.entry(ip).or_insert(0);
        if *n >= max {
            drop(counts);
            if let Some(held_back) = self.refusals.admit() {
                tracing::warn!(client = %ip, max, held_back, transport = self.transport, "a client holds its maximum of open connections; refusing another");
            }
            return None;
        }
        *n += 1;
        Some(ClientSlot(Some((ip, self.clone()))))
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let Some((ip, of)) = &self.0 else { return };
        let mut counts = of.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = counts.get_mut(ip) {
            *n -= 1;
            if *n == 0 {
                counts.remove(ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_holds_at_most_its_share_and_gets_it_back_as_connections_close() {
        let proxy: IpAddr = "192.0.2.9".parse().unwrap();
        let exempt: Networks = "192.0.2.9".parse().unwrap();
        let per = Arc::new(PerClient::new(Some(3), exempt, "TCP"));
        let a: IpAddr = "203.0.113.1".parse().unwrap();
        let b: IpAddr = "203.0.113.2".parse().unwrap();
        let held: Vec<_> = (0..3).map(|_| per.admit(a).unwrap()).collect();
        assert!(per.admit(a).is_none(), "a fourth connection of a");
        let other = per.admit(b);
        assert!(other.is_some(), "b is not held back by a");
        let proxied: Vec<_> = (0..5).map(|_| per.admit(proxy)).collect();
        assert!(
            proxied.iter().all(Option::is_some),
            "an exempt address is not capped"
        );
        drop(held);
        let again = per.admit(a);
        assert!(again.is_some(), "a's closed connections are given back");
        drop((other, proxied));
        assert_eq!(
            per.counts.lock().unwrap().len(),
            1,
            "a client with no connection is forgotten, an exempt one never counted"
        );
    }

    #[test]
    fn without_a_cap_nothing_is_counted() {
        let per = Arc::new(PerClient::new(None, Networks::default(), "QUIC"));
        let a: IpAddr = "203.0.113.1".parse().unwrap();
        let held: Vec<_> = (0..100).map(|_| per.admit(a).unwrap()).collect();
        assert_eq!(held.len(), 100);
        assert!(per.counts.lock().unwrap().is_empty());
    }
}
