//! What the tests that run the binary as a process share (`tests/https.rs`,
//! `tests/fleet.rs`, `tests/deploy.rs`, `tests/new_page.rs`,
//! `tests/swaps.rs`, `tests/live_systemd.rs`, `tests/monitoring.rs`): a
//! temporary folder removed
//! when dropped, the check for a Debian tool, which names the package
//! rather than install it, a free port, curl, waiting for a condition, a
//! test CA with a certificate, and a guide's block as an operator pastes
//! it. [`tls_site`] holds the HTTPS tests' parts (pebble, TLS clients),
//! [`pg`] a PostgreSQL database of a test's own and a proxy it cuts,
//! [`throwaway_systemd`] boots a real systemd in a throwaway root for
//! `tests/live_systemd.rs`, and [`built`] builds the binaries a test runs
//! that `cargo test` does not build for it.

// Each test uses some of these.
#![allow(dead_code)]

pub mod built;
pub mod h3;
pub mod new_page_build;
pub mod pg;
pub mod throwaway_systemd;
pub mod tls_site;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A folder removed when dropped.
pub struct Dir(pub PathBuf);

impl Dir {
    pub fn new(what: &str) -> Dir {
        let p = std::env::temp_dir().join(format!("citizen-{what}-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Fails unless `tool` is on the PATH, naming the package to install.
pub fn needs(tool: &str, package: &str) {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .stdout(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(found, "{tool} is needed: apt-get install {package}");
}

/// A port nothing listens on now, for a server the test starts later.
/// From below the kernel's ephemeral range (Linux's starts at 32768): a
/// port the kernel hands out may be taken by any outgoing connection
/// before the server binds it ("Address already in use", seen when many
/// servers start at once). A counter per process, from a place of its own,
/// keeps two tests of one process apart; a claim on the port keeps tests
/// of other processes off it (nextest runs each test in its own).
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    const FIRST: u32 = 20_000;
    const SPAN: u32 = 12_000;
    let start = std::process::id().wrapping_mul(7919) % SPAN;
    for _ in 0..SPAN {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = (FIRST + (start + n) % SPAN) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() && claimed(port) {
            return port;
        }
    }
    panic!(
        "no free port from {FIRST} to {} (each is in use or claimed)",
        FIRST + SPAN - 1
    );
}

/// Claims `port` for this process's life: a lock on the port's byte of
/// one shared file (`citizen-test-ports-UID.lock` in the temporary folder),
/// an open-file-description lock, which the kernel lets go when the
/// process ends, however it ends. False only when another process holds
/// it. Where the file cannot be opened or locked at all (a file system
/// without locks), every port counts as claimed, as the bind check alone
/// did before nextest, and the test says so once.
fn claimed(port: u16) -> bool {
    use std::os::fd::AsRawFd;
    static FILE: std::sync::OnceLock<Option<std::fs::File>> = std::sync::OnceLock::new();
    let file = FILE.get_or_init(|| {
        // SAFETY: getuid has no failure.
        let uid = unsafe { libc::getuid() };
        let path = std::env::temp_dir().join(format!("citizen-test-ports-{uid}.lock"));
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path);
        match opened {
            Ok(file) => Some(file),
            Err(e) => {
                eprintln!(
                    "free_port: {}: {e}: ports are not claimed across processes",
                    path.display()
                );
                None
            }
        }
    });
    let Some(file) = file else { return true };
    // SAFETY: a zeroed flock is a valid value; fcntl reads it.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = libc::off_t::from(port);
    lock.l_len = 1;
    // SAFETY: a valid descriptor, kept open for the process's life.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &lock) } == 0 {
        return true;
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        // Held by another process.
        Some(libc::EAGAIN) | Some(libc::EACCES) => false,
        _ => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                eprintln!("free_port: locking a port failed ({e}): ports are not claimed across processes")
            });
            true
        }
    }
}

/// What curl writes to standard output for `args` (silent but for errors,
/// 20 s at most).
pub fn curl(args: &[&str]) -> String {
    needs("curl", "curl");
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "20"])
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether `ok` turns true within `secs` seconds (asked every 200 ms).
pub fn wait(secs: u64, mut ok: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        if ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}

/// What `cmd` writes to standard output; panics with its standard error
/// unless it succeeds.
pub fn stdout_of(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// In `dir`: a CA (`ca.pem`) and a certificate for `name` it signed
/// (`cert.pem`, key `key.pem`), ECDSA P-256, made by openssl (for
/// tests/swaps.rs and tests/live_systemd.rs).
pub fn certificates(dir: &std::path::Path, name: &str) {
    needs("openssl", "openssl");
    let run = |args: &[&str]| {
        stdout_of(Command::new("openssl").args(args).current_dir(dir));
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    let subject = format!("/CN={name}");
    run(&[
        &["req", "-x509"][..],
        &ec,
        &[
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=test CA",
        ],
    ]
    .concat());
    run(&[
        &["req"][..],
        &ec,
        &["-keyout", "key.pem", "-out", "leaf.csr", "-subj", &subject],
    ]
    .concat());
    std::fs::write(
        dir.join("ext"),
        format!("subjectAltName=DNS:{name}\nbasicConstraints=CA:FALSE\n"),
    )
    .unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "cert.pem",
        "-days",
        "2",
        "-extfile",
        "ext",
    ]);
}

/// The block of a guide marked `<!-- deploy-step: NAME -->` (the first
/// fenced block after the marker, whatever its language, without the
/// indentation of its fence), as an operator would paste it.
pub fn deploy_step(guide: &str, name: &str) -> String {
    let marker = format!("<!-- deploy-step: {name} -->");
    let after = guide
        .split(&marker)
        .nth(1)
        .unwrap_or_else(|| panic!("no guide has the step {marker}"));
    let (before, fenced) = after
        .split_once("```")
        .unwrap_or_else(|| panic!("step {name} is not followed by a fenced block"));
    // The block's lines are indented as its fence is (in a list item).
    let indent = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    let block = fenced
        .split("```")
        .next()
        .and_then(|b| b.split_once('\n'))
        .map(|(_, body)| body)
        .unwrap_or_else(|| panic!("step {name} is not followed by a fenced block"));
    block
        .lines()
        .map(|l| l.strip_prefix(indent).unwrap_or(l))
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Every route the site answers: each page and post, each asset, and what
/// is not a page (`tests/pack.rs`'s and `tests/http3.rs`'s same-bytes
/// checks walk it).
pub fn routes() -> Vec<String> {
    let manifest = citizen_site::assets::Manifest::embedded();
    let content = citizen_site::content::Content::embedded(&manifest).unwrap();
    let mut paths = content.page_paths();
    paths.extend(manifest.files.iter().map(|f| f.url.clone()));
    paths.extend(
        [
            "/sitemap.xml",
            "/robots.txt",
            "/no-such-page",
            "/blog/no-such-post",
        ]
        .map(String::from),
    );
    paths
}

/// A copy of the checkout's sources, to edit: what `pack` reads.
pub fn checkout_copy(dir: &Path) -> PathBuf {
    const ROOT: &str = env!("CARGO_MANIFEST_DIR");
    let root = dir.join("checkout");
    std::fs::create_dir_all(&root).unwrap();
    for file in [
        "build.rs",
        "Cargo.toml",
        "Cargo.lock",
        "package.json",
        "package-lock.json",
        "tsconfig.json",
    ] {
        std::fs::copy(Path::new(ROOT).join(file), root.join(file)).unwrap();
    }
    let status = Command::new("cp")
        .args([
            "-r",
            "client",
            "ssr-bundle",
            "content",
            "server",
            "migrations",
        ])
        .arg(&root)
        .current_dir(ROOT)
        .status()
        .unwrap();
    assert!(status.success());
    // Hard links, not a symlink: esbuild names a module by its real path,
    // and a path outside the checkout would change the chunks' hashes.
    let modules = Path::new(ROOT).join("node_modules");
    let linked = Command::new("cp")
        .arg("-al")
        .arg(&modules)
        .arg(&root)
        .status()
        .unwrap();
    if !linked.success() {
        let copied = Command::new("cp")
            .arg("-a")
            .arg(&modules)
            .arg(&root)
            .status()
            .unwrap();
        assert!(copied.success());
    }
    root
}

/// What `citizen-site pack OUT`, run in the checkout `root` by this
/// build's binary, did.
pub fn pack(root: &Path, out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_citizen-site"))
        .arg("pack")
        .arg(out)
        .current_dir(root)
        .output()
        .expect("the binary runs")
}

/// A finished command's standard output, then its standard error.
pub fn said(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The journal line docs/deploy.md promises when the certificate comes
/// from `source` (`your own files`, `ACME`): the quoted text of its item
/// `- with SOURCE: "..."` (tests/guides.rs and tests/https.rs hold the
/// binary to it).
pub fn promised_journal_line(source: &str) -> String {
    let guide =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/deploy.md"))
            .unwrap();
    let item = format!("- with {source}: \"");
    let after = guide
        .split(&item)
        .nth(1)
        .unwrap_or_else(|| panic!("docs/deploy.md has no item {item:?}"));
    after
        .split('"')
        .next()
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
