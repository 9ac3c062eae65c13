//! `package-lock.json` is what npm itself makes of `package.json`: npm 10
//! (Node.js 20's and 22's own, the builder image's) and npm 11 each leave
//! it byte for byte as committed, so `npm ci` (build.rs, `.ci/run`, the
//! image's builder) installs it as it is and a maintainer's `npm install`
//! in a fresh clone changes no file.
//!
//! The two majors write the lock differently where they can: npm 11
//! records a platform package's `libc`, npm 10 drops it, and npm 11 keeps
//! a lock without it. So the lock is committed without `libc`. And a
//! machine's `omit-lockfile-registry-resolved` (set on these machines, off
//! by default) must not matter: the lock carries no `resolved`, and no
//! dependency is left to a moving dist-tag (lighthouse's trace engine asks
//! for `latest` of two packages; package.json's `overrides` pins them at
//! their locked versions), since npm resolves a tag again on every install.
//!
//! Needs npm and the npm registry (npm 10 through `npx -y npm@10`; `.ci/run`
//! fetches it in its install phase).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support;

use support::{needs, Dir};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Runs an npm (`npm` or `npx -y npm@N`) with `args` in `dir`; panics with
/// its output unless it succeeds. Returns its stdout.
fn npm(which: &[&str], args: &[&str], dir: &Path) -> String {
    let out = Command::new(which[0])
        .args(&which[1..])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{which:?}: {e}"));
    assert!(
        out.status.success(),
        "{} {} failed ({}):\n{}{}",
        which.join(" "),
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What changed between two locks, entry by entry (`node_modules/x: libc
/// dropped`), at most `max` lines, then how many more.
fn changed_entries(before: &str, after: &str, max: usize) -> String {
    let parse = |text: &str| serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
    let (before, after) = (parse(before), parse(after));
    let empty = serde_json::Map::new();
    let packages = |lock: &Value| lock["packages"].as_object().unwrap_or(&empty).clone();
    let (old, new) = (packages(&before), packages(&after));
    let mut lines = Vec::new();
    for (path, was) in &old {
        let Some(now) = new.get(path) else {
            lines.push(format!("{path}: removed"));
            continue;
        };
        if was == now {
            continue;
        }
        let (was, now) = (was.as_object().unwrap(), now.as_object().unwrap());
        let mut fields = Vec::new();
        for key in was
            .keys()
            .chain(now.keys().filter(|k| !was.contains_key(*k)))
        {
            match (was.get(key), now.get(key)) {
                (Some(_), None) => fields.push(format!("{key} dropped")),
                (None, Some(v)) => fields.push(format!("{key} added ({v})")),
                (Some(a), Some(b)) if a != b => fields.push(format!("{key} {a} -> {b}")),
                _ => {}
            }
        }
        lines.push(format!("{path}: {}", fields.join(", ")));
    }
    for path in new.keys().filter(|p| !old.contains_key(*p)) {
        lines.push(format!("{path}: added"));
    }
    if lines.is_empty() {
        lines.push("the same entries, written otherwise".into());
    }
    let more = lines.len().saturating_sub(max);
    lines.truncate(max);
    if more > 0 {
        lines.push(format!("... and {more} more entries"));
    }
    lines.join("\n  ")
}

/// Lines removed and added, as `git diff --numstat` counts them.
fn numstat(a: &Path, b: &Path) -> String {
    let out = Command::new("git")
        .args(["diff", "--no-index", "--numstat", "--"])
        .arg(a)
        .arg(b)
        .output()
        .expect("git diff");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut counts = text.split_whitespace();
    match (counts.next(), counts.next()) {
        (Some(added), Some(removed)) => format!("{removed} lines removed, {added} added"),
        _ => "no line counts".into(),
    }
}

#[test]
fn npm_10_and_npm_11_leave_the_lock_file_as_committed() {
    needs("npm", "npm");
    needs("npx", "npm");
    needs("git", "git");
    let root = Path::new(ROOT);
    let committed = std::fs::read_to_string(root.join("package-lock.json")).unwrap();
    let here = Dir::new("npm-lock");
    // The machine's npm (what build.rs and .ci/run run), and npm 10 and
    // npm 11 from the registry where it is neither.
    let version = npm(&["npm"], &["--version"], &here.0);
    let major = version.trim().split('.').next().unwrap().to_owned();
    let mut npms: Vec<Vec<String>> = vec![vec!["npm".into()]];
    for wanted in ["10", "11"] {
        if major != wanted {
            npms.push(
                ["npx", "-y", &format!("npm@{wanted}")]
                    .map(String::from)
                    .to_vec(),
            );
        }
    }
    let mut failures = Vec::new();
    for which in &npms {
        let which: Vec<&str> = which.iter().map(String::as_str).collect();
        let version = npm(&which, &["--version"], &here.0);
        for omit in ["false", "true"] {
            let dir = here.0.join(format!("npm-{}-{omit}", version.trim()));
            std::fs::create_dir_all(&dir).unwrap();
            for file in ["package.json", "package-lock.json"] {
                std::fs::copy(root.join(file), dir.join(file)).unwrap();
            }
            npm(
                &which,
                &[
                    "install",
                    "--package-lock-only",
                    "--ignore-scripts",
                    "--no-audit",
                    "--no-fund",
                    &format!("--omit-lockfile-registry-resolved={omit}"),
                ],
                &dir,
            );
            let made = std::fs::read_to_string(dir.join("package-lock.json")).unwrap();
            if made != committed {
                failures.push(format!(
                    "npm {} (omit-lockfile-registry-resolved={omit}) rewrites package-lock.json: {}:\n  {}",
                    version.trim(),
                    numstat(&root.join("package-lock.json"), &dir.join("package-lock.json")),
                    changed_entries(&committed, &made, 8)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "`npm install` would change the committed lock; make it again with npm 10 \
         (`npx -y npm@10 install --package-lock-only --ignore-scripts`), then check \
         npm 11 leaves it:\n{}",
        failures.join("\n")
    );
}
