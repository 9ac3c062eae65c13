//! The range of every count and length of time a setting gives, each
//! stated where it is read (`Reader::count`): `check` and `serve` refuse
//! a value outside it with the same message, and nothing is clamped
//! silently. 0 is allowed only where it means something of its own, and
//! the message says what.

use super::read::Bounds;

/// `MAX_CONNECTIONS`: one descriptor each, and Linux gives a process at
/// most 1,048,576 by default (`fs.nr_open`); the connection semaphores
/// take far more, so a value past this is a slip, never a plan.
pub const MAX_CONNECTIONS: Bounds = Bounds::between(1, 1 << 20);
/// `MAX_CONNECTIONS_PER_CLIENT`: no more than the server may hold at all.
pub const PER_CLIENT: Bounds = Bounds::zero_means("no cap", 1 << 20);
/// `SSR_WORKERS` and `CONNECTION_WORKERS`: a thread each (and a V8
/// isolate each for renders, tens of MB apiece).
pub const WORKERS: Bounds = Bounds::zero_means("one per CPU", 1024);
/// `SSR_DEADLINE_MS`: 0 would end every render at once; a render that
/// needs more than a minute is a fault the deadline is there to end.
pub const SSR_DEADLINE_MS: Bounds = Bounds::between(1, 60_000);
/// `PAGE_CACHE_CAPACITY`: pages of tens of KB each.
pub const PAGE_CACHE: Bounds = Bounds::zero_means("the page cache off", 1_000_000);
/// `TEAM_REFRESH_SECS`: 0 would read the table in a loop; a day at most.
pub const REFRESH_SECS: Bounds = Bounds::between(1, 86_400);
/// `RATE_LIMIT_PER_MINUTE`, `SESSION_LOOKUPS_PER_MINUTE`: the limiter
/// needs at least a nanosecond between two requests of a minute's share.
pub const PER_MINUTE: Bounds = Bounds::zero_means("no limit", 1_000_000);
/// `SHUTDOWN_GRACE_SECS`: 0 ends requests at once; an hour at most
/// (systemd's own stop timeout must cover it).
pub const GRACE_SECS: Bounds = Bounds::between(0, 3_600);
/// `INTRO_LEASE_SECS`: 0 would let two processes send the same request at
/// once; a day at most (a crashed claim waits that long).
pub const LEASE_SECS: Bounds = Bounds::between(1, 86_400);
