//! Runs the browser suite (tests/e2e, node's test runner + playwright-core
//! driving Debian's Chromium) against this build's server binary, so that
//! the test command (`cargo nextest run`) runs every test.
//!
//! Needs Node.js, the npm packages (build.rs installs them) and Chromium at
//! /usr/bin/chromium or $CHROMIUM_PATH.
//!
//! Each file starts its own server and Chromium; one file at a time left
//! the machine about half idle (`/proc/stat` sampled through a `.ci/run`;
//! three lanes keep both cores busy), so its files run in [`LANES`]
//! lanes at once, each lane a `node --test` over its files one after
//! another. The longest files go
//! first, each to the lane with the least work so far ([`lanes`]): node
//! sorts the files it is given by name, so its own `--test-concurrency`
//! ran the longest file (wcag, about 80 s) last. The files in [`ALONE`]
//! run first, alone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How many `node --test` run at once.
const LANES: usize = 3;

/// Files run alone, one after another, before the lanes: their tests judge
/// a timing the lanes' load would change. Chromium's fetch loop through
/// three upgrades over HTTP/3 had one fetch of 5,417 fail ("Failed to
/// fetch") with the three lanes on 2 cores, in a fresh-clone run; alone it
/// has failed none in any run.
const ALONE: &[&str] = &["http3.test.mjs"];

/// Each file's tests' time, in seconds (node's TAP report of the suite
/// run alone, one file at a time, on 2 cores): only what orders the lanes.
/// A file not named here counts [`UNLISTED`]. (http3's is used only when
/// it leaves [`ALONE`]; the lanes' own test weighs with it.)
const WEIGHTS: &[(&str, u32)] = &[
    ("wcag.test.mjs", 81),
    ("first-paint.test.mjs", 76),
    ("http3.test.mjs", 37),
    ("screens.test.mjs", 36),
    ("keyboard.test.mjs", 19),
    ("dev.test.mjs", 14),
    ("navigation.test.mjs", 13),
    ("aria.test.mjs", 11),
    ("checkout.test.mjs", 10),
    ("dev-rebuild.test.mjs", 1),
    ("dates.test.mjs", 1),
    ("lighthouse-device.test.mjs", 1),
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

/// The files `node --test tests/e2e/` runs (node 20's patterns: a name
/// `*.test.*`, `*-test.*`, `*_test.*`, `test-*.*` or `test.*`, in
/// JavaScript, at any depth), so that `npm run test:e2e` and this test run
/// the same files.
fn suite_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("reading tests/e2e") {
            let path = entry.expect("reading tests/e2e").path();
            if path.is_dir() {
                walk(&path, found);
                continue;
            }
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let Some(stem) = [".js", ".cjs", ".mjs"]
                .iter()
                .find_map(|ext| name.strip_suffix(ext))
            else {
                continue;
            };
            if stem == "test"
                || stem.starts_with("test-")
                || [".test", "-test", "_test"]
                    .iter()
                    .any(|s| stem.ends_with(s))
            {
                found.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    files.sort();
    files
}

/// Runs one lane, each line of its report printed as it comes, marked with
/// the lane (a lane that hangs still shows how far it got).
fn run_lane(mark: &str, files: &[PathBuf], root: &Path) -> std::process::ExitStatus {
    use std::io::BufRead;
    use std::process::Stdio;
    let mut child = Command::new(std::env::var("NODE").unwrap_or_else(|_| "node".into()))
        .args(["--test", "--test-reporter=spec", "--test-concurrency=1"])
        .args(files)
        .env("CITIZEN_SITE_BIN", env!("CARGO_BIN_EXE_citizen-site"))
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running node (is Node.js installed?)");
    let out = child.stdout.take().expect("piped");
    let err = child.stderr.take().expect("piped");
    let err_mark = mark.to_owned();
    let errors = std::thread::spawn(move || {
        let mark = err_mark;
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            eprintln!("[{mark}] {line}");
        }
    });
    for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
        println!("[{mark}] {line}");
    }
    errors.join().expect("the lane's stderr reader");
    child.wait().expect("waiting for node")
}

#[test]
fn browser_suite() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = suite_files(&root.join("tests/e2e"));
    assert!(!files.is_empty(), "no test file in tests/e2e");
    let started = Instant::now();
    let is_alone = |f: &PathBuf| {
        f.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| ALONE.contains(&n))
    };
    let (alone, shared): (Vec<PathBuf>, Vec<PathBuf>) = files.into_iter().partition(is_alone);
    let mut failed = Vec::new();
    for file in alone {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        println!("[alone] {name}");
        let began = Instant::now();
        let status = run_lane("alone", std::slice::from_ref(&file), root);
        println!(
            "[alone] {name} ended after {:.1} s: {status}",
            began.elapsed().as_secs_f64()
        );
        if !status.success() {
            failed.push(name);
        }
    }
    let running: Vec<_> = lanes(&shared, LANES)
        .into_iter()
        .enumerate()
        .map(|(i, lane)| {
            let names: Vec<String> = lane
                .iter()
                .map(|f| {
                    f.strip_prefix(root.join("tests/e2e"))
                        .unwrap_or(f)
                        .display()
                        .to_string()
                })
                .collect();
            println!("[lane {}] {}", i + 1, names.join(" "));
            std::thread::spawn(move || {
                let began = Instant::now();
                let status = run_lane(&format!("lane {}", i + 1), &lane, root);
                (names, status, began.elapsed())
            })
        })
        .collect();
    for (i, handle) in running.into_iter().enumerate() {
        let (names, status, took): (Vec<String>, _, Duration) =
            handle.join().expect("a lane's thread");
        println!(
            "[lane {}] {} ended after {:.1} s: {status}",
            i + 1,
            names.join(" "),
            took.as_secs_f64()
        );
        if !status.success() {
            failed.push(names.join(" "));
        }
    }
    println!(
        "the browser suite took {:.1} s ({} alone, then {LANES} lanes)",
        started.elapsed().as_secs_f64(),
        ALONE.join(" ")
    );
    assert!(
        failed.is_empty(),
        "the browser suite failed in {} (its report is above, each line marked with its lane)",
        failed.join("; ")
    );
}

#[test]
fn every_file_of_the_suite_runs_in_exactly_one_lane_the_longest_first() {
    let files: Vec<PathBuf> = [
        "a.test.mjs",
        "wcag.test.mjs",
        "http3.test.mjs",
        "z.test.mjs",
    ]
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

#[test]
fn the_suite_is_the_files_node_would_run_in_tests_e2e() {
    let dir = std::env::temp_dir().join(format!("e2e-files-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for name in [
        "a.test.mjs",
        "b-test.js",
        "test.cjs",
        "helper.mjs",
        "sub/test-c.cjs",
        "sub/d_test.mjs",
        "snapshots/e.test.txt",
    ] {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }
    let found: Vec<String> = suite_files(&dir)
        .iter()
        .map(|f| f.strip_prefix(&dir).unwrap().display().to_string())
        .collect();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        found,
        [
            "a.test.mjs",
            "b-test.js",
            "sub/d_test.mjs",
            "sub/test-c.cjs",
            "test.cjs"
        ]
    );
}
