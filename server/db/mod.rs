//! The database: SQLite by default (a file under ./data/), PostgreSQL when
//! DATABASE_URL says so. One sqlx `AnyPool`, migrations per dialect
//! (`migrations/sqlite`, `migrations/postgres`) run at start.

pub mod team;

use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::AnyPool;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

#[derive(Clone)]
pub struct Db {
    pub pool: AnyPool,
    pub dialect: Dialect,
}

impl Db {
    /// A pool that connects on first use, so a database that is down at start
    /// does not stop the site from serving pages.
    pub fn connect_lazy(url: &str) -> anyhow::Result<Db> {
        sqlx::any::install_default_drivers();
        let (dialect, url) = if url.starts_with("sqlite:") {
            // Create the file on first start.
            let url = if url.contains("mode=") {
                url.to_owned()
            } else if url.contains('?') {
                format!("{url}&mode=rwc")
            } else {
                format!("{url}?mode=rwc")
            };
            (Dialect::Sqlite, url)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            (Dialect::Postgres, url.to_owned())
        } else {
            anyhow::bail!("DATABASE_URL must start with sqlite:// or postgres://");
        };
        let pool = AnyPoolOptions::new()
            .max_connections(if dialect == Dialect::Sqlite { 4 } else { 10 })
            .acquire_timeout(Duration::from_secs(3))
            .connect_lazy(&url)?;
        Ok(Db { pool, dialect })
    }

    pub async fn migrate(&self) -> Result<(), sqlx::migrate::MigrateError> {
        match self.dialect {
            Dialect::Sqlite => sqlx::migrate!("migrations/sqlite").run(&self.pool).await,
            Dialect::Postgres => sqlx::migrate!("migrations/postgres").run(&self.pool).await,
        }
    }
}
