//! Runs the browser suite (tests/e2e, node's test runner + playwright-core
//! driving Debian's Chromium) against this build's server binary, so that
//! the test command (`cargo nextest run`) runs every test.
//!
//! Needs Node.js, the npm packages (build.rs installs them) and Chromium at
//! /usr/bin/chromium or $CHROMIUM_PATH.

use std::process::Command;

#[test]
fn browser_suite() {
    let status = Command::new(std::env::var("NODE").unwrap_or_else(|_| "node".into()))
        .args([
            "--test",
            "--test-reporter=spec",
            "--test-concurrency=1",
            "tests/e2e/",
        ])
        .env("CITIZEN_SITE_BIN", env!("CARGO_BIN_EXE_citizen-site"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("running node (is Node.js installed?)");
    assert!(
        status.success(),
        "the browser suite failed (its report is above)"
    );
}
