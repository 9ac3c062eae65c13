//! Publishing a new binary drops no visitor. Under a steady load over TLS
//! (`bench/swap-load.mjs`: keep-alive HTTP/1.1, HTTP/2 with several
//! streams, a new connection per request, contact-form posts), the server
//! process is swapped, each way at least five times:
//!
//! - `citizen-site upgrade` to a different build (the site with a page
//!   added, `support/new_page_build.rs`) and back: the running server
//!   starts the binary now at its path with its sockets, and drains once
//!   the new one is ready;
//! - SIGTERM with a fresh start on sockets held open meanwhile (as systemd
//!   holds them for a restart; the restart itself under a live systemd is
//!   `tests/live_systemd.rs`). They are the TCP ones alone, as units older
//!   than `citizen-site-quic.socket` pass them: nothing advertises HTTP/3.
//!
//! No request may fail (refused, reset, an error, a body cut short or not
//! byte-identical to a version of its page), every acknowledged intro
//! request is stored exactly once, and one certificate serial is seen
//! throughout. An upgrade to a binary that exits at once leaves the old
//! server serving. The worst latency during a swap is printed beside the
//! steady one.
//!
//! Needs Node.js, curl and openssl (.ci/run installs them).

use crate::support;
use crate::support::new_page_build;

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use citizen_site::app::handover::ToPass;
use support::{certificates, curl, free_port, needs, stdout_of, wait, Dir};

const BIN: &str = env!("CARGO_BIN_EXE_citizen-site");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const SWAPS: usize = 6;

/// Puts `binary` at `path` as an operator publishes one: a new file
/// renamed over the old (the running process keeps its own).
fn install(binary: &Path, path: &Path) {
    let part = path.with_extension("new");
    std::fs::copy(binary, &part).unwrap();
    std::fs::rename(&part, path).unwrap();
}

/// Processes to stop when the test ends, however it ends: the servers the
/// test started and those the upgrades started (not its children).
#[derive(Default)]
struct Servers(Vec<u32>);

impl Drop for Servers {
    fn drop(&mut self) {
        for pid in &self.0 {
            signal(*pid, libc::SIGKILL);
        }
    }
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) with a process id and a signal number.
    unsafe { libc::kill(pid as i32, sig) };
}

fn running(pid: u32) -> bool {
    citizen_site::app::handover::is_running(pid)
}

/// The environment every server of a run shares: one database, one
/// certificate, no rate limit on the form (the load posts often).
fn server_env(cmd: &mut Command, dir: &Path) {
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("TLS_CERT", dir.join("cert.pem"))
        .env("TLS_KEY", dir.join("key.pem"))
        .env(
            "DATABASE_URL",
            format!("sqlite://{}/site.db", dir.display()),
        )
        .env("RATE_LIMIT_PER_MINUTE", "0")
        .env("SSR_WORKERS", "2")
        .env("LOG_FORMAT", "json")
        .stdin(Stdio::null());
}

fn log_to(cmd: &mut Command, file: &Path) {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .unwrap();
    cmd.stdout(log.try_clone().unwrap()).stderr(log);
}

fn ready(port: u16, ca: &Path) -> bool {
    status_of(port, ca, "/readyz") == "200"
}

fn status_of(port: u16, ca: &Path, path: &str) -> String {
    curl(&[
        "--cacert",
        ca.to_str().unwrap(),
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("https://localhost:{port}{path}"),
    ])
}

/// `binary` serving on sockets of its own until its pages are ready; the
/// hash of every page's body, for the load to check bodies against.
fn snapshot(binary: &Path, dir: &Path, name: &str) -> PathBuf {
    let data = dir.join(format!("snapshot-{name}"));
    std::fs::create_dir_all(&data).unwrap();
    for f in ["cert.pem", "key.pem"] {
        std::fs::copy(dir.join(f), data.join(f)).unwrap();
    }
    let sockets = HeldSockets::new();
    let https = sockets.port();
    let log = data.join("server.log");
    let mut child = sockets.serve(binary, &data, &log);
    let ca = dir.join("ca.pem");
    // Stops early when the server has stopped (then it is not ready).
    let answered = wait(90, || {
        child.0.try_wait().unwrap().is_some() || ready(https, &ca)
    });
    assert!(
        answered && child.0.try_wait().unwrap().is_none(),
        "{name} is not ready: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    let hashes = stdout_of(
        Command::new("node")
            .arg(Path::new(ROOT).join("bench/swap-load.mjs"))
            .args(["snapshot", "--url", &format!("https://localhost:{https}")])
            .arg("--ca")
            .arg(&ca),
    );
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, hashes).unwrap();
    signal(child.0.id(), libc::SIGTERM);
    let _ = child.0.wait();
    file
}

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The load generator, running until [`Load::stop`].
struct Load {
    child: KillOnDrop,
    stdin: ChildStdin,
}

impl Load {
    fn start(port: u16, dir: &Path, expect: &[&Path]) -> Load {
        needs("node", "nodejs");
        let expect: Vec<String> = expect.iter().map(|p| p.display().to_string()).collect();
        let mut child = Command::new("node")
            .arg(Path::new(ROOT).join("bench/swap-load.mjs"))
            .args(["load", "--url", &format!("https://localhost:{port}")])
            .arg("--ca")
            .arg(dir.join("ca.pem"))
            .args(["--expect", &expect.join(",")])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        Load {
            child: KillOnDrop(child),
            stdin,
        }
    }

    fn mark(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn stop(mut self) -> serde_json::Value {
        self.mark("stop");
        let mut out = String::new();
        BufReader::new(self.child.0.stdout.take().unwrap())
            .read_line(&mut out)
            .unwrap();
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    }
}

/// Checks what the load saw and prints the latencies.
fn judge(way: &str, report: &serde_json::Value, dir: &Path) {
    println!(
        "{way}: {} requests ({}), retried {}, latency steady {} / during swaps {} (ms)",
        report["requests"],
        report["byClient"],
        report["retried"],
        report["latencyMs"]["steady"],
        report["latencyMs"]["duringSwaps"]
    );
    assert_eq!(
        report["failed"], 0,
        "{way}: requests failed: {:#}",
        report["failures"]
    );
    assert_eq!(report["swaps"], SWAPS, "{way}");
    for client in ["http1-keepalive", "http2", "new-connection", "intro"] {
        assert!(
            report["byClient"][client].as_u64().unwrap_or(0) >= 10,
            "{way}: {client} made too few requests to count: {}",
            report["byClient"]
        );
    }
    let serials = report["serials"].as_array().unwrap();
    assert_eq!(
        serials.len(),
        1,
        "{way}: one certificate throughout: {serials:?}"
    );
    // Every acknowledged intro request is stored, once.
    let listed = stdout_of(Command::new(BIN).args(["intro", "list", "--json"]).env(
        "DATABASE_URL",
        format!("sqlite://{}/site.db", dir.display()),
    ));
    let stored: serde_json::Value = serde_json::from_slice(&listed).unwrap();
    let names: Vec<&str> = stored
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    for name in report["intros"].as_array().unwrap() {
        let name = name.as_str().unwrap();
        let copies = names.iter().filter(|n| **n == name).count();
        assert_eq!(
            copies, 1,
            "{way}: {name} acknowledged, stored {copies} times"
        );
    }
    // The worst a visitor waited during a swap, against the steady load.
    let worst = report["latencyMs"]["duringSwaps"]["max"]
        .as_f64()
        .unwrap_or(0.0);
    let steady = report["latencyMs"]["steady"]["max"].as_f64().unwrap_or(0.0);
    println!("{way}: worst latency during a swap {worst:.1} ms (steady worst {steady:.1} ms): {:.1} ms added", (worst - steady).max(0.0));
}

#[test]
fn upgrades_to_another_build_and_back_under_load_lose_nothing() {
    needs("node", "nodejs");
    let variant = new_page_build::build();
    let dir = Dir::new("swaps-upgrade");
    certificates(&dir.0, "localhost");
    let ca = dir.0.join("ca.pem");
    let (a, b) = (PathBuf::from(BIN), variant.bin.clone());
    let expect = [snapshot(&a, &dir.0, "a"), snapshot(&b, &dir.0, "b")];

    let bin = dir.0.join("bin/citizen-site");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    install(&a, &bin);
    let (https, http) = (free_port(), free_port());
    let log = dir.0.join("server.log");
    let mut cmd = Command::new(&bin);
    cmd.arg("serve");
    server_env(&mut cmd, &dir.0);
    cmd.env("HTTPS_ADDR", format!("127.0.0.1:{https}"))
        .env("HTTP_ADDR", format!("127.0.0.1:{http}"))
        .env("SITE_URL", "https://localhost");
    log_to(&mut cmd, &log);
    let mut first = cmd.spawn().unwrap();
    let mut servers = Servers(vec![first.id()]);
    let server_log = || std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        wait(90, || ready(https, &ca)),
        "not ready: {}",
        server_log()
    );

    let mut load = Load::start(https, &dir.0, &[&expect[0], &expect[1]]);
    std::thread::sleep(Duration::from_secs(2));
    let upgrade = || Command::new(&bin).arg("upgrade").output().unwrap();
    for swap in 0..SWAPS {
        let to_b = swap % 2 == 0;
        install(if to_b { &b } else { &a }, &bin);
        load.mark("swap");
        let out = upgrade();
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "upgrade {swap}: {said}{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            server_log()
        );
        // "upgraded: pid N serves; ..."
        let new_pid: u32 = said
            .split("upgraded: pid ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("{said}"));
        servers.0.push(new_pid);
        load.mark("settled");
        // The new build serves: the page only it has.
        let events = status_of(https, &ca, "/events");
        assert_eq!(
            events,
            if to_b { "200" } else { "404" },
            "after upgrade {swap}"
        );
        std::thread::sleep(Duration::from_millis(1500));
    }
    // A binary that exits at once: the upgrade fails, the server serves on.
    let serving = *servers.0.last().unwrap();
    let broken = dir.0.join("broken");
    std::fs::write(
        &broken,
        "#!/bin/sh\necho 'this build is broken' >&2\nexit 3\n",
    )
    .unwrap();
    std::fs::set_permissions(&broken, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    install(&broken, &bin);
    let out = Command::new(&a)
        .arg("upgrade")
        .arg("--pid")
        .arg(serving.to_string())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "an upgrade to a broken binary says so"
    );
    assert!(
        said.contains("keeps serving") && said.contains("exit status: 3"),
        "{said}"
    );
    std::thread::sleep(Duration::from_secs(1));
    assert!(running(serving), "the old server still runs");
    assert_eq!(status_of(https, &ca, "/"), "200");
    let report = load.stop();
    judge("citizen-site upgrade", &report, &dir.0);

    signal(serving, libc::SIGTERM);
    assert!(
        wait(30, || !running(serving)),
        "the last server stops on SIGTERM"
    );
    assert!(
        servers.0.iter().all(|pid| !running(*pid)),
        "no server is left running"
    );
    let _ = first.wait();
    let errors: Vec<String> = errors(&server_log())
        .into_iter()
        .filter(|l| !l.contains("upgrade failed"))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// The HTTPS and HTTP ports held open by the test, as systemd holds a
/// socket unit's: listening on free ports of 127.0.0.1 with a deep queue
/// (connections that arrive while no server accepts wait in it). Binding
/// them here also leaves no moment in which another test could take a port
/// chosen for the server.
struct HeldSockets {
    https: std::net::TcpListener,
    _http: std::net::TcpListener,
    passed: ToPass,
}

impl HeldSockets {
    fn new() -> HeldSockets {
        let held = || {
            let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            // SAFETY: listen(2) again on a listening socket sets its queue's length.
            assert_eq!(unsafe { libc::listen(socket.as_raw_fd(), 4096) }, 0);
            socket
        };
        let (https, http) = (held(), held());
        let passed = ToPass::copies([https.as_raw_fd(), http.as_raw_fd()]).unwrap();
        HeldSockets {
            https,
            _http: http,
            passed,
        }
    }

    fn port(&self) -> u16 {
        self.https.local_addr().unwrap().port()
    }

    /// `binary serve` on these sockets (systemd's protocol: LISTEN_PID
    /// must be the server's own pid, known only once it runs; the shell
    /// sets it and becomes the server), with `dir`'s environment and
    /// logging to `log`.
    fn serve(&self, binary: &Path, dir: &Path, log: &Path) -> KillOnDrop {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(r#"LISTEN_PID=$$ exec "$0" serve"#)
            .arg(binary);
        server_env(&mut cmd, dir);
        cmd.env("LISTEN_FDS", "2")
            .env("LISTEN_FDNAMES", "https:http")
            .env("SITE_URL", "https://localhost");
        log_to(&mut cmd, log);
        // SAFETY: the step only calls dup2, async-signal-safe.
        unsafe {
            cmd.pre_exec(self.passed.placing());
        }
        KillOnDrop(cmd.spawn().unwrap())
    }
}

#[test]
fn sigterm_and_a_fresh_start_on_held_sockets_under_load_lose_nothing() {
    needs("node", "nodejs");
    let dir = Dir::new("swaps-held");
    certificates(&dir.0, "localhost");
    let ca = dir.0.join("ca.pem");
    let expect = snapshot(Path::new(BIN), &dir.0, "a");
    // Held by the test for the whole run, as systemd holds a socket unit's.
    let sockets = HeldSockets::new();
    let port = sockets.port();
    let log = dir.0.join("server.log");
    let start = || sockets.serve(Path::new(BIN), &dir.0, &log);
    let server_log = || std::fs::read_to_string(&log).unwrap_or_default();
    let mut current = start();
    assert!(wait(90, || ready(port, &ca)), "not ready: {}", server_log());
    // Sockets as units older than citizen-site-quic.socket pass them: no
    // UDP socket, so HTTP/3 is neither served nor advertised, and the log
    // says why.
    let head = curl(&[
        "--cacert",
        ca.to_str().unwrap(),
        "-o",
        "/dev/null",
        "-D",
        "-",
        &format!("https://localhost:{port}/"),
    ]);
    assert!(
        head.starts_with("HTTP/") && !head.to_ascii_lowercase().contains("alt-svc"),
        "{head}"
    );
    assert!(
        server_log()
            .contains("HTTP/3 is not served: the HTTPS socket was passed in without a UDP one"),
        "{}",
        server_log()
    );
    let mut load = Load::start(port, &dir.0, &[&expect]);
    std::thread::sleep(Duration::from_secs(2));
    for swap in 0..SWAPS {
        load.mark("swap");
        signal(current.0.id(), libc::SIGTERM);
        let old = std::mem::replace(&mut current, start());
        // The old one drains and exits; the new one is ready on the same sockets.
        let mut old = old;
        assert!(
            wait(30, || old.0.try_wait().unwrap().is_some()),
            "swap {swap}: the old server did not stop"
        );
        assert!(
            old.0.wait().unwrap().success(),
            "swap {swap}: the old server's exit"
        );
        assert!(
            wait(90, || ready(port, &ca)),
            "swap {swap}: {}",
            server_log()
        );
        load.mark("settled");
        std::thread::sleep(Duration::from_millis(1500));
    }
    let report = load.stop();
    judge("SIGTERM and a fresh start", &report, &dir.0);
    signal(current.0.id(), libc::SIGTERM);
    assert!(wait(30, || current.0.try_wait().unwrap().is_some()));
    let errors = errors(&server_log());
    assert!(errors.is_empty(), "{errors:#?}");
}

/// The lines the servers logged as errors.
fn errors(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.contains("\"level\":\"ERROR\""))
        .map(String::from)
        .collect()
}
