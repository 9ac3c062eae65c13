//! The bench's own HTTP/3 client (quinn and h3), for what curl and h2load
//! here cannot do over QUIC: `cargo build --release --example h3-load`.
//!
//! ```text
//! h3-load get   --connect ADDR --name NAME --ca FILE PATH
//! h3-load load  --connect ADDR --name NAME --ca FILE --clients N --post-every-ms MS --stop-file F --report F
//! h3-load rate  --connect ADDR --name NAME --ca FILE --connections N --seconds S --path PATH
//! ```
//!
//! `get` prints one answer's status and `alt-svc` (exit 1 unless 200).
//! `load` runs visitors (pages, and a contact form post every MS
//! milliseconds each) until the stop file appears, sending again what a GOAWAY left
//! unprocessed (RFC 9114, 5.2), and writes what it saw as JSON. `rate`
//! asks for PATH as fast as N connections can (one request at a time on
//! each) for S seconds and prints the requests per second as JSON.

#[allow(dead_code)]
#[path = "../tests/support/h3.rs"]
mod h3;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use h3::{Outcome, Target, H3};

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
        _ => usage("a command: get, load or rate"),
    }
}

fn usage(why: &str) -> ! {
    eprintln!(
        "h3-load: {why}\nusage: h3-load get|load|rate --connect ADDR --name NAME --ca FILE ..."
    );
    std::process::exit(2)
}
