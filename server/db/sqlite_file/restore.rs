//! A backup put in place of the SQLite database for a stopped server:
//! checked as a copy beside it, given the rows that must not go back in
//! time, and swapped in, the database it replaces kept beside it.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use sqlx::Row;

use super::super::private::{folder_of, SQLITE_HEADER};
use super::super::Db;
use super::files::{make_folder_of, remove_with_sidecars, suffixed, sync_dir};
use super::inspect::{inspect, Counts};
use super::lock::{lock_path, open_lock};
use crate::config::{io_reason, sqlite_url};

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
    let copied = super::super::private::make_file(&incoming).and_then(|_| {
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
}
