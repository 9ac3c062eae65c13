//! The tree with a page added exactly as docs/content.md's "Adding a page"
//! says, published with `pack` (a page without data needs no compiler):
//! `tests/new_page.rs` checks the page, and `tests/swaps.rs` upgrades to
//! this binary and back (a different build of the site). Each call packs a
//! copy of its own, removed with it, so tests side by side never share one.

use std::path::{Path, PathBuf};

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

/// A copy of this checkout with the page added as the guide says (its
/// entry first in the route table, with `extra` facts, and its component).
pub fn tree_with_page(dir: &Path, extra: &str) -> PathBuf {
    let tree = super::checkout_copy(dir);
    let routes = tree.join("content/routes.json");
    let text = std::fs::read_to_string(&routes).unwrap();
    let entry = ENTRY.replacen(
        r#""page": "Events""#,
        &format!(r#""page": "Events"{extra}"#),
        1,
    );
    let edited = text.replacen(r#""routes": ["#, &format!("\"routes\": [\n    {entry}"), 1);
    assert_ne!(edited, text);
    std::fs::write(&routes, edited).unwrap();
    let feature = tree.join("client/features/events");
    std::fs::create_dir_all(&feature).unwrap();
    std::fs::write(feature.join("Events.tsx"), COMPONENT).unwrap();
    tree
}

/// The tree with the new page, published as docs/content.md says: packed
/// by this build's binary into a new one, without the Rust compiler.
pub fn build() -> Variant {
    let dir = super::Dir::new("new-page");
    let tree = tree_with_page(&dir.0, "");
    let bin = dir.0.join("citizen-site-new-page");
    let out = super::pack(&tree, &bin);
    assert!(
        out.status.success(),
        "pack of the new page failed:\n{}",
        super::said(&out)
    );
    Variant {
        bin,
        tree,
        _dir: dir,
    }
}

pub struct Variant {
    /// The copy of the checkout with the page added (tests/new_page.rs
    /// reads what its build generated).
    pub tree: PathBuf,
    /// Its `citizen-site` binary, made by `pack`.
    pub bin: PathBuf,
    /// Removed with the variant.
    _dir: super::Dir,
}
