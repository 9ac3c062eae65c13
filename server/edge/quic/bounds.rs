//! HTTP/3's bounds, each a constant (the module doc of `quic` says what
//! each holds back; docs/security.md adds them up).

use std::time::Duration;

/// Requests open at once on one connection (as HTTP/2's
/// `max_concurrent_streams`).
pub const MAX_STREAMS: u32 = 128;
/// Unidirectional streams a client may open: HTTP/3 needs three (control,
/// QPACK encoder and decoder); the rest leaves room for reserved types.
pub const MAX_UNI_STREAMS: u32 = 8;
/// The largest request head, decoded (as a header list's size counts:
/// names, values and 32 bytes each).
pub const MAX_FIELD_SECTION: u64 = 16 * 1024;
/// What a client may send on one stream before the server reads it.
pub const STREAM_WINDOW: u32 = 64 * 1024;
/// What a client may send on one connection before the server reads it:
/// the most one connection can make the server hold of a client's data
/// (a request body is read as it arrives; the form's is a few KiB, and
/// none is read past 64 KB). Twice that in memory, each datagram's share
/// in an allocation of its own: at 256 KiB, the flood test's 64 unread
/// connections grew the server by 34 to 38 MiB, over its 32 MiB budget.
pub const CONNECTION_WINDOW: u32 = 128 * 1024;
/// What the server keeps sent but not yet acknowledged, per connection:
/// memory a client that does not acknowledge can pin, so as small as a
/// few pages in flight allow (at 50 ms round trips, 5 MB/s a connection).
pub const SEND_WINDOW: u64 = 256 * 1024;
/// What the server buffers of one new connection's packets that arrive
/// before it is accepted, and of all of them at once.
pub const INCOMING_BUFFER: u64 = 16 * 1024;
pub const INCOMING_BUFFER_TOTAL: u64 = 4 * 1024 * 1024;
/// The share of `MAX_CONNECTIONS` that handshakes from unproven
/// addresses may hold at once (one in this many).
pub const UNPROVEN_SHARE: usize = 4;
/// Streams a connection may end before their head arrives (empty, reset,
/// timed out, or refused past its GOAWAY) over its life: twice as many as
/// it may have open at once. h3 keeps an entry for each until the
/// connection ends, so past this the connection is told GOAWAY and closed
/// as an idle one is (past twice this, while it drains, closed at once).
/// A browser's request carries its head on its first packet: a stream it
/// cancels that early is rare.
pub const HEADLESS_STREAMS: usize = 2 * MAX_STREAMS as usize;
/// Once draining, how long a connection whose requests are all answered
/// is given to close itself (the client, told by GOAWAY, closes it when
/// it has what it asked for) before the server closes it.
pub const CLOSE_WAIT: Duration = Duration::from_secs(2);
