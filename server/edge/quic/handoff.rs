//! HTTP/3 across a publish: the UDP socket is handed to the successor with
//! the TCP ones, but a QUIC connection lives in the process that made it,
//! and one socket is read by whichever process reads first. So every
//! connection ID this process issues starts with a tag of its own
//! ([`Tagged`]), and [`HandedSocket`] sorts what it reads by that tag:
//!
//! - a packet for this process's connections (or a new connection's
//!   Initial, whose ID the client chose) goes to quinn;
//! - a packet for the predecessor's connections, while it drains, is
//!   passed to it over a datagram socket the two share (the predecessor
//!   made the pair when it started this process: [`Handoff::successor_end`]);
//! - any other packet (another process's, or one whose process is gone) is
//!   dropped unanswered: a stateless reset from here could only carry a
//!   token the client does not know.
//!
//! The predecessor stops reading the UDP socket once the successor serves
//! HTTP/3 ([`Handoff::hand_over`]: a successor that does not, with
//! `HTTP3=off` or no endpoint, is never handed it, nor one still starting
//! when the predecessor is stopped), and from then on reads only what the
//! successor passes it, answering through its copy of the same socket. So
//! its connections finish their requests (it says GOAWAY to each), and a
//! new connection arriving meanwhile is the successor's. This is the
//! design of mvfst's socket takeover; the other known one, the successor
//! reading the socket only once the predecessor has finished, would leave
//! new visitors unanswered for a whole drain.

use std::fmt;
use std::io::{self, IoSliceMut};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::os::unix::net::UnixDatagram;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use quinn::udp::{EcnCodepoint, RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, ConnectionId, ConnectionIdGenerator, UdpPoller};

/// The length of every connection ID this server issues: the tag (2
/// bytes), then 6 random ones.
pub const CID_LEN: usize = 8;
/// The variable naming the predecessor's tag, for its successor.
pub const PREDECESSOR_TAG: &str = "CITIZEN_SITE_QUIC_PREDECESSOR_TAG";
/// The name of the datagram socket a successor passes the predecessor's
/// packets on.
pub const PREDECESSOR_SOCKET: &str = "quic-predecessor";

/// This process's part in a handover of HTTP/3: its tag, and, while it
/// drains beside a successor or serves beside a predecessor, the datagram
/// socket between the two.
pub struct Handoff {
    tag: u16,
    /// This process's end of the pair made for its successor, until the
    /// endpoint's reader registers it as `inbox`.
    pending: Mutex<Option<UnixDatagram>>,
    /// That end as the reader reads it: the packets of this process's
    /// connections the successor read.
    inbox: Mutex<Option<tokio::net::UnixDatagram>>,
    /// Set while there is a pair for a successor: `pending` or `inbox`
    /// holds it (read first, so that no lock is taken per read otherwise).
    paired: AtomicBool,
    /// Set: a successor serves; the UDP socket is its to read.
    handed_over: AtomicBool,
    /// Set: the successor started on this pair is ready and serves HTTP/3.
    successor_serves: AtomicBool,
    /// Set once this process serves: until then nothing reads the socket
    /// (a successor must not take the packets of connections its
    /// predecessor still serves before it is ready).
    reading: AtomicBool,
    /// The predecessor (its tag and where its packets go), while it drains.
    predecessor: Option<(u16, UnixDatagram)>,
    predecessor_gone: AtomicBool,
    /// The endpoint's reader, woken when the sources it reads change.
    waker: futures_util::task::AtomicWaker,
}

impl fmt::Debug for Handoff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handoff").field("tag", &self.tag).finish()
    }
}

impl Handoff {
    /// A tag for this process (not its predecessor's), and the predecessor
    /// this process was started by, if it passed one.
    pub fn new(predecessor: Option<(u16, UnixDatagram)>) -> Arc<Handoff> {
        let mut tag = random_bytes::<2>();
        let tag = loop {
            let t = u16::from_be_bytes(tag);
            if predecessor.as_ref().is_none_or(|(p, _)| *p != t) {
                break t;
            }
            tag = random_bytes::<2>();
        };
        if let Some((_, socket)) = &predecessor {
            let _ = socket.set_nonblocking(true);
        }
        Arc::new(Handoff {
            tag,
            pending: Mutex::new(None),
            inbox: Mutex::new(None),
            paired: AtomicBool::new(false),
            handed_over: AtomicBool::new(false),
            successor_serves: AtomicBool::new(false),
            reading: AtomicBool::new(false),
            predecessor,
            predecessor_gone: AtomicBool::new(false),
            waker: futures_util::task::AtomicWaker::new(),
        })
    }

    pub fn tag(&self) -> u16 {
        self.tag
    }

    /// The end of a new pair to give a successor about to start (this
    /// process keeps the other, and reads its packets there once the
    /// successor serves).
    pub fn successor_end(&self) -> io::Result<UnixDatagram> {
        let (keep, give) = UnixDatagram::pair()?;
        keep.set_nonblocking(true)?;
        // Registered with the reactor of the runtime that reads it, on its
        // first read (see `HandedSocket::poll_recv`).
        *lock(&self.pending) = Some(keep);
        self.paired.store(true, Ordering::Release);
        self.waker.wake();
        Ok(give)
    }

    /// This process serves: its endpoint reads the socket from now on.
    pub fn start_reading(&self) {
        self.reading.store(true, Ordering::Release);
        self.waker.wake();
    }

    /// The successor started on the last pair is ready, and serves HTTP/3
    /// (`serves`) or not: one that does not has no use for the pair.
    pub fn successor_ready(&self, serves: bool) {
        match serves {
            true => self.successor_serves.store(true, Ordering::Release),
            false => self.successor_failed(),
        }
    }

    /// Whether this process was started by one still draining HTTP/3
    /// connections (their packets are passed to it while it lives).
    pub fn has_predecessor(&self) -> bool {
        self.predecessor.is_some() && !self.predecessor_gone.load(Ordering::Relaxed)
    }

    /// A successor that serves HTTP/3 is ready: this process reads the UDP
    /// socket no more. Returns whether there was one to hand over to (with
    /// none, this process reads its own connections to its drain's end).
    pub fn hand_over(&self) -> bool {
        let has =
            self.paired.load(Ordering::Acquire) && self.successor_serves.load(Ordering::Acquire);
        if has {
            self.handed_over.store(true, Ordering::Release);
            self.waker.wake();
        }
        has
    }

    /// The successor did not start: its pair is dropped.
    pub fn successor_failed(&self) {
        self.paired.store(false, Ordering::Release);
        self.successor_serves.store(false, Ordering::Release);
        *lock(&self.pending) = None;
        *lock(&self.inbox) = None;
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn random_bytes<const N: usize>() -> [u8; N] {
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
enum Whose {
    /// This process's (or a new connection's Initial, or not QUIC v1).
    Ours,
    /// The predecessor's: passed on.
    Predecessor,
    /// Another's: dropped.
    Nobody,
}

fn whose(datagram: &[u8], ours: u16, predecessor: Option<u16>) -> Whose {
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

/// The UDP socket as quinn reads it (see the module doc).
pub struct HandedSocket {
    inner: Arc<dyn AsyncUdpSocket>,
    handoff: Arc<Handoff>,
}

impl fmt::Debug for HandedSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HandedSocket")
            .field("handoff", &self.handoff)
            .finish()
    }
}

impl HandedSocket {
    pub fn new(inner: Arc<dyn AsyncUdpSocket>, handoff: Arc<Handoff>) -> HandedSocket {
        HandedSocket { inner, handoff }
    }

    /// One datagram the successor passed, into `buf` and `meta`.
    fn poll_inbox(
        &self,
        cx: &mut Context,
        buf: &mut IoSliceMut<'_>,
        meta: &mut RecvMeta,
    ) -> Poll<io::Result<usize>> {
        let handoff = &self.handoff;
        if !handoff.paired.load(Ordering::Acquire) {
            return Poll::Pending;
        }
        if let Some(pending) = lock(&handoff.pending).take() {
            let mut inbox = lock(&handoff.inbox);
            {
                match tokio::net::UnixDatagram::from_std(pending) {
                    Ok(socket) => *inbox = Some(socket),
                    Err(e) => {
                        tracing::warn!(error = %e, "HTTP/3: the successor's socket cannot be read")
                    }
                }
            }
        }
        let inbox = lock(&handoff.inbox);
        let Some(socket) = inbox.as_ref() else {
            return Poll::Pending;
        };
        let mut message = [0u8; HEADER + 65_536];
        let mut read = tokio::io::ReadBuf::new(&mut message);
        match socket.poll_recv(cx, &mut read) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => return Poll::Pending,
        }
        let message = read.filled();
        let Some((from, payload)) = unframe(message) else {
            return Poll::Ready(Ok(0));
        };
        let n = payload.len().min(buf.len());
        buf[..n].copy_from_slice(&payload[..n]);
        *meta = RecvMeta {
            len: n,
            stride: n,
            ..from
        };
        Poll::Ready(Ok(1))
    }
}

impl AsyncUdpSocket for HandedSocket {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        self.inner.clone().create_io_poller()
    }

    fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
        self.inner.try_send(transmit)
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        let handoff = &self.handoff;
        handoff.waker.register(cx.waker());
        if !handoff.reading.load(Ordering::Acquire) {
            return Poll::Pending;
        }
        if let Poll::Ready(result) = self.poll_inbox(cx, &mut bufs[0], &mut meta[0]) {
            return Poll::Ready(result);
        }
        if handoff.handed_over.load(Ordering::Acquire) {
            return Poll::Pending;
        }
        let n = match self.inner.poll_recv(cx, bufs, meta) {
            Poll::Ready(Ok(n)) => n,
            other => return other,
        };
        let predecessor = match &handoff.predecessor {
            Some((tag, _)) if !handoff.predecessor_gone.load(Ordering::Relaxed) => Some(*tag),
            _ => None,
        };
        for (buf, meta) in bufs.iter().zip(meta.iter_mut()).take(n) {
            let stride = meta.stride.max(1);
            let datagrams = &buf[..meta.len];
            // Segments of one receive share their source (GRO): one
            // connection's, so the first decides for them all.
            match whose(
                &datagrams[..stride.min(datagrams.len())],
                handoff.tag,
                predecessor,
            ) {
                Whose::Ours => {}
                Whose::Predecessor => {
                    if let Some((_, socket)) = &handoff.predecessor {
                        for datagram in datagrams.chunks(stride) {
                            pass(socket, meta, datagram, &handoff.predecessor_gone);
                        }
                    }
                    meta.len = 0;
                }
                Whose::Nobody => meta.len = 0,
            }
        }
        Poll::Ready(Ok(n))
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    fn max_transmit_segments(&self) -> usize {
        self.inner.max_transmit_segments()
    }

    fn max_receive_segments(&self) -> usize {
        self.inner.max_receive_segments()
    }

    fn may_fragment(&self) -> bool {
        self.inner.may_fragment()
    }
}

/// A passed datagram's header: the source address (16 + 2 bytes), the
/// ECN bits (1), the address it was sent to (1 + 16). Releases pass each
/// other datagrams across a publish (and a rollback), so its layout stays:
/// the one bit added since ([`AS_GIVEN`]) sits where an older reader
/// ignores it.
const HEADER: usize = 16 + 2 + 1 + 1 + 16;
/// In the ECN byte: the source is an IPv6 address as given, an IPv4-mapped
/// one included (an IPv4 client on the shipped `[::]` socket). Without it
/// (and from releases that did not set it) a mapped source is IPv4: quinn
/// would take a change of family for a migration.
const AS_GIVEN: u8 = 0x80;

/// Passes one datagram of the predecessor's to it; dropped when its
/// socket is full (QUIC sends it again), and from now on when it is gone.
fn pass(socket: &UnixDatagram, meta: &RecvMeta, datagram: &[u8], gone: &AtomicBool) {
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
fn unframe(message: &[u8]) -> Option<(RecvMeta, &[u8])> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn short(tag: u16) -> Vec<u8> {
        let mut p = vec![0x40];
        p.extend_from_slice(&tag.to_be_bytes());
        p.extend_from_slice(&[7; 30]);
        p
    }

    fn long(kind: u8, dcid: &[u8]) -> Vec<u8> {
        let mut p = vec![0xc0 | kind << 4, 0, 0, 0, 1, dcid.len() as u8];
        p.extend_from_slice(dcid);
        p.extend_from_slice(&[0; 40]);
        p
    }

    #[test]
    fn a_datagram_goes_to_the_process_whose_tag_its_connection_id_carries() {
        let (ours, theirs, other) = (0x1111, 0x2222, 0x3333);
        assert_eq!(whose(&short(ours), ours, Some(theirs)), Whose::Ours);
        assert_eq!(
            whose(&short(theirs), ours, Some(theirs)),
            Whose::Predecessor
        );
        assert_eq!(whose(&short(other), ours, Some(theirs)), Whose::Nobody);
        assert_eq!(whose(&short(theirs), ours, None), Whose::Nobody);
        // A new connection's Initial: an ID of the client's choosing.
        let random = [0x33, 0x33, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9];
        assert_eq!(whose(&long(0, &random), ours, Some(theirs)), Whose::Ours);
        assert_eq!(
            whose(&long(0, &random[..8]), ours, Some(theirs)),
            Whose::Ours
        );
        // Handshake packets carry the server's ID.
        let mut id = [0u8; CID_LEN];
        id[..2].copy_from_slice(&theirs.to_be_bytes());
        assert_eq!(whose(&long(2, &id), ours, Some(theirs)), Whose::Predecessor);
        id[..2].copy_from_slice(&other.to_be_bytes());
        assert_eq!(whose(&long(2, &id), ours, Some(theirs)), Whose::Nobody);
        // Not QUIC v1: quinn answers (version negotiation).
        let mut v2 = long(0, &id);
        v2[4] = 2;
        assert_eq!(whose(&v2, ours, None), Whose::Ours);
        assert_eq!(whose(&[], ours, None), Whose::Nobody);
        assert_eq!(whose(&[0x40, 1], ours, None), Whose::Nobody);
    }

    #[test]
    fn a_passed_datagram_keeps_its_source_and_destination() {
        let (a, b) = UnixDatagram::pair().unwrap();
        let meta = RecvMeta {
            addr: "203.0.113.9:5555".parse().unwrap(),
            len: 3,
            stride: 3,
            ecn: Some(EcnCodepoint::Ect0),
            dst_ip: Some("192.0.2.1".parse().unwrap()),
        };
        pass(&a, &meta, b"abc", &AtomicBool::new(false));
        let mut buf = [0u8; 100];
        let n = b.recv(&mut buf).unwrap();
        let (got, payload) = unframe(&buf[..n]).unwrap();
        assert_eq!(payload, b"abc");
        assert_eq!(got.addr, meta.addr);
        assert_eq!(got.ecn, meta.ecn);
        assert_eq!(got.dst_ip, meta.dst_ip);
    }

    /// An IPv4 client on the shipped `[::]` socket is seen as an
    /// IPv4-mapped IPv6 address: passed on, it must stay one, or quinn
    /// takes the next packet for a migration (its congestion state reset,
    /// its sending capped until the new path is validated).
    #[test]
    fn a_passed_datagram_keeps_its_address_family() {
        let (a, b) = UnixDatagram::pair().unwrap();
        for (addr, dst) in [
            ("[::ffff:203.0.113.9]:5555", "::ffff:192.0.2.1"),
            ("203.0.113.9:5555", "192.0.2.1"),
            ("[2001:db8::9]:5555", "2001:db8::1"),
        ] {
            let meta = RecvMeta {
                addr: addr.parse().unwrap(),
                len: 3,
                stride: 3,
                ecn: None,
                dst_ip: Some(dst.parse().unwrap()),
            };
            pass(&a, &meta, b"abc", &AtomicBool::new(false));
            let mut buf = [0u8; 100];
            let n = b.recv(&mut buf).unwrap();
            let (got, _) = unframe(&buf[..n]).unwrap();
            assert_eq!((got.addr, got.dst_ip), (meta.addr, meta.dst_ip), "{addr}");
        }
    }

    /// The layout a release before the family bit wrote (and reads): the
    /// same 36 bytes, so a publish from it, or a rollback to it, passes
    /// datagrams both ways.
    #[test]
    fn a_datagram_passed_by_the_layout_before_the_family_bit_is_read_as_then() {
        assert_eq!(HEADER, 36);
        let mut old = Vec::new();
        old.extend_from_slice(
            &std::net::Ipv4Addr::new(203, 0, 113, 9)
                .to_ipv6_mapped()
                .octets(),
        );
        old.extend_from_slice(&5555u16.to_be_bytes());
        old.push(EcnCodepoint::Ect0 as u8);
        old.push(4);
        old.extend_from_slice(
            &std::net::Ipv4Addr::new(192, 0, 2, 1)
                .to_ipv6_mapped()
                .octets(),
        );
        old.extend_from_slice(b"abc");
        let (got, payload) = unframe(&old).unwrap();
        assert_eq!(got.addr, "203.0.113.9:5555".parse().unwrap());
        assert_eq!(got.ecn, Some(EcnCodepoint::Ect0));
        assert_eq!(got.dst_ip, Some("192.0.2.1".parse().unwrap()));
        assert_eq!(payload, b"abc");
    }
}
