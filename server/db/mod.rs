//! The database: SQLite by default (a file under ./data/), PostgreSQL when
//! DATABASE_URL says so. One sqlx `AnyPool`, migrations per dialect
//! (`migrations/sqlite`, `migrations/postgres`) run at start.
//!
//! The site must keep serving when the database is away, at start or later:
//! getting a connection and every statement the site runs are bounded
//! ([`Db::timed`]), and a monitor ([`Db::spawn_monitor`]) pings it every two
//! seconds, runs the migrations once it is reachable (if they could not run
//! at start), and keeps [`Db::is_up`] current so pages skip a database known
//! to be down instead of waiting on it. SQLite runs with write-ahead
//! logging; [`sqlite_file`] backs its file up and restores it, and
//! [`private`] keeps its folder and files (and the ACME cache) to the
//! server's user.

pub mod private;
pub mod sqlite_file;

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::AnyPool;

use crate::config::database_url::{pool_url, url_reason};
use crate::config::Timeouts;

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");

/// How often the monitor checks the database.
pub const MONITOR_EVERY: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

#[derive(Clone)]
pub struct Db {
    pub pool: AnyPool,
    pub dialect: Dialect,
    query_timeout: Duration,
    health: Arc<Health>,
}

#[derive(Default)]
struct Health {
    /// The last check reached the database.
    up: AtomicBool,
    /// The migrations have run (in this process).
    migrated: AtomicBool,
}

impl Db {
    /// A pool that connects on first use, so a database that is down at start
    /// does not stop the site from serving pages.
    pub fn connect_lazy(url: &str) -> anyhow::Result<Db> {
        Db::connect_lazy_with(url, &Timeouts::default())
    }

    pub fn connect_lazy_with(url: &str, timeouts: &Timeouts) -> anyhow::Result<Db> {
        // Create the file on first start.
        Db::connect_in_mode(url, timeouts, "rwc")
    }

    /// A pool that only reads: an SQLite file is opened read-only (never
    /// made); a PostgreSQL session refuses writes.
    pub fn connect_read_only(url: &str) -> anyhow::Result<Db> {
        Db::connect_in_mode(url, &Timeouts::default(), "ro")
    }

    fn connect_in_mode(url: &str, timeouts: &Timeouts, mode: &str) -> anyhow::Result<Db> {
        sqlx::any::install_default_drivers();
        let url = pool_url(url, mode).map_err(|why| anyhow::anyhow!("DATABASE_URL: {why}"))?;
        let dialect = match url.starts_with("sqlite:") {
            true => Dialect::Sqlite,
            false => Dialect::Postgres,
        };
        let read_only = mode == "ro" && dialect == Dialect::Postgres;
        let pool = AnyPoolOptions::new()
            .max_connections(if dialect == Dialect::Sqlite { 4 } else { 10 })
            .acquire_timeout(timeouts.db_connect)
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if read_only {
                        sqlx::query("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                            .execute(&mut *conn)
                            .await?;
                    }
                    Ok(())
                })
            })
            .connect_lazy(&url)
            .map_err(|e| anyhow::anyhow!("DATABASE_URL: {}", url_reason(&e)))?;
        Ok(Db {
            pool,
            dialect,
            query_timeout: timeouts.db_query,
            health: Arc::default(),
        })
    }

    /// Closes every connection of the pool, waiting for those in use: a
    /// caller holding one of them waits for ever (a caller that must not
    /// bounds it, as the server's stop does).
    ///
    /// sqlx 0.8's `Pool::close` can return with a connection still open
    /// (launchbadge/sqlx#3217, fixed in 0.9): one given back while the
    /// pool closes reaches the idle queue after its last look there, and
    /// its count of permits can run out while one is still in use. Closed
    /// again, the pool closes what it left, until none is open.
    pub async fn close(&self) {
        loop {
            self.pool.close().await;
            if self.pool.size() == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Runs the pending migrations (bounded like any statement).
    pub async fn migrate(&self) -> Result<(), sqlx::migrate::MigrateError> {
        let run = async {
            match self.dialect {
                Dialect::Sqlite => {
                    // Write-ahead logging: readers (a backup among them) and
                    // the writer do not wait for each other. It stays set in
                    // the file; a database still open elsewhere keeps its mode.
                    if let Err(e) = sqlx::query("PRAGMA journal_mode = WAL")
                        .execute(&self.pool)
                        .await
                    {
                        tracing::warn!(error = %e, "SQLite stays in its journal mode");
                    }
                    SQLITE_MIGRATIONS.run(&self.pool).await
                }
                Dialect::Postgres => POSTGRES_MIGRATIONS.run(&self.pool).await,
            }
        };
        // Migrations may take a while on a big table; a dead server may not answer at all.
        let result = match tokio::time::timeout(self.query_timeout * 6, run).await {
            Ok(r) => r,
            Err(_) => Err(sqlx::migrate::MigrateError::Execute(timed_out(
                self.query_timeout * 6,
            ))),
        };
        if result.is_ok() {
            self.health.migrated.store(true, Ordering::Release);
            self.health.up.store(true, Ordering::Release);
        }
        result
    }

    /// `work` (one or a few statements), cut off after the query timeout
    /// with an I/O error, so a database that accepts connections but never
    /// answers cannot hold a visitor's request.
    pub async fn timed<T>(
        &self,
        work: impl Future<Output = Result<T, sqlx::Error>>,
    ) -> Result<T, sqlx::Error> {
        let result = match tokio::time::timeout(self.query_timeout, work).await {
            Ok(r) => r,
            Err(_) => Err(timed_out(self.query_timeout)),
        };
        if let Err(e) = &result {
            if is_unreachable(e) {
                self.health.up.store(false, Ordering::Release);
            }
        }
        result
    }

    /// The newest migration applied to the database; None when it has
    /// none of the site's tables (only a missing table counts as that: a
    /// database that cannot be read is an error).
    pub async fn schema(&self) -> Result<Option<i64>, sqlx::Error> {
        self.timed(sqlx::query("SELECT 1").execute(&self.pool))
            .await?;
        let newest = self
            .timed(
                sqlx::query("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
                    .fetch_one(&self.pool),
            )
            .await;
        match newest {
            Ok(row) => Ok(Some(
                sqlx::Row::try_get::<Option<i64>, _>(&row, 0)?.unwrap_or(0),
            )),
            Err(e) if is_missing_table(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The newest migration this binary knows for the database's dialect.
    pub fn latest_schema(&self) -> i64 {
        let migrator = match self.dialect {
            Dialect::Sqlite => &SQLITE_MIGRATIONS,
            Dialect::Postgres => &POSTGRES_MIGRATIONS,
        };
        migrator.iter().map(|m| m.version).max().unwrap_or(0)
    }

    /// How many of this binary's migrations a database whose newest is
    /// `schema` lacks.
    pub fn migrations_after(&self, schema: i64) -> usize {
        let migrator = match self.dialect {
            Dialect::Sqlite => &SQLITE_MIGRATIONS,
            Dialect::Postgres => &POSTGRES_MIGRATIONS,
        };
        migrator.iter().filter(|m| m.version > schema).count()
    }

    /// Whether the database answered its last check (and is migrated).
    pub fn is_up(&self) -> bool {
        self.health.up.load(Ordering::Acquire) && self.health.migrated.load(Ordering::Acquire)
    }

    /// Checks the database now: migrates it if that has not happened yet,
    /// else runs `SELECT 1`. Updates [`Db::is_up`].
    pub async fn check(&self) -> bool {
        if !self.health.migrated.load(Ordering::Acquire) {
            return match self.migrate().await {
                Ok(()) => {
                    tracing::info!("database reachable; migrations are up to date");
                    true
                }
                Err(e) => {
                    self.health.up.store(false, Ordering::Release);
                    tracing::debug!(error = %e, "database still unreachable");
                    false
                }
            };
        }
        let up = self
            .timed(sqlx::query("SELECT 1").execute(&self.pool))
            .await
            .is_ok();
        let was = self.health.up.swap(up, Ordering::AcqRel);
        if was != up {
            if up {
                tracing::info!("database reachable again");
            } else {
                tracing::error!("database unreachable: the team shows empty and intro requests are refused until it is back");
            }
        }
        up
    }

    /// Checks the database every [`MONITOR_EVERY`] until the process ends.
    pub fn spawn_monitor(&self) -> tokio::task::JoinHandle<()> {
        let db = self.clone();
        tokio::spawn(async move {
            loop {
                db.check().await;
                tokio::time::sleep(MONITOR_EVERY).await;
            }
        })
    }
}

fn timed_out(after: Duration) -> sqlx::Error {
    sqlx::Error::Io(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("the database did not answer within {after:?}"),
    ))
}

/// Errors that mean "the server is away", as opposed to a bad statement.
pub fn is_unreachable(e: &sqlx::Error) -> bool {
    matches!(
        e,
        sqlx::Error::Io(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Tls(_)
            | sqlx::Error::Protocol(_)
    )
}

/// A database error in words, once: the database's own message where it
/// gave one (sqlx's Display repeats it with its code).
pub fn reason(e: &sqlx::Error) -> String {
    match e.as_database_error() {
        Some(d) => d.message().to_owned(),
        None => e.to_string(),
    }
}

/// Whether `e` says a table does not exist (SQLite's "no such table",
/// PostgreSQL's undefined_table).
fn is_missing_table(e: &sqlx::Error) -> bool {
    e.as_database_error().is_some_and(|d| {
        d.code().as_deref() == Some("42P01") || d.message().contains("no such table")
    })
}

/// Milliseconds since 1970 (UTC): how every table stamps its rows.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// For tests: a migrated SQLite database (`t.db`) in a folder of its own,
/// named after `what`, under the system's temporary folder. The database,
/// and the folder for the test to remove.
#[cfg(test)]
pub(crate) async fn scratch(what: &str) -> (Db, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("citizen-{what}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = Db::connect_lazy(&format!("sqlite://{}/t.db", dir.display())).unwrap();
    db.migrate().await.unwrap();
    (db, dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection given back to the pool as it closes is closed too: an
    /// SQLite connection left open keeps the write-ahead log beside the
    /// file (a stopped site's data is then not the file alone) and stops
    /// the last one of ours from folding it in.
    #[tokio::test]
    async fn closing_closes_a_connection_given_back_meanwhile() {
        let (migrated, dir) = scratch("close").await;
        migrated.close().await;
        let url = format!("sqlite://{}", dir.join("t.db").display());
        let wal = dir.join("t.db-wal");
        for round in 0..20 {
            let db = Db::connect_lazy(&url).unwrap();
            let mut conn = db.pool.acquire().await.unwrap();
            sqlx::query("SELECT count(*) FROM tls_leases")
                .execute(&mut *conn)
                .await
                .unwrap();
            assert!(wal.exists());
            // Given back (the pool's task tests it with a ping first) just
            // as the pool closes.
            drop(conn);
            tokio::task::yield_now().await;
            db.close().await;
            assert_eq!(
                db.pool.size(),
                0,
                "round {round}: a connection is still open"
            );
            assert!(!wal.exists(), "round {round}: the log is beside the file");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
