//! `citizen-site upgrade`: asks the running server to hand its sockets to
//! the binary now at the path it was started from (SIGUSR2; see
//! `app::handover`), and says how it went.

use std::time::Duration;

use anyhow::{bail, Context};

use crate::app::handover::{is_running, report_name, servers_started_from, SUCCESSOR_TIMEOUT};

/// Signals the server (`pid`, or the one process started from this
/// binary's path) and waits for it to say how it went: done when its
/// successor is ready (then until the old one has drained, at most
/// `grace`); an error when the successor failed (the old one keeps
/// serving) or the server refused (under systemd).
pub async fn run(pid: Option<u32>, grace: Duration) -> anyhow::Result<()> {
    let pid = match pid {
        Some(pid) => pid,
        None => {
            let exe = std::env::current_exe().context("the path of this binary")?;
            match servers_started_from(&exe)[..] {
                [pid] => pid,
                [] => bail!(
                    "no server runs from {}: start one, or name it with --pid",
                    exe.display()
                ),
                ref several => bail!(
                    "several processes run from {} ({several:?}): name the server with --pid",
                    exe.display()
                ),
            }
        }
    };
    if !is_running(pid) {
        bail!("no process {pid}");
    }
    // Where the server says how it went (an abstract socket: no file).
    let inbox = {
        use std::os::linux::net::SocketAddrExt;
        let name = std::os::unix::net::SocketAddr::from_abstract_name(report_name(pid))?;
        let socket = std::os::unix::net::UnixDatagram::bind_addr(&name)
            .context("another `citizen-site upgrade` of this server is waiting")?;
        socket.set_nonblocking(true)?;
        tokio::net::UnixDatagram::from_std(socket)?
    };
    // SAFETY: kill(2) with a process id and a signal number.
    if unsafe { libc::kill(pid as libc::pid_t, libc::SIGUSR2) } != 0 {
        let e = std::io::Error::last_os_error();
        bail!("cannot signal process {pid}: {e}");
    }
    println!("asked the server (pid {pid}) to start the new binary and hand over to it");
    let mut buf = vec![0u8; 4096];
    let deadline = tokio::time::Instant::now() + SUCCESSOR_TIMEOUT + Duration::from_secs(15);
    let heard = loop {
        tokio::select! {
            heard = inbox.recv(&mut buf) => break heard?,
            () = tokio::time::sleep(Duration::from_millis(200)) => {
                if !is_running(pid) {
                    bail!("pid {pid} stopped before the upgrade was done (a SIGTERM?): the new binary was stopped with it");
                }
                if tokio::time::Instant::now() > deadline {
                    bail!("pid {pid} did not say how the upgrade went (is it a citizen-site server?)");
                }
            }
        }
    };
    let outcome = String::from_utf8_lossy(&buf[..heard]).into_owned();
    let (kind, detail) = outcome.split_once(' ').unwrap_or((&outcome, ""));
    match kind {
        "ready" => {
            println!("upgraded: pid {detail} serves; pid {pid} is draining");
            let deadline = tokio::time::Instant::now() + grace + Duration::from_secs(5);
            while is_running(pid) && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            if is_running(pid) {
                println!("pid {pid} is still draining after {} s", grace.as_secs());
            } else {
                println!("pid {pid} has stopped");
            }
            Ok(())
        }
        "failed" => bail!("the upgrade failed, pid {pid} keeps serving: {detail}"),
        _ => bail!("the upgrade was refused: {detail}"),
    }
}
