//! A connection's socket with two bounds that cost nothing per request: a
//! client that sends nothing, and a client that reads nothing.
//!
//! A timer reset on every read (what a per-read timeout does) is a trip
//! through tokio's timer wheel, under its lock, for every request on a
//! keep-alive connection: measured with callgrind, about a tenth of what a
//! cached page costs. Here a read only counts itself. The read timer is
//! made when a read first waits (a connection whose request is there when
//! it is accepted and that then closes needs none: two allocations and a
//! clock read fewer per connection) and armed once per `idle` period;
//! when it fires while a read is waiting, a count that moved since it was
//! armed means the client spoke in that period, and the timer is armed
//! for another; a count that did not means a whole period of silence, and
//! the read fails with `TimedOut` (so a silent connection is closed after
//! between one and two periods). Writes
//! rarely wait (a page fits the socket's buffer), so the write timer is
//! armed when one starts waiting and the write fails once it has waited
//! `write_stall` without the client reading a byte.
//!
//! It is made for a connection that is dropped as soon as it has been shut
//! down: its shutdown is left to the close (see `poll_shutdown`).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

pub struct Watched<T> {
    io: T,
    idle: Duration,
    write_stall: Duration,
    /// Reads that returned something, and their number when the read
    /// timer was last armed.
    reads: u64,
    reads_at_arm: u64,
    /// Made on the first read that waits (a connection whose request is
    /// already there when it is accepted, and which then closes, never
    /// needs one).
    read_timer: Option<Pin<Box<Sleep>>>,
    /// Whether the read timer has been polled since it was armed.
    read_timer_polled: bool,
    /// Whether a write is waiting, with the write timer armed for it.
    write_waiting: bool,
    /// Made on the first write that waits.
    write_timer: Option<Pin<Box<Sleep>>>,
}

impl<T> Watched<T> {
    pub fn new(io: T, idle: Duration, write_stall: Duration) -> Watched<T> {
        Watched {
            io,
            idle,
            write_stall,
            reads: 0,
            reads_at_arm: 0,
            read_timer: None,
            read_timer_polled: false,
            write_waiting: false,
            write_timer: None,
        }
    }

    /// A read is waiting: Err once a whole idle period has passed without
    /// one returning anything. The timer is polled (its waker registered)
    /// once per arming, not per read: the connection is one task, whose
    /// waker does not change, and a fired timer wakes it to read again.
    fn check_read(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        let timer = match &mut self.read_timer {
            Some(timer) => timer,
            // The first period begins with the first wait.
            None => self
                .read_timer
                .insert(Box::pin(tokio::time::sleep(self.idle))),
        };
        if self.read_timer_polled && !timer.is_elapsed() {
            return Ok(());
        }
        self.read_timer_polled = true;
        while timer.as_mut().poll(cx).is_ready() {
            if self.reads == self.reads_at_arm {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the client sent nothing for the idle limit",
                ));
            }
            self.reads_at_arm = self.reads;
            timer.as_mut().reset(Instant::now() + self.idle);
        }
        Ok(())
    }

    fn write_outcome<R>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        match polled {
            Poll::Ready(r) => {
                self.write_waiting = false;
                Poll::Ready(r)
            }
            Poll::Pending => {
                let timer = match &mut self.write_timer {
                    Some(timer) if self.write_waiting => timer,
                    Some(timer) => {
                        timer.as_mut().reset(Instant::now() + self.write_stall);
                        timer
                    }
                    None => self
                        .write_timer
                        .insert(Box::pin(tokio::time::sleep(self.write_stall))),
                };
                self.write_waiting = true;
                match timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client read nothing for the write limit",
                    ))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Watched<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(r) => {
                this.reads += 1;
                Poll::Ready(r)
            }
            Poll::Pending => match this.check_read(cx) {
                Ok(()) => Poll::Pending,
                Err(e) => Poll::Ready(Err(e)),
            },
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Watched<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.io).poll_write(cx, buf);
        this.write_outcome(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.write_outcome(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.io).poll_flush(cx);
        this.write_outcome(cx, polled)
    }

    /// Nothing: the close that follows ends the connection. hyper shuts a
    /// connection's write side down just before its end, and the socket
    /// is closed when the connection is dropped, at once (`edge`'s
    /// connection tasks): the close sends what is still queued, then the
    /// FIN, as the shutdown would have. One system call fewer per
    /// connection (1.7 µs of kernel time per new connection and request
    /// in one run of `bench/tails.mjs`, as /proc splits a thread's time,
    /// which only approximates it: docs/performance.md).
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test(start_paused = true)]
    async fn a_client_that_speaks_within_each_period_is_kept_and_a_silent_one_closed() {
        let (client, server) = tokio::io::duplex(64);
        let mut watched = Watched::new(server, Duration::from_secs(60), Duration::from_secs(30));
        let (rx, mut tx) = tokio::io::split(client);
        let talker = tokio::spawn(async move {
            for _ in 0..4 {
                tokio::time::sleep(Duration::from_secs(50)).await;
                tx.write_all(b"x").await.unwrap();
            }
            // Then silence, with the connection open.
            tokio::time::sleep(Duration::from_secs(3600)).await;
            drop(tx);
        });
        let started = Instant::now();
        let mut byte = [0u8; 1];
        for _ in 0..4 {
            watched
                .read_exact(&mut byte)
                .await
                .expect("a client speaking every 50 s is kept");
        }
        let err = watched.read_exact(&mut byte).await.expect_err("silence");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        // The last byte came at 200 s; closed between 60 and 120 s later.
        let silent_for = started.elapsed() - Duration::from_secs(200);
        assert!(
            silent_for >= Duration::from_secs(60) && silent_for <= Duration::from_secs(120),
            "{silent_for:?}"
        );
        talker.abort();
        drop(rx);
    }

    #[tokio::test(start_paused = true)]
    async fn a_write_the_client_does_not_read_fails_after_the_stall_limit() {
        let (client, server) = tokio::io::duplex(16);
        let mut watched = Watched::new(server, Duration::from_secs(60), Duration::from_secs(30));
        // Long after the connection began, a write that fills the buffer
        // waits: it gets the whole limit from when it began waiting.
        tokio::time::sleep(Duration::from_secs(100)).await;
        let began = Instant::now();
        let err = watched
            .write_all(&[0u8; 64])
            .await
            .expect_err("nobody reads");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(began.elapsed(), Duration::from_secs(30));
        drop(client);
    }
}
