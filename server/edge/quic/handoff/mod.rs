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

mod wire;

use std::fmt;
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::os::unix::net::UnixDatagram;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};

use wire::random_bytes;
pub use wire::{Tagged, CID_LEN};

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
        let mut message = [0u8; wire::HEADER + 65_536];
        let mut read = tokio::io::ReadBuf::new(&mut message);
        match socket.poll_recv(cx, &mut read) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => return Poll::Pending,
        }
        let message = read.filled();
        let Some((from, payload)) = wire::unframe(message) else {
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
        for (buf, meta) in bufs.iter_mut().zip(meta.iter_mut()).take(n) {
            wire::sort(buf, meta, handoff.tag, predecessor, |meta, datagram| {
                if let Some((_, socket)) = &handoff.predecessor {
                    wire::pass(socket, meta, datagram, &handoff.predecessor_gone);
                }
            });
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

#[cfg(test)]
mod tests;
