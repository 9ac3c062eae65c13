//! Runs the browser suite (tests/e2e, node's test runner + playwright-core
//! driving Debian's Chromium) against this build's server binary, so that
//! the test command (`cargo nextest run`) runs every test.
//!
//! Needs Node.js, the npm packages (build.rs installs them) and Chromium at
//! /usr/bin/chromium or $CHROMIUM_PATH.
//!
//! Each file starts its own server and Chromium, and the suite mostly waits
//! on them (about half a core on average, measured with `time` over the
//! whole suite), so its files run in [`LANES`] lanes at once, each lane a
//! `node --test` over its files one after another. The longest files go
//! first, each to the lane with the least work so far ([`lanes`]): node
//! sorts the files it is given by name, so its own `--test-concurrency`
//! ran the longest file (wcag, about 80 s) last.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// How many `node --test` run at once.
const LANES: usize = 3;

/// Each file's tests' time, in seconds (node's TAP report of the suite
/// run alone, one file at a time, on 2 cores): only what orders the lanes. A file not named here counts
/// [`UNLISTED`].
const WEIGHTS: &[(&str, u32)] = &[
    ("wcag.test.mjs", 81),
    ("http3.test.mjs", 37),
    ("screens.test.mjs", 36),
    ("keyboard.test.mjs", 19),
    ("dev.test.mjs", 14),
    ("navigation.test.mjs", 13),
    ("aria.test.mjs", 11),
    ("checkout.test.mjs", 10),
    ("dev-rebuild.test.mjs", 1),
];
const UNLISTED: u32 = 15;

/// The suite's files in lanes: heaviest first, each to the lightest lane.
fn lanes(files: &[PathBuf], count: usize) -> Vec<Vec<PathBuf>> {
    let weight = |f: &PathBuf| {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        WEIGHTS
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(UNLISTED, |(_, w)| *w)
    };
    let mut ordered = files.to_vec();
    ordered.sort_by(|a, b| weight(b).cmp(&weight(a)).then(a.cmp(b)));
    let mut lanes = vec![(0u32, Vec::new()); count];
    for file in ordered {
        let lightest = lanes
            .iter_mut()
            .min_by_key(|(load, _)| *load)
            .expect("at least one lane");
        lightest.0 += weight(&file);
        lightest.1.push(file);
    }
    lanes
        .into_iter()
        .map(|(_, files)| files)
        .filter(|f| !f.is_empty())
        .collect()
}

fn suite_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("reading tests/e2e")
        .map(|e| e.expect("reading tests/e2e").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".test.mjs"))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn browser_suite() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = suite_files(&root.join("tests/e2e"));
    assert!(!files.is_empty(), "no test file in tests/e2e");
    let started = Instant::now();
    let running: Vec<(Vec<PathBuf>, std::thread::JoinHandle<(Output, Duration)>)> =
        lanes(&files, LANES)
            .into_iter()
            .map(|lane| {
                let mut command =
                    Command::new(std::env::var("NODE").unwrap_or_else(|_| "node".into()));
                command
                    .args(["--test", "--test-reporter=spec", "--test-concurrency=1"])
                    .args(&lane)
                    .env("CITIZEN_SITE_BIN", env!("CARGO_BIN_EXE_citizen-site"))
                    .current_dir(root);
                let handle = std::thread::spawn(move || {
                    let began = Instant::now();
                    let output = command
                        .output()
                        .expect("running node (is Node.js installed?)");
                    (output, began.elapsed())
                });
                (lane, handle)
            })
            .collect();
    let mut failed = Vec::new();
    for (lane, handle) in running {
        let (output, took) = handle.join().expect("a lane's thread");
        let names: Vec<String> = lane
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        // One lane's report after another, whole, rather than interleaved.
        println!(
            "=== {} ({:.1} s, {})",
            names.join(" "),
            took.as_secs_f64(),
            output.status
        );
        print!("{}", String::from_utf8_lossy(&output.stdout));
        eprint!("{}", String::from_utf8_lossy(&output.stderr));
        if !output.status.success() {
            failed.push(names.join(" "));
        }
    }
    println!(
        "the browser suite took {:.1} s in {LANES} lanes",
        started.elapsed().as_secs_f64()
    );
    assert!(
        failed.is_empty(),
        "the browser suite failed in {} (its report is above)",
        failed.join("; ")
    );
}

#[test]
fn every_file_of_the_suite_runs_in_exactly_one_lane_the_longest_first() {
    let files: Vec<PathBuf> = ["a.test.mjs", "wcag.test.mjs", "http3.test.mjs", "z.test.mjs"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let lanes = lanes(&files, 3);
    let mut all: Vec<&PathBuf> = lanes.iter().flatten().collect();
    all.sort();
    let mut given: Vec<&PathBuf> = files.iter().collect();
    given.sort();
    assert_eq!(all, given);
    // wcag (81) alone in its lane; http3 (37) in the next; the two unlisted
    // (15 each) together in the third: 81, 37, 30.
    assert_eq!(lanes[0], vec![PathBuf::from("wcag.test.mjs")]);
    assert_eq!(lanes[1], vec![PathBuf::from("http3.test.mjs")]);
    assert_eq!(
        lanes[2],
        vec![PathBuf::from("a.test.mjs"), PathBuf::from("z.test.mjs")]
    );
}
