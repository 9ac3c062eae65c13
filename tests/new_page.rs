//! A new page is one entry and its code: this test adds one to a copy of
//! the tree exactly as docs/content.md's "Adding a page" says (an entry in
//! `content/routes.json`, a component in `client/features/<page>/`, nothing
//! else), publishes it with `pack` (no Rust compiler), and serves the new
//! binary. The page must then be routed, rendered, in the route data,
//! cached as its entry says, in the sitemap, and among the registries'
//! pages; nothing else in the tree was edited to get there. A page with
//! data needs its loader compiled: `pack` refuses it, saying to build. An
//! entry without its component yet is refused, naming the file to write.

use crate::support;
use crate::support::new_page_build;

use std::process::{Child, Command, Stdio};

use support::{curl, free_port, pack, said, wait, Dir};

/// Kills the server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_page_added_as_the_guide_says_is_packed_routed_rendered_and_listed() {
    let variant = new_page_build::build();
    let tree = &variant.tree;
    // Step 3 of the guide: the types hold the component to its page's data
    // (no data), with the page ids the pack's build made.
    let tsc = Command::new("node")
        .args(["node_modules/typescript/bin/tsc", "--noEmit"])
        .current_dir(tree)
        .output()
        .expect("node runs tsc");
    assert!(tsc.status.success(), "tsc: {}", said(&tsc));
    // The ids and registries the pack's build made name the page.
    let ids = std::fs::read_to_string(tree.join("client/lib/page-ids.ts")).unwrap();
    assert!(
        ids.contains(r#"export const PAGE_IDS = ["Events", "Home","#),
        "{ids}"
    );
    let lazy = std::fs::read_to_string(tree.join("client/app/pages.lazy.ts")).unwrap();
    assert!(
        lazy.contains(r#"Events: () => import("../features/events/Events"),"#),
        "{lazy}"
    );
    let eager = std::fs::read_to_string(tree.join("ssr-bundle/pages.eager.ts")).unwrap();
    assert!(
        eager.contains(r#"import * as Events from "../client/features/events/Events";"#),
        "{eager}"
    );

    let port = free_port();
    let data = Dir::new("new-page-data");
    let bin = &variant.bin;
    let mut server = Server(
        Command::new(bin)
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
    // those URLs share one render and one place in the page cache: the
    // one the start's prerender made for each value its entry lists.
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
    assert_eq!(
        renders() - before,
        0.0,
        "both URLs are ?city=ghent's page, prerendered at start"
    );
    let other = curl(&[&format!("{base}/events?city=paris")]);
    assert!(
        other.contains("every city<!-- -->: where the next one is"),
        "{other}"
    );
    assert_eq!(
        renders() - before,
        0.0,
        "?city=paris is /events, prerendered at start"
    );
}

#[test]
fn a_page_with_data_is_refused_by_pack_with_the_build_to_run() {
    let dir = Dir::new("new-page-data");
    let tree = new_page_build::tree_with_page(&dir.0, r#", "data": "EventsData""#);
    let out_bin = dir.0.join("citizen-site-events");
    let out = pack(&tree, &out_bin);
    let said = said(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("this checkout changes the engine, which a pack cannot carry")
            && said.contains("content/routes.json (pages with data, and their types)")
            && said.contains("cargo build --release"),
        "{said}"
    );
    assert!(!out_bin.exists(), "nothing written");
}

/// docs/content.md's order saved halfway: the entry, not yet its component.
/// `pack` refuses, with the words `dev` shows on the page: the file to
/// create and what it must export; no generated file is named, nothing is
/// written.
#[test]
fn a_route_without_its_component_is_refused_by_pack_naming_the_file_to_write() {
    let dir = Dir::new("new-page-missing");
    let tree = new_page_build::tree_with_page(&dir.0, "");
    std::fs::remove_dir_all(tree.join("client/features/events")).unwrap();
    let out_bin = dir.0.join("citizen-site-events");
    let out = pack(&tree, &out_bin);
    let said = said(&out);
    assert!(!out.status.success(), "packed anyway: {said}");
    assert!(
        said.contains("the page Events has no component: create client/features/events/Events.tsx")
            && said.contains("a default export")
            && said.contains("`meta`"),
        "{said}"
    );
    assert!(
        !said.contains("pages.eager.ts") && !said.contains("    at "),
        "{said}"
    );
    assert!(!out_bin.exists(), "nothing written");
}
