//! What `deploy/` ships, checked the way it is used:
//!
//! - the systemd unit and its sockets verify (`systemd-analyze verify`,
//!   against the unit files of this machine's systemd) and its sandbox
//!   scores at most 1.4 (`systemd-analyze security --offline=true`);
//!   docs/deploy.md records that score and names every option the unit
//!   leaves off (tests/live_systemd.rs runs them under a live systemd);
//! - the image: `podman build` of the Containerfile's runtime stage from
//!   this build's binary, its filesystem unpacked from `podman save`, and
//!   the binary run inside exactly that filesystem under `chroot`, as the
//!   image's user with the image's environment: it must turn `/readyz`
//!   ready and serve every page. That proves the image holds all the binary
//!   needs at run time without a container runtime (which these machines
//!   refuse);
//! - the builder stage, read: the Node.js it pins is one the README,
//!   package.json and every npm package it installs accept (the whole
//!   build pulls images, so it does not run here).
//!
//! Needs Debian's `systemd` (systemd-analyze) and `podman`, and root for
//! `chroot` and `unshare` (.ci/run installs the packages; CI runs as root).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support;

use support::{curl, free_port, needs, wait, Dir};

const BIN: &str = env!("CARGO_BIN_EXE_citizen-site");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Runs `cmd`; panics with its output unless it succeeds. Returns stdout
/// and stderr together.
fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// The deploy guide, where the unit's score and its left-off options are
/// written down.
fn deploy_guide() -> String {
    std::fs::read_to_string(Path::new(ROOT).join("docs/deploy.md")).unwrap()
}

#[test]
fn the_service_unit_and_its_sockets_verify_and_its_sandbox_scores_at_most_1_4() {
    needs("systemd-analyze", "systemd");
    let unit = Path::new(ROOT).join("deploy/citizen-site.service");
    // A root holding this machine's systemd units, the binary where the
    // unit's ExecStart names it, and the unit where an operator puts it.
    let root = Dir::new("unit-root");
    let units = Path::new("/lib/systemd/system");
    assert!(
        units.is_dir(),
        "systemd's units are needed: apt-get install systemd"
    );
    std::fs::create_dir_all(root.0.join("usr/lib/systemd")).unwrap();
    run(Command::new("cp")
        .arg("-r")
        .arg(units)
        .arg(root.0.join("usr/lib/systemd/system")));
    std::fs::create_dir_all(root.0.join("usr/local/bin")).unwrap();
    std::fs::create_dir_all(root.0.join("etc/systemd/system")).unwrap();
    std::fs::copy(BIN, root.0.join("usr/local/bin/citizen-site")).unwrap();
    let units = [
        "citizen-site.service",
        "citizen-site.socket",
        "citizen-site-http.socket",
        "citizen-site-quic.socket",
    ];
    for name in units {
        std::fs::copy(
            Path::new(ROOT).join("deploy").join(name),
            root.0.join("etc/systemd/system").join(name),
        )
        .unwrap();
    }
    let out = run(Command::new("systemd-analyze")
        .arg("verify")
        .arg(format!("--root={}", root.0.display()))
        .args(units));
    assert_eq!(
        out.trim(),
        "",
        "systemd-analyze verify has something to say"
    );

    let out = run(Command::new("systemd-analyze")
        .args(["security", "--offline=true", "--no-pager"])
        .arg(&unit)
        .env("SYSTEMD_COLORS", "0"));
    let overall = out
        .lines()
        .find(|l| l.contains("Overall exposure level for citizen-site.service:"))
        .unwrap_or_else(|| panic!("{out}"));
    let score: f64 = overall
        .split(": ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{overall}"));
    // 1.4 was the unit's score while it bound its own ports.
    assert!(score <= 1.4, "exposure {score} (at most 1.4):\n{out}");
    let deploy = deploy_guide();
    let recorded = format!("Overall exposure level for citizen-site.service: {score:.1}");
    assert!(
        deploy.contains(&recorded),
        "docs/deploy.md records the score as the command prints it: {recorded:?}"
    );
    // Each check the unit fails is named in the guide with its reason.
    for line in out.lines().filter(|l| l.trim_start().starts_with('✗')) {
        let option = line
            .trim_start()
            .trim_start_matches('✗')
            .split_whitespace()
            .next()
            .unwrap();
        let name = option.split(['=', '/']).next().unwrap();
        assert!(
            deploy.contains(&format!("`{name}")),
            "docs/deploy.md does not say why {option} is left off"
        );
    }
}

/// The Node.js that `podman build` of the whole Containerfile builds the
/// front end with is one the project supports: the README's "Node.js N+",
/// package.json's engines (`>=N`), and the engines of every npm package
/// `npm ci` installs (react-router's among them) all accept the major the
/// builder pins. Debian bookworm's own `nodejs` is 18, which none of
/// that allows. The whole build cannot run here (it pulls the Rust and
/// Node.js images): the image test below builds only the runtime stage.
#[test]
fn the_builder_builds_with_a_node_js_the_readme_and_every_package_accept() {
    needs("node", "nodejs");
    let file = std::fs::read_to_string(Path::new(ROOT).join("deploy/Containerfile")).unwrap();
    // Each instruction on one line, its continuations joined.
    let joined = file
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
        .replace("\\\n", " ");
    let lines: Vec<&str> = joined.lines().collect();
    // The stages, each with its image and its lines.
    let mut stages: Vec<(String, String, Vec<&str>)> = Vec::new();
    for line in &lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["FROM", image, "AS", name] => {
                stages.push(((*name).to_owned(), (*image).to_owned(), Vec::new()))
            }
            ["FROM", ..] => panic!("every stage is named: {line}"),
            _ => {
                if let Some(stage) = stages.last_mut() {
                    stage.2.push(line);
                }
            }
        }
    }
    let stage = |name: &str| {
        stages
            .iter()
            .find(|s| s.0 == name)
            .unwrap_or_else(|| panic!("no stage {name} in deploy/Containerfile: {stages:?}"))
    };
    let builder = stage("builder");
    assert!(
        !builder
            .2
            .iter()
            .any(|l| l.contains("apt-get") && l.split_whitespace().any(|w| w == "nodejs")),
        "the builder installs Debian's nodejs (18 on bookworm): {:?}",
        builder.2
    );
    // The official image, by its major, on the Rust image's Debian release
    // (the node binary runs on the builder's glibc).
    let node = stages
        .iter()
        .find(|s| s.1.starts_with("docker.io/library/node:"))
        .unwrap_or_else(|| panic!("no stage FROM docker.io/library/node: {stages:?}"));
    let tag = node.1.trim_start_matches("docker.io/library/node:");
    let (major, variant) = tag
        .split_once('-')
        .unwrap_or_else(|| panic!("{tag}: pinned by major and Debian release (22-bookworm-slim)"));
    let major: u32 = major
        .parse()
        .unwrap_or_else(|_| panic!("{tag}: pinned by its major, a number"));
    let release = variant.trim_end_matches("-slim");
    assert!(
        builder.1.ends_with(&format!("-{release}")),
        "the node image ({}) and the builder ({}) are of one Debian release",
        node.1,
        builder.1
    );
    // node, and npm whole, with npm and npx linked as the image links them.
    let from_node = format!("--from={}", node.0);
    for (what, wanted) in [
        ("node", "/usr/local/bin/node"),
        ("npm", "/usr/local/lib/node_modules"),
    ] {
        assert!(
            builder
                .2
                .iter()
                .any(|l| l.starts_with("COPY") && l.contains(&from_node) && l.contains(wanted)),
            "the builder copies {what} ({wanted}) from the node stage: {:?}",
            builder.2
        );
    }
    for link in [
        "../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm",
        "../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx",
    ] {
        assert!(
            builder
                .2
                .iter()
                .any(|l| l.contains(&format!("ln -s {link}"))),
            "the builder links {link}: {:?}",
            builder.2
        );
    }

    // The README's requirement is package.json's engines.
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let needed: u32 = readme
        .split("Node.js ")
        .skip(1)
        .find_map(|rest| rest.split_once("+")?.0.parse().ok())
        .expect("the README says which Node.js it needs (Node.js N+)");
    let package: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(ROOT).join("package.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        package["engines"]["node"],
        format!(">={needed}"),
        "package.json's engines say what the README says (Node.js {needed}+)"
    );
    assert!(
        major >= needed,
        "node:{tag} is older than the README's {needed}+"
    );
    // Every package npm ci installs on Linux, as the lockfile records its engines.
    let lock: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(ROOT).join("package-lock.json")).unwrap(),
    )
    .unwrap();
    let mut ranges: Vec<(String, String)> = vec![(
        "package.json".into(),
        package["engines"]["node"].as_str().unwrap().into(),
    )];
    for (path, entry) in lock["packages"].as_object().unwrap() {
        // A platform's own package for another system (sharp's prebuilt
        // libvips for Windows, say) is never installed in the builder.
        let other_system = entry["os"]
            .as_array()
            .is_some_and(|os| !os.iter().any(|o| o == "linux"));
        if other_system {
            continue;
        }
        if let Some(range) = entry["engines"]["node"].as_str() {
            ranges.push((
                path.trim_start_matches("node_modules/").into(),
                range.into(),
            ));
        }
    }
    assert!(
        ranges.iter().any(|(name, _)| name == "react-router"),
        "react-router declares its engines in package-lock.json"
    );
    // Read by npm's own rules (the semver package npm uses).
    let out = run(Command::new("node")
        .current_dir(ROOT)
        .arg("-e")
        .arg(
            "const semver = require('semver');
             const [major, ranges] = [process.argv[1], JSON.parse(process.argv[2])];
             const refused = ranges.filter(([, r]) => {
               try { return !semver.intersects(r, `^${major}.0.0`); } catch { return true; }
             });
             console.log(JSON.stringify(refused));",
        )
        .arg(major.to_string())
        .arg(serde_json::to_string(&ranges).unwrap()));
    let refused: Vec<(String, String)> = serde_json::from_str(out.trim()).unwrap();
    assert!(
        refused.is_empty(),
        "Node.js {major} (node:{tag}) is outside these packages' engines: {refused:?}"
    );
}

/// `podman build -f deploy/Containerfile .` run in a checkout sends the
/// checkout as the build context, and the builder's `COPY . .` takes all
/// of it: without an ignore file, the host's `node_modules/` (whose
/// `.package-lock.json` makes build.rs skip `npm ci`, so the image would
/// bundle with the host's platform binaries, esbuild's among them), its
/// `target/`, and `data/` with the database and its secrets. The ignore
/// file leaves those out and keeps every tracked file (and `.git`, whose
/// HEAD names the commit `/metrics` reports). Checked by podman itself, on
/// a context of every tracked path (empty) and the artifacts a checkout
/// holds; Docker reads `.dockerignore`, the same file.
#[test]
fn the_build_context_holds_the_sources_and_none_of_a_checkouts_artifacts() {
    needs("podman", "podman");
    needs("git", "git");
    let ignore = Path::new(ROOT).join(".containerignore");
    let text =
        std::fs::read_to_string(&ignore).unwrap_or_else(|e| panic!("{}: {e}", ignore.display()));
    assert_eq!(
        std::fs::read_to_string(Path::new(ROOT).join(".dockerignore")).ok(),
        Some(text),
        ".dockerignore (Docker's) says what .containerignore (podman's) says"
    );
    let work = Dir::new("context");
    let context = work.0.join("context");
    let tracked = run(Command::new("git").current_dir(ROOT).args(["ls-files"]));
    let mut kept: Vec<String> = tracked.lines().map(|l| format!("/ctx/{l}")).collect();
    kept.push("/ctx/.git/HEAD".into());
    let left_out = [
        "node_modules/.package-lock.json",
        "node_modules/@esbuild/linux-x64/bin/esbuild",
        "target/release/citizen-site",
        "target-clippy/debug/citizen-site",
        "data/citizen-site.db",
        "data/citizen-site.db-wal",
        "data/acme/acme-v02.api.letsencrypt.org_directory/example.org.pem",
        "tests/ops/observatory/node_modules/prom/index.js",
        "tests/e2e/artifacts/trace.zip",
        "bk.db",
        "backups/site-2026-11-29.db",
    ];
    for path in kept
        .iter()
        .map(|p| p.trim_start_matches("/ctx/").to_owned())
        .chain(left_out.iter().map(|p| (*p).to_owned()))
    {
        let file = context.join(&path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "").unwrap();
    }
    std::fs::copy(&ignore, context.join(".containerignore")).unwrap();
    let containerfile = work.0.join("Containerfile");
    std::fs::write(&containerfile, "FROM scratch AS context\nCOPY . /ctx/\n").unwrap();
    let tag = format!(
        "localhost/citizen-site-context:{}",
        uuid::Uuid::new_v4().simple()
    );
    run(Command::new("podman")
        .args(["build", "--quiet", "-f"])
        .arg(&containerfile)
        .args(["-t", &tag])
        .arg(&context));
    let archive = work.0.join("context.tar");
    save_and_remove(&tag, &archive);
    let fs = work.0.join("fs");
    unpack(&archive, &fs);
    let mut copied = Vec::new();
    files_under(&fs, &fs, &mut copied);
    for path in left_out {
        let path = format!("/ctx/{path}");
        assert!(!copied.contains(&path), "{path} is in the build context");
    }
    let missing: Vec<&String> = kept.iter().filter(|p| !copied.contains(p)).collect();
    assert!(
        missing.is_empty(),
        "tracked files the build context leaves out: {missing:?}"
    );
}

/// The image `tag` written to `archive` (an OCI archive), then removed
/// from podman's store, saved or not.
fn save_and_remove(tag: &str, archive: &Path) {
    let saved = Command::new("podman")
        .args(["save", "--quiet", "--format", "oci-archive", "-o"])
        .arg(archive)
        .arg(tag)
        .output()
        .unwrap();
    let _ = Command::new("podman")
        .args(["image", "rm", "--force", tag])
        .output();
    assert!(
        saved.status.success(),
        "podman save: {}",
        String::from_utf8_lossy(&saved.stderr)
    );
}

/// The OCI image `podman save` wrote, unpacked layer by layer into `fs`;
/// returns the image's config (User, Env, Entrypoint, ...).
fn unpack(archive: &Path, fs: &Path) -> serde_json::Value {
    let oci = archive.with_extension("oci");
    std::fs::create_dir_all(&oci).unwrap();
    std::fs::create_dir_all(fs).unwrap();
    run(Command::new("tar")
        .arg("-xf")
        .arg(archive)
        .arg("-C")
        .arg(&oci));
    let blob = |digest: &str| {
        oci.join("blobs/sha256")
            .join(digest.trim_start_matches("sha256:"))
    };
    let json = |p: PathBuf| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    };
    let index = json(oci.join("index.json"));
    let manifest = json(blob(index["manifests"][0]["digest"].as_str().unwrap()));
    for layer in manifest["layers"].as_array().unwrap() {
        run(Command::new("tar")
            .arg("--numeric-owner")
            .arg("-xpf")
            .arg(blob(layer["digest"].as_str().unwrap()))
            .arg("-C")
            .arg(fs));
    }
    json(blob(manifest["config"]["digest"].as_str().unwrap()))["config"].clone()
}

fn files_under(dir: &Path, base: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() && !p.is_symlink() {
            files_under(&p, base, out);
        } else {
            out.push(format!("/{}", p.strip_prefix(base).unwrap().display()));
        }
    }
}

#[test]
fn the_image_holds_everything_the_binary_needs_and_serves_every_page_from_it() {
    needs("podman", "podman");
    needs("unshare", "util-linux");
    needs("chroot", "coreutils");
    needs("curl", "curl");
    let work = Dir::new("image");
    // The builder stage's output, from this build's binary.
    let built = work.0.join("builder");
    run(Command::new(Path::new(ROOT).join("deploy/rootfs.sh"))
        .arg(BIN)
        .arg(&built));
    let context = work.0.join("context");
    std::fs::create_dir_all(&context).unwrap();
    let tag = format!(
        "localhost/citizen-site-test:{}",
        uuid::Uuid::new_v4().simple()
    );
    run(Command::new("podman")
        .args(["build", "--quiet", "--target", "runtime", "--build-context"])
        .arg(format!("builder={}", built.display()))
        .arg("-f")
        .arg(Path::new(ROOT).join("deploy/Containerfile"))
        .args(["-t", &tag])
        .arg(&context));
    let archive = work.0.join("image.tar");
    save_and_remove(&tag, &archive);
    let _ = std::fs::remove_dir_all(&built);

    let fs = work.0.join("fs");
    let config = unpack(&archive, &fs);
    let _ = std::fs::remove_file(&archive);
    assert_eq!(config["User"], "10001:10001", "an unprivileged user");
    assert_eq!(
        config["Entrypoint"],
        serde_json::json!(["/citizen-site", "serve"])
    );
    assert!(
        config["Volumes"].get("/data").is_some(),
        "the data directory is a volume"
    );
    // HTTP/3's UDP port beside the TCP ones.
    for port in ["3000/tcp", "8080/tcp", "8443/tcp", "8443/udp"] {
        assert!(
            config["ExposedPorts"].get(port).is_some(),
            "the image exposes {port}: {}",
            config["ExposedPorts"]
        );
    }

    // Nothing but the binary, the libraries ldd names, CA certificates and the user.
    let mut files = Vec::new();
    files_under(&fs, &fs, &mut files);
    for f in &files {
        let allowed = f == "/citizen-site"
            || f.starts_with("/lib/")
            || f.starts_with("/lib64/")
            || f.starts_with("/usr/lib/")
            || [
                "/etc/passwd",
                "/etc/group",
                "/etc/nsswitch.conf",
                "/etc/ssl/certs/ca-certificates.crt",
            ]
            .contains(&f.as_str());
        assert!(allowed, "{f} is in the image");
    }
    let ldd = run(Command::new("ldd").arg(BIN));
    for lib in ldd.split_whitespace().filter(|w| w.starts_with('/')) {
        assert!(
            files.iter().any(|f| f == lib),
            "{lib} (ldd) is missing from the image"
        );
    }
    assert!(!fs.join("bin/sh").exists(), "no shell");
    use std::os::unix::fs::MetadataExt;
    let data = std::fs::metadata(fs.join("data")).unwrap();
    assert_eq!(
        (data.uid(), data.gid(), data.mode() & 0o777),
        (10001, 10001, 0o700),
        "/data is the site's user's"
    );

    // The binary in exactly that filesystem, as the image's user, with the
    // image's environment: what a container runtime adds is /proc and /dev.
    for d in ["proc", "dev"] {
        std::fs::create_dir_all(fs.join(d)).unwrap();
    }
    let port = free_port();
    let log_path = work.0.join("server.log");
    let mut child = in_image(
        &fs,
        &config,
        &[
            ("ADDR", format!("127.0.0.1:{port}")),
            ("SSR_WORKERS", "1".into()),
        ],
        &log_path,
    );
    let base = format!("http://127.0.0.1:{port}");
    // Stops early when the process has stopped (then it is not ready).
    let answered = wait(60, || {
        child.try_wait().unwrap().is_some()
            || curl(&[
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                &format!("{base}/readyz"),
            ]) == "200"
    });
    let ready = answered && child.try_wait().unwrap().is_none();
    let server_log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    if !ready {
        end_in_image(&mut child);
        panic!("not ready inside the image's filesystem:\n{}", server_log());
    }
    let sitemap = curl(&[&format!("{base}/sitemap.xml")]);
    let mut paths: Vec<String> = sitemap
        .split("<loc>")
        .skip(1)
        .map(|s| {
            s.split("</loc>")
                .next()
                .unwrap()
                .trim_start_matches(base.as_str())
                .to_owned()
        })
        .collect();
    assert!(paths.len() >= 15, "{sitemap}");
    paths.extend(["/robots.txt", "/feed.xml", "/site.webmanifest"].map(String::from));
    for path in &paths {
        let status = curl(&[
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &format!("{base}{path}"),
        ]);
        assert_eq!(status, "200", "{path} from the image:\n{}", server_log());
    }
    assert_eq!(
        curl(&[
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &format!("{base}/no-such-page")
        ]),
        "404"
    );
    // The form stores into the volume.
    let posted = curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "-H",
        "content-type: application/json",
        "--data",
        r#"{"name":"Image Town","contactPerson":"Ana","email":"ana@example.org","website":"https://example.org","description":"Checking the image","tags":["Loyalty"]}"#,
        &format!("{base}/api/save-to-notion"),
    ]);
    assert_eq!(posted, "200", "{}", server_log());
    assert!(
        fs.join("data/citizen-site.db").exists(),
        "the database is in /data"
    );
    // SIGTERM to the server itself (PID 1 of its namespace, as a runtime
    // stops a container): it drains and exits 0, and nothing is left.
    // `unshare` forked it; `chroot --userspec` became it (the user change
    // clears the parent-death signal, so --kill-child alone cannot stop it).
    let server = server_under(&child)
        .unwrap_or_else(|| panic!("the server process under unshare ({})", child.id()));
    let exe = std::fs::read_link(format!("/proc/{server}/exe")).unwrap_or_default();
    assert!(
        exe.ends_with("citizen-site"),
        "pid {server} is the server: {}",
        exe.display()
    );
    run(Command::new("kill").arg("-TERM").arg(server.to_string()));
    let stopped = wait(20, || child.try_wait().unwrap().is_some());
    if !stopped {
        let _ = Command::new("kill")
            .arg("-KILL")
            .arg(server.to_string())
            .status();
        let _ = child.kill();
    }
    let status = child.wait().unwrap();
    assert!(
        stopped,
        "SIGTERM did not stop the server in 20 s:\n{}",
        server_log()
    );
    assert!(status.success(), "exit status {status}:\n{}", server_log());
    assert!(
        server_log().contains("shutting down: no new connections"),
        "it drained:\n{}",
        server_log()
    );
    assert!(
        !Path::new(&format!("/proc/{server}")).exists(),
        "the server process is gone"
    );

    // As docs/deploy.md runs it: HTTPS inside on one port, published on
    // another over TCP and UDP alike (`-p 443:8443 -p 443:8443/udp`, here
    // a free port for 443 and one for 8443, forwarded as a runtime does),
    // SITE_URL the public address. Every answer advertises HTTP/3 on the
    // public port, and HTTP/3 is served there.
    let ca = support::tls_site::TestCa::new();
    let (cert, key) = ca.leaf(&["localhost"], -60, 86400);
    let root = work.0.join("root.pem");
    std::fs::write(&root, ca.pem()).unwrap();
    for (name, pem) in [("cert.pem", cert), ("key.pem", key)] {
        std::fs::write(fs.join("data").join(name), pem).unwrap();
        std::os::unix::fs::chown(fs.join("data").join(name), Some(10001), Some(10001)).unwrap();
    }
    let (inside, outside, http) = (free_port(), free_port(), free_port());
    let log_path = work.0.join("server-https.log");
    let mut child = in_image(
        &fs,
        &config,
        &[
            ("HTTPS_ADDR", format!("127.0.0.1:{inside}")),
            ("HTTP_ADDR", format!("127.0.0.1:{http}")),
            ("TLS_CERT", "/data/cert.pem".into()),
            ("TLS_KEY", "/data/key.pem".into()),
            ("SITE_URL", format!("https://localhost:{outside}")),
            ("SSR_WORKERS", "1".into()),
        ],
        &log_path,
    );
    let server_log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    // Its tasks (the forwarding) run while curl, from this thread, asks.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let published = rt.block_on(async {
        let tcp = support::h3::TcpForward::new(outside, inside).await;
        let inner = support::h3::Target::local(inside, &root);
        let udp =
            support::h3::Relay::listening(outside, &inner, "127.0.0.1".parse().unwrap()).await;
        (tcp, udp)
    });
    let https = |path: &str| {
        curl(&[
            "--cacert",
            root.to_str().unwrap(),
            "--resolve",
            &format!("localhost:{outside}:127.0.0.1"),
            "-o",
            "/dev/null",
            "-w",
            "%{http_code} %header{alt-svc}",
            &format!("https://localhost:{outside}{path}"),
        ])
    };
    let ready = wait(60, || {
        child.try_wait().unwrap().is_some() || https("/readyz").starts_with("200")
    });
    let alt_svc = https("/pricing");
    let h3 = rt.block_on(async {
        let mut h3 = support::h3::H3::connect_to(&published.1.target).await?;
        h3.get("/pricing", &[]).await.map(|a| a.status)
    });
    end_in_image(&mut child);
    assert!(
        ready,
        "not ready over HTTPS inside the image:\n{}",
        server_log()
    );
    assert_eq!(
        alt_svc,
        format!("200 h3=\":{outside}\"; ma=86400"),
        "published on {outside}, served on {inside} inside:\n{}",
        server_log()
    );
    assert_eq!(
        h3,
        Ok(200),
        "HTTP/3 on the published port:\n{}",
        server_log()
    );
    drop(published);
}

/// The server process `unshare` forked (`chroot --userspec` became it).
fn server_under(child: &std::process::Child) -> Option<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children", pid = child.id()))
        .unwrap_or_default()
        .split_whitespace()
        .next()
        .and_then(|p| p.parse::<u32>().ok())
}

/// Ends the server under `child` by its id, then `child`: the user change
/// clears the parent-death signal, so `--kill-child` alone would leave the
/// server running.
fn end_in_image(child: &mut std::process::Child) {
    if let Some(server) = server_under(child) {
        let _ = Command::new("kill")
            .arg("-KILL")
            .arg(server.to_string())
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The binary run inside the image's filesystem `fs` as a runtime runs
/// it: its own PID namespace (the server is its PID 1, and nothing of it
/// outlives that process), the image's user and environment (`config`)
/// with `env` over it; its output to `log`. What a container runtime adds
/// is /proc and /dev.
fn in_image(
    fs: &Path,
    config: &serde_json::Value,
    env: &[(&str, String)],
    log: &Path,
) -> std::process::Child {
    let mut cmd = Command::new("unshare");
    cmd.args([
        "--mount",
        "--pid",
        "--fork",
        "--kill-child",
        "sh",
        "-c",
        r#"mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" && exec chroot --userspec=10001:10001 "$1" /citizen-site serve"#,
        "sh",
    ])
    .arg(fs)
    .env_clear()
    .stdin(Stdio::null());
    for kv in config["Env"].as_array().unwrap() {
        let (k, v) = kv.as_str().unwrap().split_once('=').unwrap();
        cmd.env(k, v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let log = std::fs::File::create(log).unwrap();
    cmd.stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap()
}
