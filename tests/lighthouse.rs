//! Lighthouse over every route (tests/lighthouse/run.mjs) against this
//! build's server: Accessibility, Best Practices and SEO must be 100,
//! and so must Performance (the median of five runs where the first is
//! below), and no request may block a page's first paint. The phone is
//! the same on every host: the CPU slowdown is calibrated to this one
//! (tests/lighthouse/device.mjs).

use std::process::Command;

#[test]
fn lighthouse_scores() {
    let status = Command::new(std::env::var("NODE").unwrap_or_else(|_| "node".into()))
        .arg("tests/lighthouse/run.mjs")
        .env("CITIZEN_SITE_BIN", env!("CARGO_BIN_EXE_citizen-site"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("running node (is Node.js installed?)");
    assert!(
        status.success(),
        "Lighthouse scores below target (table above)"
    );
}
