//! Nothing broken reaches a visitor: a page that throws when rendered is
//! refused by `pack` (naming the route, the component's file and line and
//! the error, with nothing written at OUT) and by an upgrade (the running
//! server serves on), while an outage of a page's data source (Stripe)
//! blocks no upgrade. A binary that carries such a page anyway, started
//! with no server before it, serves the pages that render and names the
//! one that does not in its log, on `/readyz` and on `/metrics`.
//!
//! The page is docs/content.md's new `/events`, whose component calls a
//! number's method on a string (`TypeError: ... is not a function`). The
//! binary that carries it is made as `pack` makes one, with the library's
//! own steps but without `pack`'s render of every page.
//!
//! Needs Node.js (as the build does).

use crate::pack::get;
use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use support::new_page_build::tree_with_page;
use support::{free_port, pack, said, wait, Dir};

const BIN: &str = env!("CARGO_BIN_EXE_citizen-site");

/// The new page's component, which throws on every render.
const THROWS: &str = r#"import type { PageMeta, PageProps } from "../../lib/types";

export function meta(): PageMeta {
  return { title: "Events — Citizen Wallet", description: "Markets, workshops and meetups." };
}

export default function Events(_props: PageProps) {
  const price: unknown = "12";
  return (
    <section className="mx-auto max-w-3xl px-4 py-16">
      <h1 className="text-4xl font-bold">Community events</h1>
      <p>{(price as number).toFixed(2)}</p>
    </section>
  );
}
"#;

/// What makes the pricing page throw for one value of its query
/// parameter only (`?billing=yearly`): a page of its own, in the cache.
const YEARLY_THROWS: (&str, &str) = (
    "  const interval = BILLING_INTERVAL[billing];\n",
    "  const interval = BILLING_INTERVAL[billing];\n  if (billing === \"yearly\") (interval as unknown as { boom: { at(i: number): string } }).boom.at(0);\n",
);

/// The 1-based line of `THROWS` that throws.
fn throwing_line() -> usize {
    THROWS
        .lines()
        .position(|l| l.contains(".toFixed("))
        .unwrap()
        + 1
}

/// A server killed when dropped.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// `binary` serving on a port of its own with its data in `data`,
    /// Stripe's API unreachable when `stripe_down`; once `/readyz` says
    /// ready.
    fn start(binary: &Path, data: &Path, stripe_down: bool) -> Server {
        std::fs::create_dir_all(data).unwrap();
        let port = free_port();
        let log = data.join("server.log");
        let mut command = Command::new(binary);
        command
            .arg("serve")
            .env("ADDR", format!("127.0.0.1:{port}"))
            .env("SITE_URL", "http://localhost")
            .env(
                "DATABASE_URL",
                format!("sqlite://{}/site.db", data.display()),
            )
            .env("SSR_WORKERS", "1")
            // The log on standard output, errors before it on standard error.
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::OpenOptions::new().append(true).open(&log).unwrap());
        if stripe_down {
            command.env("STRIPE_SECRET_KEY", "sk_test_proven").env(
                "STRIPE_API_BASE",
                format!("http://127.0.0.1:{}", free_port()),
            );
        }
        let mut server = Server {
            child: command.spawn().unwrap(),
            port,
            log,
        };
        let ok = wait(90, || {
            server.child.try_wait().unwrap().is_some() || get(port, "/readyz", "identity").0 == 200
        });
        assert!(
            ok && server.child.try_wait().unwrap().is_none(),
            "{} did not get ready: {}",
            binary.display(),
            server.log()
        );
        server
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn body(&self, path: &str) -> (u16, String) {
        let (status, _, body) = get(self.port, path, "identity");
        (status, String::from_utf8_lossy(&body).into_owned())
    }
}

/// The binary `pack` would write for `tree`, made with the library's own
/// steps (the build, the payload, the engine's bytes) but without its
/// render of every page.
fn packed_without_proof(tree: &Path, dir: &Path) -> PathBuf {
    use citizen_site::payload::{self, elf, format};
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let files = citizen_site::cli::pack::make::files(tree, &work, &mut |_| {}).unwrap();
    let bytes = format::encode(&payload::engine_hash(), &files);
    let engine = std::fs::read(BIN).unwrap();
    let binary = dir.join("citizen-site-unproven");
    std::fs::write(&binary, elf::replace(&engine, &bytes).unwrap()).unwrap();
    std::fs::set_permissions(&binary, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    binary
}

/// The upgrade of the server at `pid` to the binary now at its path.
fn upgrade(bin: &Path, pid: u32) -> std::process::Output {
    Command::new(bin)
        .args(["upgrade", "--pid", &pid.to_string()])
        .output()
        .unwrap()
}

#[test]
fn a_page_that_throws_is_refused_by_pack_and_by_an_upgrade_and_named_by_a_first_start() {
    let dir = Dir::new("proven");
    let tree = tree_with_page(&dir.0, "");
    std::fs::write(tree.join("client/features/events/Events.tsx"), THROWS).unwrap();
    let pricing = tree.join("client/features/pricing/Pricing.tsx");
    let text = std::fs::read_to_string(&pricing).unwrap();
    assert!(text.contains(YEARLY_THROWS.0));
    std::fs::write(&pricing, text.replacen(YEARLY_THROWS.0, YEARLY_THROWS.1, 1)).unwrap();

    // `pack`, to an OUT beside the checkout as docs/content.md writes it:
    // refused, naming each route, the file and line, the error.
    let out = dir.0.join("citizen-site-events");
    let packed = pack(&tree, Path::new("../citizen-site-events"));
    let text = said(&packed);
    assert!(!packed.status.success(), "pack wrote it: {text}");
    let at = format!("at client/features/events/Events.tsx:{}:", throwing_line());
    for part in [
        // `/events` with and without each value of its `city` parameter.
        "4 pages of the new site do not render",
        "/events: TypeError",
        "/events?city=ghent: TypeError",
        "toFixed is not a function",
        &at,
        "/pricing?billing=yearly: TypeError",
        "at client/features/pricing/Pricing.tsx:36:",
        "nothing was written",
    ] {
        assert!(text.contains(part), "pack's refusal names {part:?}: {text}");
    }
    assert!(
        text.contains("(price as number).toFixed(2)"),
        "the line that throws is shown: {text}"
    );
    assert!(!out.exists(), "nothing at OUT");
    let left: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".pack-"))
        .collect();
    assert!(left.is_empty(), "pack's own files are gone: {left:?}");

    let unproven = packed_without_proof(&tree, &dir.0);

    // A first start serves what renders and names what does not.
    {
        let server = Server::start(&unproven, &dir.0.join("first"), false);
        assert_eq!(server.body("/").0, 200, "the home page serves");
        assert_eq!(server.body("/pricing").0, 200, "so does a monthly price");
        assert_eq!(server.body("/events").0, 500, "the page that throws");
        let (status, ready) = server.body("/readyz");
        assert_eq!(status, 200, "a first start is ready: {ready}");
        let ready: serde_json::Value = serde_json::from_str(&ready).unwrap();
        assert_eq!(
            ready["unrendered"],
            serde_json::json!([
                "/events",
                "/events?city=ghent",
                "/events?city=brussels",
                "/pricing?billing=yearly"
            ]),
            "{ready}"
        );
        let (_, metrics) = server.body("/metrics");
        assert!(
            metrics.contains("site_page_unrendered{path=\"/events\"} 1"),
            "{metrics}"
        );
        assert!(
            !metrics.contains("site_page_unrendered{path=\"/\"}"),
            "only the page that does not render: {metrics}"
        );
        let log = server.log();
        assert!(
            log.contains("does not render") && log.contains("/events"),
            "the start says which page does not render: {log}"
        );
    }

    // An upgrade: the running server's Stripe is down, which blocks no
    // upgrade; the successor whose /events throws is refused.
    let bin = dir.0.join("bin/citizen-site");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(BIN, &bin).unwrap();
    let server = Server::start(&bin, &dir.0.join("data"), true);
    assert_eq!(
        server.body("/pricing").0,
        200,
        "pricing, without its prices"
    );
    let good = upgrade(&bin, server.child.id());
    assert!(
        good.status.success(),
        "an upgrade while Stripe is down goes through: {}",
        said(&good)
    );
    // The successor serves now (and is stopped with the test).
    let successor = successor_of(&server.log());
    let _stopped_with_the_test = Successor(successor);
    let next = bin.with_extension("next");
    std::fs::copy(&unproven, &next).unwrap();
    std::fs::rename(&next, &bin).unwrap();
    let refused = upgrade(&bin, successor);
    let text = said(&refused);
    assert!(!refused.status.success(), "the upgrade is refused: {text}");
    for part in ["/events", "toFixed is not a function", "keeps serving"] {
        assert!(text.contains(part), "the refusal names {part:?}: {text}");
    }
    assert_eq!(server.body("/").0, 200, "the old server serves on");
    assert_eq!(
        server.body("/events").0,
        404,
        "the old server's site, without the new page"
    );
}

/// A successor started by a server of the test (not its child): stopped
/// when dropped.
struct Successor(u32);

impl Drop for Successor {
    fn drop(&mut self) {
        // SAFETY: signalling a process this test started (through a server).
        unsafe { libc::kill(self.0 as libc::pid_t, libc::SIGKILL) };
    }
}

/// The pid of the successor the log says is ready.
fn successor_of(log: &str) -> u32 {
    log.lines()
        .rev()
        .find_map(|l| {
            let at = l.find("successor=")? + "successor=".len();
            l[at..]
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no successor in the log: {log}"))
}
