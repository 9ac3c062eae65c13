//! The platforms' own validator (npm structured-data-testing-tool, presets
//! Google, Twitter and Facebook) over every public route and every post,
//! served by this build's server: tests/seo/validate.mjs prints its table
//! and fails on any failed test. The SSR checks of the same markup, stricter
//! than the tool's, are in tests/api/seo.rs.

use std::process::Command;

#[test]
fn every_page_passes_the_google_twitter_and_facebook_checks() {
    let status = Command::new(std::env::var("NODE").unwrap_or_else(|_| "node".into()))
        .arg("tests/seo/validate.mjs")
        .env("CITIZEN_SITE_BIN", env!("CARGO_BIN_EXE_citizen-site"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("running node (is Node.js installed?)");
    assert!(
        status.success(),
        "structured data checks failed (the list is above)"
    );
}
