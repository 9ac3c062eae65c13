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

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The first bytes of every SQLite database file.
pub const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

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
/// Whether it made it.
pub fn make_file(file: &Path) -> std::io::Result<bool> {
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(file);
    match made {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

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

/// One of the site's folders or files that other users may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// Made its owner's alone (by [`tighten`]).
    Tightened { path: PathBuf, was: u32, now: u32 },
    /// This user may make it its owner's alone, as the server does at its
    /// start (found by [`survey`]).
    Loose { path: PathBuf, mode: u32 },
    /// Left as it is: `why` says who cannot or will not change it, and why
    /// (`nobody (uid 65534) cannot change that (its owner is root (uid
    /// 0))`).
    Kept {
        path: PathBuf,
        mode: u32,
        why: String,
    },
    /// Named as one of the site's files, but maybe not one: the database's
    /// name holding no SQLite database (a mistyped `DATABASE_URL`, a link
    /// to another file), or a file with other names (a hard link, maybe
    /// from outside the site's folders). Left as it is: `why` says which.
    Unlike {
        path: PathBuf,
        mode: u32,
        why: String,
    },
    /// A folder the site's files are in that is not the site's alone: left
    /// as it is.
    Shared {
        path: PathBuf,
        mode: u32,
        why: Sharing,
    },
}

/// Why a folder the site's files are in is not the site's to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sharing {
    /// It holds `0`, which is not the site's.
    Holds(String),
    /// Its sticky bit is set: a folder shared by users, as /tmp.
    Sticky,
    /// Every user may write in it, and its sticky bit is not set: any user
    /// may rename or replace what is in it.
    EveryoneWrites,
    /// A folder of the system's (`/`, `/tmp`, `/srv`, `/home`...).
    System,
}

impl Finding {
    /// Whether the operator has something to do: a folder or file the
    /// server cannot or will not make private, or a folder where any user
    /// may replace the site's files.
    pub fn is_warning(&self) -> bool {
        // Sticky and every user's to write in: any user may plant the
        // site's `-wal`, `-shm` or `.lock` there before it makes them.
        match self {
            Finding::Kept { .. } | Finding::Unlike { .. } => true,
            Finding::Shared { why, mode, .. } => match why {
                Sharing::EveryoneWrites => true,
                Sharing::Sticky => mode & 0o002 != 0,
                _ => false,
            },
            _ => false,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const LEFT: &str =
            "it is left as it is; the site's files in it are made their owner's alone";
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
                "{} is {} by other users (mode {mode:04o}), and {why}: run chmod {:o} {} as its owner",
                path.display(),
                reach(*mode),
                mode & !OTHERS & 0o777,
                path.display()
            ),
            Finding::Unlike { path, mode, why } => write!(
                f,
                "{} is {} by other users (mode {mode:04o}), but {why}: it is left as it is",
                path.display(),
                reach(*mode)
            ),
            Finding::Shared { path, mode, why } => match why {
                Sharing::Holds(other) => write!(
                    f,
                    "{} is {} by other users (mode {mode:04o}) but holds files that are not the site's ({other}): {LEFT}",
                    path.display(),
                    reach(*mode)
                ),
                Sharing::Sticky => write!(
                    f,
                    "{} is a {} (mode {mode:04o}, the sticky bit set): {LEFT}",
                    path.display(),
                    match mode & 0o002 != 0 {
                        true => "folder every user may write in",
                        false => "shared folder",
                    }
                ),
                Sharing::EveryoneWrites => write!(
                    f,
                    "{} is a folder every user may write in (mode {mode:04o}) without the sticky bit: any user may rename or replace the site's files in it; it is left as it is: give the site's files a folder of their own",
                    path.display()
                ),
                Sharing::System => write!(
                    f,
                    "{} is a system folder, {} by other users (mode {mode:04o}): {LEFT}",
                    path.display(),
                    reach(*mode)
                ),
            },
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

/// What is opened: a folder, or anything else (a file is hoped for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Folder,
    File,
}

/// A folder or file of the site, open: what is decided about it is read
/// from its descriptor (`fstat`), and done through a descriptor of the
/// same file (`fchmod`).
struct Held {
    /// As the messages name it.
    path: PathBuf,
    /// A folder open for reading; anything else only named (`O_PATH`),
    /// which neither reads it nor, closed, drops a lock on it.
    file: File,
    meta: std::fs::Metadata,
    /// Where it was opened from, to open it again: the folder it is in (a
    /// copy of the folder's descriptor), or the working folder (None).
    at: Option<OwnedFd>,
    name: CString,
    /// `O_NOFOLLOW` for what is in a folder; 0 for a path as named.
    nofollow: libc::c_int,
}

impl Held {
    /// `path` as named, through a link if it is one.
    fn named(path: &Path, kind: Kind) -> Option<Held> {
        let name = CString::new(path.as_os_str().as_bytes()).ok()?;
        Held::open(None, name, path.to_path_buf(), kind, 0)
    }

    /// `name` in this folder, never through a link.
    fn inside(&self, name: &OsStr, kind: Kind) -> Option<Held> {
        let at = self.file.as_fd().try_clone_to_owned().ok()?;
        let path = self.path.join(name);
        let name = CString::new(name.as_bytes()).ok()?;
        Held::open(Some(at), name, path, kind, libc::O_NOFOLLOW)
    }

    fn open(
        at: Option<OwnedFd>,
        name: CString,
        path: PathBuf,
        kind: Kind,
        nofollow: libc::c_int,
    ) -> Option<Held> {
        let way = match kind {
            Kind::Folder => libc::O_RDONLY | libc::O_DIRECTORY,
            Kind::File => libc::O_PATH,
        };
        let file = open_at(at.as_ref(), &name, way | nofollow).ok()?;
        let meta = file.metadata().ok()?;
        Some(Held {
            path,
            file,
            meta,
            at,
            name,
            nofollow,
        })
    }

    /// Whether other users may reach it.
    fn needs_change(&self) -> bool {
        self.meta.mode() & OTHERS != 0
    }

    /// Whether the file is empty or an SQLite database (its first bytes
    /// read through a descriptor of the same file, opened again as
    /// [`Held::set_mode`] opens it).
    fn holds_a_database(&self) -> bool {
        use std::io::Read;
        if self.meta.len() == 0 {
            return true;
        }
        let way = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | self.nofollow;
        let Ok(mut again) = open_at(self.at.as_ref(), &self.name, way) else {
            return false;
        };
        let same = again
            .metadata()
            .is_ok_and(|m| m.dev() == self.meta.dev() && m.ino() == self.meta.ino());
        let mut header = [0u8; 16];
        same && again.read_exact(&mut header).is_ok() && &header == SQLITE_HEADER
    }

    /// Makes it `mode`, through its own descriptor (a folder's) or one of
    /// the same file opened again: for reading (for writing when its owner
    /// may not read it), never blocking on a FIFO nor taking a terminal,
    /// and used only if it is still the file looked at. None when it cannot
    /// be opened so.
    fn set_mode(&self, mode: u32) -> Option<std::io::Result<()>> {
        let mode = std::fs::Permissions::from_mode(mode);
        if self.meta.is_dir() {
            return Some(self.file.set_permissions(mode));
        }
        let file = libc::O_NONBLOCK | libc::O_NOCTTY | self.nofollow;
        let again = [libc::O_RDONLY | file, libc::O_WRONLY | file]
            .into_iter()
            .find_map(|way| {
                let again = open_at(self.at.as_ref(), &self.name, way).ok()?;
                let meta = again.metadata().ok()?;
                (meta.dev() == self.meta.dev() && meta.ino() == self.meta.ino()).then_some(again)
            })?;
        Some(again.set_permissions(mode))
    }

    /// What this folder holds, by name, sorted (read through its
    /// descriptor, not its name).
    fn names(&self) -> Vec<OsString> {
        let mut out = Vec::new();
        // SAFETY: the copy of the descriptor is the directory stream's,
        // closed with it (or at once when the stream cannot be made); each
        // entry is read before the next call to readdir.
        unsafe {
            let fd = libc::dup(self.file.as_raw_fd());
            if fd < 0 {
                return out;
            }
            let stream = libc::fdopendir(fd);
            if stream.is_null() {
                libc::close(fd);
                return out;
            }
            libc::rewinddir(stream);
            loop {
                let entry = libc::readdir(stream);
                if entry.is_null() {
                    break;
                }
                let name = CStr::from_ptr((*entry).d_name.as_ptr()).to_bytes();
                if name != b"." && name != b".." {
                    out.push(OsStr::from_bytes(name).to_os_string());
                }
            }
            libc::closedir(stream);
        }
        out.sort();
        out
    }
}

/// `name` opened with `flags` (and `O_CLOEXEC`), in the folder `at` or,
/// without one, in the working folder.
fn open_at(at: Option<&OwnedFd>, name: &CStr, flags: libc::c_int) -> std::io::Result<File> {
    let at = at.map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
    // SAFETY: `name` is a NUL-terminated string that outlives the call;
    // `at` is AT_FDCWD or a descriptor the caller holds open.
    let fd = unsafe { libc::openat(at, name.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened, and nothing else owns it.
    Ok(unsafe { File::from_raw_fd(fd) })
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

    fn places<'a>(database: Option<&'a Path>, acme_cache: Option<&'a Path>) -> Places<'a> {
        Places {
            database,
            acme_cache,
            acme_folder: "ca.example_dir",
        }
    }

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
    }

    fn set_mode(p: &Path, m: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    }

    fn temp(what: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("citizen-{what}-{}", uuid::Uuid::new_v4()));
        make_folder(&dir).unwrap();
        dir
    }

    /// Under systemd's DynamicUser, the state directory is a link to
    /// /var/lib/private/...: the folder is read through it (a link's own
    /// mode is 0777), and a link inside the ACME cache is never followed
    /// out of it, in the cache's folder or in the server's folder in it.
    #[test]
    fn the_folder_is_read_through_a_link_and_nothing_is_changed_through_one_inside() {
        let dir = temp("private");
        let real = dir.join("private/site");
        make_folder(&real).unwrap();
        set_mode(&dir, 0o755);
        let linked = dir.join("site");
        std::os::unix::fs::symlink(&real, &linked).unwrap();
        let outside = dir.join("outside.pem");
        std::fs::write(&outside, "not the site's").unwrap();
        set_mode(&outside, 0o644);
        std::fs::write(real.join("site.db"), "").unwrap();
        set_mode(&real.join("site.db"), 0o644);
        let cache = real.join("acme");
        make_folder(&cache.join("ca.example_dir")).unwrap();
        std::os::unix::fs::symlink(&outside, cache.join("linked.pem")).unwrap();
        std::os::unix::fs::symlink(&outside, cache.join("ca.example_dir/site.example.pem"))
            .unwrap();

        let found = tighten(places(Some(&linked.join("site.db")), None));
        assert_eq!(
            found,
            [Finding::Tightened {
                path: linked.join("site.db"),
                was: 0o644,
                now: 0o600
            }]
        );
        assert_eq!(mode(&real), 0o700);
        assert_eq!(
            mode(&outside),
            0o644,
            "not followed through the cache's links"
        );
        assert!(tighten(places(Some(&linked.join("site.db")), None)).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A folder every user may write in (sticky as /tmp, or not) is never
    /// changed, though it holds nothing but the site's files; the site's
    /// files in it are.
    #[test]
    fn a_folder_every_user_may_write_in_is_left_as_it_is() {
        let dir = temp("private-shared");
        for (name, m, why) in [
            ("sticky", 0o1777, Sharing::Sticky),
            ("shared", 0o1770, Sharing::Sticky),
            ("open", 0o777, Sharing::EveryoneWrites),
        ] {
            let folder = dir.join(name);
            make_folder(&folder).unwrap();
            set_mode(&folder, m);
            let db = folder.join("site.db");
            make_file(&db).unwrap();
            set_mode(&db, 0o644);
            let found = tighten(places(Some(&db), None));
            assert_eq!(
                found,
                [
                    Finding::Shared {
                        path: folder.clone(),
                        mode: m,
                        why: why.clone()
                    },
                    Finding::Tightened {
                        path: db.clone(),
                        was: 0o644,
                        now: 0o600
                    }
                ],
                "{name}"
            );
            assert_eq!(mode(&folder), m, "{name}");
            // Every user's to write in: a warning, sticky or not.
            assert_eq!(found[0].is_warning(), m & 0o002 != 0, "{name}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_systems_folders_are_never_the_sites() {
        for system in ["/", "/tmp", "/var/tmp", "/srv", "/home", "/tmp/../var/tmp/"] {
            assert!(is_system_folder(Path::new(system)), "{system}");
        }
        let dir = temp("private-system");
        assert!(!is_system_folder(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// In the ACME cache, the server's folder for its CA and the files it
    /// writes there; another tool's folder and files, and the cache's
    /// folder that holds them, are left as they are.
    #[test]
    fn in_the_acme_cache_only_the_servers_own_files_are_changed() {
        let dir = temp("private-acme");
        let cache = dir.join("cache");
        let ours = cache.join("ca.example_dir");
        let other = cache.join("other-tool");
        make_folder(&ours).unwrap();
        make_folder(&other).unwrap();
        for file in [
            ours.join("site.example.pem"),
            ours.join("account.json"),
            ours.join("notes.txt"),
            other.join("public.txt"),
        ] {
            std::fs::write(&file, "").unwrap();
            set_mode(&file, 0o644);
        }
        for folder in [&cache, &ours, &other] {
            set_mode(folder, 0o755);
        }
        let found = tighten(places(None, Some(&cache)));
        let tightened = |p: PathBuf, was| Finding::Tightened {
            path: p,
            was,
            now: was & !OTHERS,
        };
        let shared = |p: &Path, other: &str| Finding::Shared {
            path: p.to_path_buf(),
            mode: 0o755,
            why: Sharing::Holds(other.into()),
        };
        assert_eq!(
            found,
            [
                shared(&cache, "other-tool"),
                shared(&ours, "notes.txt"),
                tightened(ours.join("account.json"), 0o644),
                tightened(ours.join("site.example.pem"), 0o644),
            ]
        );
        for (p, m) in [
            (cache.clone(), 0o755),
            (other.clone(), 0o755),
            (other.join("public.txt"), 0o644),
            (ours.join("notes.txt"), 0o644),
        ] {
            assert_eq!(mode(&p), m, "{}", p.display());
        }
        // Without the other files, the folders are the site's.
        std::fs::remove_dir_all(&other).unwrap();
        std::fs::remove_file(ours.join("notes.txt")).unwrap();
        assert_eq!(
            tighten(places(None, Some(&cache))),
            [
                tightened(cache.clone(), 0o755),
                tightened(ours.clone(), 0o755)
            ]
        );
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
            why: "nobody (uid 65534) cannot change that (its owner is root (uid 0))".into(),
        };
        assert!(kept.is_warning());
        assert_eq!(
            kept.to_string(),
            "data is readable and writable by other users (mode 2775), and nobody (uid 65534) cannot change that (its owner is root (uid 0)): run chmod 700 data as its owner"
        );
        let sticky = Finding::Shared {
            path: "/tmp".into(),
            mode: 0o1777,
            why: Sharing::Sticky,
        };
        assert!(sticky.is_warning(), "any user may plant the -wal there");
        assert_eq!(sticky.to_string(), "/tmp is a folder every user may write in (mode 1777, the sticky bit set): it is left as it is; the site's files in it are made their owner's alone");
        let system = Finding::Shared {
            path: "/srv".into(),
            mode: 0o755,
            why: Sharing::System,
        };
        assert_eq!(system.to_string(), "/srv is a system folder, readable by other users (mode 0755): it is left as it is; the site's files in it are made their owner's alone");
    }
}
