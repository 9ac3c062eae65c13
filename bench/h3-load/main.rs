//! The bench's own HTTP/3 client (quinn and h3), for what curl and h2load
//! here cannot do over QUIC: `cargo build --release -p h3-load` (a package
//! of its own, so that a release build of it needs none of the site's test
//! hooks; `cargo build` builds it too, and the live systemd test, which
//! runs it, builds it through `tests/support/built.rs`).
//!
//! ```text
//! h3-load get   --connect ADDR --name NAME --ca FILE PATH
//! h3-load load  --connect ADDR --name NAME --ca FILE --clients N --post-every-ms MS --stop-file F --report F
//! h3-load rate  --connect ADDR --name NAME --ca FILE --connections N --seconds S --path PATH
//! h3-load count --connect ADDR --name NAME --ca FILE --connections N --requests R --warmup W --path PATH --encoding E
//! h3-load new   --connect ADDR --name NAME --ca FILE --count N --clients C --path PATH --encoding E
//! h3-load visits --protocol h2|h3 --connect ADDR --name NAME --ca FILE --visits N --path PATH
//! ```
//!
//! `get` prints one answer's status and `alt-svc` (exit 1 unless 200).
//! `load` runs visitors (pages, and a contact form post every MS
//! milliseconds each) until the stop file appears, sending again what a GOAWAY left
//! unprocessed (RFC 9114, 5.2), and writes what it saw as JSON. `rate`
//! asks for PATH as fast as N connections can (one request at a time on
//! each) for S seconds and prints the requests per second as JSON.
//!
//! `count` and `new` are driven by the callgrind windows of
//! `bench/http3.mjs`: each prints `ready`, then on every line read makes
//! its requests and prints `done`. `count` opens N connections (and makes
//! W requests on them) first, then R requests over them per window: a
//! cached hit on an open connection. `new` makes, per window, N new
//! connections (C at a time) with one request each. Every answer must be a
//! 200 in encoding E, or the run stops.
//!
//! `visits` makes N visits one after another, each a new connection with
//! one GET of PATH read to its end, resuming the session of the last
//! (bench/http3.mjs captures their packets). Over `h2` it writes the
//! request in the same write as the TLS Finished, as a browser does, and
//! says whether each handshake was resumed.

#[allow(dead_code)]
#[path = "../../tests/support/h3.rs"]
mod h3;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use h3::{Offers, Outcome, Target, H3};

fn main() {
    let mut args = std::env::args().skip(1);
    let command = args.next().unwrap_or_default();
    let mut flags = HashMap::new();
    let mut rest = Vec::new();
    while let Some(arg) = args.next() {
        match arg.strip_prefix("--") {
            Some(name) => {
                flags.insert(name.to_owned(), args.next().unwrap_or_default());
            }
            None => rest.push(arg),
        }
    }
    let flag = |name: &str| {
        flags
            .get(name)
            .cloned()
            .unwrap_or_else(|| usage(&format!("--{name} is needed")))
    };
    let number = |name: &str| -> u64 {
        flag(name)
            .parse()
            .unwrap_or_else(|_| usage(&format!("--{name}: not a number")))
    };
    let target = Target {
        addr: flag("connect")
            .parse()
            .unwrap_or_else(|_| usage("--connect: not an address and port")),
        name: flag("name"),
        roots: PathBuf::from(flag("ca")),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    match command.as_str() {
        "get" => {
            let path = rest.first().cloned().unwrap_or_else(|| "/".into());
            let answer = runtime.block_on(async {
                let mut h3 = H3::connect_to(&target).await?;
                h3.get(&path, &[]).await
            });
            match answer {
                Ok(a) => {
                    println!(
                        "h3 {} alt-svc={}",
                        a.status,
                        a.header("alt-svc").unwrap_or("")
                    );
                    std::process::exit(if a.status == 200 { 0 } else { 1 });
                }
                Err(e) => {
                    eprintln!("h3-load: {e}");
                    std::process::exit(1);
                }
            }
        }
        "load" => {
            let stop_file = PathBuf::from(flag("stop-file"));
            let stop = Arc::new(AtomicBool::new(false));
            let watch = stop.clone();
            std::thread::spawn(move || {
                while !stop_file.exists() {
                    std::thread::sleep(Duration::from_millis(50));
                }
                watch.store(true, Ordering::Relaxed);
            });
            let clients = number("clients") as usize;
            let post_every = Duration::from_millis(number("post-every-ms"));
            let report = runtime.block_on(h3::load(target, clients, post_every, stop));
            let json = serde_json::json!({
                "answered": report.answered,
                "retried": report.retried,
                "failures": report.failures,
                "posted": report.posted,
            });
            std::fs::write(flag("report"), json.to_string()).unwrap();
        }
        "rate" => {
            let (connections, seconds) = (number("connections"), number("seconds"));
            let path = flag("path");
            let (done, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
            let started = Instant::now();
            let until = started + Duration::from_secs(seconds);
            runtime.block_on(async {
                let mut tasks = Vec::new();
                for _ in 0..connections {
                    let (target, path, done, failed) =
                        (target.clone(), path.clone(), done.clone(), failed.clone());
                    tasks.push(tokio::spawn(async move {
                        let Ok(mut h3) = H3::connect_to(&target).await else {
                            failed.fetch_add(1, Ordering::Relaxed);
                            return;
                        };
                        while Instant::now() < until {
                            match h3.attempt("GET", &path, b"").await {
                                Outcome::Answered(a) if a.status == 200 => {
                                    done.fetch_add(1, Ordering::Relaxed)
                                }
                                _ => failed.fetch_add(1, Ordering::Relaxed),
                            };
                        }
                    }));
                }
                for task in tasks {
                    let _ = task.await;
                }
            });
            let elapsed = started.elapsed().as_secs_f64();
            let requests = done.load(Ordering::Relaxed);
            println!(
                "{}",
                serde_json::json!({
                    "requests": requests,
                    "failed": failed.load(Ordering::Relaxed),
                    "seconds": elapsed,
                    "per_second": requests as f64 / elapsed,
                })
            );
        }
        "count" => {
            let (connections, requests, warmup) =
                (number("connections"), number("requests"), number("warmup"));
            let (path, encoding) = (flag("path"), flag("encoding"));
            runtime.block_on(async {
                let mut open = Vec::new();
                for _ in 0..connections {
                    open.push(H3::connect_to(&target).await.unwrap_or_else(|e| fail(&e)));
                }
                open = spread(open, warmup, &path, &encoding).await;
                let mut lines = stdin_lines();
                println!("ready");
                while lines.next().is_some() {
                    open = spread(open, requests, &path, &encoding).await;
                    println!("done");
                }
            });
        }
        "new" => {
            let (count, clients) = (number("count"), number("clients"));
            let (path, encoding) = (flag("path"), flag("encoding"));
            runtime.block_on(async {
                let endpoint = h3::endpoint(&target.roots);
                let visit = {
                    let (target, path, encoding) = (target.clone(), path.clone(), encoding.clone());
                    move |endpoint: quinn::Endpoint| {
                        let (target, path, encoding) =
                            (target.clone(), path.clone(), encoding.clone());
                        async move {
                            let mut h3 = H3::connect_from(endpoint, &target)
                                .await
                                .unwrap_or_else(|e| fail(&e));
                            check(h3.attempt_with("GET", &path, &encoding).await, &encoding);
                            h3.connection.close(0u32.into(), b"");
                        }
                    }
                };
                let round = |n: u64| {
                    let left = Arc::new(AtomicU64::new(n));
                    let mut tasks = tokio::task::JoinSet::new();
                    for _ in 0..clients {
                        let (left, endpoint, visit) =
                            (left.clone(), endpoint.clone(), visit.clone());
                        tasks.spawn(async move {
                            while left
                                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| {
                                    l.checked_sub(1)
                                })
                                .is_ok()
                            {
                                visit(endpoint.clone()).await;
                            }
                        });
                    }
                    tasks.join_all()
                };
                round(20).await;
                let mut lines = stdin_lines();
                println!("ready");
                while lines.next().is_some() {
                    round(count).await;
                    println!("done");
                }
            });
        }
        "visits" => {
            let visits = number("visits");
            let path = rest.first().cloned().unwrap_or_else(|| flag("path"));
            let resumed = match flag("protocol").as_str() {
                "h2" => h2_visits(&target, visits, &path),
                "h3" => runtime.block_on(async {
                    // One TLS configuration (its session store) for every
                    // visit, each from a port of its own; no path MTU
                    // probes, which would be flights of their own.
                    let store = Arc::new(Offers::default());
                    let mut rustls = h3::client_tls(&target.roots, b"h3");
                    rustls.resumption = rustls::client::Resumption::store(store.clone());
                    let tls = quinn::crypto::rustls::QuicClientConfig::try_from(rustls).unwrap();
                    let mut config = quinn::ClientConfig::new(Arc::new(tls));
                    let mut transport = quinn::TransportConfig::default();
                    transport.mtu_discovery_config(None);
                    config.transport_config(Arc::new(transport));
                    let mut offered = Vec::new();
                    for _ in 0..visits {
                        let before = store.taken.load(Ordering::Relaxed);
                        let mut endpoint =
                            quinn::Endpoint::client("127.0.0.1:0".parse().unwrap()).unwrap();
                        endpoint.set_default_client_config(config.clone());
                        let mut h3 = H3::connect_from(endpoint.clone(), &target)
                            .await
                            .unwrap_or_else(|e| fail(&e));
                        check(h3.attempt_with("GET", &path, "br").await, "br");
                        // The ticket comes after the handshake.
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        h3.connection.close(0u32.into(), b"");
                        endpoint.wait_idle().await;
                        offered.push(store.taken.load(Ordering::Relaxed) > before);
                    }
                    offered
                }),
                _ => usage("--protocol: h2 or h3"),
            };
            println!("{}", serde_json::json!({ "resumed": resumed }));
        }
        _ => usage("a command: get, load, rate, count, new or visits"),
    }
}

/// `n` requests over `connections`, each sending its next once its last
/// is answered; the connections back.
async fn spread(connections: Vec<H3>, n: u64, path: &str, encoding: &str) -> Vec<H3> {
    let left = Arc::new(AtomicU64::new(n));
    let mut tasks = Vec::new();
    for mut h3 in connections {
        let (left, path, encoding) = (left.clone(), path.to_owned(), encoding.to_owned());
        tasks.push(tokio::spawn(async move {
            while left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| l.checked_sub(1))
                .is_ok()
            {
                check(h3.attempt_with("GET", &path, &encoding).await, &encoding);
            }
            h3
        }));
    }
    let mut back = Vec::new();
    for task in tasks {
        back.push(task.await.unwrap());
    }
    back
}

/// Standard input's lines, read on a thread of their own.
fn stdin_lines() -> std::sync::mpsc::IntoIter<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx.into_iter()
}

/// Stops the run unless `outcome` is a 200 in `encoding`.
fn check(outcome: Outcome, encoding: &str) {
    match outcome {
        Outcome::Answered(a)
            if a.status == 200
                && (encoding == "identity" || a.header("content-encoding") == Some(encoding)) => {}
        Outcome::Answered(a) => fail(&format!(
            "answered {} ({:?})",
            a.status,
            a.header("content-encoding")
        )),
        Outcome::NotProcessed(why) | Outcome::Failed(why) => fail(&why),
    }
}

fn fail(why: &str) -> ! {
    eprintln!("h3-load: {why}");
    std::process::exit(1)
}

/// `visits` over HTTP/2: each a new TCP connection and TLS 1.3 handshake
/// (resuming the last session given), then one GET of `path` written in the
/// same write as the client's Finished, read to the end of its answer.
/// Whether each handshake was resumed.
fn h2_visits(target: &Target, visits: u64, path: &str) -> Vec<bool> {
    use std::io::{Read, Write};
    let config = Arc::new(h3::client_tls(&target.roots, b"h2"));
    let mut resumed = Vec::new();
    for _ in 0..visits {
        let name = rustls::pki_types::ServerName::try_from(target.name.clone()).unwrap();
        let mut tls = rustls::ClientConnection::new(config.clone(), name).unwrap();
        let mut tcp =
            std::net::TcpStream::connect(target.addr).unwrap_or_else(|e| fail(&e.to_string()));
        tcp.set_nodelay(true).unwrap();
        while tls.is_handshaking() {
            if tls.wants_write() {
                tls.write_tls(&mut tcp).unwrap();
                continue;
            }
            if tls.read_tls(&mut tcp).unwrap() == 0 {
                fail("the server closed the connection during the handshake");
            }
            tls.process_new_packets()
                .unwrap_or_else(|e| fail(&e.to_string()));
        }
        resumed.push(tls.handshake_kind() == Some(rustls::HandshakeKind::Resumed));
        // The connection preface, empty SETTINGS, and the request's HEADERS
        // (HPACK: GET, https, the path, the authority, br), with the
        // client's Finished, in one write.
        let authority = format!("{}:{}", target.name, target.addr.port());
        let mut block = vec![0x82, 0x87, 0x44, path.len() as u8];
        block.extend_from_slice(path.as_bytes());
        block.extend_from_slice(&[0x41, authority.len() as u8]);
        block.extend_from_slice(authority.as_bytes());
        block.extend_from_slice(&[0x50, 2]);
        block.extend_from_slice(b"br");
        let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        out.extend_from_slice(&[0, 0, 0, 0x4, 0, 0, 0, 0, 0]);
        let len = block.len() as u32;
        out.extend_from_slice(&len.to_be_bytes()[1..]);
        out.extend_from_slice(&[0x1, 0x5, 0, 0, 0, 1]);
        out.extend_from_slice(&block);
        tls.writer().write_all(&out).unwrap();
        while tls.wants_write() {
            tls.write_tls(&mut tcp).unwrap();
        }
        // Frames until stream 1 ends (DATA or HEADERS with END_STREAM).
        let mut plain = Vec::new();
        let mut ended = false;
        while !ended {
            if tls.read_tls(&mut tcp).unwrap() == 0 {
                fail("the server closed the connection before the answer ended");
            }
            tls.process_new_packets()
                .unwrap_or_else(|e| fail(&e.to_string()));
            let mut chunk = [0u8; 65536];
            while let Ok(n) = tls.reader().read(&mut chunk) {
                if n == 0 {
                    break;
                }
                plain.extend_from_slice(&chunk[..n]);
            }
            let mut at = 0;
            while plain.len() >= at + 9 {
                let len = u32::from_be_bytes([0, plain[at], plain[at + 1], plain[at + 2]]) as usize;
                if plain.len() < at + 9 + len {
                    break;
                }
                let (kind, flags) = (plain[at + 3], plain[at + 4]);
                let stream = u32::from_be_bytes([
                    plain[at + 5],
                    plain[at + 6],
                    plain[at + 7],
                    plain[at + 8],
                ]) & 0x7fff_ffff;
                if stream == 1 && (kind == 0x0 || kind == 0x1) && flags & 0x1 != 0 {
                    ended = true;
                }
                at += 9 + len;
            }
            plain.drain(..at);
            while tls.wants_write() {
                tls.write_tls(&mut tcp).unwrap();
            }
        }
        tls.send_close_notify();
        while tls.wants_write() {
            let _ = tls.write_tls(&mut tcp);
        }
        drop(tcp);
        std::thread::sleep(Duration::from_millis(200));
    }
    resumed
}

fn usage(why: &str) -> ! {
    eprintln!(
        "h3-load: {why}\nusage: h3-load get|load|rate --connect ADDR --name NAME --ca FILE ..."
    );
    std::process::exit(2)
}
