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
//! `check`) and tightened at a start by [`tighten`], each made its owner's
//! alone (the group's and other users' bits taken away):
//!
//! - the site's files in the database's folder: the database and every
//!   file named after it (`-wal`, `-shm`, `.lock`, `.replaced-...`);
//! - in the ACME cache, the folder the server keeps for the CA it orders
//!   from and the files it writes there (`<names>.pem`, `account.json`:
//!   [`crate::edge::acme::is_cache_file`]), and nothing else: the cache
//!   may be any folder `ACME_CACHE_DIR` names, another tool's files in it;
//! - the database's folder and the cache's folder, only when each is
//!   clearly the site's: it holds nothing but the site's files, it is not
//!   a folder every user may write in (sticky, as /tmp, or mode 0777) and
//!   not a system folder (`/`, `/tmp`, `/srv`, `/home`...). A folder of the
//!   operator's own (`/srv/site/site.db`, beside the binary and other
//!   files) is theirs to set. Each is left as it is, and said so.
//!
//! Only what this process's user owns is changed, even as root: a file of
//! another user's among the site's (a hard link planted there, say) is
//! named, with the fix, as is what this user cannot change.
//!
//! Each folder and file is opened before it is looked at, what is in a
//! folder opened through the folder's descriptor, never through a link
//! (`O_NOFOLLOW`), and changed through a descriptor (`fchmod`) of the file
//! looked at: a name swapped for a link between the look and the change
//! changes nothing else. The database's folder, the database and the cache
//! are opened as named, through a link if they are one (as
//! /var/lib/citizen-site is under systemd's `DynamicUser`). A file is
//! looked at through a descriptor that only names it (`O_PATH`), and
//! opened for reading only to be changed: closing a descriptor that read a
//! file drops the process's POSIX locks on it (SQLite's), so [`tighten`]
//! runs before the process opens the database.
//!
//! The modes and what the binary makes are `make.rs`, a folder or file
//! held open and changed through its descriptor `held.rs`, the findings
//! and their words `finding.rs`; which folders and files are the site's is
//! here.

mod finding;
mod held;
mod make;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub use finding::{Finding, Sharing};
pub use held::SQLITE_HEADER;
use held::{Held, Kind};
use make::OTHERS;
pub use make::{folder_of, make_file, make_folder, FILE_MODE, FOLDER_MODE};

/// Where the site keeps its files on this machine.
#[derive(Debug, Clone, Copy)]
pub struct Places<'a> {
    /// The SQLite database (None with PostgreSQL).
    pub database: Option<&'a Path>,
    /// `ACME_CACHE_DIR`, when the server orders its certificate by ACME.
    pub acme_cache: Option<&'a Path>,
    /// The folder the server keeps in an ACME cache for the CA it orders
    /// from (the name of `AcmeSettings::folder`; Let's Encrypt's when it
    /// orders none). An `acme` folder beside the database, the cache's
    /// default place, is looked at as a cache too.
    pub acme_folder: &'a str,
}

/// Whether to change what is found, or only say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Act {
    Tighten,
    Survey,
}

/// The site's folders and files that other users may reach, as they are
/// (see the module's notes). Nothing is changed.
pub fn survey(places: Places<'_>) -> Vec<Finding> {
    walk(places, Act::Survey)
}

/// [`survey`], each folder and file that is the site's and this user's
/// made its owner's alone; what it leaves is said so.
pub fn tighten(places: Places<'_>) -> Vec<Finding> {
    walk(places, Act::Tighten)
}

fn walk(places: Places<'_>, act: Act) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut caches: Vec<PathBuf> = places
        .acme_cache
        .map(Path::to_path_buf)
        .into_iter()
        .collect();
    if let Some(file) = places.database {
        let dir = folder_of(file);
        // The ACME cache's default place, beside the database.
        let beside = dir.join("acme");
        if beside.is_dir() && !caches.iter().any(|c| same(c, &beside)) {
            caches.push(beside);
        }
        database_folder(file, &caches, act, &mut found);
    }
    for cache in &caches {
        acme_cache(cache, OsStr::new(places.acme_folder), act, &mut found);
    }
    found
}

/// The folder of the database `file` and the site's files in it.
fn database_folder(file: &Path, caches: &[PathBuf], act: Act, found: &mut Vec<Finding>) {
    // The working folder by its name, not as ".".
    let dir = match folder_of(file) {
        dot if dot == Path::new(".") => std::env::current_dir().unwrap_or(dot),
        dir => dir,
    };
    let name = file.file_name().unwrap_or_default();
    let Some(folder) = Held::named(&dir, Kind::Folder) else {
        return;
    };
    let mut other = None;
    let mut ours = Vec::new();
    for entry in folder.names() {
        let held = match entry == name {
            // The database as named, through a link if it is one.
            true => Held::named(file, Kind::File),
            false if is_named_after(&entry, name) => folder.inside(&entry, Kind::File),
            false => None,
        };
        match held {
            Some(held) if held.meta.is_file() => {
                // What the database's name leads to (through a link, maybe)
                // is changed only if it is a database, or empty.
                let database = entry == name;
                match held.needs_change() && database && !held.holds_a_database() {
                    true => found.push(Finding::Unlike {
                        path: held.path.clone(),
                        mode: held.meta.mode() & 0o7777,
                        why: format!(
                            "it holds no SQLite database{}: is DATABASE_URL right?",
                            std::fs::read_link(&held.path)
                                .map(|to| format!(" (a link to {})", to.display()))
                                .unwrap_or_default()
                        ),
                    }),
                    false => ours.push(held),
                }
            }
            _ if caches.iter().any(|c| same(c, &dir.join(&entry))) => {}
            _ => {
                other.get_or_insert(entry);
            }
        }
    }
    found.extend(folder_finding(&folder, other, act));
    for held in ours {
        found.extend(one(&held, act));
    }
}

/// The ACME cache `cache`: the folder `ours` in it (the server's for the CA
/// it orders from) and the files the server writes there; the cache's
/// folder and `ours` themselves when they hold nothing else.
fn acme_cache(cache: &Path, ours: &OsStr, act: Act, found: &mut Vec<Finding>) {
    let Some(root) = Held::named(cache, Kind::Folder) else {
        return;
    };
    let mut other = None;
    let mut folder = None;
    for entry in root.names() {
        // Named as the server's folder and one (not a link, say).
        let held = match entry == ours {
            true => root.inside(&entry, Kind::Folder),
            false => None,
        };
        match held {
            Some(held) => folder = Some(held),
            None => {
                other.get_or_insert(entry);
            }
        }
    }
    found.extend(folder_finding(&root, other, act));
    let Some(folder) = folder else {
        return;
    };
    let mut other = None;
    let mut files = Vec::new();
    for entry in folder.names() {
        let held = entry
            .to_str()
            .filter(|n| crate::edge::acme::is_cache_file(n))
            .and_then(|_| folder.inside(&entry, Kind::File))
            .filter(|h| h.meta.is_file());
        match held {
            Some(held) => files.push(held),
            None => {
                other.get_or_insert(entry);
            }
        }
    }
    found.extend(folder_finding(&folder, other, act));
    for held in files {
        found.extend(one(&held, act));
    }
}

/// A folder of the site's files (`other`: the first of what it holds that
/// is not the site's), tightened or found so when it is clearly the
/// site's; otherwise left as it is, and said so.
fn folder_finding(folder: &Held, other: Option<OsString>, act: Act) -> Option<Finding> {
    let mode = folder.meta.mode() & 0o7777;
    if mode & OTHERS == 0 {
        return None;
    }
    let why = if mode & 0o1000 != 0 {
        Sharing::Sticky
    } else if mode & 0o002 != 0 {
        Sharing::EveryoneWrites
    } else if is_system_folder(&folder.path) {
        Sharing::System
    } else if let Some(other) = other {
        Sharing::Holds(other.to_string_lossy().into_owned())
    } else {
        return one(folder, act);
    };
    Some(Finding::Shared {
        path: folder.path.clone(),
        mode,
        why,
    })
}

/// Folders of the system's, whoever made the site's files in them: what
/// is in them is every program's.
const SYSTEM_FOLDERS: &[&str] = &[
    "/",
    "/etc",
    "/home",
    "/media",
    "/mnt",
    "/opt",
    "/root",
    "/run",
    "/srv",
    "/tmp",
    "/usr",
    "/usr/local",
    "/var",
    "/var/lib",
    "/var/tmp",
    "/dev/shm",
];

fn is_system_folder(path: &Path) -> bool {
    std::fs::canonicalize(path).is_ok_and(|p| SYSTEM_FOLDERS.iter().any(|s| p == Path::new(s)))
}

/// Whether `entry` is the database `name` or a file SQLite or the site
/// keeps beside it under its name (`-wal`, `-shm`, `-journal`, `.lock`,
/// `.replaced-...`, `.restoring-...`).
fn is_named_after(entry: &OsStr, name: &OsStr) -> bool {
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

/// `held` (a folder or a file), if other users may reach it: tightened, or
/// found so; left as it is, and said so, when this user does not own it.
fn one(held: &Held, act: Act) -> Option<Finding> {
    let mode = held.meta.mode() & 0o7777;
    if mode & OTHERS == 0 {
        return None;
    }
    let now = mode & !OTHERS;
    let path = held.path.clone();
    let me = crate::config::whoami();
    let owner = held.meta.uid();
    // A file with other names may be one from elsewhere, linked in.
    if !held.meta.is_dir() && held.meta.nlink() > 1 {
        return Some(Finding::Unlike {
            path,
            mode,
            why: format!(
                "it has {} names (hard links), and another may be outside the site's folders",
                held.meta.nlink()
            ),
        });
    }
    if owner != euid() {
        let why = match euid() {
            0 => format!(
                "{me} leaves another user's files as they are (its owner is {})",
                crate::config::user(owner)
            ),
            _ => format!(
                "{me} cannot change that (its owner is {})",
                crate::config::user(owner)
            ),
        };
        return Some(Finding::Kept { path, mode, why });
    }
    match act {
        Act::Survey => Some(Finding::Loose { path, mode }),
        Act::Tighten => match held.set_mode(now) {
            None => Some(Finding::Kept {
                path,
                mode,
                why: format!("{me} cannot open it to change it"),
            }),
            Some(Ok(())) => Some(Finding::Tightened {
                path,
                was: mode,
                now,
            }),
            Some(Err(e)) => {
                let why = match e.kind() {
                    std::io::ErrorKind::ReadOnlyFilesystem => {
                        "it is on a read-only file system".to_owned()
                    }
                    _ => crate::config::io_reason(&e),
                };
                Some(Finding::Kept {
                    path,
                    mode,
                    why: format!("{me} cannot change that ({why})"),
                })
            }
        },
    }
}

/// The user this process acts as.
fn euid() -> u32 {
    // SAFETY: geteuid(2) has no preconditions.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests;
