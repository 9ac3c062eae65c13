//! The listening sockets passed from one server process to the next, so
//! that publishing a new binary refuses no connection: the kernel keeps
//! queueing connections on a socket that stays open, and whichever process
//! holds it next accepts them.
//!
//! - **From systemd** (socket activation, `deploy/citizen-site.socket`):
//!   systemd holds the ports across a restart and passes them in
//!   (`LISTEN_FDS`, `LISTEN_FDNAMES`, `LISTEN_PID`); the server says when
//!   it is ready and when it stops (`READY=1`, `STOPPING=1` on
//!   `NOTIFY_SOCKET`).
//! - **From the running server** (`SIGUSR2`, which `citizen-site upgrade`
//!   sends): it starts the binary now at the path it was started from, with
//!   its sockets passed the same way and itself as that child's
//!   `NOTIFY_SOCKET`. Only once the child says `READY=1` (its pages
//!   rendered) does the old one stop accepting and drain; a child that
//!   exits or is not ready in time is stopped, and the old one serves on.
//! - **Both** (`systemctl reload`, whose `ExecReload=` is `citizen-site
//!   upgrade --pid $MAINPID`): as above, and once the child is ready the
//!   old process tells systemd `MAINPID=<child>` before it drains, so
//!   systemd follows the new process (`NotifyAccess=main`: only the main
//!   process may say so). The child is handed systemd's `NOTIFY_SOCKET` in
//!   [`SUPERVISOR`], and says what it says next (`STOPPING=1`, the next
//!   reload's `MAINPID=`) there.
//!
//! - **A new environment** (`citizen-site upgrade --apply-env`, which the
//!   unit's `ExecReload=` runs with the environment file as it is now): the
//!   command offers its environment on an abstract socket named for the
//!   server ([`env_offer_name`]); on SIGUSR2 the server takes it from
//!   there (only from its own user, or root) and starts the successor with
//!   it in place of its own. With no offer, the successor gets the server's.
//!
//! Either way the sockets named `https` and `http` are the HTTPS and HTTP
//! ports (`HTTPS_ADDR`, `HTTP_ADDR`), the UDP socket named `quic` is
//! HTTP/3's (the HTTPS port's number, over UDP), and behind a proxy the
//! one named `http`, or the only one, is `ADDR`. With none passed, the
//! server binds those addresses itself.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};

use crate::edge::quic::handoff::{self, Handoff};

use super::inherited::{PREDECESSOR, PREDECESSOR_UNRENDERED, SUPERVISOR};
use super::notify::{notify_main_pid, NotifyDir, HTTP3_NOT_SERVED, NOTIFY, REFUSED};

/// How long a successor has to become ready before it is stopped: a start
/// renders every page first (a few seconds).
pub const SUCCESSOR_TIMEOUT: Duration = Duration::from_secs(60);

/// The listening sockets a running server can pass to a successor, and how
/// it was started.
#[derive(Clone)]
pub struct Handover {
    /// Copies of the sockets served (the same kernel sockets), by name.
    pub sockets: Arc<Vec<(&'static str, OwnedFd)>>,
    /// HTTP/3's part, when it is served: a successor is given a socket to
    /// pass this process the packets of its connections.
    pub quic: Option<Arc<Handoff>>,
    pub supervised: bool,
    pub exe: Option<PathBuf>,
    /// The process that started this one, while it may still drain.
    pub predecessor: Option<u32>,
    /// This server's shutdown grace: about how long a predecessor drains.
    pub grace: Duration,
    /// The pages this server did not render: a successor refuses to take
    /// over only for others.
    pub unrendered: Arc<arc_swap::ArcSwap<Vec<crate::render::Unrendered>>>,
}

impl Handover {
    /// Resolves once a successor has taken over: on each SIGUSR2, starts
    /// one and waits for it to be ready; one that fails is stopped and
    /// logged, and the next SIGUSR2 tries again. Never resolves when
    /// signals cannot be received.
    pub async fn on_signal(self) {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut usr2) = signal(SignalKind::user_defined2()) else {
            return std::future::pending().await;
        };
        while usr2.recv().await.is_some() {
            self.wait_for_predecessor().await;
            match self.start_successor().await {
                Ok((pid, serves_http3)) => {
                    if let Some(handoff) = &self.quic {
                        handoff.successor_ready(serves_http3);
                        if !serves_http3 {
                            tracing::warn!(successor = pid, "upgrade: the new binary does not serve HTTP/3; this process reads its own HTTP/3 connections to the end of its drain, and new ones go unanswered (browsers fall back to HTTP/2)");
                        }
                    }
                    if self.supervised {
                        // systemd follows the new process from now on.
                        notify_main_pid(pid);
                    }
                    tracing::info!(successor = pid, "upgrade: the new binary is ready and serving; this process stops accepting and drains");
                    report(&format!("ready {pid}"));
                    return;
                }
                Err(e) => {
                    if let Some(handoff) = &self.quic {
                        handoff.successor_failed();
                    }
                    let why = format!("{e:#}");
                    tracing::error!(error = %why, "upgrade failed: this process keeps serving");
                    report(&format!("failed {why}"));
                }
            }
        }
        std::future::pending().await
    }

    /// A second publish while the process before this one still drains
    /// waits for it to finish (at most this server's grace and 5 s): the
    /// HTTP/3 connections it drains live in it, and only this process
    /// passes it their packets, which a successor of this one would not.
    /// Said in the log and to `citizen-site upgrade`.
    async fn wait_for_predecessor(&self) {
        let (Some(pid), Some(handoff)) = (self.predecessor, &self.quic) else {
            return;
        };
        if !handoff.has_predecessor() || !is_running(pid) {
            return;
        }
        let limit = self.grace + Duration::from_secs(5);
        tracing::info!(predecessor = pid, "upgrade: waiting for the process before this one to finish its drain (its HTTP/3 connections live in it)");
        report(&format!("waiting {pid} {}", limit.as_secs()));
        let deadline = tokio::time::Instant::now() + limit;
        while is_running(pid) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        if is_running(pid) {
            tracing::warn!(predecessor = pid, "upgrade: the process before this one still drains after {} s; going on: its HTTP/3 connections end with this hand-over", limit.as_secs());
        }
    }

    /// Starts the binary at the path this one was started from, passing it
    /// the sockets; returns its process id once it is ready, and whether
    /// it serves HTTP/3.
    pub async fn start_successor(&self) -> anyhow::Result<(u32, bool)> {
        let exe = self
            .exe
            .as_deref()
            .context("the path this binary was started from is unknown")?;
        let dir = NotifyDir::new()?;
        let inbox = UnixDatagram::bind(dir.socket())
            .with_context(|| format!("binding {}", dir.socket().display()))?;
        inbox.set_nonblocking(true)?;
        let inbox = tokio::net::UnixDatagram::from_std(inbox)?;
        let mut fds: Vec<RawFd> = self.sockets.iter().map(|(_, fd)| fd.as_raw_fd()).collect();
        let mut names: Vec<&str> = self.sockets.iter().map(|(n, _)| *n).collect();
        let for_quic = match &self.quic {
            Some(handoff) => Some(
                handoff
                    .successor_end()
                    .context("making HTTP/3's socket pair for the new binary")?,
            ),
            None => None,
        };
        if let Some(end) = &for_quic {
            fds.push(end.as_raw_fd());
            names.push(handoff::PREDECESSOR_SOCKET);
        }
        let passed = ToPass::copies(fds)?;
        drop(for_quic);
        let offered = offered_environment().await?;
        let mut command = tokio::process::Command::new(exe);
        if let Some(vars) = offered {
            tracing::info!(variables = vars.len(), "upgrade: the new binary starts with the environment `citizen-site upgrade --apply-env` passed");
            command.env_clear().envs(vars);
        }
        command
            .args(std::env::args_os().skip(1))
            .env_remove("LISTEN_PID")
            .env("LISTEN_FDS", names.len().to_string())
            .env("LISTEN_FDNAMES", names.join(":"))
            .env("NOTIFY_SOCKET", dir.socket())
            .env(PREDECESSOR, std::process::id().to_string())
            .env(
                PREDECESSOR_UNRENDERED,
                serde_json::to_string(
                    &self
                        .unrendered
                        .load()
                        .iter()
                        .map(|u| &u.path)
                        .collect::<Vec<_>>(),
                )
                .unwrap_or_else(|_| "[]".into()),
            )
            .env(
                handoff::PREDECESSOR_TAG,
                self.quic.as_ref().map_or(0, |h| h.tag()).to_string(),
            )
            .env_remove(SUPERVISOR)
            .stdin(std::process::Stdio::null())
            // Stopped with this server should it be stopped while it waits
            // (SIGTERM during an upgrade stops the site; a successor not yet
            // ready has accepted nothing).
            .kill_on_drop(true);
        if let Some(manager) = NOTIFY.get().and_then(|n| n.then.as_deref()) {
            command.env(SUPERVISOR, manager);
        }
        // SAFETY: the step only calls dup2, async-signal-safe.
        unsafe {
            command.pre_exec(passed.placing());
        }
        tracing::info!(exe = %exe.display(), "upgrade: starting the new binary with this server's sockets");
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {}", exe.display()))?;
        drop(passed);
        let pid = child.id().unwrap_or_default();
        // Its word first: a successor that refuses says why, then exits.
        let outcome = tokio::select! {
            biased;
            ready = ready_from(&inbox) => ready,
            status = child.wait() => Err(match status {
                Ok(s) => anyhow::anyhow!("the new binary (pid {pid}) exited before it was ready: {s}"),
                Err(e) => anyhow::anyhow!("waiting for the new binary: {e}"),
            }),
            () = tokio::time::sleep(SUCCESSOR_TIMEOUT) => Err(anyhow::anyhow!(
                "the new binary (pid {pid}) was not ready within {} s", SUCCESSOR_TIMEOUT.as_secs()
            )),
        };
        match outcome {
            Ok(serves_http3) => {
                // It serves on after this process exits: not killed on drop.
                std::mem::forget(child);
                Ok((pid, serves_http3))
            }
            Err(e) => {
                stop(&mut child).await;
                Err(e)
            }
        }
    }
}

/// The abstract socket name on which `citizen-site upgrade` waits to hear
/// how the upgrade of server `pid` went.
pub fn report_name(pid: u32) -> String {
    format!("citizen-site-upgrade-{pid}")
}

/// The abstract socket on which `citizen-site upgrade --apply-env` offers
/// server `pid` the environment its successor is to start with.
pub fn env_offer_name(pid: u32) -> String {
    format!("citizen-site-upgrade-env-{pid}")
}

/// The most an offered environment may hold.
const MAX_OFFER: u64 = 1 << 20;

/// The environment `citizen-site upgrade --apply-env` offers this server,
/// if one does: its length (8 bytes, big-endian), then `NAME=value`
/// pairs, each ended by a NUL byte. Taken only from a process of this
/// server's user, or root's.
async fn offered_environment() -> anyhow::Result<Option<Vec<(OsString, OsString)>>> {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::ffi::OsStrExt;
    use tokio::io::AsyncReadExt;
    let name =
        std::os::unix::net::SocketAddr::from_abstract_name(env_offer_name(std::process::id()))?;
    let stream = match std::os::unix::net::UnixStream::connect_addr(&name) {
        Ok(stream) => stream,
        // Nobody offers one: the successor gets this server's.
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => return Ok(None),
        Err(e) => return Err(e).context("reading the environment offered for the upgrade"),
    };
    stream.set_nonblocking(true)?;
    let mut stream = tokio::net::UnixStream::from_std(stream)?;
    let peer = stream.peer_cred()?;
    // SAFETY: getuid(2) cannot fail.
    let own = unsafe { libc::getuid() };
    if peer.uid() != own && peer.uid() != 0 {
        bail!(
            "the environment offered for the upgrade comes from uid {}, neither this server's user ({own}) nor root: refused",
            peer.uid()
        );
    }
    // Its length, then as many bytes: one cut short is refused, never
    // taken for a smaller environment.
    let read = async {
        let length = stream.read_u64().await?;
        if length > MAX_OFFER {
            bail!("the offered environment is {length} bytes, more than {MAX_OFFER}");
        }
        let mut bytes = vec![0; length as usize];
        stream
            .read_exact(&mut bytes)
            .await
            .context("the offered environment was cut short")?;
        Ok(bytes)
    };
    let bytes = tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .context("the offered environment did not arrive within 10 s")??;
    let vars = bytes
        .split(|b| *b == 0)
        .filter(|pair| !pair.is_empty())
        .filter_map(|pair| {
            let at = pair.iter().position(|b| *b == b'=')?;
            Some((
                std::ffi::OsStr::from_bytes(&pair[..at]).to_owned(),
                std::ffi::OsStr::from_bytes(&pair[at + 1..]).to_owned(),
            ))
        })
        .collect();
    Ok(Some(vars))
}

/// Tells `citizen-site upgrade`, if it waits, how the upgrade went:
/// `ready <pid>`, `failed <why>` or `refused <why>`; before it, maybe
/// `waiting <pid> <secs>` (a predecessor's drain to end first).
fn report(outcome: &str) {
    use std::os::linux::net::SocketAddrExt;
    let sent = std::os::unix::net::SocketAddr::from_abstract_name(report_name(std::process::id()))
        .and_then(|to| UnixDatagram::unbound()?.send_to_addr(outcome.as_bytes(), &to));
    if let Err(e) = sent {
        tracing::debug!(error = %e, "no upgrade command waits for the outcome");
    }
}

/// Returns once a datagram holding `READY=1` arrives: whether it said
/// it serves HTTP/3. An error when the successor says it refuses to take
/// over ([`REFUSED`]: a page it prerendered does not render), with its
/// reason.
async fn ready_from(inbox: &tokio::net::UnixDatagram) -> anyhow::Result<bool> {
    let mut buf = vec![0u8; 4096];
    loop {
        let n = inbox.recv(&mut buf).await?;
        let message = String::from_utf8_lossy(&buf[..n]);
        if let Some(why) = message.lines().find_map(|l| l.strip_prefix(REFUSED)) {
            bail!("the new binary refused to take over: {why}");
        }
        if message.lines().any(|l| l == "READY=1") {
            return Ok(!message.lines().any(|l| l == HTTP3_NOT_SERVED));
        }
    }
}

/// Stops a successor that failed: SIGTERM, then SIGKILL after 10 s.
async fn stop(child: &mut tokio::process::Child) {
    if let Some(pid) = child.id() {
        // SAFETY: signalling our own child, which has not been reaped.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    }
    if tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
}

/// Copies of listening sockets to pass to a child at 3, 4, ... in order
/// (systemd's numbering, `LISTEN_FDS`); they must stay open until the
/// child is spawned.
pub struct ToPass(Vec<OwnedFd>);

impl ToPass {
    /// Copies `fds` at 64 and above, so that moving them to 3, 4, ... in
    /// the child never overwrites one not yet moved.
    pub fn copies(fds: impl IntoIterator<Item = RawFd>) -> std::io::Result<ToPass> {
        let copies = fds
            .into_iter()
            .map(|fd| {
                // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor, owned here.
                let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 64) };
                if new < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // SAFETY: `new` is a fresh descriptor nothing else owns.
                Ok(unsafe { OwnedFd::from_raw_fd(new) })
            })
            .collect::<std::io::Result<_>>()?;
        Ok(ToPass(copies))
    }

    /// The step between fork and exec (`pre_exec`) that puts the copies at
    /// 3, 4, ... (dup2, which also clears close-on-exec there).
    pub fn placing(&self) -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
        let raw: Vec<RawFd> = self.0.iter().map(AsRawFd::as_raw_fd).collect();
        move || {
            for (i, fd) in raw.iter().enumerate() {
                // SAFETY: dup2 onto the child's own descriptor table.
                if unsafe { libc::dup2(*fd, 3 + i as RawFd) } < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        }
    }
}

/// The processes other than this one running the binary at `exe` (the
/// path as started; a binary replaced since shows as "(deleted)").
pub fn servers_started_from(exe: &Path) -> Vec<u32> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found: Vec<u32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|path| {
                let path: OsString = path.into_os_string();
                let text = path.to_string_lossy();
                Path::new(text.trim_end_matches(" (deleted)")) == exe
            })
        })
        .collect();
    found.sort_unstable();
    found
}

/// Whether process `pid` exists (and is not a zombie).
pub fn is_running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}
