//! `citizen-site pack`: a post published without the Rust compiler.
//!
//! In a copy of this checkout, the binary
//! `cargo test` built packs the site into a new binary, which must answer
//! every route (each page, post, asset, the sitemap, a 404) with the very
//! status, headers and bytes the built binary does, in each encoding; after
//! a one-word change to a post, the packed binary serves the change, and
//! `pack` said one line and no engine chatter; a post dated next week
//! packed with it is said to be scheduled and is not out. It refuses,
//! writing nothing, a change to the engine's inputs, a broken post or
//! community file, two communities with one alias, a syntax error (said as
//! `dev` says it, without a stack trace), a bundle that throws and an OUT that exists. A binary whose payload is missing, cut short
//! or altered does not start and says which; an upgrade to one leaves the
//! old server serving.
//!
//! Needs Node.js (as the build does).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use citizen_site::payload::elf;
use support::{checkout_copy, free_port, needs, pack, routes, said, wait, Dir};

const BIN: &str = env!("CARGO_BIN_EXE_citizen-site");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const POST: &str = "content/blog/brussels-pay-launch.md";

/// `binary` serving on a port of its own, killed when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn serve(binary: &Path, data: &Path) -> Server {
    std::fs::create_dir_all(data).unwrap();
    let port = free_port();
    let child = Command::new(binary)
        .arg("serve")
        .env("ADDR", format!("127.0.0.1:{port}"))
        // The same URL for both: canonical links are in the pages.
        .env("SITE_URL", "http://localhost")
        .env(
            "DATABASE_URL",
            format!("sqlite://{}/site.db", data.display()),
        )
        .env("SSR_WORKERS", "1")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(data.join("server.log")).unwrap())
        .spawn()
        .unwrap();
    let mut server = Server { child, port };
    let ok = wait(90, || {
        server.child.try_wait().unwrap().is_some() || get(port, "/readyz", "identity").0 == 200
    });
    assert!(
        ok && server.child.try_wait().unwrap().is_none(),
        "{} did not get ready: {}",
        binary.display(),
        std::fs::read_to_string(data.join("server.log")).unwrap_or_default()
    );
    server
}

/// Status, headers (but the date and the request's id) and the body as
/// sent, for one GET.
pub fn get(port: u16, path: &str, encoding: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return (0, Vec::new(), Vec::new());
    };
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: {encoding}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    if s.read_to_end(&mut raw).is_err() {
        return (0, Vec::new(), Vec::new());
    }
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(raw.len());
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_owned()))
        .filter(|(k, _)| k != "date" && k != "x-request-id")
        .collect();
    (
        status,
        headers,
        raw.get(split + 4..).unwrap_or_default().to_vec(),
    )
}

#[test]
fn a_packed_binary_answers_as_the_built_one_and_publishes_a_changed_post() {
    needs("node", "nodejs");
    let dir = Dir::new("pack");
    let root = checkout_copy(&dir.0);

    // The same checkout, packed (run in a subfolder of it, as an editor of
    // a post would): every route, byte for byte.
    let same = dir.0.join("same-site");
    let out = pack(&root.join("content/blog"), &same);
    assert!(out.status.success(), "{}", said(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("packed "),
        "one line on stdout: {stdout}"
    );
    // And no engine chatter on stderr: V8's snapshot maker said "Creating
    // a snapshot..." and "Snapshot written, took: 46ns" on every pack.
    let stderr = String::from_utf8_lossy(&out.stderr).to_lowercase();
    for chatter in ["creating a snapshot", "snapshot size", "snapshot written"] {
        assert!(!stderr.contains(chatter), "the engine's progress: {stderr}");
    }
    let built = serve(Path::new(BIN), &dir.0.join("built"));
    let packed = serve(&same, &dir.0.join("packed"));
    let routes = routes();
    assert!(routes.len() > 40, "{routes:?}");
    let mut compared = 0;
    for path in &routes {
        for encoding in ["br", "gzip", "identity"] {
            let a = get(built.port, path, encoding);
            let b = get(packed.port, path, encoding);
            assert_ne!(a.0, 0, "{path} ({encoding}) was not answered");
            assert_eq!(
                (a.0, &a.1),
                (b.0, &b.1),
                "{path} ({encoding}): status and headers"
            );
            assert!(a.2 == b.2, "{path} ({encoding}): the bodies differ");
            compared += 1;
        }
    }
    assert_eq!(compared, routes.len() * 3);
    drop(packed);

    // A one-word change to a post, published by a pack.
    let post = root.join(POST);
    let text = std::fs::read_to_string(&post).unwrap();
    let word = "Brussels";
    assert!(text.contains(word));
    // The last one: in the body, not the title.
    let at = text.rfind(word).unwrap();
    std::fs::write(
        &post,
        format!("{}Bruxelles{}", &text[..at], &text[at + word.len()..]),
    )
    .unwrap();
    // A post for next week, packed with it: scheduled, said so, and not
    // out yet on the new binary.
    let next_week = (time::OffsetDateTime::now_utc() + time::Duration::days(7))
        .replace_nanosecond(0)
        .unwrap()
        .to_offset(time::macros::offset!(+1))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let scheduled = std::fs::read_to_string(root.join(POST))
        .unwrap()
        .replacen("brussels-pay-launch", "next-week", 1)
        .replacen("2024-10-08", &next_week, 1)
        .replacen("image = \"blog/brussels-pay-launch.svg\"\n", "", 1);
    std::fs::write(root.join("content/blog/next-week.md"), scheduled).unwrap();
    // docs/content.md's step, word for word but for the binary's path (the
    // one this test run built).
    let guide = std::fs::read_to_string(Path::new(ROOT).join("docs/content.md")).unwrap();
    let step = support::deploy_step(&guide, "pack");
    assert_eq!(step, "target/release/citizen-site pack ../new-site\n");
    let changed = dir.0.join("new-site");
    let started = Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg(step.replace("target/release/citizen-site", BIN))
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", said(&out));
    eprintln!(
        "pack after a one-word change: {:.1} s (debug build)",
        started.elapsed().as_secs_f64()
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!(
            "scheduled /blog/next-week for {next_week}: in 6 d 23 h\npacked "
        )),
        "what it scheduled, then the packed line: {stdout}"
    );
    let new = serve(&changed, &dir.0.join("changed"));
    let page =
        |port| String::from_utf8(get(port, "/blog/brussels-pay-launch", "identity").2).unwrap();
    assert!(
        page(new.port).contains("Bruxelles"),
        "the changed post is served"
    );
    assert!(!page(built.port).contains("Bruxelles"));
    assert_eq!(get(new.port, "/blog/next-week", "identity").0, 404);
    for path in ["/blog", "/sitemap.xml", "/feed.xml"] {
        let body = String::from_utf8(get(new.port, path, "identity").2).unwrap();
        assert!(
            !body.contains("next-week"),
            "{path} lists a post of next week"
        );
    }
    for path in routes.iter().filter(|p| !p.starts_with("/assets/")) {
        let (status, _, _) = get(new.port, path, "br");
        let want = get(built.port, path, "br").0;
        assert_eq!(status, want, "{path} on the new binary");
    }
}

#[test]
fn pack_refuses_what_it_cannot_carry_and_writes_nothing() {
    needs("node", "nodejs");
    let dir = Dir::new("pack-refusals");
    let root = checkout_copy(&dir.0);
    let out = dir.0.join("new-site");
    let refused = |why: &str, expect: &[&str]| {
        let res = pack(&root, &out);
        let text = said(&res);
        assert!(!res.status.success(), "{why}: packed anyway: {text}");
        for e in expect {
            assert!(text.contains(e), "{why}: {e:?} not in {text}");
        }
        assert!(!out.exists(), "{why}: {} was written", out.display());
        let left: Vec<_> = std::fs::read_dir(&dir.0)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.contains("pack-"))
            .collect();
        assert!(left.is_empty(), "{why}: left {left:?}");
        text
    };
    let edit = |file: &str, f: &dyn Fn(&str) -> String| {
        let path = root.join(file);
        let before = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, f(&before)).unwrap();
        before
    };

    // The engine's inputs: server code, the manifest, a page with data.
    for (file, line) in [
        ("server/site.rs", "server/site.rs (changed)"),
        ("Cargo.toml", "Cargo.toml (changed)"),
    ] {
        let before = edit(file, &|t| format!("{t}\n// an edit\n"));
        refused(file, &["changes the engine", line, "cargo build --release"]);
        std::fs::write(root.join(file), before).unwrap();
    }
    std::fs::write(root.join("server/extra.rs"), "// new\n").unwrap();
    refused("a new server file", &["server/extra.rs (new)"]);
    std::fs::remove_file(root.join("server/extra.rs")).unwrap();
    let routes = "content/routes.json";
    let before = edit(routes, &|t| {
        t.replacen("\"page\": \"About\"", "\"page\": \"AboutUs\"", 1)
    });
    assert_ne!(
        before,
        std::fs::read_to_string(root.join(routes)).unwrap(),
        "the table has an About page"
    );
    refused(
        "a page with data renamed",
        &["content/routes.json (pages with data, and their types) (changed)"],
    );
    std::fs::write(root.join(routes), before).unwrap();

    // A broken post: the message `dev` shows for it.
    let before = edit(POST, &|t| t.replacen("title", "titel", 1));
    refused("a broken post", &[POST]);
    std::fs::write(root.join(POST), before).unwrap();
    // And a broken community file, with its line.
    let community = "content/communities/wolugo.json";
    let before = edit(community, &|t| t.replacen("\"name\"", "\"name", 1));
    refused(
        "a broken community file",
        &["content/communities/wolugo.json:3:"],
    );
    std::fs::write(root.join(community), before).unwrap();
    // A bundle that loads where the build runs it (a Node.js vm) and throws
    // in the engine alone (`Deno` is its global): refused, in its words,
    // though the engine is quiet.
    let home = "client/features/home/content.ts";
    let before = edit(home, &|t| {
        format!("{t}\nif (typeof Deno === \"object\") throw new Error(\"thrown in the engine\");\n")
    });
    refused(
        "a bundle that throws in the engine",
        &["the SSR bundle does not run", "thrown in the engine"],
    );
    std::fs::write(root.join(home), before).unwrap();
    // A second community under an alias already used: both files named,
    // the second with the line of its alias.
    let copy = "content/communities/wolugo-copy.json";
    let text = std::fs::read_to_string(root.join(community)).unwrap();
    std::fs::write(
        root.join(copy),
        text.replacen("\"name\": \"Wolugo\"", "\"name\": \"Wolugo Again\"", 1),
    )
    .unwrap();
    refused(
        "two communities with one alias",
        &[
            "content/communities/wolugo.json:6:",
            "content/communities/wolugo-copy.json",
            "\"wolugo\"",
        ],
    );
    std::fs::remove_file(root.join(copy)).unwrap();

    // A syntax error in a page: as `dev` shows it, file:line:col, the line
    // and a caret under the column; no esbuild banner, no Node stack trace.
    let page = "client/features/blog/Blog.tsx";
    let before = edit(page, &|t| {
        t.replacen(
            "export default function Blog(",
            "export default functio Blog(",
            1,
        )
    });
    let bad = std::fs::read_to_string(root.join(page)).unwrap();
    let (n, line) = bad
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("functio Blog("))
        .unwrap();
    let column = line.find("Blog(").unwrap() + 1;
    let at = format!(
        "{page}:{}:{column}: Expected \";\" but found \"Blog\"",
        n + 1
    );
    let text = refused("a syntax error", &[&at]);
    let lines: Vec<&str> = text.lines().collect();
    let i = lines.iter().position(|l| l.starts_with(&at)).unwrap();
    let gutter = format!("{} | ", n + 1);
    assert_eq!(lines[i + 1], format!("{gutter}{line}"), "{text}");
    assert_eq!(
        lines[i + 2],
        format!("{}^", " ".repeat(gutter.len() + column - 1)),
        "the caret under the column: {text}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.contains(&at)).count(),
        1,
        "said once: {text}"
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("    at ")) && !text.contains("[ERROR]"),
        "no stack trace, no esbuild banner: {text}"
    );
    std::fs::write(root.join(page), before).unwrap();

    // From a subfolder of the checkout, as git and cargo are run, and
    // without its npm packages: a change the engine must carry is said
    // first (no npm install would make the pack work), then the packages.
    let inside = root.join("content");
    std::fs::rename(root.join("node_modules"), dir.0.join("node_modules.away")).unwrap();
    let before = edit("server/site.rs", &|t| format!("{t}\n// an edit\n"));
    let res = pack(&inside, &out);
    let text = said(&res);
    assert!(!res.status.success(), "{text}");
    assert!(
        text.contains("changes the engine") && text.contains("server/site.rs (changed)"),
        "{text}"
    );
    assert!(
        !text.contains("node_modules") && !text.contains("checkout ("),
        "{text}"
    );
    std::fs::write(root.join("server/site.rs"), before).unwrap();
    let res = pack(&inside, &out);
    assert!(
        said(&res).contains("has no node_modules: run `npm ci` there first"),
        "{}",
        said(&res)
    );
    std::fs::rename(dir.0.join("node_modules.away"), root.join("node_modules")).unwrap();
    assert!(!out.exists());
    // Outside any checkout: said so.
    let res = pack(&dir.0, &out);
    assert!(
        said(&res).contains("is not in a citizen-site checkout"),
        "{}",
        said(&res)
    );

    // An OUT that exists is left as it is.
    std::fs::write(&out, "mine").unwrap();
    let res = pack(&root, &out);
    assert!(!res.status.success());
    assert!(said(&res).contains("exists"), "{}", said(&res));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "mine");
}

/// `BIN` with its payload's bytes changed by `damage`.
fn damaged(dir: &Path, name: &str, damage: impl FnOnce(&mut Vec<u8>, elf::Place)) -> PathBuf {
    let mut bytes = std::fs::read(BIN).unwrap();
    let place = elf::find(bytes.as_slice()).unwrap();
    damage(&mut bytes, place);
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_damaged_payload_stops_the_binary_and_the_upgrade_to_it() {
    let dir = Dir::new("pack-damaged");
    let altered = damaged(&dir.0, "altered", |b, p| {
        b[(p.offset + p.size) as usize - 100] ^= 1;
    });
    let cut = damaged(&dir.0, "cut", |b, p| {
        b.truncate((p.offset + p.size / 2) as usize)
    });
    let unnamed = damaged(&dir.0, "unnamed", |b, _| {
        let name = b".citizen_payload\0";
        let at = b.windows(name.len()).rposition(|w| w == name).unwrap();
        b[at + 1] = b'C';
    });
    for (binary, why) in [
        (&altered, "the payload was altered"),
        (&cut, "the binary is truncated"),
        (&unnamed, "carries no site payload"),
    ] {
        let port = free_port();
        let mut child = Command::new(binary)
            .env("ADDR", format!("127.0.0.1:{port}"))
            .env(
                "DATABASE_URL",
                format!("sqlite://{}/site.db", dir.0.display()),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stopped = wait(30, || child.try_wait().unwrap().is_some());
        if !stopped {
            let _ = child.kill();
        }
        let out = child.wait_with_output().unwrap();
        let text = said(&out);
        assert!(stopped, "{why}: the binary started: {text}");
        assert_eq!(out.status.code(), Some(1), "{why}: {text}");
        assert!(
            text.contains("this binary cannot serve") && text.contains(why),
            "{text}"
        );
    }

    // The upgrade to an altered binary fails; the server serves on.
    let bin = dir.0.join("bin/citizen-site");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(BIN, &bin).unwrap();
    let server = serve(&bin, &dir.0.join("data"));
    let next = bin.with_extension("new");
    std::fs::copy(&altered, &next).unwrap();
    std::fs::rename(&next, &bin).unwrap();
    let out = Command::new(&bin)
        .args(["upgrade", "--pid", &server.child.id().to_string()])
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "the upgrade says it failed: {}",
        said(&out)
    );
    assert!(said(&out).contains("keeps serving"), "{}", said(&out));
    assert_eq!(
        get(server.port, "/", "br").0,
        200,
        "the old server serves on"
    );
    let log = std::fs::read_to_string(dir.0.join("data/server.log")).unwrap();
    assert!(log.contains("the payload was altered"), "{log}");
}
