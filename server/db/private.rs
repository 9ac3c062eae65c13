//! The site's files on this machine are its user's alone, whatever the
//! umask the binary was started under: the SQLite database holds the
//! session-ticket keys (with them, recorded TLS sessions can be read), the
//! ACME account key and the intro requests, and the ACME cache holds the
//! certificate's key.
//!
//! What the binary makes is made private: the database's folder 0700
//! ([`make_folder`]), the database file 0600 before SQLite writes to it
//! ([`make_file`]; SQLite gives its `-wal`, `-shm` and `-journal` the
//! database file's mode), and so the server's lock, a backup and the
//! ACME cache. What is already there is looked at by [`survey`] (for
//! `check`) and tightened at a start by [`tighten`]: the database's
//! folder, the site's files in it (the database and every file named after
//! it: `-wal`, `-shm`, `.lock`, `.replaced-...`) and the ACME cache with
//! everything in it, each made its owner's alone (the group's and other
//! users' bits taken away).
//!
//! The database's folder is tightened only when it holds nothing but the
//! site's files (its ACME cache among them): `DATABASE_URL` may name a
//! file in a folder of the operator's own (`/srv/site/site.db`, beside the
//! binary and other files) whose mode is theirs to choose; that folder is
//! left as it is, and said so. A folder or file this user cannot change
//! (another user owns it) is named, with the fix.

use std::ffi::OsStr;
use std::fmt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The bits of the group and of other users.
const OTHERS: u32 = 0o077;
/// The site's folders: their owner's alone.
pub const FOLDER_MODE: u32 = 0o700;
/// The site's files: their owner's alone.
pub const FILE_MODE: u32 = 0o600;

/// The folder `file` is in: `.` for a bare file name.
pub fn folder_of(file: &Path) -> PathBuf {
    match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Makes `dir` and the folders above it that are missing, each 0700.
pub fn make_folder(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(FOLDER_MODE)
        .create(dir)
}

/// Makes `file` empty and 0600 when it is not there (SQLite takes an empty
/// file for an empty database); one that is there is left as it is.
pub fn make_file(file: &Path) -> std::io::Result<()> {
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(file);
    match made {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// One of the site's folders or files that other users may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// Made its owner's alone (by [`tighten`]).
    Tightened { path: PathBuf, was: u32, now: u32 },
    /// This user may make it its owner's alone, as the server does at its
    /// start (found by [`survey`]).
    Loose { path: PathBuf, mode: u32 },
    /// This user cannot change it: `why` says why.
    Kept {
        path: PathBuf,
        mode: u32,
        why: String,
    },
    /// The database's folder, which also holds `other`, not the site's:
    /// left as it is.
    Shared {
        path: PathBuf,
        mode: u32,
        other: String,
    },
}

impl Finding {
    /// Whether the operator has something to do: a folder or file the
    /// server cannot make private.
    pub fn is_warning(&self) -> bool {
        matches!(self, Finding::Kept { .. })
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Tightened { path, was, now } => write!(
                f,
                "{} was {} by other users (mode {was:04o}): now {now:04o}, its owner's alone",
                path.display(),
                reach(*was)
            ),
            Finding::Loose { path, mode } => write!(
                f,
                "{} is {} by other users (mode {mode:04o}): the server makes it {:04o} (its owner's alone) at its start",
                path.display(),
                reach(*mode),
                mode & !OTHERS
            ),
            Finding::Kept { path, mode, why } => write!(
                f,
                "{} is {} by other users (mode {mode:04o}), and {} cannot change that ({why}): run chmod {:o} {} as its owner",
                path.display(),
                reach(*mode),
                crate::config::whoami(),
                mode & !OTHERS & 0o777,
                path.display()
            ),
            Finding::Shared { path, mode, other } => write!(
                f,
                "{} is {} by other users (mode {mode:04o}) but holds files that are not the site's ({other}): it is left as it is; the site's files in it are made their owner's alone",
                path.display(),
                reach(*mode)
            ),
        }
    }
}

/// What other users may do with a folder or file of mode `mode`.
fn reach(mode: u32) -> &'static str {
    match (mode & 0o044 != 0, mode & 0o022 != 0) {
        (true, true) => "readable and writable",
        (true, false) => "readable",
        (false, true) => "writable",
        (false, false) => "reachable",
    }
}

/// Whether to change what is found, or only say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Act {
    Tighten,
    Survey,
}

/// The site's folders and files that other users may reach, as they are:
/// the folder of the SQLite database `database` and the site's files in
/// it, and the ACME cache `acme_cache` (either may be absent). Nothing is
/// changed.
pub fn survey(database: Option<&Path>, acme_cache: Option<&Path>) -> Vec<Finding> {
    walk(database, acme_cache, Act::Survey)
}

/// [`survey`], each folder and file this user may change made its owner's
/// alone; what it cannot change is said so.
pub fn tighten(database: Option<&Path>, acme_cache: Option<&Path>) -> Vec<Finding> {
    walk(database, acme_cache, Act::Tighten)
}

fn walk(database: Option<&Path>, acme_cache: Option<&Path>, act: Act) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut caches: Vec<PathBuf> = acme_cache.map(Path::to_path_buf).into_iter().collect();
    if let Some(file) = database {
        let dir = folder_of(file);
        // The ACME cache's default place, beside the database.
        let beside = dir.join("acme");
        if beside.is_dir() && !caches.iter().any(|c| same(c, &beside)) {
            caches.push(beside);
        }
        let name = file.file_name().unwrap_or_default();
        // The folder and the database as named (through a link, as
        // /var/lib/citizen-site is under systemd's DynamicUser); what is
        // beside it only as itself, never through a link.
        if let (Ok(meta), Ok(entries)) = (std::fs::metadata(&dir), std::fs::read_dir(&dir)) {
            let mut other = None;
            let mut ours = Vec::new();
            for entry in entries.flatten() {
                let path = entry.path();
                if is_named_after(&entry.file_name(), name) {
                    ours.push((entry.file_name() == name, path));
                } else if !caches.iter().any(|c| same(c, &path)) && other.is_none() {
                    other = Some(entry.file_name().to_string_lossy().into_owned());
                }
            }
            match other {
                Some(other) if meta.mode() & OTHERS != 0 => found.push(Finding::Shared {
                    path: dir.clone(),
                    mode: meta.mode() & 0o7777,
                    other,
                }),
                Some(_) => {}
                None => found.extend(one(&dir, &meta, act)),
            }
            ours.sort();
            for (is_database, path) in ours {
                let meta = match is_database {
                    true => std::fs::metadata(&path),
                    false => std::fs::symlink_metadata(&path),
                };
                if let Some(meta) = meta.ok().filter(std::fs::Metadata::is_file) {
                    found.extend(one(&path, &meta, act));
                }
            }
        }
    }
    for cache in caches {
        // The cache as named; what is in it only as itself.
        let Ok(meta) = std::fs::metadata(&cache) else {
            continue;
        };
        let mut todo = vec![(cache, meta)];
        while let Some((path, meta)) = todo.pop() {
            if meta.is_dir() {
                found.extend(one(&path, &meta, act));
                if let Ok(entries) = std::fs::read_dir(&path) {
                    let mut below: Vec<(PathBuf, std::fs::Metadata)> = entries
                        .flatten()
                        .filter_map(|e| Some((e.path(), std::fs::symlink_metadata(e.path()).ok()?)))
                        .collect();
                    below.sort_by(|a, b| b.0.cmp(&a.0));
                    todo.extend(below);
                }
            } else if meta.is_file() {
                found.extend(one(&path, &meta, act));
            }
        }
    }
    found
}

/// Whether `entry` is the database `name` or a file SQLite or the site
/// keeps beside it under its name (`-wal`, `-shm`, `-journal`, `.lock`,
/// `.replaced-...`, `.restoring-...`).
fn is_named_after(entry: &OsStr, name: &OsStr) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (entry, name) = (entry.as_bytes(), name.as_bytes());
    !name.is_empty()
        && entry.starts_with(name)
        && matches!(entry.get(name.len()), None | Some(b'-' | b'.'))
}

/// Whether `a` and `b` are the same folder.
fn same(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// `path` (a folder or a file, `meta` its metadata), if other users may
/// reach it: tightened, or found so.
fn one(path: &Path, meta: &std::fs::Metadata, act: Act) -> Option<Finding> {
    let mode = meta.mode() & 0o7777;
    if mode & OTHERS == 0 {
        return None;
    }
    let now = mode & !OTHERS;
    let path = path.to_path_buf();
    let owner = meta.uid();
    match act {
        Act::Survey => Some(match may_change(owner) {
            true => Finding::Loose { path, mode },
            false => Finding::Kept {
                path,
                mode,
                why: owned_by(owner),
            },
        }),
        Act::Tighten => {
            match std::fs::set_permissions(&path, std::fs::Permissions::from_mode(now)) {
                Ok(()) => Some(Finding::Tightened {
                    path,
                    was: mode,
                    now,
                }),
                Err(e) => {
                    let why = match e.kind() {
                        std::io::ErrorKind::PermissionDenied => owned_by(owner),
                        std::io::ErrorKind::ReadOnlyFilesystem => {
                            "it is on a read-only file system".to_owned()
                        }
                        other => other.to_string(),
                    };
                    Some(Finding::Kept { path, mode, why })
                }
            }
        }
    }
}

/// Whether this process may change the mode of what `owner` owns: its own,
/// or anything as root.
fn may_change(owner: u32) -> bool {
    // SAFETY: geteuid(2) has no preconditions.
    let me = unsafe { libc::geteuid() };
    me == 0 || me == owner
}

fn owned_by(owner: u32) -> String {
    format!("its owner is {}", crate::config::user(owner))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sites_files_are_the_database_and_what_is_named_after_it() {
        let name = OsStr::new("site.db");
        for ours in [
            "site.db",
            "site.db-wal",
            "site.db-shm",
            "site.db-journal",
            "site.db.lock",
            "site.db.replaced-20261125T101500Z",
        ] {
            assert!(is_named_after(OsStr::new(ours), name), "{ours}");
        }
        for other in ["site.dbx", "site.d", "notes.txt", "other-site.db"] {
            assert!(!is_named_after(OsStr::new(other), name), "{other}");
        }
    }

    /// Under systemd's DynamicUser, the state directory is a link to
    /// /var/lib/private/...: the folder is read through it (a link's own
    /// mode is 0777), and a link inside the ACME cache is never followed
    /// out of it.
    #[test]
    fn the_folder_is_read_through_a_link_and_nothing_is_changed_through_one_inside() {
        let dir = std::env::temp_dir().join(format!("citizen-private-{}", uuid::Uuid::new_v4()));
        let real = dir.join("private/site");
        make_folder(&real).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let linked = dir.join("site");
        std::os::unix::fs::symlink(&real, &linked).unwrap();
        let outside = dir.join("outside.pem");
        std::fs::write(&outside, "not the site's").unwrap();
        std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(real.join("site.db"), "").unwrap();
        std::fs::set_permissions(real.join("site.db"), std::fs::Permissions::from_mode(0o644))
            .unwrap();
        let cache = real.join("acme");
        make_folder(&cache).unwrap();
        std::os::unix::fs::symlink(&outside, cache.join("linked.pem")).unwrap();

        let found = tighten(Some(&linked.join("site.db")), None);
        assert_eq!(
            found,
            [Finding::Tightened {
                path: linked.join("site.db"),
                was: 0o644,
                now: 0o600
            }]
        );
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o7777;
        assert_eq!(mode(&real), 0o700);
        assert_eq!(
            mode(&outside),
            0o644,
            "not followed through the cache's link"
        );
        assert!(tighten(Some(&linked.join("site.db")), None).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn each_finding_says_what_other_users_may_do_and_what_happens() {
        let tightened = Finding::Tightened {
            path: "data".into(),
            was: 0o755,
            now: 0o700,
        };
        assert_eq!(
            tightened.to_string(),
            "data was readable by other users (mode 0755): now 0700, its owner's alone"
        );
        let loose = Finding::Loose {
            path: "data/site.db".into(),
            mode: 0o622,
        };
        assert_eq!(loose.to_string(), "data/site.db is writable by other users (mode 0622): the server makes it 0600 (its owner's alone) at its start");
        assert!(!loose.is_warning());
        let kept = Finding::Kept {
            path: "data".into(),
            mode: 0o2775,
            why: "its owner is root (uid 0)".into(),
        };
        assert!(kept.is_warning());
        assert!(
            kept.to_string()
                .starts_with("data is readable and writable by other users (mode 2775), and "),
            "{kept}"
        );
        assert!(
            kept.to_string().ends_with(
                " cannot change that (its owner is root (uid 0)): run chmod 700 data as its owner"
            ),
            "{kept}"
        );
    }
}
