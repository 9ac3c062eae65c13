//! What this process was handed when it started: the listening sockets
//! (from systemd, or from the server it succeeds), by name, checked to be
//! what their names say; and whom to tell when it is ready
//! (`super::notify`). How a handover passes them on is `super::handover`.

use std::net::{TcpListener, UdpSocket};
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;

use anyhow::{bail, Context};

use crate::edge::quic::handoff;

use super::notify::{Notify, NOTIFY};

/// The name of the HTTPS port's socket.
pub const HTTPS: &str = "https";

/// The name of the HTTP port's socket (or of the only one, behind a proxy).
pub const HTTP: &str = "http";

/// The name of HTTP/3's UDP socket.
pub const QUIC: &str = "quic";

/// Set by a server for the successor it starts: its own process id. The
/// successor's `LISTEN_PID` cannot be known before it runs, so the
/// successor checks that its parent is that process instead.
pub(super) const PREDECESSOR: &str = "CITIZEN_SITE_PREDECESSOR";

/// Set by a server under a service manager for the successor it starts:
/// the manager's `NOTIFY_SOCKET`, for the successor once it is ready.
/// The paths of the pages the predecessor did not render when it started
/// (a JSON list): its successor refuses to take over only for others.
pub(super) const PREDECESSOR_UNRENDERED: &str = "CITIZEN_SITE_PREDECESSOR_UNRENDERED";

pub const SUPERVISOR: &str = "CITIZEN_SITE_SUPERVISOR";

/// What this process was handed when it started.
#[derive(Debug, Default)]
pub struct Inherited {
    sockets: Vec<(String, TcpListener)>,
    /// HTTP/3's UDP socket, when one was passed.
    quic: Option<UdpSocket>,
    /// The names of every socket passed.
    passed: Vec<String>,
    /// The predecessor's HTTP/3 tag and where its packets go, while it
    /// drains (`edge::quic::handoff`).
    quic_predecessor: Option<(u16, UnixDatagram)>,
    /// Started by a server handing over to it (rather than by systemd).
    pub from_predecessor: bool,
    /// That server's process id (its parent when it started, read before
    /// anything else runs: a predecessor gone by then is never waited for).
    pub predecessor_pid: Option<u32>,
    /// The pages that server did not render ([`PREDECESSOR_UNRENDERED`]);
    /// None on a start with no predecessor.
    pub predecessor_unrendered: Option<Vec<String>>,
    /// A service manager watches it: systemd started it (`NOTIFY_SOCKET`),
    /// or a predecessor systemd watched ([`SUPERVISOR`]). A handover then
    /// tells the manager the new main process.
    pub supervised: bool,
    /// The binary's path as started (a successor is started from it).
    pub exe: Option<PathBuf>,
}

impl Inherited {
    /// Reads what systemd or a predecessor passed, and removes those
    /// variables from the environment (the server's own children must not
    /// take them).
    ///
    /// # Safety
    /// It changes the environment: call it before any other thread runs
    /// (first thing in `main`, before the runtime starts).
    pub unsafe fn from_env() -> anyhow::Result<Inherited> {
        let parent = std::os::unix::process::parent_id();
        let from_predecessor = std::env::var(PREDECESSOR)
            .ok()
            .and_then(|p| p.parse::<u32>().ok())
            == Some(parent);
        let own_socket = std::env::var_os("NOTIFY_SOCKET");
        let supervisor = match from_predecessor {
            true => std::env::var_os(SUPERVISOR),
            false => own_socket.clone(),
        };
        // SAFETY: the caller guarantees no other thread runs.
        unsafe {
            if from_predecessor {
                std::env::set_var("LISTEN_PID", std::process::id().to_string());
            }
            std::env::remove_var(PREDECESSOR);
            std::env::remove_var(SUPERVISOR);
        }
        let supervised = supervisor.is_some();
        let _ = NOTIFY.set(Notify {
            to_predecessor: from_predecessor,
            first: own_socket.map(PathBuf::from),
            then: supervisor.map(PathBuf::from),
            ready: std::sync::atomic::AtomicBool::new(false),
            handed_over: std::sync::atomic::AtomicBool::new(false),
        });
        // SAFETY: as above.
        let passed: Vec<_> = unsafe { sd_notify::listen_fds_with_names_and_unset_env() }
            .context("reading the sockets passed in LISTEN_FDS")?
            .collect();
        let mut sockets = Vec::new();
        let mut quic = None;
        let mut quic_predecessor = None;
        let predecessor_tag = std::env::var(handoff::PREDECESSOR_TAG)
            .ok()
            .and_then(|t| t.parse::<u16>().ok())
            .filter(|_| from_predecessor);
        // SAFETY: as above.
        unsafe { std::env::remove_var(handoff::PREDECESSOR_TAG) };
        // A predecessor that did not say (one from a release before this
        // list) had rendered every page as far as this one knows.
        let predecessor_unrendered = from_predecessor.then(|| {
            std::env::var(PREDECESSOR_UNRENDERED)
                .ok()
                .and_then(|list| serde_json::from_str::<Vec<String>>(&list).ok())
                .unwrap_or_default()
        });
        // SAFETY: as above.
        unsafe { std::env::remove_var(PREDECESSOR_UNRENDERED) };
        let names = passed.iter().map(|(_, name)| name.clone()).collect();
        for (fd, name) in passed {
            if name == handoff::PREDECESSOR_SOCKET {
                check_datagram(fd).with_context(|| format!("the socket {name:?} passed in"))?;
                // SAFETY: passed to this process to own, checked to be a
                // datagram socket; nothing else in it uses it.
                let socket = unsafe { UnixDatagram::from_raw_fd(fd) };
                quic_predecessor = predecessor_tag.map(|tag| (tag, socket));
                continue;
            }
            if name == QUIC {
                check_datagram(fd).with_context(|| format!("the socket {name:?} passed in"))?;
                // SAFETY: the fd was passed to this process to own (and
                // checked to be a UDP socket); nothing else in it uses it.
                let socket = unsafe { UdpSocket::from_raw_fd(fd) };
                socket.set_nonblocking(true)?;
                quic = Some(socket);
                continue;
            }
            check_listening(fd).with_context(|| format!("the socket {name:?} passed in"))?;
            // SAFETY: the fd was passed to this process to own (and checked
            // to be a listening TCP socket); nothing else in it uses it.
            let listener = unsafe { TcpListener::from_raw_fd(fd) };
            listener.set_nonblocking(true)?;
            sockets.push((name, listener));
        }
        Ok(Inherited {
            sockets,
            quic,
            passed: names,
            quic_predecessor,
            from_predecessor,
            predecessor_pid: from_predecessor.then_some(parent),
            predecessor_unrendered,
            supervised,
            exe: std::env::current_exe().ok(),
        })
    }

    /// Takes the socket named `name`.
    pub fn take(&mut self, name: &str) -> Option<TcpListener> {
        let at = self.sockets.iter().position(|(n, _)| n == name)?;
        Some(self.sockets.remove(at).1)
    }

    /// Whether a socket named `name` was passed (taken since or not).
    pub fn was_passed(&self, name: &str) -> bool {
        self.passed.iter().any(|n| n == name)
    }

    /// Takes the predecessor's HTTP/3 tag and socket, while it drains.
    pub fn take_quic_predecessor(&mut self) -> Option<(u16, UnixDatagram)> {
        self.quic_predecessor.take()
    }

    /// Takes HTTP/3's UDP socket.
    pub fn take_quic(&mut self) -> Option<UdpSocket> {
        self.quic.take()
    }

    /// Takes the socket for plain HTTP: the one named `http`, or the only
    /// one whatever its name. Refuses an `https` socket: the ports are for
    /// HTTPS, which needs `TLS_DOMAINS` or `TLS_CERT`/`TLS_KEY`.
    pub fn take_plain(&mut self) -> anyhow::Result<Option<TcpListener>> {
        if self.sockets.iter().any(|(n, _)| n == HTTPS) {
            bail!("a socket named https was passed in, but HTTPS is not set up: set TLS_DOMAINS (or TLS_CERT and TLS_KEY)");
        }
        if let Some(l) = self.take(HTTP) {
            return Ok(Some(l));
        }
        Ok(match self.sockets.len() {
            1 => Some(self.sockets.remove(0).1),
            _ => None,
        })
    }

    /// The names of sockets passed in but not taken.
    pub fn left(&self) -> Vec<&str> {
        let quic = self.quic.as_ref().map(|_| QUIC);
        self.sockets
            .iter()
            .map(|(n, _)| n.as_str())
            .chain(quic)
            .collect()
    }
}

/// Refuses a descriptor that is not a listening TCP socket.
fn check_listening(fd: RawFd) -> anyhow::Result<()> {
    if option(fd, libc::SO_TYPE)? != libc::SOCK_STREAM || option(fd, libc::SO_ACCEPTCONN)? != 1 {
        bail!("descriptor {fd} is not a listening TCP socket (ListenStream= in the socket unit)");
    }
    Ok(())
}

/// Refuses a descriptor that is not a datagram socket.
fn check_datagram(fd: RawFd) -> anyhow::Result<()> {
    if option(fd, libc::SO_TYPE)? != libc::SOCK_DGRAM {
        bail!("descriptor {fd} is not a UDP socket (ListenDatagram= in the socket unit)");
    }
    Ok(())
}

/// A socket option of `fd` that is a C int.
fn option(fd: RawFd, name: libc::c_int) -> std::io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a plain getsockopt into a c_int of the size given.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            name,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r == 0 {
        Ok(value)
    } else {
        Err(std::io::Error::last_os_error())
    }
}
