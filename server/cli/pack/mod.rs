//! `citizen-site pack OUT`: publishes content without the Rust compiler.
//! Run in a checkout, it makes the site's payload from it with the code
//! build.rs runs ([`make`]), checks it as a server would at start, and
//! writes a new binary at OUT: this binary's engine (every byte the loader
//! maps, unchanged) with the new payload in place of its own
//! (server/payload/).
//!
//! It refuses, writing nothing, a checkout whose changes the engine cannot
//! carry ([`engine`]: its inputs' hashes are compiled in), a content file
//! that does not parse (the message `dev` shows), a payload a server would
//! refuse, an OUT that exists, and an OUT whose folder takes no new file
//! (tried with an empty file before the build).

pub mod engine;
pub mod make;
pub mod prove;

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::bail;

use crate::assets::Manifest;
use crate::content::blog::Drafts;
use crate::content::{Content, Source};
use crate::payload::{self, elf, format, Payload};
// make.rs reaches the front matter parser as `super::front_matter`, in the
// library and in build.rs alike.
use crate::content::front_matter;

/// A new file beside `out` (`.pack-WHAT-PID-N`): a short name (an OUT
/// near the length limit takes no suffix), and one no file has (a name
/// taken is someone else's, passed over and never removed).
fn new_file_beside(out: &Path, what: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    for n in 0..64 {
        let path = out.with_file_name(format!(".pack-{what}-{}-{n}", std::process::id()));
        match std::fs::File::create_new(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "every name tried is taken",
    ))
}

/// Removes what an earlier `pack` of this user left in `dir` when it was
/// stopped (Ctrl-C, a kill) before it could: entries named `{prefix}PID-…`
/// whose process is gone. A live pack's, and other users', are left.
fn sweep_stale(dir: &Path, prefix: &str) {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid(2) cannot fail.
    let own = unsafe { libc::getuid() };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        if meta.uid() != own || crate::app::handover::is_running(pid) {
            continue;
        }
        let path = entry.path();
        let _ = match meta.is_dir() {
            true => std::fs::remove_dir_all(&path),
            false => std::fs::remove_file(&path),
        };
    }
}

/// Makes and removes an empty file beside `out`: whether its folder takes
/// the new binary, asked of the file system itself.
fn try_a_file_beside(out: &Path) -> std::io::Result<()> {
    let (trial, _) = new_file_beside(out, "trial")?;
    std::fs::remove_file(&trial)
}

/// Packs the checkout at `root` into a new binary at `out`.
pub fn run(root: &Path, out: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    if out.symlink_metadata().is_ok() {
        bail!(
            "{} exists: pack writes a new file and never replaces one (name another, or remove it)",
            out.display()
        );
    }
    // Before the build (a minute): where it goes must take a new file.
    let dir = match out.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => bail!(
            "{} is not a file's path: name the new binary",
            out.display()
        ),
    };
    if !dir.is_dir() {
        match dir.exists() {
            true => bail!(
                "cannot write {}: {} is a file, not a folder; OUT goes in an existing folder",
                out.display(),
                dir.display()
            ),
            false => bail!(
                "cannot write {}: the folder {} does not exist; {} or name another",
                out.display(),
                dir.display(),
                crate::config::make_it_first(dir)
            ),
        }
    }
    // A binary an interrupted pack left beside OUT (up to 200 MB each).
    for what in ["new", "trial"] {
        sweep_stale(dir, &format!(".pack-{what}-"));
    }
    // Tried for real: access(2) lets root through everywhere, yet /sys,
    // /proc or a read-only mount take no new file, even from root.
    if let Err(e) = try_a_file_beside(out) {
        let user = crate::config::whoami();
        let may = crate::db::sqlite_file::may(dir, libc::W_OK | libc::X_OK);
        match e.kind() {
            std::io::ErrorKind::PermissionDenied if !may => bail!(
                "cannot write {}: the folder {} is not writable by {user}; name a folder {user} may write, or give {user} write access to it",
                out.display(),
                dir.display()
            ),
            // Refused though access(2) allows it: the file system's own rule.
            kind => bail!(
                "cannot write {}: the folder {} takes no new file ({}); name a folder on another file system",
                out.display(),
                dir.display(),
                match kind {
                    std::io::ErrorKind::PermissionDenied => "permission denied".into(),
                    _ => crate::config::io_reason(&e),
                }
            ),
        }
    }
    let root = &crate::dev::builder::checkout_root(root, "run pack in one")?;
    // First what no npm install would fix: a change the engine must carry.
    let changed = engine_changes(&engine::inputs(root).map_err(anyhow::Error::msg)?);
    if !changed.is_empty() {
        bail!(
            "this checkout changes the engine, which a pack cannot carry:\n{}\nbuild the binary again (cargo build --release) and pack with that one",
            changed.iter().map(|c| format!("  {c}")).collect::<Vec<_>>().join("\n")
        );
    }
    crate::dev::builder::has_packages(root)?;

    let work = WorkDir::new()?;
    // The snapshot maker prints its progress on stdout: to stderr with it,
    // stdout is this command's one line.
    let files = to_stderr(|| make::files(root, &work.0, &mut |w| eprintln!("warning: {w}")))
        .map_err(anyhow::Error::msg)?;
    // What the images (processed photos, SVGs, preview cards, icons) weigh.
    let images: usize = files
        .iter()
        .filter(|(name, _)| name.starts_with("web/assets/images/"))
        .map(|(_, bytes)| bytes.len())
        .sum();
    let bytes: &'static [u8] =
        Box::leak(format::encode(&payload::engine_hash(), &files).into_boxed_slice());
    drop(files);
    check(&Payload::read(bytes).map_err(anyhow::Error::msg)?)?;

    let exe = std::fs::read("/proc/self/exe").map_err(|e| {
        anyhow::anyhow!(
            "cannot read this binary (/proc/self/exe): {}",
            crate::config::io_reason(&e)
        )
    })?;
    let packed = elf::replace(&exe, bytes).map_err(anyhow::Error::msg)?;
    drop(exe);
    // Every page rendered by the new binary itself before it is at OUT.
    let new = NewFile::write(out, &packed)?;
    let (proved, proving) = prove::prove(&new.path, &work.0)?;
    if !proved.unrendered.is_empty() {
        bail!(
            "{}\nnothing was written at {}",
            refusal(&proved.unrendered, root, &work.0.join("web/ssr.js.map")),
            out.display()
        );
    }
    new.link(out)?;
    // The posts it publishes later, and when (server/content/blog/schedule.rs).
    for line in crate::content::schedule_of(bytes) {
        println!("{line}");
    }
    println!(
        "packed {} in {:.1} s: this binary's engine with the site of {} ({:.1} MB, of which the site {:.1} MB, its images {:.2} MB); its {} pages rendered in {:.1} s",
        out.display(),
        started.elapsed().as_secs_f64(),
        root.display(),
        packed.len() as f64 / 1e6,
        bytes.len() as f64 / 1e6,
        images as f64 / 1e6,
        proved.rendered,
        proving.as_secs_f64(),
    );
    Ok(())
}

/// What `pack` says of pages that did not render: each one's path, its
/// error, and where it threw in the checkout's sources (`file:line:col`
/// and the line, through the server bundle's source map in `map`).
fn refusal(pages: &[crate::render::Unrendered], root: &Path, map_file: &Path) -> String {
    let map = std::fs::read(map_file)
        .ok()
        .and_then(|bytes| sourcemap::SourceMap::from_slice(&bytes).ok());
    // The map names sources from its own folder (the build's scratch
    // folder): said from the checkout's root.
    let from_root = |file: String| -> String {
        let beside = map_file.parent().unwrap_or(Path::new(".")).join(&file);
        match (beside.canonicalize(), root.canonicalize()) {
            (Ok(real), Ok(root)) => real
                .strip_prefix(&root)
                .map_or(file, |p| p.display().to_string()),
            _ => file,
        }
    };
    let mut said = match pages.len() {
        1 => "a page of the new site does not render:".to_owned(),
        n => format!("{n} pages of the new site do not render:"),
    };
    for page in pages {
        said.push_str(&format!("\n  {}: {}", page.path, page.error));
        let at = page
            .stack
            .as_deref()
            .zip(map.as_ref())
            .and_then(|(stack, map)| crate::dev::problem::map_stack(stack, map).1);
        if let Some((file, line, column)) = at {
            let file = from_root(file);
            said.push_str(&format!("\n    at {file}:{line}:{column}"));
            if let Some(text) = crate::dev::problem::source_line(root, &file, line) {
                said.push_str(&format!("\n      {}", text.trim()));
            }
        }
    }
    said
}

/// How the checkout's engine inputs differ from this binary's, one line each.
fn engine_changes(checkout: &[(String, String)]) -> Vec<String> {
    let ours = payload::ENGINE_INPUTS;
    let mut out = Vec::new();
    for (name, sha) in checkout {
        match ours.iter().find(|(n, _)| n == name) {
            None => out.push(format!("{name} (new)")),
            Some((_, s)) if s != sha => out.push(format!("{name} (changed)")),
            Some(_) => {}
        }
    }
    for (name, _) in ours {
        if !checkout.iter().any(|(n, _)| n == name) {
            out.push(format!("{name} (removed)"));
        }
    }
    out
}

/// What `serve` parses at start, parsed now: the content files, the
/// messages, the manifest. A payload that passes starts.
fn check(payload: &Payload) -> anyhow::Result<()> {
    let manifest = Manifest::of(payload).map_err(anyhow::Error::msg)?;
    Content::load(Source::Payload(payload), &manifest, Drafts::Hide)?;
    payload
        .text(crate::messages::MESSAGES_FILE)
        .and_then(|text| crate::messages::parse(text).map(drop))
        .map_err(anyhow::Error::msg)?;
    Ok(())
}

/// The new binary, written whole in a hidden file beside OUT (executable,
/// synced) and linked at OUT once its pages have rendered: all or nothing.
/// Removed when dropped (only the file this run made).
struct NewFile {
    path: PathBuf,
}

impl NewFile {
    fn write(out: &Path, bytes: &[u8]) -> anyhow::Result<NewFile> {
        let failed = |e: std::io::Error| {
            anyhow::anyhow!(
                "{}; nothing was written",
                crate::config::io_problem(out, true, &e)
            )
        };
        let (path, mut f) = new_file_beside(out, "new").map_err(failed)?;
        // Removed on any error from here on.
        let new = NewFile { path };
        f.write_all(bytes).map_err(failed)?;
        f.set_permissions(std::fs::Permissions::from_mode(0o755))
            .map_err(failed)?;
        f.sync_all().map_err(failed)?;
        Ok(new)
    }

    /// Links the file at `out`, which fails if `out` appeared meanwhile:
    /// nothing is replaced.
    fn link(self, out: &Path) -> anyhow::Result<()> {
        std::fs::hard_link(&self.path, out).map_err(|e| {
            anyhow::anyhow!(
                "{}; nothing was written",
                crate::config::io_problem(out, true, &e)
            )
        })
    }
}

impl Drop for NewFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Runs `f` with standard output going to standard error.
fn to_stderr<T>(f: impl FnOnce() -> T) -> T {
    let _ = std::io::stdout().flush();
    // SAFETY: dup/dup2/close on the process's own standard descriptors.
    let saved = unsafe { libc::dup(1) };
    if saved < 0 || unsafe { libc::dup2(2, 1) } < 0 {
        return f();
    }
    let out = f();
    let _ = std::io::stdout().flush();
    // SAFETY: as above; `saved` is the descriptor dup returned.
    unsafe {
        libc::dup2(saved, 1);
        libc::close(saved);
    }
    out
}

/// The build's scratch folder, removed when dropped.
struct WorkDir(PathBuf);

impl WorkDir {
    /// A new folder of this user's alone (0700, a name no one has: the new
    /// binary runs from it when OUT's folder is noexec), after sweeping
    /// the ones interrupted packs left.
    fn new() -> anyhow::Result<WorkDir> {
        use std::os::unix::fs::DirBuilderExt;
        let tmp = std::env::temp_dir();
        sweep_stale(&tmp, "citizen-site-pack-");
        let dir = tmp.join(format!(
            "citizen-site-pack-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot make the build's scratch folder {}: {}",
                    dir.display(),
                    crate::config::io_reason(&e)
                )
            })?;
        Ok(WorkDir(dir))
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
