//! The database's file and the files SQLite and the site keep beside it
//! under its name: their names, the folder and the file made private
//! before SQLite writes, a copy removed with its sidecars, a rename made
//! durable.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::super::private::folder_of;
use crate::config::io_reason;

/// Makes the folder of the SQLite database `database_url` names (0700, as
/// the folders above it that are missing) and the database file (empty,
/// 0600) when they are not there yet, as a first start or a command that
/// may make the database needs them: SQLite would make the file with the
/// mode the umask leaves (0644 under a shell's 022), and gives its `-wal`,
/// `-shm` and `-journal` the file's mode (see `db::private`). Nothing for
/// PostgreSQL; only the folder when the URL's `mode=` does not let SQLite
/// make the file. Whether it made the database file (a new, empty
/// database).
pub fn make_folder_and_file(database_url: &str) -> anyhow::Result<bool> {
    let Some(file) = crate::config::sqlite_path(database_url) else {
        return Ok(false);
    };
    make_folder_of(&file)?;
    match crate::config::database_url::sqlite_makes_file(database_url) {
        true => super::super::private::make_file(&file)
            .map_err(|e| anyhow::anyhow!(crate::config::io_problem(&file, true, &e))),
        false => Ok(false),
    }
}

/// Makes the folder the database `file` goes in (0700, as the folders
/// above it that are missing).
pub(super) fn make_folder_of(file: &Path) -> anyhow::Result<()> {
    let dir = folder_of(file);
    super::super::private::make_folder(&dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot make the folder {} for the database {}: {}",
            dir.display(),
            file.display(),
            io_reason(&e)
        )
    })
}

/// `path` with `suffix` added to its file name.
pub(super) fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Removes `path` and what SQLite keeps beside it under its name.
pub(super) fn remove_with_sidecars(path: &Path) {
    for sidecar in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(suffixed(path, sidecar));
    }
}

/// Makes a rename in `dir` durable (best effort: not every file system
/// lets a folder be synced).
pub(super) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
