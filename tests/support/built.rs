//! The binaries the tests run that `cargo test` does not build for them.
//! Cargo builds this package's own binary for its integration tests
//! (`CARGO_BIN_EXE_citizen-site`) and nothing else: not the binary of
//! another package of the workspace (the bench's HTTP/3 client,
//! `bench/h3-load/`). Each is built here, by the test that runs it,
//! with the test's own profile and target directory, once per test
//! process; a build that finds nothing to do takes a second.
//!
//! `built-by-tests.txt` beside this file lists them: a build of a name it
//! does not list is refused, and `.ci/run` deletes every listed one from
//! its target directory before `cargo test`, so that a binary kept from an
//! earlier manual build cannot hide a missing build step.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// The list `.ci/run` reads too.
const LIST: &str = include_str!("built-by-tests.txt");

/// The names `built-by-tests.txt` lists (a `#` starts a comment), read as
/// `.ci/run` reads them.
pub fn listed() -> Vec<&'static str> {
    LIST.lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Where this test binary's cargo put it, and so where a build for it goes.
struct Place {
    /// The folder above the profile's: the target directory
    /// (`CARGO_TARGET_DIR`, or the checkout's `target/`).
    target_dir: PathBuf,
    /// The profile's folder, where cargo puts a package's binaries.
    profile_dir: PathBuf,
    /// The profile's name, for `--profile`.
    profile: String,
}

/// From this test binary's own path, `<target>/<profile>/deps/<test>-<hash>`.
/// Under `cargo test --target TRIPLE` the folder above the profile's is
/// `<target>/TRIPLE`: a build made here then goes there for the host, at
/// the path the test looks in (nothing tells that folder from a target
/// directory reliably: cargo tags both, or neither when they existed).
fn place() -> Place {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.ancestors().nth(2).unwrap().to_path_buf();
    let profile = match profile_dir.file_name().unwrap().to_str().unwrap() {
        "debug" => "dev".to_owned(),
        other => other.to_owned(),
    };
    Place {
        target_dir: profile_dir.parent().unwrap().to_path_buf(),
        profile_dir,
        profile,
    }
}

/// Cargo: the one running the tests (`$CARGO`), else the one on the PATH
/// (the test's executable run by hand).
pub fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// The target directory this test binary was built in.
pub fn target_dir() -> PathBuf {
    place().target_dir
}

/// The names built so far by this process.
static BUILT: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// `cargo build <args>` in `dir`, with this test binary's profile and
/// target directory, once per process; the path of the binary `name` it
/// makes. Tests of one process that ask at once wait for the one build.
pub fn build(name: &str, dir: &Path, args: &[&str]) -> PathBuf {
    assert!(
        listed().contains(&name),
        "{name} is built by a test but not listed in tests/support/built-by-tests.txt \
         (.ci/run deletes the listed ones before `cargo test`)"
    );
    let place = place();
    let bin = place.profile_dir.join(name);
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if built.contains(name) {
        return bin;
    }
    let out = cargo()
        .arg("build")
        .args(["--profile", &place.profile])
        .args(args)
        .env("CARGO_TARGET_DIR", &place.target_dir)
        .current_dir(dir)
        .stdout(Stdio::null())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo build {} (in {}) failed:\n{}",
        args.join(" "),
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        bin.is_file(),
        "cargo build {} made no {}",
        args.join(" "),
        bin.display()
    );
    built.insert(name.to_owned());
    bin
}

/// The bench's HTTP/3 client (`bench/h3-load/`, a package of the workspace).
///
/// Built from the workspace's default members, as `cargo test` builds, and
/// with `--examples` (there are none) so that dev-dependencies count: their
/// features (tokio's `test-util`, say) are then unified as in the tests'
/// own build, which already compiled every crate the binary needs. With
/// `-p h3-load` alone cargo would compile its 30-odd crates again with
/// other features (22 s against 3 s, measured here).
pub fn h3_load() -> PathBuf {
    build(
        "h3-load",
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &["--bin", "h3-load", "--examples"],
    )
}
