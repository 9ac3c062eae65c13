//! The guides' measured tables (benchmarks and the cache hit's profile in
//! docs/performance.md, Lighthouse in docs/search-engines.md) are what
//! their committed JSON output says, and the recorded
//! benchmark run met every target: `node bench/report.mjs --check`.

use std::process::Command;

#[test]
fn readme_tables_match_the_measurements_they_are_written_from() {
    let status = Command::new(std::env::var("NODE").unwrap_or_else(|_| "node".into()))
        .args(["bench/report.mjs", "--check"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("running node (is Node.js installed?)");
    assert!(
        status.success(),
        "docs/performance.md or docs/search-engines.md differs from bench/results.json, bench/profile.json or tests/lighthouse/results.json, or the recorded run missed a target"
    );
}
