//! The modes of the site's folders and files, and what the binary makes
//! with them: a folder 0700, a file 0600 before anything writes to it.

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The bits of the group and of other users.
pub(super) const OTHERS: u32 = 0o077;
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
