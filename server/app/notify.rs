//! The notifications to a service manager (`READY=1`, `STOPPING=1`,
//! `MAINPID=`) on `NOTIFY_SOCKET`, or to the server that started this one
//! as its successor; and the socket a server listens on for its own
//! successor's (`NotifyDir`).

use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};

/// Where this process's notifications go: `first` (systemd's socket, or
/// the predecessor's) until it is ready, `then` (the service manager's,
/// when one watches) from then on.
pub(super) struct Notify {
    /// `first` is the predecessor's: it is also told when HTTP/3 is not
    /// served ([`HTTP3_NOT_SERVED`]).
    pub(super) to_predecessor: bool,
    pub(super) first: Option<PathBuf>,
    pub(super) then: Option<PathBuf>,
    pub(super) ready: std::sync::atomic::AtomicBool,
    /// A successor is the main process now: this one says nothing more.
    pub(super) handed_over: std::sync::atomic::AtomicBool,
}

pub(super) static NOTIFY: std::sync::OnceLock<Notify> = std::sync::OnceLock::new();

/// The line of a successor's `READY=1` that says it does not serve
/// HTTP/3: its predecessor then keeps reading the UDP socket for its own
/// connections. Said only when not served, so that a successor from a
/// release before it (which says nothing, and serves HTTP/3 whenever it
/// can) is handed the socket as before.
pub(super) const HTTP3_NOT_SERVED: &str = "CITIZEN_SITE_HTTP3=0";

/// The line of a successor's message to its predecessor that says it will
/// not take over, and why (`CITIZEN_SITE_REFUSED=<why>`, one line).
pub(super) const REFUSED: &str = "CITIZEN_SITE_REFUSED=";

/// The most of a refusal's reason sent: the predecessor reads a datagram
/// of 4 KiB.
const REFUSAL_MAX: usize = 3500;

/// Tells the server that started this one as its successor that it will
/// not take over, and why (made one line, cut at [`REFUSAL_MAX`] bytes).
/// Whether one was told (false: no predecessor started this process).
pub fn notify_refused(why: &str) -> bool {
    let Some(n) = NOTIFY.get().filter(|n| n.to_predecessor) else {
        return false;
    };
    let mut line = why.replace(['\n', '\r'], " ");
    if line.len() > REFUSAL_MAX {
        let mut at = REFUSAL_MAX;
        while !line.is_char_boundary(at) {
            at -= 1;
        }
        line.truncate(at);
        line.push_str("...");
    }
    send(n.first.as_deref(), &format!("{REFUSED}{line}"));
    true
}

/// Tells the service manager (or the predecessor) that the site is ready,
/// and a predecessor whether it serves HTTP/3 (`http3`): nothing when no
/// one asked (`NOTIFY_SOCKET` unset).
pub fn notify_ready(http3: bool) {
    let Some(n) = NOTIFY.get() else { return };
    match n.to_predecessor && !http3 {
        true => send(n.first.as_deref(), &format!("READY=1\n{HTTP3_NOT_SERVED}")),
        false => send(n.first.as_deref(), "READY=1"),
    }
    n.ready.store(true, std::sync::atomic::Ordering::Release);
}

/// Tells the service manager that the server is stopping (draining),
/// unless it handed over to a successor (which the manager now watches).
pub fn notify_stopping() {
    let Some(n) = NOTIFY.get() else { return };
    if !n.handed_over.load(std::sync::atomic::Ordering::Acquire) {
        send(n.manager(), "STOPPING=1");
    }
}

impl Notify {
    /// The service manager's socket, now.
    fn manager(&self) -> Option<&Path> {
        if self.ready.load(std::sync::atomic::Ordering::Acquire) {
            self.then.as_deref().or(self.first.as_deref())
        } else {
            self.first.as_deref()
        }
    }
}

/// Tells the service manager that `pid` is the main process from now on.
pub(super) fn notify_main_pid(pid: u32) {
    let Some(n) = NOTIFY.get() else { return };
    send(n.manager(), &format!("MAINPID={pid}"));
    n.handed_over
        .store(true, std::sync::atomic::Ordering::Release);
}

/// One datagram to a notification socket: a path, or an abstract name
/// (`@...`). A socket gone (a predecessor that has exited) is no error.
fn send(to: Option<&Path>, message: &str) {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::ffi::OsStrExt;
    let Some(to) = to else { return };
    let bytes = to.as_os_str().as_bytes();
    let addr = match bytes.strip_prefix(b"@") {
        Some(name) => std::os::unix::net::SocketAddr::from_abstract_name(name),
        None => std::os::unix::net::SocketAddr::from_pathname(to),
    };
    let sent =
        addr.and_then(|addr| UnixDatagram::unbound()?.send_to_addr(message.as_bytes(), &addr));
    if let Err(e) = sent {
        tracing::debug!(error = %e, socket = %to.display(), "the notification socket did not take {message}");
    }
}

/// A private folder (0700) for the socket a successor reports on; removed
/// when dropped.
pub(super) struct NotifyDir(PathBuf);

impl NotifyDir {
    pub(super) fn new() -> anyhow::Result<NotifyDir> {
        use std::os::unix::fs::DirBuilderExt;
        let path = std::env::temp_dir().join(format!(
            "citizen-site-upgrade-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot make the folder {}: {}",
                    path.display(),
                    crate::config::io_reason(&e)
                )
            })?;
        Ok(NotifyDir(path))
    }

    pub(super) fn socket(&self) -> PathBuf {
        self.0.join("notify")
    }
}

impl Drop for NotifyDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
