//! Whether the user this process runs as may open the SQLite file as a
//! command needs it, and if not, why, with the fix.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::super::private::folder_of;
use super::files::suffixed;

/// Why the user this process runs as cannot open the SQLite database
/// `file` as a command needs it (for writing, or for reading only), with
/// the fix; None when it can. SQLite writes beside the file (its journal,
/// and the shared memory of a database in WAL mode, which readers write too
/// unless it is there already), so the folder counts as well as the file.
pub fn access_problem(file: &Path, write: bool) -> Option<String> {
    let dir = folder_of(file);
    let user = crate::config::whoami();
    let owner = owner_of(file);
    let fix = |what: &Path| {
        format!(
            "run the command as the user the server runs as ({owner} owns {file}: sudo -u {name} citizen-site ...), or give {user} write access to {what}",
            file = file.display(),
            name = owner.split(' ').next().unwrap_or("root"),
            what = what.display(),
        )
    };
    if !may(file, libc::R_OK) {
        return Some(format!(
            "cannot read the database {} as {user}: the file is not readable by {user}; {}",
            file.display(),
            fix(file).replace("write access", "read access")
        ));
    }
    let wal = is_wal(file);
    let shm_ready = suffixed(file, "-shm").exists();
    if write {
        for (what, path) in [("the file", file), ("its folder", dir.as_path())] {
            if !may(path, libc::W_OK) {
                return Some(format!(
                    "cannot open the database {} for writing as {user}: {what} {} is not writable by {user} (SQLite writes its journal beside the file); {}",
                    file.display(),
                    path.display(),
                    fix(path)
                ));
            }
        }
    } else if wal && !shm_ready && !may(&dir, libc::W_OK) {
        return Some(format!(
            "cannot read the database {} as {user}: it is in WAL mode and its folder {} is not writable by {user} (a reader of a WAL database makes {}-shm there); {}",
            file.display(),
            dir.display(),
            file.display(),
            fix(&dir)
        ));
    }
    None
}

/// Whether this process's user may reach `path` as `mode` says
/// (`libc::R_OK`, `W_OK`, `X_OK`, or'd), by access(2).
pub fn may(path: &Path, mode: libc::c_int) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: access(2) with a NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

/// `alice (uid 1000)`: who owns `path`.
fn owner_of(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let Ok(uid) = std::fs::metadata(path).map(|m| m.uid()) else {
        return "its owner".into();
    };
    crate::config::user(uid)
}

/// Whether the SQLite file's header says write-ahead logging (bytes 18
/// and 19 are 2).
fn is_wal(file: &Path) -> bool {
    let mut header = [0u8; 20];
    File::open(file)
        .and_then(|mut f| f.read_exact(&mut header))
        .is_ok_and(|()| header[18] == 2 && header[19] == 2)
}
