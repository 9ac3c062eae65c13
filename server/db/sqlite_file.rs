//! The embedded SQLite database as a file: a consistent copy taken while the
//! server runs and writes ([`backup`], SQLite's `VACUUM INTO`), a copy put
//! back for a stopped server ([`restore`]), and the lock that tells the two
//! apart ([`ServerLock`]).
//!
//! Every server process holds a shared lock on `<database>.lock` for as long
//! as it runs; a restore takes it exclusively, so it refuses while a server
//! runs (the server would go on writing to the file being replaced, and
//! what visitors sent next would be lost), and a server does not start in
//! the middle of a restore.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use sqlx::Row;

use super::private::{folder_of, SQLITE_HEADER};
use super::{Db, Dialect};
use crate::config::{io_reason, sqlite_url};

/// A backup of a big database may take a while; a stuck one is cut off.
const BACKUP_TIMEOUT: Duration = Duration::from_secs(600);

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

/// After the server's pool has closed: the SQLite database of
/// `database_url` as the file alone, its write-ahead log folded in and
/// removed, as a stopped site promises (a restored copy, or a reader
/// without write access to the folder, meets that file). sqlx's
/// `Pool::close` can return while a connection it dropped (`close_hard`,
/// after a failed ping on release) still closes on its worker thread, and
/// a process that exits meanwhile leaves `-wal` and `-shm` beside the file.
///
/// When another process has the database open (a successor after a
/// reload, a fleet member on the same file, a backup), the log is its to
/// fold: nothing is done. Otherwise one connection of our own (the URL's
/// options, never creating the file, never waiting on a lock) reads and
/// closes, which folds and removes the log when it is the last; it is
/// tried again for up to `linger` while a late one of ours has not closed.
/// Says whether the file is alone.
pub async fn fold_after_close(database_url: &str, linger: Duration) -> bool {
    let Some(file) = crate::config::sqlite_path(database_url) else {
        return true;
    };
    let Ok(options) = crate::config::database_url::sqlite_options(database_url, "rw") else {
        return true;
    };
    let wal = suffixed(&file, "-wal");
    if !wal.exists() {
        return true;
    }
    if let Some(pid) = other_process_locking(&file) {
        tracing::debug!(file = %file.display(), pid, "the database is open in another process, which folds its write-ahead log in when it closes it");
        return false;
    }
    let options = options
        .create_if_missing(false)
        .busy_timeout(Duration::ZERO);
    let fold = || async {
        use sqlx::Connection;
        let mut conn = sqlx::sqlite::SqliteConnection::connect_with(&options).await?;
        sqlx::query("SELECT count(*) FROM sqlite_schema")
            .execute(&mut conn)
            .await?;
        conn.close().await
    };
    // Our connection folds the log only if it is the last to close: one of
    // ours closing late, or closing at the same moment (then neither is
    // the last), leaves it. So it is tried again until the log is gone or
    // `linger` has passed: the first try after the late one closed folds.
    let until = tokio::time::Instant::now() + linger;
    loop {
        let tried = match tokio::time::timeout(Duration::from_secs(2), fold()).await {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(_) => Some("no answer within 2 s".to_owned()),
        };
        if !wal.exists() {
            return true;
        }
        if tokio::time::Instant::now() >= until {
            match tried {
                Some(error) => {
                    tracing::warn!(file = %file.display(), %error, "the database's write-ahead log could not be folded in; the next start folds it in")
                }
                None => {
                    tracing::warn!(file = %file.display(), "the database's write-ahead log stays beside it: a connection of this process did not close in time; the next start folds it in")
                }
            }
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The process id of another process holding a POSIX lock on `file` (an
/// SQLite connection open there), read from /proc/locks: asking with
/// fcntl would need a descriptor of the file, and closing it would drop
/// every lock this process's own connections hold on it.
fn other_process_locking(file: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    // By inode alone: /proc/locks names the device the lock's file lives
    // on, which is not the one stat(2) reports under overlayfs (a
    // container's root); a stranger's lock on another device's same
    // inode number only leaves the log to the next start.
    let ino = std::fs::metadata(file).ok()?.ino().to_string();
    let own = std::process::id();
    std::fs::read_to_string("/proc/locks")
        .ok()?
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            // "1: POSIX ADVISORY READ 1234 fd:01:5678 1073741826 1073742335",
            // or "1: -> POSIX ..." for a waiter.
            let f = if f.get(1) == Some(&"->") {
                &f[1..]
            } else {
                &f[..]
            };
            (f.len() >= 6 && f[1] == "POSIX" && f[5].rsplit(':').next() == Some(&ino))
                .then(|| f[4].parse::<u32>().ok())
                .flatten()
        })
        .find(|pid| *pid != own)
}

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
        true => super::private::make_file(&file)
            .map_err(|e| anyhow::anyhow!(crate::config::io_problem(&file, true, &e))),
        false => Ok(false),
    }
}

/// Makes the folder the database `file` goes in (0700, as the folders
/// above it that are missing).
fn make_folder_of(file: &Path) -> anyhow::Result<()> {
    let dir = folder_of(file);
    super::private::make_folder(&dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot make the folder {} for the database {}: {}",
            dir.display(),
            file.display(),
            io_reason(&e)
        )
    })
}

fn lock_path(database: &Path) -> PathBuf {
    suffixed(database, ".lock")
}

fn open_lock(path: &Path) -> anyhow::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(super::private::FILE_MODE)
        .open(path)
        .map_err(|e| anyhow::anyhow!(crate::config::io_problem(path, true, &e)))
}

/// `path` with `suffix` added to its file name.
fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// A finished backup.
#[derive(Debug, Clone)]
pub struct Backup {
    pub file: PathBuf,
    pub bytes: u64,
    pub counts: Counts,
}

/// Rows in a database of this site: each table the caller named, with its
/// count, in the caller's order.
pub type Counts = Vec<(&'static str, i64)>;

/// Copies the database `db` (SQLite) to the new file `dest` while the
/// server may be writing: one consistent snapshot (`VACUUM INTO`), checked
/// before it is given its name, so `dest` is either a whole backup or
/// absent. An existing `dest` is never overwritten.
pub async fn backup(db: &Db, dest: &Path, tables: &[&'static str]) -> anyhow::Result<Backup> {
    anyhow::ensure!(
        db.dialect == Dialect::Sqlite,
        "backup copies an SQLite database; PostgreSQL's is pg_dump"
    );
    if dest.is_dir() {
        bail!(
            "{} is a folder: name a new file in it (citizen-site backup {}); nothing was written",
            dest.display(),
            dest.join("citizen-site-backup.db").display()
        );
    }
    if dest.symlink_metadata().is_ok() {
        bail!(
            "{} exists: a backup never overwrites a file; choose a new name",
            dest.display()
        );
    }
    let dir = folder_of(dest);
    if !dir.is_dir() {
        match dir.exists() {
            true => bail!(
                "cannot write {}: {} is a file, not a folder; choose another place; nothing was written",
                dest.display(),
                dir.display()
            ),
            false => bail!(
                "cannot write {}: the folder {} does not exist; {} or choose another; nothing was written",
                dest.display(),
                dir.display(),
                crate::config::make_it_first(&dir)
            ),
        }
    }
    if !may(&dir, libc::W_OK | libc::X_OK) {
        let user = crate::config::whoami();
        bail!(
            "cannot write {}: the folder {} is not writable by {user}; choose a folder {user} may write, or give {user} write access to it; nothing was written",
            dest.display(),
            dir.display()
        );
    }
    let partial = dir.join(format!(
        ".{}.partial-{}",
        dest.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let _ = std::fs::remove_file(&partial);
    // Made 0600 first: the copy holds the same secrets as the database,
    // and VACUUM INTO fills an empty file without changing its mode.
    if let Err(e) = super::private::make_file(&partial) {
        use std::io::ErrorKind;
        bail!(match e.kind() {
            // The folder is there and this user may write in it, as far as
            // access(2) says; its file system takes no new file (/sys,
            // /proc).
            ErrorKind::NotFound | ErrorKind::PermissionDenied => format!(
                "cannot write {}: the folder {} takes no new file ({}); choose another folder; nothing was written",
                dest.display(),
                dir.display(),
                io_reason(&e)
            ),
            _ => format!(
                "{}; nothing was written",
                crate::config::io_problem(dest, true, &e)
            ),
        });
    }
    let into = partial
        .to_str()
        .with_context(|| format!("{} is not a UTF-8 path", partial.display()))?;
    let copied = tokio::time::timeout(
        BACKUP_TIMEOUT,
        sqlx::query("VACUUM INTO $1").bind(into).execute(&db.pool),
    )
    .await;
    let copied = match copied {
        Ok(result) => result.map(|_| ()).map_err(anyhow::Error::from),
        Err(_) => Err(anyhow::anyhow!("it took longer than {BACKUP_TIMEOUT:?}")),
    };
    if let Err(e) = copied {
        let _ = std::fs::remove_file(&partial);
        bail!("cannot write the backup to {}: {e}", dest.display());
    }
    let checked = async {
        let counts = inspect(&partial, dest, tables).await?;
        File::open(&partial)
            .and_then(|f| f.sync_all())
            .map_err(|e| anyhow::anyhow!(crate::config::io_problem(&partial, true, &e)))?;
        Ok::<_, anyhow::Error>(counts)
    }
    .await;
    let counts = match checked {
        Ok(counts) => counts,
        Err(e) => {
            remove_with_sidecars(&partial);
            return Err(e.context("the backup did not check out; nothing was written"));
        }
    };
    // A hard link gives the file its name only if the name is still free.
    let named = std::fs::hard_link(&partial, dest);
    remove_with_sidecars(&partial);
    named.map_err(|e| {
        anyhow::anyhow!(
            "{}; nothing was written",
            crate::config::io_problem(dest, true, &e)
        )
    })?;
    sync_dir(&dir);
    Ok(Backup {
        file: dest.to_path_buf(),
        bytes: std::fs::metadata(dest).map_or(0, |m| m.len()),
        counts,
    })
}

/// A finished restore.
#[derive(Debug, Clone)]
pub struct Restored {
    pub counts: Counts,
    /// The tables kept from the database it replaced, with their rows.
    pub kept: Counts,
    /// Where the database it replaced was kept.
    pub replaced: Option<PathBuf>,
}

/// Puts the backup `from` in place of the SQLite database `database`, for a
/// stopped server. `from` must be a sound database of this site, made by
/// this version or an older one; the database it replaces is kept beside it
/// (`<database>.replaced-<time>`), never deleted. The rows of the tables
/// `keep` names come from the database it replaces, not from the backup
/// (state that must never go back in time, which the caller names: this
/// module knows no domain's tables).
pub async fn restore(
    database: &Path,
    from: &Path,
    tables: &[&'static str],
    keep: &[&'static str],
) -> anyhow::Result<Restored> {
    let mut header = [0u8; 16];
    let read = File::open(from).and_then(|mut f| f.read_exact(&mut header));
    if let Err(e) = read {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            bail!(
                "{} is not a database of this site: it is not an SQLite database",
                from.display()
            );
        }
        bail!(
            "{}; nothing was changed",
            crate::config::io_problem(from, false, &e).replacen(
                "cannot read ",
                "cannot read the backup ",
                1
            )
        );
    }
    if &header != SQLITE_HEADER {
        bail!(
            "{} is not a database of this site: it is not an SQLite database",
            from.display()
        );
    }
    let dir = folder_of(database);
    make_folder_of(database)?;
    // Checked as a copy beside the database, so the backup itself is only
    // read; the copy is 0600 whatever the backup's mode.
    let incoming = suffixed(database, &format!(".restoring-{}", std::process::id()));
    let _ = std::fs::remove_file(&incoming);
    let copied = super::private::make_file(&incoming).and_then(|_| {
        let mut to = OpenOptions::new().write(true).open(&incoming)?;
        std::io::copy(&mut File::open(from)?, &mut to)?;
        to.sync_all()
    });
    if let Err(e) = copied {
        let _ = std::fs::remove_file(&incoming);
        bail!(
            "cannot copy {} to {} (beside the database, to check it there): {}; nothing was changed",
            from.display(),
            incoming.display(),
            io_reason(&e)
        );
    }
    let checked = async {
        let counts = inspect(&incoming, from, tables).await?;
        let kept = keep_from(&incoming, database, keep).await?;
        Ok::<_, anyhow::Error>((counts, kept))
    }
    .await;
    let (counts, kept) = match checked {
        Ok(done) => done,
        Err(e) => {
            remove_with_sidecars(&incoming);
            return Err(e);
        }
    };
    let swapped = swap_in(database, &incoming);
    if swapped.is_err() {
        remove_with_sidecars(&incoming);
    }
    let replaced = swapped?;
    // What a late-closing connection left under the copy's old name holds
    // nothing: `keep_from` wrote everything into the file itself.
    for sidecar in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(suffixed(&incoming, sidecar));
    }
    sync_dir(&dir);
    Ok(Restored {
        counts,
        kept,
        replaced,
    })
}

/// Brings `incoming` (a checked copy of a backup) up to this version's
/// tables, then gives each table of `keep` the rows it has in `current`,
/// the database being replaced (if there is one and it has that table).
/// All of it is in `incoming`'s own file when this returns, none of it in
/// a write-ahead log beside it, since the caller renames that file.
async fn keep_from(
    incoming: &Path,
    current: &Path,
    keep: &[&'static str],
) -> anyhow::Result<Counts> {
    if keep.is_empty() {
        return Ok(Counts::new());
    }
    let db = Db::connect_lazy(&sqlite_url(incoming, "rw").map_err(anyhow::Error::msg)?)?;
    let result = async {
        db.migrate()
            .await
            .context("bringing the backup up to this version's tables")?;
        let mut conn = db.pool.acquire().await?;
        let kept = if current.exists() {
            copy_tables(&mut conn, current, keep).await?
        } else {
            Counts::new()
        };
        write_out(&mut conn, incoming).await?;
        Ok::<_, anyhow::Error>(kept)
    }
    .await;
    db.close().await;
    result
}

/// Replaces the rows of each table of `keep` on `conn`'s database with the
/// ones it has in the database file `current`, where it has that table.
async fn copy_tables(
    conn: &mut sqlx::AnyConnection,
    current: &Path,
    keep: &[&'static str],
) -> anyhow::Result<Counts> {
    let path = current
        .to_str()
        .with_context(|| format!("{} is not a UTF-8 path", current.display()))?;
    sqlx::query("ATTACH DATABASE $1 AS replaced")
        .bind(path)
        .execute(&mut *conn)
        .await
        .with_context(|| format!("reading {}", current.display()))?;
    let mut kept = Counts::new();
    for table in keep {
        let present = sqlx::query(
            "SELECT COUNT(*) FROM replaced.sqlite_master WHERE type = 'table' AND name = $1",
        )
        .bind(*table)
        .fetch_one(&mut *conn)
        .await?
        .try_get::<i64, _>(0)?;
        if present == 0 {
            continue;
        }
        sqlx::query(&format!("DELETE FROM main.{table}"))
            .execute(&mut *conn)
            .await?;
        let copied = sqlx::query(&format!(
            "INSERT INTO main.{table} SELECT * FROM replaced.{table}"
        ))
        .execute(&mut *conn)
        .await?;
        kept.push((*table, copied.rows_affected() as i64));
    }
    sqlx::query("DETACH DATABASE replaced")
        .execute(&mut *conn)
        .await?;
    Ok(kept)
}

/// Moves everything written to `conn`'s database (the file `path`) from its
/// write-ahead log into the file itself. SQLite does that when the last
/// connection closes, but sqlx's `Pool::close` may return before its last
/// connection has closed (sqlx issue 3217); a log left behind would keep
/// the old name when the file is renamed, and what it held would be lost.
async fn write_out(conn: &mut sqlx::AnyConnection, path: &Path) -> anyhow::Result<()> {
    let row = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
        .fetch_one(&mut *conn)
        .await?;
    let busy: i64 = row.try_get(0)?;
    if busy != 0 {
        bail!(
            "{} could not be written out in full (another connection was reading it); nothing was changed",
            path.display()
        );
    }
    Ok(())
}

/// With no server running on `database`, moves it aside (with its write-ahead
/// log, which holds part of it after a crash) and puts `incoming` there.
fn swap_in(database: &Path, incoming: &Path) -> anyhow::Result<Option<PathBuf>> {
    let lock = open_lock(&lock_path(database))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => bail!(
            "a server is running on {}: stop it before restoring (it would go on writing to the database being replaced); nothing was changed",
            database.display()
        ),
        Err(TryLockError::Error(e)) => bail!(
            "cannot lock {}: {}; nothing was changed",
            database.display(),
            io_reason(&e)
        ),
    }
    File::open(incoming)
        .and_then(|f| f.sync_all())
        .map_err(|e| anyhow::anyhow!("cannot write {}: {}", incoming.display(), io_reason(&e)))?;
    let replaced = if database.exists() {
        let stamp = time::OffsetDateTime::now_utc()
            .format(time::macros::format_description!(
                "[year][month][day]T[hour][minute][second]Z"
            ))
            .unwrap_or_default();
        // A name no file has: two restores in one second keep both.
        let mut aside = suffixed(database, &format!(".replaced-{stamp}"));
        let mut n = 1;
        loop {
            match rename_new(database, &aside) {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => {
                    n += 1;
                    aside = suffixed(database, &format!(".replaced-{stamp}-{n}"));
                }
                Err(e) => bail!(
                    "cannot move {} aside: {}; nothing was changed",
                    database.display(),
                    io_reason(&e)
                ),
            }
        }
        for sidecar in ["-wal", "-journal"] {
            let from = suffixed(database, sidecar);
            if from.exists() {
                rename_new(&from, &suffixed(&aside, sidecar)).map_err(|e| {
                    anyhow::anyhow!("cannot move {} aside: {}", from.display(), io_reason(&e))
                })?;
            }
        }
        let _ = std::fs::remove_file(suffixed(database, "-shm"));
        Some(aside)
    } else {
        None
    };
    std::fs::rename(incoming, database).map_err(|e| {
        anyhow::anyhow!(
            "cannot put the backup in place at {}: {}",
            database.display(),
            io_reason(&e)
        )
    })?;
    Ok(replaced)
}

/// Renames `from` to `to` unless a file is there: never replaces one
/// (`renameat2`'s `RENAME_NOREPLACE`; where the file system has no such
/// rename, a hard link and the old name removed, which also refuses).
fn rename_new(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c =
        |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
    let (a, b) = (c(from)?, c(to)?);
    // SAFETY: both are NUL-terminated paths that outlive the call.
    let done = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if done == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::EINVAL) {
        return Err(e);
    }
    std::fs::hard_link(from, to)?;
    std::fs::remove_file(from)
}

/// Checks that the SQLite file at `path` (our own copy, named `shown` to
/// the operator) is a sound database of this site that this version can
/// run (it has each of the site's `tables`, which the caller names: this
/// module knows no domain's), and counts their rows. Nothing is written to
/// it.
async fn inspect(path: &Path, shown: &Path, tables: &[&'static str]) -> anyhow::Result<Counts> {
    let db = Db::connect_lazy(&sqlite_url(path, "rw").map_err(anyhow::Error::msg)?)?;
    let not_ours =
        |why: String| anyhow::anyhow!("{} is not a database of this site: {why}", shown.display());
    let result = async {
        // A file cut short fails the check with an error, not a row.
        let damaged = |why: &str| {
            anyhow::anyhow!(
                "{} is damaged: SQLite's integrity check (quick_check) found: {why}; nothing was changed",
                shown.display()
            )
        };
        let check: String = db
            .timed(sqlx::query("PRAGMA quick_check").fetch_one(&db.pool))
            .await
            .map_err(|e| damaged(&super::reason(&e)))?
            .try_get(0)?;
        if check != "ok" {
            return Err(damaged(&check));
        }
        let present: Vec<String> = db
            .timed(sqlx::query("SELECT name FROM sqlite_master WHERE type = 'table'").fetch_all(&db.pool))
            .await?
            .iter()
            .map(|r| r.try_get::<String, _>(0))
            .collect::<Result<_, _>>()?;
        for table in std::iter::once(&"_sqlx_migrations").chain(tables) {
            if !present.iter().any(|t| t == table) {
                return Err(not_ours(format!("it has no {table} table")));
            }
        }
        let applied = db.timed(sqlx::query("SELECT version FROM _sqlx_migrations WHERE success").fetch_all(&db.pool)).await?;
        for row in &applied {
            let version: i64 = row.try_get(0)?;
            if !super::SQLITE_MIGRATIONS.iter().any(|m| m.version == version) {
                return Err(not_ours(format!("it was made by a newer citizen-site (its migration {version} is unknown to this one)")));
            }
        }
        let count = |table: &'static str| {
            let db = &db;
            async move { db.timed(sqlx::query(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(&db.pool)).await?.try_get::<i64, _>(0) }
        };
        let mut counts = Counts::new();
        for table in tables {
            counts.push((*table, count(table).await?));
        }
        Ok(counts)
    }
    .await;
    db.close().await;
    // Only read: whatever SQLite kept beside the copy holds nothing.
    for sidecar in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(suffixed(path, sidecar));
    }
    result
}

fn remove_with_sidecars(path: &Path) {
    for sidecar in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(suffixed(path, sidecar));
    }
}

/// Makes a rename in `dir` durable (best effort: not every file system
/// lets a folder be synced).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sqlx's `Pool::close` may return with a connection still open, and
    /// SQLite only folds its write-ahead log into the file when the last
    /// connection closes: the rows kept from the database being replaced
    /// must be in the restored file itself, or its rename loses them.
    #[tokio::test]
    async fn the_kept_rows_are_in_the_file_itself_while_a_connection_lingers() {
        let dir = std::env::temp_dir().join(format!("citizen-restore-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let current = dir.join("current.db");
        let incoming = dir.join("incoming.db");
        let url = |file: &Path| format!("sqlite://{}", file.display());
        for file in [&current, &incoming] {
            let db = Db::connect_lazy(&url(file)).unwrap();
            db.migrate().await.unwrap();
            db.close().await;
        }
        let db = Db::connect_lazy(&url(&current)).unwrap();
        sqlx::query("INSERT INTO tls_leases (name, holder, expires_at) VALUES ('acme', 'the server replaced', 1)")
            .execute(&db.pool)
            .await
            .unwrap();
        db.close().await;

        // The connection a pool's close did not wait for.
        let lingering = Db::connect_lazy(&url(&incoming)).unwrap();
        let _held = sqlx::query("SELECT 1")
            .execute(&lingering.pool)
            .await
            .unwrap();
        let kept = keep_from(&incoming, &current, &["tls_leases"])
            .await
            .unwrap();
        assert_eq!(kept, [("tls_leases", 1)]);

        // The file alone, as a rename would carry it.
        let alone = dir.join("alone.db");
        std::fs::copy(&incoming, &alone).unwrap();
        let db = Db::connect_lazy(&url(&alone)).unwrap();
        let holders: Vec<String> = sqlx::query_scalar("SELECT holder FROM tls_leases")
            .fetch_all(&db.pool)
            .await
            .unwrap();
        assert_eq!(holders, ["the server replaced"]);
        db.close().await;
        lingering.close().await;
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A connection of the pool that closes on its own thread after
    /// `Pool::close` returned (as sqlx's `close_hard` does) must not leave
    /// the write-ahead log beside a stopped site's file, nor one the last
    /// connection never folded.
    #[tokio::test]
    async fn a_stopped_sites_database_is_the_file_alone_whatever_closes_late() {
        let dir = std::env::temp_dir().join(format!("citizen-fold-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("site.db");
        let url = format!("sqlite://{}", file.display());
        let db = Db::connect_lazy(&url).unwrap();
        db.migrate().await.unwrap();
        sqlx::query(
            "INSERT INTO tls_leases (name, holder, expires_at) VALUES ('acme', 'a member', 1)",
        )
        .execute(&db.pool)
        .await
        .unwrap();
        // A connection that closes 300 ms after the pool's close returned.
        let late = Db::connect_lazy(&url).unwrap();
        let mut conn = late.pool.acquire().await.unwrap();
        sqlx::query("SELECT count(*) FROM tls_leases")
            .execute(&mut *conn)
            .await
            .unwrap();
        db.close().await;
        let closes_late = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            drop(conn);
            late.close().await;
        });
        let names = |d: &Path| {
            let mut n: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            n.sort();
            n
        };
        assert!(
            suffixed(&file, "-wal").exists(),
            "a connection is still open: {:?}",
            names(&dir)
        );
        assert!(fold_after_close(&url, Duration::from_secs(2)).await);
        closes_late.await.unwrap();
        assert_eq!(names(&dir), ["site.db"], "the file alone");

        // A log no connection folded (the last two closed at once, or a
        // killed process's): one connection of our own folds it.
        let db = Db::connect_lazy(&url).unwrap();
        let mut held = db.pool.acquire().await.unwrap();
        sqlx::query(
            "INSERT INTO tls_leases (name, holder, expires_at) VALUES ('other', 'in the log', 1)",
        )
        .execute(&mut *held)
        .await
        .unwrap();
        let copy = dir.join("copy");
        std::fs::create_dir_all(&copy).unwrap();
        for suffix in ["", "-wal", "-shm"] {
            std::fs::copy(
                suffixed(&file, suffix),
                suffixed(&copy.join("site.db"), suffix),
            )
            .unwrap();
        }
        drop(held);
        db.close().await;
        let copied = copy.join("site.db");
        let copied_url = format!("sqlite://{}", copied.display());
        assert!(fold_after_close(&copied_url, Duration::ZERO).await);
        assert!(!suffixed(&copied, "-wal").exists() && !suffixed(&copied, "-shm").exists());
        let only = dir.join("only.db");
        std::fs::copy(&copied, &only).unwrap();
        let db = Db::connect_lazy(&format!("sqlite://{}", only.display())).unwrap();
        let holders: Vec<String> =
            sqlx::query_scalar("SELECT holder FROM tls_leases ORDER BY name")
                .fetch_all(&db.pool)
                .await
                .unwrap();
        assert_eq!(holders, ["a member", "in the log"]);
        db.close().await;

        // Open in another process (a successor after a reload, a fleet
        // member on the same file): its log, left to it, at once.
        let db = Db::connect_lazy(&url).unwrap();
        sqlx::query("INSERT INTO tls_leases (name, holder, expires_at) VALUES ('third', 'another process', 1)")
            .execute(&db.pool)
            .await
            .unwrap();
        let mut other = std::process::Command::new("python3")
            .args([
                "-c",
                "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1]); c.execute('SELECT count(*) FROM tls_leases').fetchall(); print('open', flush=True); time.sleep(30)",
            ])
            .arg(&file)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 (its sqlite3 module holds the database open)");
        let mut said = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(other.stdout.as_mut().unwrap()),
            &mut said,
        )
        .unwrap();
        assert_eq!(said.trim(), "open");
        db.close().await;
        let started = std::time::Instant::now();
        let alone = fold_after_close(&url, Duration::from_secs(2)).await;
        let took = started.elapsed();
        let _ = other.kill();
        let _ = other.wait();
        assert!(!alone, "the other process has it open");
        assert!(took < Duration::from_millis(500), "no waiting: {took:?}");
        assert!(
            suffixed(&file, "-wal").exists(),
            "the log is left to the other process"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
