//! A connection's drain: its answers held while the GOAWAY is on its way,
//! then ended ([`Going`]).

use std::net::SocketAddr;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use tokio::time::{Instant, Sleep};

use super::bounds::CLOSE_WAIT;

type H3 = h3::server::Connection<h3_quinn::Connection, Bytes>;

/// Where a connection stands in its drain. A browser (Chromium) fails,
/// rather than sends again, a request it had just bound to a connection
/// when that connection's GOAWAY arrives, before the request had a stream.
/// So the drain makes sure none is being bound then: first no answer ends
/// (`Holding`: a page's next request follows an answer's end), for long
/// enough that a request already on its way arrives ([`SCRIPT_TIME`] and a
/// round trip); then GOAWAY (`Told`), answers still held until the client
/// has read it; then the answers end (`Gone`), and the requests they
/// trigger go to a new connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Going {
    Serving,
    Holding,
    Told,
    Gone,
}

/// How long a page's script may take, after an answer ends, to send the
/// request that answer triggers (measured: up to about 15 ms for
/// Chromium's fetch loop on a busy machine; the drain holds for far more).
const SCRIPT_TIME: Duration = Duration::from_millis(100);

/// One step of the drain: a round trip and some.
fn settle(quic: &quinn::Connection) -> Duration {
    quic.rtt().max(Duration::from_millis(5)) + Duration::from_millis(5)
}

/// A connection's drain (see [`Going`]), and the GOAWAY it says.
pub(super) struct Drain {
    going: Going,
    /// While the GOAWAY is on its way, no answer ends.
    pub(super) hold: tokio::sync::watch::Sender<bool>,
    pub(super) step: Pin<Box<Sleep>>,
    /// The highest request stream accepted, and the GOAWAY's stream ID once
    /// sent: a request on that stream or above was not processed, as the
    /// client is told (RFC 9114, 5.2), so it may send it again elsewhere.
    last: Option<u64>,
    goaway: Option<u64>,
}

/// What a step of the drain leaves to do.
pub(super) enum Stepped {
    Going,
    /// The GOAWAY could not be said: the connection is closed.
    Close,
}

impl Drain {
    pub(super) fn new() -> (Drain, tokio::sync::watch::Receiver<bool>) {
        let (hold, held) = tokio::sync::watch::channel(false);
        let drain = Drain {
            going: Going::Serving,
            hold,
            step: Box::pin(tokio::time::sleep(Duration::ZERO)),
            last: None,
            goaway: None,
        };
        (drain, held)
    }

    pub(super) fn serving(&self) -> bool {
        self.going == Going::Serving
    }

    pub(super) fn stepping(&self) -> bool {
        matches!(self.going, Going::Holding | Going::Told)
    }

    /// The drain starts (the server's, or this connection's alone): no
    /// answer ends from now until the client has read the GOAWAY.
    pub(super) fn begin(&mut self, quic: &quinn::Connection) {
        if self.going != Going::Serving {
            return;
        }
        self.hold.send_replace(true);
        self.going = Going::Holding;
        self.step
            .as_mut()
            .reset(Instant::now() + settle(quic) + SCRIPT_TIME);
    }

    /// Its next step, once `step` has fired: GOAWAY, then the answers end.
    pub(super) async fn next(
        &mut self,
        h3: &mut H3,
        quic: &quinn::Connection,
        peer: SocketAddr,
    ) -> Stepped {
        if self.going == Going::Holding {
            // h3 says GOAWAY with the stream after the last one it
            // accepted (the first stream when none was).
            self.goaway = Some(self.last.map_or(0, |id| id + 4));
            // Bounded: the write waits on the client's flow control for
            // the server's control stream, which it may hold shut.
            match tokio::time::timeout(CLOSE_WAIT, h3.shutdown(1)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::debug!(client = %peer, error = %e, "HTTP/3: GOAWAY not sent");
                    return Stepped::Close;
                }
                Err(_) => {
                    tracing::debug!(client = %peer, "HTTP/3: the GOAWAY could not be written in time");
                    return Stepped::Close;
                }
            }
            self.going = Going::Told;
            self.step.as_mut().reset(Instant::now() + settle(quic));
        } else {
            self.hold.send_replace(false);
            self.going = Going::Gone;
        }
        Stepped::Going
    }

    /// Whether a request on stream `id` is refused (at or past the GOAWAY's
    /// stream); else it is the last accepted so far.
    pub(super) fn refuses(&mut self, id: u64) -> bool {
        if self.goaway.is_some_and(|first_refused| id >= first_refused) {
            return true;
        }
        self.last = self.last.max(Some(id));
        false
    }

    pub(super) fn gone(&self) -> bool {
        self.going == Going::Gone
    }
}
