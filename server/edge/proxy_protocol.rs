//! The PROXY protocol, version 2 (HAProxy's `send-proxy-v2`): a TCP
//! balancer in front of several servers opens each connection with a
//! binary header naming the visitor's address, so the limits, the logs and
//! the metrics see the visitor rather than the balancer.
//!
//! Only the balancers the operator names (`PROXY_PROTOCOL_FROM`) may send
//! one, and each of their connections must: a connection from a named
//! balancer without a valid header is closed. A header from any other
//! address is never read as one: it reaches TLS or HTTP as the bytes it
//! is, which refuse it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::io::{AsyncRead, AsyncReadExt};

/// The 12 bytes every version 2 header starts with.
pub const SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";
/// The longest header read (addresses and TLVs); HAProxy's stay far below.
const LONGEST: usize = 1024;

/// What a header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Header {
    /// The visitor's address (a `PROXY` command over TCP).
    Proxied(SocketAddr),
    /// The balancer speaking for itself (`LOCAL`: its health checks), or an
    /// address family other than TCP over IPv4 or IPv6: the peer stands.
    Local,
}

/// Why a connection from a balancer was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Refused {
    #[error("the connection does not start with a PROXY protocol v2 header")]
    NoHeader,
    #[error("the PROXY protocol header is malformed: {0}")]
    Malformed(&'static str),
    #[error("the connection closed before its PROXY protocol header ended")]
    Cut,
}

/// Reads one header from `io`, and not a byte more.
pub async fn read<R: AsyncRead + Unpin>(io: &mut R) -> Result<Header, Refused> {
    let mut head = [0u8; 16];
    io.read_exact(&mut head).await.map_err(|_| Refused::Cut)?;
    if head[..12] != SIGNATURE {
        return Err(Refused::NoHeader);
    }
    let len = usize::from(u16::from_be_bytes([head[14], head[15]]));
    if len > LONGEST {
        return Err(Refused::Malformed("longer than 1024 bytes"));
    }
    let mut rest = vec![0u8; len];
    io.read_exact(&mut rest).await.map_err(|_| Refused::Cut)?;
    parse(head[12], head[13], &rest)
}

/// The header's meaning from its version and command, its family and
/// protocol, and what follows them.
fn parse(version_command: u8, family: u8, rest: &[u8]) -> Result<Header, Refused> {
    if version_command >> 4 != 2 {
        return Err(Refused::Malformed("not version 2"));
    }
    match version_command & 0x0f {
        0 => return Ok(Header::Local),
        1 => {}
        _ => return Err(Refused::Malformed("an unknown command")),
    }
    let port = |b: &[u8]| u16::from_be_bytes([b[0], b[1]]);
    match family {
        // TCP over IPv4: source, destination, their ports.
        0x11 => {
            let a = rest
                .get(..12)
                .ok_or(Refused::Malformed("too short for IPv4"))?;
            let ip = Ipv4Addr::new(a[0], a[1], a[2], a[3]);
            Ok(Header::Proxied(SocketAddr::new(
                IpAddr::V4(ip),
                port(&a[8..10]),
            )))
        }
        // TCP over IPv6.
        0x21 => {
            let a = rest
                .get(..36)
                .ok_or(Refused::Malformed("too short for IPv6"))?;
            let octets: [u8; 16] = a[..16].try_into().expect("16 bytes");
            let ip = Ipv6Addr::from(octets);
            Ok(Header::Proxied(SocketAddr::new(
                IpAddr::V6(ip),
                port(&a[32..34]),
            )))
        }
        _ => Ok(Header::Local),
    }
}

/// A version 2 header for `from` (a test's, or a tool's, balancer).
pub fn header(from: SocketAddr, to: SocketAddr) -> Vec<u8> {
    let mut out = SIGNATURE.to_vec();
    out.push(0x21);
    match (from, to) {
        (SocketAddr::V4(f), SocketAddr::V4(t)) => {
            out.push(0x11);
            out.extend(12u16.to_be_bytes());
            out.extend(f.ip().octets());
            out.extend(t.ip().octets());
            out.extend(f.port().to_be_bytes());
            out.extend(t.port().to_be_bytes());
        }
        (f, t) => {
            let v6 = |a: SocketAddr| match a.ip() {
                IpAddr::V4(ip) => ip.to_ipv6_mapped(),
                IpAddr::V6(ip) => ip,
            };
            out.push(0x21);
            out.extend(36u16.to_be_bytes());
            out.extend(v6(f).octets());
            out.extend(v6(t).octets());
            out.extend(f.port().to_be_bytes());
            out.extend(t.port().to_be_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(bytes: &[u8]) -> (Result<Header, Refused>, Vec<u8>) {
        let mut io = bytes;
        let header = read(&mut io).await;
        (header, io.to_vec())
    }

    #[tokio::test]
    async fn the_visitors_address_is_read_and_nothing_after_the_header() {
        let visitor: SocketAddr = "203.0.113.7:51234".parse().unwrap();
        let site: SocketAddr = "10.0.0.2:443".parse().unwrap();
        let mut bytes = header(visitor, site);
        bytes.extend(b"\x16\x03\x01 the ClientHello");
        let (h, left) = read_all(&bytes).await;
        assert_eq!(h, Ok(Header::Proxied(visitor)));
        assert_eq!(left, b"\x16\x03\x01 the ClientHello");

        let visitor6: SocketAddr = "[2001:db8::5]:4000".parse().unwrap();
        let (h, _) = read_all(&header(visitor6, "[2001:db8::1]:443".parse().unwrap())).await;
        assert_eq!(h, Ok(Header::Proxied(visitor6)));
    }

    #[tokio::test]
    async fn a_health_check_a_plain_request_or_a_cut_header_is_told_apart() {
        let mut local = SIGNATURE.to_vec();
        local.extend([0x20, 0x00, 0, 0]);
        assert_eq!(read_all(&local).await.0, Ok(Header::Local));
        let (h, _) = read_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await;
        assert_eq!(h, Err(Refused::NoHeader));
        let full = header("1.2.3.4:5".parse().unwrap(), "5.6.7.8:443".parse().unwrap());
        assert_eq!(read_all(&full[..20]).await.0, Err(Refused::Cut));
        let mut v1 = full.clone();
        v1[12] = 0x11;
        assert_eq!(
            read_all(&v1).await.0,
            Err(Refused::Malformed("not version 2"))
        );
        let mut long = full;
        long[14..16].copy_from_slice(&2000u16.to_be_bytes());
        assert!(matches!(
            read_all(&long).await.0,
            Err(Refused::Malformed(_))
        ));
    }
}
