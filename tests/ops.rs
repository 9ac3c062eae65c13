//! The operations commands (tests/ops/*.mjs), run at a short, bounded length
//! against this build's server binary so that `cargo test` covers them:
//! the HTTP Observatory grade, the soak, the replica proof, the shared
//! cache in front of two replicas, and slow clients on the HTTPS port. Each
//! loads the whole machine: under nextest each runs alone
//! (.config/nextest.toml); under plain `cargo test` (one process) they take
//! turns. Each prints its report table.
//!
//! Needs nginx, wrk, openssl, slowhttptest and psql (Debian packages; a missing one fails
//! the command with the package to install, .ci/run installs them), the
//! Observatory scanner (`npm install --prefix tests/ops/observatory
//! --ignore-scripts`) and PostgreSQL at TEST_POSTGRES_URL.

use std::process::Command;
use std::sync::Mutex;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn run(script: &str, env: &[(&str, &str)]) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let status = Command::new(std::env::var("NODE").unwrap_or_else(|_| "node".into()))
        .arg(script)
        .env("CITIZEN_SITE_BIN", env!("CARGO_BIN_EXE_citizen-site"))
        .envs(env.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("running node (is Node.js installed?)");
    assert!(status.success(), "{script} failed (its report is above)");
}

#[test]
fn observatory_grades_the_deployed_site_a_plus() {
    run("tests/ops/observatory.mjs", &[]);
}

#[test]
fn soak_has_no_errors_and_no_memory_growth() {
    run(
        "tests/ops/soak.mjs",
        &[("SOAK_DURATION", "30s"), ("SOAK_WARMUP", "10s")],
    );
}

#[test]
fn replicas_lose_and_duplicate_nothing_when_one_is_killed() {
    run("tests/ops/replicas.mjs", &[("REPLICAS_DURATION", "30s")]);
}

#[test]
fn visitors_are_served_while_slow_clients_hold_the_https_port() {
    run("tests/ops/slow-clients.mjs", &[("SLOW_DURATION", "12")]);
}

#[test]
fn nginx_in_front_of_two_replicas_serves_warm_pages_without_them() {
    run("tests/ops/proxy-cache.mjs", &[("PROXY_REQUESTS", "3000")]);
}
