//! The lock that tells a running server from a restore: every server
//! process holds `<database>.lock` shared, a restore takes it alone.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use anyhow::bail;

use super::files::suffixed;
use crate::config::io_reason;

/// A server's hold on its SQLite database, released when dropped.
#[derive(Debug)]
pub struct ServerLock {
    /// Open for as long as the lock is held: closing it releases the lock.
    _file: File,
}

impl ServerLock {
    /// Holds `database`'s lock, shared with other server processes.
    pub fn hold(database: &Path) -> anyhow::Result<ServerLock> {
        let path = lock_path(database);
        let file = open_lock(&path)?;
        match file.try_lock_shared() {
            Ok(()) => Ok(ServerLock { _file: file }),
            Err(TryLockError::WouldBlock) => {
                bail!(
                    "{} is being restored (citizen-site restore): start the server when it is done",
                    database.display()
                )
            }
            Err(TryLockError::Error(e)) => {
                bail!("cannot lock {}: {}", path.display(), io_reason(&e))
            }
        }
    }
}

pub(super) fn lock_path(database: &Path) -> PathBuf {
    suffixed(database, ".lock")
}

pub(super) fn open_lock(path: &Path) -> anyhow::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(super::super::private::FILE_MODE)
        .open(path)
        .map_err(|e| anyhow::anyhow!(crate::config::io_problem(path, true, &e)))
}
