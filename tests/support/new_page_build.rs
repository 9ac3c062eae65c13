//! The tree with a page added exactly as docs/content.md's "Adding a page"
//! says, built: `tests/new_page.rs` checks the page, and `tests/swaps.rs`
//! upgrades to this binary and back (a different build of the site). The
//! tree lives in one folder of the target directory and is copied file by
//! file only where a file differs, so the second build of a run, or of
//! the next run, finds nothing to do.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Step 1 of docs/content.md: the route entry, with one fact set and the
/// query parameter the page reads.
const ENTRY: &str = r#"{ "path": "/events", "page": "Events", "sitemap": false, "query": [{ "name": "city", "values": ["ghent", "brussels"] }] },"#;

/// Step 2: the component, with its head; it reads its parameter from the URL.
const COMPONENT: &str = r#"import { useSearchParams } from "react-router";
import type { PageMeta, PageProps } from "../../lib/types";

export function meta(): PageMeta {
  return { title: "Events — Citizen Wallet", description: "Markets, workshops and meetups where community currencies change hands." };
}

export default function Events(_props: PageProps) {
  return (
    <section className="mx-auto max-w-3xl px-4 py-16">
      <h1 className="text-4xl font-bold">Community events</h1>
      <p className="mt-4">The next market day is announced here.</p>
      <p className="mt-4">{useSearchParams()[0].get("city") ?? "every city"}: where the next one is</p>
    </section>
  );
}
"#;

/// The tracked files of this checkout as they are in `to`, each passed
/// through `edit` (by its path in the tree), with its npm packages linked
/// rather than copied. A file already as it should be is not touched.
fn copy_tree(to: &Path, edit: impl Fn(&str, Vec<u8>) -> Vec<u8>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .expect("git lists the tracked files");
    assert!(
        listed.status.success(),
        "git ls-files: {}",
        String::from_utf8_lossy(&listed.stderr)
    );
    for file in listed.stdout.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let rel = std::str::from_utf8(file).unwrap();
        let from = root.join(rel);
        if !from.is_file() {
            continue;
        }
        write_if_changed(&to.join(rel), &edit(rel, std::fs::read(&from).unwrap()));
    }
    let link = to.join("node_modules");
    if std::fs::read_link(&link).ok().as_deref() != Some(&root.join("node_modules")) {
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(root.join("node_modules"), &link).unwrap();
    }
}

fn write_if_changed(path: &Path, content: &[u8]) {
    if std::fs::read(path).ok().as_deref() != Some(content) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

/// The tree with the new page (first in the route table, and its
/// component), and its binary built.
pub fn build() -> Variant {
    // In the target directory, so that the copy reuses the compiled
    // dependencies.
    let tree = crate::support::built::target_dir().join("new-page-tree");
    copy_tree(&tree, |rel, bytes| match rel {
        // Step 1: the entry, first in the table.
        "content/routes.json" => {
            let text = String::from_utf8(bytes).unwrap();
            text.replacen(r#""routes": ["#, &format!("\"routes\": [\n    {ENTRY}"), 1)
                .into_bytes()
        }
        // The copy builds as its own package (so its binary does not
        // replace this checkout's in the shared target folder); that is
        // the only edit beyond the guide's steps, and it is to
        // Cargo.toml's name alone.
        "Cargo.toml" => {
            let cargo_toml = String::from_utf8(bytes).unwrap();
            let renamed = cargo_toml.replacen(
                "name = \"citizen-site\"",
                "name = \"citizen-site-new-page\"",
                2,
            );
            // Its tests' dependency on itself (the test hooks) and the
            // binary `cargo run` runs follow the name.
            let renamed = renamed
                .replacen(
                    "citizen-site = { path = \".\"",
                    "citizen-site-new-page = { path = \".\"",
                    1,
                )
                .replacen(
                    "default-run = \"citizen-site\"",
                    "default-run = \"citizen-site-new-page\"",
                    1,
                );
            assert!(renamed.contains("default-run = \"citizen-site-new-page\""));
            assert_ne!(renamed, cargo_toml);
            renamed.into_bytes()
        }
        _ => bytes,
    });
    // Step 2: the component.
    write_if_changed(
        &tree.join("client/features/events/Events.tsx"),
        COMPONENT.as_bytes(),
    );

    let bin = crate::support::built::build(
        "citizen-site-new-page",
        &tree,
        &["--bin", "citizen-site-new-page"],
    );
    Variant { bin, tree }
}

pub struct Variant {
    /// The copy of the checkout with the page added (tests/new_page.rs
    /// reads what its build generated).
    #[allow(dead_code)]
    pub tree: PathBuf,
    /// Its `citizen-site` binary.
    pub bin: PathBuf,
}
