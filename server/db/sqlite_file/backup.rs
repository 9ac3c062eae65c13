//! A consistent copy of the SQLite database taken while the server runs
//! and writes (`VACUUM INTO`), checked before it is given its name.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};

use super::super::private::folder_of;
use super::super::{Db, Dialect};
use super::access::may;
use super::files::{remove_with_sidecars, sync_dir};
use super::inspect::{inspect, Counts};
use crate::config::io_reason;

/// A backup of a big database may take a while; a stuck one is cut off.
const BACKUP_TIMEOUT: Duration = Duration::from_secs(600);

/// A finished backup.
#[derive(Debug, Clone)]
pub struct Backup {
    pub file: PathBuf,
    pub bytes: u64,
    pub counts: Counts,
}

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
    if let Err(e) = super::super::private::make_file(&partial) {
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
