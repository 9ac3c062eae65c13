//! `citizen-site upgrade`: asks the running server to hand its sockets to
//! the binary now at the path it was started from (SIGUSR2; see
//! `app::handover`), and says how it went. With `--apply-env`, the new
//! binary starts with this command's environment (under systemd, the
//! unit's environment file as it is now), once `check` finds no problem
//! in it.

use std::time::Duration;

use anyhow::{bail, Context};

use crate::app::handover::{
    env_offer_name, is_running, report_name, servers_started_from, SUCCESSOR_TIMEOUT,
};
use crate::config::ServeArgs;

/// Signals the server (`pid`, or the one process started from this
/// binary's path) and waits for it to say how it went: done when its
/// successor is ready (then until the old one has drained, at most
/// `grace`); an error when the successor failed (the old one keeps
/// serving) or the server refused (under systemd).
pub async fn run(pid: Option<u32>, grace: Duration, apply_env: bool) -> anyhow::Result<()> {
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
    // The environment to start the new binary with, checked as `serve`
    // would (but the addresses: the server passes its sockets), and
    // offered to the server before it is signalled.
    let offer = match apply_env {
        false => None,
        true => Some(offer_environment(pid).await?),
    };
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
    let mut deadline = tokio::time::Instant::now() + SUCCESSOR_TIMEOUT + Duration::from_secs(15);
    let mut taken = false;
    // One future for the whole wait: a write is never dropped half done.
    let giving = give(offer.as_ref(), pid);
    tokio::pin!(giving);
    let heard = loop {
        tokio::select! {
            heard = inbox.recv(&mut buf) => {
                let heard = heard?;
                let said = String::from_utf8_lossy(&buf[..heard]).into_owned();
                let Some(waiting) = said.strip_prefix("waiting ") else { break heard };
                let (old, secs) = waiting.split_once(' ').unwrap_or((waiting, "0"));
                let secs: u64 = secs.parse().unwrap_or(0);
                println!("pid {pid} waits for pid {old}, the binary before it, to finish its drain (up to {secs} s): its HTTP/3 connections live in that process");
                deadline += Duration::from_secs(secs);
            }
            given = &mut giving, if !taken => {
                given?;
                taken = true;
            }
            () = tokio::time::sleep(Duration::from_millis(200)) => {
                if !is_running(pid) {
                    bail!("pid {pid} stopped before the upgrade was done (a SIGTERM?): a new binary it had started, if any, was stopped with it");
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
            if offer.is_some() && !taken {
                println!("note: pid {pid} did not take this environment (a server older than --apply-env): pid {detail} runs with pid {pid}'s; a restart applies it");
            }
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

/// The environment of this command, checked, and the socket on which it is
/// offered to server `pid`.
async fn offer_environment(pid: u32) -> anyhow::Result<tokio::net::UnixListener> {
    use std::os::linux::net::SocketAddrExt;
    let args = ServeArgs::from_environment().map_err(|e| anyhow::anyhow!("{e}"))?;
    let report = super::check::examine(args, super::check::Bind::Skip).await;
    if !report.problems.is_empty() {
        for p in &report.problems {
            eprintln!("error: {p}");
        }
        bail!(
            "the environment has {} problem(s): pid {pid} keeps serving with its own",
            report.problems.len()
        );
    }
    let name = std::os::unix::net::SocketAddr::from_abstract_name(env_offer_name(pid))?;
    let listener = std::os::unix::net::UnixListener::bind_addr(&name)
        .context("another `citizen-site upgrade --apply-env` of this server is running")?;
    listener.set_nonblocking(true)?;
    Ok(tokio::net::UnixListener::from_std(listener)?)
}

/// Gives this command's environment to the server `pid` when it connects
/// (a connection from any other process is dropped).
async fn give(offer: Option<&tokio::net::UnixListener>, pid: u32) -> anyhow::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use tokio::io::AsyncWriteExt;
    let Some(listener) = offer else {
        return std::future::pending().await;
    };
    loop {
        let (mut stream, _) = listener.accept().await?;
        if stream.peer_cred()?.pid() != Some(pid as i32) {
            continue;
        }
        let mut bytes = Vec::new();
        for (name, value) in std::env::vars_os() {
            bytes.extend_from_slice(name.as_bytes());
            bytes.push(b'=');
            bytes.extend_from_slice(value.as_bytes());
            bytes.push(0);
        }
        // Its length first, so the server knows it has all of it.
        stream
            .write_all(&(bytes.len() as u64).to_be_bytes())
            .await?;
        stream.write_all(&bytes).await?;
        stream.shutdown().await?;
        return Ok(());
    }
}
