//! Who is asking: the client's IP address, for rate limits, `/metrics`
//! access and logs.
//!
//! `X-Forwarded-For` is believed only from proxies the operator listed in
//! `TRUSTED_PROXIES`; anyone else could write any address into it. Behind
//! trusted proxies the client is the right-most address in the header that
//! is not itself a trusted proxy (each proxy appends the peer it saw, so
//! everything left of that address was written by the client).

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

use axum::http::HeaderMap;
use ipnet::IpNet;

/// A set of networks: the operator's trusted proxies, or who may read `/metrics`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Networks(Vec<IpNet>);

impl Networks {
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|n| n.contains(&ip))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromStr for Networks {
    type Err = String;

    /// A comma-separated list of networks (`10.0.0.0/8`) or single addresses
    /// (`127.0.0.1`); empty means none.
    fn from_str(s: &str) -> Result<Networks, String> {
        let mut out = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let net = match item.parse::<IpNet>() {
                Ok(net) => net,
                Err(_) => match item.parse::<IpAddr>() {
                    Ok(ip) => IpNet::from(ip),
                    Err(_) => {
                        return Err(format!(
                            "{item:?} is neither an IP address nor a network like 10.0.0.0/8"
                        ))
                    }
                },
            };
            out.push(net);
        }
        Ok(Networks(out))
    }
}

/// The resolved client address of a request (an extension set by the
/// request middleware).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub IpAddr);

/// The client behind `peer`: `peer` itself unless it is a trusted proxy that
/// says, in `X-Forwarded-For`, whom it forwarded for.
pub fn resolve(peer: SocketAddr, headers: &HeaderMap, trusted: &Networks) -> IpAddr {
    let peer = canonical(peer.ip());
    if trusted.is_empty() || !trusted.contains(peer) {
        return peer;
    }
    let mut client = peer;
    // Right to left: the first hop a trusted proxy did not vouch for.
    let hops = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .collect::<Vec<_>>();
    for hop in hops.into_iter().rev() {
        let Some(ip) = parse_hop(hop) else {
            // Garbage from further left cannot be trusted; stop at what we know.
            break;
        };
        client = ip;
        if !trusted.contains(ip) {
            break;
        }
    }
    client
}

/// One `X-Forwarded-For` entry: an address, possibly with a port.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim();
    if let Ok(ip) = hop.parse::<IpAddr>() {
        return Some(canonical(ip));
    }
    hop.parse::<SocketAddr>().ok().map(|s| canonical(s.ip()))
}

/// IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`) as the IPv4 address, so a
/// dual-stack listener and an IPv4 rule agree.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(xff: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in xff {
            h.append("x-forwarded-for", v.parse().unwrap());
        }
        h
    }

    fn peer(ip: &str) -> SocketAddr {
        SocketAddr::new(ip.parse().unwrap(), 40000)
    }

    #[test]
    fn forwarding_headers_count_only_from_trusted_proxies() {
        let none = Networks::default();
        let lb: Networks = "10.0.0.0/8, 127.0.0.1".parse().unwrap();
        let h = headers(&["203.0.113.9"]);
        // No proxy configured: the header is anyone's to write.
        assert_eq!(
            resolve(peer("198.51.100.7"), &h, &none),
            "198.51.100.7".parse::<IpAddr>().unwrap()
        );
        // From an untrusted peer it is ignored even when proxies are configured.
        assert_eq!(
            resolve(peer("198.51.100.7"), &h, &lb),
            "198.51.100.7".parse::<IpAddr>().unwrap()
        );
        // From the load balancer it names the client.
        assert_eq!(
            resolve(peer("10.1.2.3"), &h, &lb),
            "203.0.113.9".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn a_client_cannot_hide_behind_addresses_it_writes_itself() {
        let lb: Networks = "10.0.0.0/8".parse().unwrap();
        // The client sent "X-Forwarded-For: 1.1.1.1"; the proxy appended the real peer.
        let h = headers(&["1.1.1.1, 203.0.113.9"]);
        assert_eq!(
            resolve(peer("10.0.0.2"), &h, &lb),
            "203.0.113.9".parse::<IpAddr>().unwrap()
        );
        // Two proxies deep, with the header split over two lines.
        let h = headers(&["1.1.1.1", "203.0.113.9, 10.0.0.5"]);
        assert_eq!(
            resolve(peer("10.0.0.2"), &h, &lb),
            "203.0.113.9".parse::<IpAddr>().unwrap()
        );
        // Garbage stops the walk at the last address a proxy vouched for.
        let h = headers(&["nonsense, 10.0.0.5"]);
        assert_eq!(
            resolve(peer("10.0.0.2"), &h, &lb),
            "10.0.0.5".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn networks_parse_addresses_and_ranges_and_name_what_is_wrong() {
        let n: Networks = "127.0.0.1,::1, 192.168.0.0/16".parse().unwrap();
        assert!(n.contains("192.168.4.4".parse().unwrap()));
        assert!(
            n.contains("::ffff:127.0.0.1".parse().unwrap()),
            "IPv4-mapped addresses match IPv4 rules"
        );
        assert!(!n.contains("10.0.0.1".parse().unwrap()));
        assert!("".parse::<Networks>().unwrap().is_empty());
        let err = "10.0.0.0/8,proxy.local".parse::<Networks>().unwrap_err();
        assert!(err.contains("proxy.local"), "{err}");
    }
}
