//! A stopped site's SQLite database left as the file alone: its
//! write-ahead log folded in once the pool has closed, unless another
//! process has the database open.

use std::path::Path;
use std::time::Duration;

use super::files::suffixed;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;

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
