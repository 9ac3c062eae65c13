//! The cap on one client's open connections (`MAX_CONNECTIONS_PER_CLIENT`).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Open connections per client address.
#[derive(Default)]
pub(super) struct PerClient(Mutex<HashMap<IpAddr, usize>>);

/// One connection of `ip`, counted until dropped.
pub(super) struct ClientSlot {
    ip: IpAddr,
    of: Arc<PerClient>,
}

impl PerClient {
    pub(super) fn take(self: &Arc<Self>, ip: IpAddr, max: usize) -> Option<ClientSlot> {
        let mut counts = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let n = counts.entry(ip).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(ClientSlot {
            ip,
            of: self.clone(),
        })
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut counts = self.of.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = counts.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.ip);
            }
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_holds_at_most_its_share_and_gets_it_back_as_connections_close() {
        let per = Arc::new(PerClient::default());
        let a: IpAddr = "203.0.113.1".parse().unwrap();
        let b: IpAddr = "203.0.113.2".parse().unwrap();
        let held: Vec<_> = (0..3).map(|_| per.take(a, 3).unwrap()).collect();
        assert!(per.take(a, 3).is_none(), "a fourth connection of a");
        let other = per.take(b, 3);
        assert!(other.is_some(), "b is not held back by a");
        drop(held);
        let again = per.take(a, 3);
        assert!(again.is_some(), "a's closed connections are given back");
        drop(other);
        assert_eq!(
            per.0.lock().unwrap().len(),
            1,
            "a client with no connection is forgotten"
        );
    }
}
