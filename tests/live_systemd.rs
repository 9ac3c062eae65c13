//! The service unit and its sockets under a live systemd, installed
//! exactly as docs/deploy.md's fresh-server steps say: the blocks marked
//! `deploy-step` there are run word for word, with the operator's own
//! certificate files (a CA this test makes, for example.org). Then
//! `tests/ops/live-systemd-inside.sh` checks, inside: the service becomes
//! active (Type=notify, once its pages are rendered); every page and the
//! 404 answer over HTTPS/2; a render the start did not make works under
//! the system-call filter; an intro request is stored in the state folder,
//! owned by the service's dynamic user; the operator's command (the
//! guide's) lists it; HTTP redirects; five `systemctl restart`s and three
//! `systemctl reload`s under load (bench/swap-load.mjs) fail no request,
//! each reload with a new main PID (the worst wait of each is printed);
//! HTTP/3 on the UDP socket `citizen-site-quic.socket` holds, advertised
//! by every answer, and three reloads under HTTP/3 load failing no
//! request: judged by Chromium, a page loaded over h3 running its own
//! fetch loop (`tests/ops/chromium-quic.mjs`), with the bench's own client
//! (`bench/h3-load/`) beside it for volume;
//! the journal holds no error; a changed environment file is applied by
//! `systemctl reload` (no daemon-reload), and a broken one fails the
//! reload naming each setting, with the old process serving on; and,
//! last, a reload to a binary that exits at once fails, with the old
//! process serving on.
//!
//! Then the operator's commands of docs/operate.md's "Under systemd",
//! word for word too: intro, checkouts and team as the service's user; a
//! backup between two posts; the restore with visitors arriving; the
//! backup's posts back, the later one gone, every file the service's user's,
//! and a post after it stored.
//!
//! Safety: systemd never sees this machine's own files. The project's own
//! harness (`tests/support/throwaway_systemd.rs`) boots it as PID 1 of its
//! own PID namespace in a root that is an overlay of / whose writes go to
//! a tmpfs, with fresh tmpfs on /tmp, /var/tmp and /run, its own mount,
//! cgroup, UTS, IPC and network namespaces, and a target that starts
//! nothing but sysinit. Never boot systemd on this machine's root: its
//! boot-time clean-up empties the real /tmp.
//!
//! Needs root, util-linux (unshare, nsenter), systemd, dbus, Node.js, curl,
//! openssl, Chromium and the npm package playwright-core (.ci/run installs
//! them).

use crate::support;

use std::path::Path;

use support::throwaway_systemd::Throwaway;
use support::{certificates, deploy_step, needs, Dir};

const BIN: &str = env!("CARGO_BIN_EXE_citizen-site");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn the_unit_and_its_sockets_serve_restart_under_load_and_log_no_error_under_a_live_systemd() {
    for (tool, package) in [
        ("unshare", "util-linux"),
        ("nsenter", "util-linux"),
        ("ip", "iproute2"),
        ("systemctl", "systemd"),
        ("dbus-daemon", "dbus"),
        ("node", "nodejs"),
        ("curl", "curl"),
        ("chromium", "chromium"),
    ] {
        needs(tool, package);
    }
    // SAFETY: getuid(2) has no preconditions.
    assert_eq!(
        unsafe { libc::getuid() },
        0,
        "booting systemd in namespaces needs root"
    );

    let work = Dir::new("live-systemd");
    let site = work.0.join("site");
    std::fs::create_dir_all(site.join("deploy")).unwrap();
    std::fs::create_dir_all(site.join("steps")).unwrap();
    certificates(&site, "example.org");
    // The guide's file names for the operator's pair.
    std::fs::rename(site.join("cert.pem"), site.join("fullchain.pem")).unwrap();
    std::fs::rename(site.join("key.pem"), site.join("privkey.pem")).unwrap();
    // The binary under test (bench/reload.mjs names a release build).
    let bin = std::env::var("LIVE_SYSTEMD_BIN").unwrap_or_else(|_| BIN.to_owned());
    std::fs::copy(&bin, site.join("citizen-site")).unwrap();
    for unit in [
        "citizen-site.service",
        "citizen-site.socket",
        "citizen-site-http.socket",
        "citizen-site-quic.socket",
    ] {
        std::fs::copy(
            Path::new(ROOT).join("deploy").join(unit),
            site.join("deploy").join(unit),
        )
        .unwrap();
    }
    // The scripts run inside: the checks themselves, the load of the
    // publishes, and Chromium's fetch loop.
    for (from, to) in [
        ("tests/ops/live-systemd-inside.sh", "inside.sh"),
        ("bench/swap-load.mjs", "swap-load.mjs"),
        ("tests/ops/chromium-quic.mjs", "chromium-quic.mjs"),
    ] {
        std::fs::copy(Path::new(ROOT).join(from), site.join(to)).unwrap();
    }
    // The bench's HTTP/3 client (a package of the workspace, which
    // `cargo test` does not build for this package's tests).
    std::fs::copy(support::built::h3_load(), site.join("h3-load")).unwrap();
    // The driver Chromium's fetch loop imports (the root's /tmp and
    // /var/tmp are its own, so nothing is reached through the checkout).
    let driver = Path::new(ROOT).join("node_modules/playwright-core");
    assert!(
        driver.join("package.json").is_file(),
        "{} is missing: run `npm ci`",
        driver.display()
    );
    std::fs::create_dir_all(site.join("node_modules")).unwrap();
    let copied = std::process::Command::new("cp")
        .arg("-R")
        .arg(&driver)
        .arg(site.join("node_modules"))
        .status()
        .unwrap();
    assert!(copied.success(), "cp -R {}", driver.display());
    let deploy = std::fs::read_to_string(Path::new(ROOT).join("docs/deploy.md")).unwrap();
    let operate = std::fs::read_to_string(Path::new(ROOT).join("docs/operate.md")).unwrap();
    for (guide, steps) in [
        (&deploy, &["own-certificate", "service", "operate"][..]),
        (
            &operate,
            &[
                "as-the-service",
                "commands",
                "backup",
                "restore",
                "check-before-reload",
            ][..],
        ),
    ] {
        for step in steps {
            std::fs::write(
                site.join("steps").join(format!("{step}.sh")),
                deploy_step(guide, step),
            )
            .unwrap();
        }
    }

    let booted = Throwaway::boot(&work.0);
    let (ok, said) = booted.run(&["bash", "/live/site/inside.sh"], 900);
    println!("{said}");
    assert!(
        ok,
        "under a live systemd:\n{said}\n--- boot\n{}",
        booted.log()
    );
    assert!(said.contains("ok: no error in the journal"), "{said}");
    assert!(
        said.contains("ok: HTTP/3 on UDP 443")
            && said.contains("ok: three reloads under HTTP/3 load, judged by Chromium"),
        "{said}"
    );
    assert!(
        said.contains("ok: three reloads under load") && said.contains("failed, and pid"),
        "{said}"
    );
    assert!(
        said.contains("ok: the guide's check passes on the running host")
            && said.contains("ok: a changed environment file is applied by systemctl reload")
            && said.contains("ok: a broken environment file fails the reload naming both settings")
            && said.contains("ok: the operator's wrapper passes the service's settings"),
        "{said}"
    );
    let waits = said
        .lines()
        .find_map(|l| l.strip_prefix("waits: "))
        .unwrap_or_else(|| panic!("no waits line: {said}"));
    println!("worst waits under load (this build): {waits}");
    // For bench/reload.mjs, which runs this test on a release build.
    if let Ok(out) = std::env::var("LIVE_SYSTEMD_WAITS_OUT") {
        std::fs::write(out, waits).unwrap();
    }
}
