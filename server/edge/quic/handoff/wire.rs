//! What the handover reads and writes of a datagram: the tag this
//! process's connection IDs start with ([`Tagged`]), whose a datagram is
//! by that tag ([`whose`]), each segment of a receive sorted on its own
//! ([`sort`]), and the frame a datagram is passed to the predecessor in
//! ([`pass`], [`unframe`]).

use std::io;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use quinn::udp::{EcnCodepoint, RecvMeta};
use quinn::{ConnectionId, ConnectionIdGenerator};

/// The length of every connection ID this server issues: the tag (2
/// bytes), then 6 random ones.
pub const CID_LEN: usize = 8;

pub(super) fn random_bytes<const N: usize>() -> [u8; N] {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; N];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .expect("the system's random source");
    bytes
}

/// Connection IDs that start with this process's tag.
pub struct Tagged(pub u16);

impl ConnectionIdGenerator for Tagged {
    fn generate_cid(&mut self) -> ConnectionId {
        let mut id = [0u8; CID_LEN];
        id[..2].copy_from_slice(&self.0.to_be_bytes());
        id[2..].copy_from_slice(&random_bytes::<{ CID_LEN - 2 }>());
        ConnectionId::new(&id)
    }

    fn cid_len(&self) -> usize {
        CID_LEN
    }

    fn cid_lifetime(&self) -> Option<Duration> {
        None
    }
}

/// Whose a datagram is, by the tag of its destination connection ID.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Whose {
    /// This process's (or a new connection's Initial, or not QUIC v1).
    Ours,
    /// The predecessor's: passed on.
    Predecessor,
    /// Another's: dropped.
    Nobody,
}

pub(super) fn whose(datagram: &[u8], ours: u16, predecessor: Option<u16>) -> Whose {
    let Some(&first) = datagram.first() else {
        return Whose::Nobody;
    };
    let long = first & 0x80 != 0;
    let dcid = if long {
        // Version (4 bytes), then the destination ID's length and the ID.
        if datagram.get(1..5) != Some(&[0, 0, 0, 1]) {
            return Whose::Ours;
        }
        let len = usize::from(*datagram.get(5).unwrap_or(&0));
        let initial = first & 0x30 == 0;
        match datagram.get(6..6 + len) {
            Some(id) if len == CID_LEN => (id, initial),
            // A client's own choice of ID, in its Initial.
            _ if initial => return Whose::Ours,
            _ => return Whose::Nobody,
        }
    } else {
        match datagram.get(1..1 + CID_LEN) {
            Some(id) => (id, false),
            None => return Whose::Nobody,
        }
    };
    let (id, initial) = dcid;
    let tag = u16::from_be_bytes([id[0], id[1]]);
    if predecessor == Some(tag) {
        Whose::Predecessor
    } else if tag == ours || initial {
        Whose::Ours
    } else {
        Whose::Nobody
    }
}

/// A passed datagram's header: the source address (16 + 2 bytes), the
/// ECN bits (1), the address it was sent to (1 + 16). Releases pass each
/// other datagrams across a publish (and a rollback), so its layout stays:
/// the one bit added since ([`AS_GIVEN`]) sits where an older reader
/// ignores it.
pub(super) const HEADER: usize = 16 + 2 + 1 + 1 + 16;
/// In the ECN byte: the source is an IPv6 address as given, an IPv4-mapped
/// one included (an IPv4 client on the shipped `[::]` socket). Without it
/// (and from releases that did not set it) a mapped source is IPv4: quinn
/// would take a change of family for a migration.
const AS_GIVEN: u8 = 0x80;

/// Passes one datagram of the predecessor's to it; dropped when its
/// socket is full (QUIC sends it again), and from now on when it is gone.
pub(super) fn pass(socket: &UnixDatagram, meta: &RecvMeta, datagram: &[u8], gone: &AtomicBool) {
    let mut message = Vec::with_capacity(HEADER + datagram.len());
    let v6 = |ip: IpAddr| match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped(),
        IpAddr::V6(v6) => v6,
    };
    message.extend_from_slice(&v6(meta.addr.ip()).octets());
    message.extend_from_slice(&meta.addr.port().to_be_bytes());
    let family = if meta.addr.is_ipv6() { AS_GIVEN } else { 0 };
    message.push(meta.ecn.map_or(0, |e| e as u8) | family);
    match meta.dst_ip {
        Some(ip) => {
            message.push(if ip.is_ipv4() { 4 } else { 6 });
            message.extend_from_slice(&v6(ip).octets());
        }
        None => {
            message.push(0);
            message.extend_from_slice(&[0; 16]);
        }
    }
    message.extend_from_slice(datagram);
    if let Err(e) = socket.send(&message) {
        if e.kind() != io::ErrorKind::WouldBlock {
            gone.store(true, Ordering::Relaxed);
        }
    }
}

/// A passed datagram's source and the datagram.
pub(super) fn unframe(message: &[u8]) -> Option<(RecvMeta, &[u8])> {
    if message.len() < HEADER {
        return None;
    }
    let ip = |bytes: &[u8], v4: bool| -> IpAddr {
        let v6 = Ipv6Addr::from(<[u8; 16]>::try_from(bytes).expect("16 bytes"));
        match (v4, v6.to_ipv4_mapped()) {
            (true, Some(v4)) => IpAddr::V4(v4),
            _ => IpAddr::V6(v6),
        }
    };
    let source = ip(&message[..16], message[18] & AS_GIVEN == 0);
    let port = u16::from_be_bytes([message[16], message[17]]);
    let ecn = EcnCodepoint::from_bits(message[18] & 0b11);
    let dst_ip = match message[19] {
        4 => Some(ip(&message[20..36], true)),
        6 => Some(ip(&message[20..36], false)),
        _ => None,
    };
    let meta = RecvMeta {
        addr: SocketAddr::new(source, port),
        len: 0,
        stride: 0,
        ecn,
        dst_ip,
    };
    Some((meta, &message[HEADER..]))
}

/// Sorts one receive in `buf`: `meta.len` bytes, in segments of
/// `meta.stride` (the kernel's GRO merges datagrams of one address pair,
/// whatever connection each is of, so each is judged on its own). This
/// process's segments stay in `buf`, in order, and `meta.len` becomes
/// their length (only a receive's last segment may be shorter than its
/// stride, so any of them kept in order still is); the predecessor's go to
/// `to_predecessor`; the rest are dropped.
pub(super) fn sort(
    buf: &mut [u8],
    meta: &mut RecvMeta,
    ours: u16,
    predecessor: Option<u16>,
    mut to_predecessor: impl FnMut(&RecvMeta, &[u8]),
) {
    let stride = meta.stride.max(1);
    let len = meta.len.min(buf.len());
    let (mut kept, mut at) = (0, 0);
    while at < len {
        let end = (at + stride).min(len);
        match whose(&buf[at..end], ours, predecessor) {
            Whose::Ours => {
                // (A receive that is all this process's stays where it is.)
                if at != kept {
                    buf.copy_within(at..end, kept);
                }
                kept += end - at;
            }
            Whose::Predecessor => to_predecessor(meta, &buf[at..end]),
            Whose::Nobody => {}
        }
        at = end;
    }
    meta.len = kept;
}
