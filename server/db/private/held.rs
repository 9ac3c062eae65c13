//! A folder or file of the site held open: looked at through its
//! descriptor, what is in a folder opened through the folder's descriptor
//! without following a link, and changed through a descriptor of the same
//! file.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::make::OTHERS;

/// The first bytes of every SQLite database file.
pub const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// What is opened: a folder, or anything else (a file is hoped for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Folder,
    File,
}

/// A folder or file of the site, open: what is decided about it is read
/// from its descriptor (`fstat`), and done through a descriptor of the
/// same file (`fchmod`).
pub(super) struct Held {
    /// As the messages name it.
    pub(super) path: PathBuf,
    /// A folder open for reading; anything else only named (`O_PATH`),
    /// which neither reads it nor, closed, drops a lock on it.
    file: File,
    pub(super) meta: std::fs::Metadata,
    /// Where it was opened from, to open it again: the folder it is in (a
    /// copy of the folder's descriptor), or the working folder (None).
    at: Option<OwnedFd>,
    name: CString,
    /// `O_NOFOLLOW` for what is in a folder; 0 for a path as named.
    nofollow: libc::c_int,
}

impl Held {
    /// `path` as named, through a link if it is one.
    pub(super) fn named(path: &Path, kind: Kind) -> Option<Held> {
        let name = CString::new(path.as_os_str().as_bytes()).ok()?;
        Held::open(None, name, path.to_path_buf(), kind, 0)
    }

    /// `name` in this folder, never through a link.
    pub(super) fn inside(&self, name: &OsStr, kind: Kind) -> Option<Held> {
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
    pub(super) fn needs_change(&self) -> bool {
        self.meta.mode() & OTHERS != 0
    }

    /// Whether the file is empty or an SQLite database (its first bytes
    /// read through a descriptor of the same file, opened again as
    /// [`Held::set_mode`] opens it).
    pub(super) fn holds_a_database(&self) -> bool {
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
    pub(super) fn set_mode(&self, mode: u32) -> Option<std::io::Result<()>> {
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
    pub(super) fn names(&self) -> Vec<OsString> {
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
