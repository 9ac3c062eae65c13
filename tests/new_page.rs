//! A new page is one entry and its code: this test adds one to a copy of
//! the tree exactly as docs/content.md's "Adding a page" says (an entry in
//! `content/routes.json`, a component in `client/features/<page>/`, nothing
//! else), builds the copy with cargo, and serves it. The page must then be
//! routed, rendered, in the route data, cached as its entry says, in the
//! sitemap, and among the registries' pages; nothing else in the tree was
//! edited to get there.

mod support;

use std::path::Path;
use std::process::{Child, Command, Stdio};

use support::{curl, free_port, wait, Dir};

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

/// Kills the server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The tracked files of this checkout, copied to `to`, with its npm
/// packages linked rather than copied.
fn copy_tree(to: &Path) {
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
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&from, &dest).unwrap();
    }
    std::os::unix::fs::symlink(root.join("node_modules"), to.join("node_modules")).unwrap();
}

/// Where this test binary's cargo keeps its builds: the copy reuses the
/// compiled dependencies.
fn target_dir() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    // <target>/debug/deps/new_page-<hash>
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

#[test]
fn a_page_added_as_the_readme_says_is_routed_rendered_and_listed() {
    let tree = Dir::new("new-page");
    copy_tree(&tree.0);

    // Step 1: the entry, first in the table.
    let table = tree.0.join("content/routes.json");
    let text = std::fs::read_to_string(&table).unwrap();
    let text = text.replacen(r#""routes": ["#, &format!("\"routes\": [\n    {ENTRY}"), 1);
    std::fs::write(&table, text).unwrap();
    // Step 2: the component.
    let folder = tree.0.join("client/features/events");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("Events.tsx"), COMPONENT).unwrap();

    // The copy builds as its own package (so its binary does not replace
    // this checkout's in the shared target folder); that is the only edit
    // beyond the guide's steps, and it is to Cargo.toml's name alone.
    let manifest = tree.0.join("Cargo.toml");
    let cargo_toml = std::fs::read_to_string(&manifest).unwrap();
    let renamed = cargo_toml.replacen(
        "name = \"citizen-site\"",
        "name = \"citizen-site-new-page\"",
        2,
    );
    // Its tests' dependency on itself (the test hooks) follows the name.
    let renamed = renamed.replacen(
        "citizen-site = { path = \".\"",
        "citizen-site-new-page = { path = \".\"",
        1,
    );
    assert_ne!(renamed, cargo_toml);
    std::fs::write(&manifest, renamed).unwrap();

    let built = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--bin", "citizen-site-new-page"])
        .env("CARGO_TARGET_DIR", target_dir())
        .current_dir(&tree.0)
        .stdout(Stdio::null())
        .output()
        .expect("cargo runs");
    assert!(
        built.status.success(),
        "the tree with the new page does not build:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );

    // The registries the build made name the page, and nothing else in
    // the tree changed.
    let lazy = std::fs::read_to_string(tree.0.join("client/app/pages.lazy.ts")).unwrap();
    assert!(
        lazy.contains(r#"Events: () => import("../features/events/Events"),"#),
        "{lazy}"
    );
    let eager = std::fs::read_to_string(tree.0.join("ssr-bundle/pages.eager.ts")).unwrap();
    assert!(
        eager.contains(r#"import * as Events from "../client/features/events/Events";"#),
        "{eager}"
    );

    let port = free_port();
    let data = Dir::new("new-page-data");
    let bin = target_dir().join("debug/citizen-site-new-page");
    let mut server = Server(
        Command::new(&bin)
            .arg("serve")
            .env("ADDR", format!("127.0.0.1:{port}"))
            .env("SITE_URL", format!("http://127.0.0.1:{port}"))
            .env(
                "DATABASE_URL",
                format!("sqlite://{}/site.db", data.0.display()),
            )
            .env("SSR_WORKERS", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the new binary starts"),
    );
    let base = format!("http://127.0.0.1:{port}");
    let ready = wait(60, || {
        assert!(server.0.try_wait().unwrap().is_none(), "the server stopped");
        curl(&[
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &format!("{base}/readyz"),
        ]) == "200"
    });
    assert!(ready, "not ready in 60 s");

    // Routed and rendered on the server, with its head and the page's id.
    let head = curl(&["-D", "-", "-o", "/dev/null", &format!("{base}/events")]).to_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(
        head.contains(
            "cache-control: public, max-age=0, s-maxage=300, stale-while-revalidate=3600"
        ),
        "the default policy: {head}"
    );
    let html = curl(&[&format!("{base}/events")]);
    assert!(
        html.contains("<title>Events — Citizen Wallet</title>"),
        "{html}"
    );
    assert!(html.contains("Community events</h1>"), "{html}");
    assert!(
        html.contains(r#""page":"Events""#),
        "the bootstrap names the page"
    );
    // Its own chunk, named in the page's module list.
    assert!(
        html.contains("/assets/Events-"),
        "the page's chunk is listed"
    );
    // The route data for client navigation.
    let data_json = curl(&[&format!("{base}/api/route-data?url=/events")]);
    assert_eq!(data_json, r#"{"status":200,"page":"Events"}"#);
    // `"sitemap": false` keeps it out of the sitemap; the others stay.
    let sitemap = curl(&[&format!("{base}/sitemap.xml")]);
    assert!(
        sitemap.contains(&format!("{base}/wallets")) && !sitemap.contains("/events"),
        "{sitemap}"
    );
    // The table's other routes are where they were.
    assert!(curl(&[&format!("{base}/wallets")]).contains("Our Wallets"));

    // Its query parameter, declared in its entry alone: a value of its
    // list is read; any other parameter, or another value, is not, so
    // those URLs share one render and one place in the page cache.
    let renders = || {
        let metrics = curl(&[&format!("{base}/metrics")]);
        let line = metrics
            .lines()
            .find(|l| l.starts_with("ssr_render_duration_seconds_count"));
        line.and_then(|l| l.split(' ').nth(1))
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    let before = renders();
    let ghent = curl(&[&format!("{base}/events?city=ghent&utm_source=news")]);
    assert!(
        ghent.contains("ghent<!-- -->: where the next one is"),
        "{ghent}"
    );
    let again = curl(&[&format!("{base}/events?utm_source=other&city=ghent")]);
    assert_eq!(again, ghent, "the same render, from the page cache");
    assert_eq!(renders() - before, 1.0, "one render for both URLs");
    let other = curl(&[&format!("{base}/events?city=paris")]);
    assert!(
        other.contains("every city<!-- -->: where the next one is"),
        "{other}"
    );
    assert_eq!(
        renders() - before,
        1.0,
        "?city=paris is /events, prerendered at start"
    );
}
