//! Configuration: command-line flags, each with an environment variable
//! ([`flags`]), settled into the [`Config`] the application is built from,
//! with embedded defaults so a fresh clone runs with no account anywhere.
//! HTTPS settings are [`tls`]'s; what only tests use is in `testing`,
//! compiled with the `test-hooks` feature alone.

mod flags;
#[cfg(any(test, feature = "test-hooks"))]
mod testing;
mod tls;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub use self::flags::{DatabaseArgs, DevArgs, NotionArgs, ServeArgs};
#[cfg(feature = "test-hooks")]
pub use self::testing::{BeforeRender, RenderHooks};
use self::tls::tls_settings;
pub use self::tls::{parse_domains, CertSource, TlsSettings, TICKET_PERIOD};
use crate::client_ip::Networks;
use crate::edge::Limits;
use crate::rate_limit::Rate;
pub use crate::telemetry::LogFormat;

/// The settled configuration the application is built from.
#[derive(Debug, Clone)]
pub struct Config {
    /// Plain HTTP, when `tls` is None.
    pub addr: SocketAddr,
    pub site_url: String,
    /// Serving HTTPS itself.
    pub tls: Option<TlsSettings>,
    /// What one connection may hold (`edge::serve`).
    pub limits: Limits,
    /// Fill an empty team table with the sample team.
    pub sample_team: bool,
    pub database_url: String,
    pub stripe_secret_key: Option<String>,
    pub stripe_webhook_secret: Option<String>,
    pub stripe_api_base: String,
    pub notion_token: Option<String>,
    pub notion_database_id: Option<String>,
    pub notion_api_base: String,
    pub ssr: SsrConfig,
    /// Pages kept in the render cache.
    pub page_cache_capacity: u64,
    /// How often the team table is read again (the bound on a team change
    /// reaching /about).
    pub team_refresh: Duration,
    pub trusted_proxies: Networks,
    pub metrics_allow: Networks,
    /// POSTs per client to the form and checkout endpoints.
    pub post_rate: Rate,
    /// Stripe session lookups per client (cache misses only).
    pub session_lookup_rate: Rate,
    pub shutdown_grace: Duration,
    pub intro_lease: Duration,
    pub timeouts: Timeouts,
    /// `dev`: serve this checkout's sources, rebuilt on every change,
    /// instead of the build compiled into the binary.
    pub dev: Option<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct Timeouts {
    /// One Stripe HTTP attempt, connecting included (async-stripe has one
    /// timeout per attempt, no separate connect timeout).
    pub stripe: Duration,
    /// Connecting to Notion.
    pub notion_connect: Duration,
    /// One Notion request, from connecting to the last byte.
    pub notion_request: Duration,
    /// Getting a database connection: from the pool, or connecting a new one.
    pub db_connect: Duration,
    /// One database statement (a dead server that never answers is cut off).
    pub db_query: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            stripe: Duration::from_secs(10),
            notion_connect: Duration::from_secs(5),
            notion_request: Duration::from_secs(15),
            db_connect: Duration::from_secs(3),
            db_query: Duration::from_secs(5),
        }
    }
}

#[derive(Debug, Clone)]
pub struct SsrConfig {
    /// Worker threads, one V8 isolate each.
    pub workers: usize,
    /// Renders that may wait for a worker; beyond it requests are shed with 503.
    pub queue: usize,
    pub deadline: Duration,
    /// The JavaScript evaluated in every isolate (the embedded bundle unless a
    /// test supplies another).
    pub bundle: std::sync::Arc<str>,
    /// A startup snapshot with `bundle` already evaluated (built by build.rs);
    /// isolates start from it instead of evaluating the bundle.
    pub snapshot: Option<&'static [u8]>,
    /// Where isolates rebuilt are counted (`/metrics`; the server sets it).
    pub rebuilds: crate::metrics::IsolateRebuilds,
    /// Faults the renderer's tests inject (compiled in for tests only).
    #[cfg(feature = "test-hooks")]
    pub hooks: RenderHooks,
}

impl Config {
    /// The settled configuration, or an error naming the variable at fault.
    pub fn from_args(a: ServeArgs) -> anyhow::Result<Config> {
        let tls = tls_settings(&a)?;
        let site_url = match (&a.site_url, &tls) {
            (Some(url), Some(_)) if !url.starts_with("https://") => {
                anyhow::bail!("SITE_URL: {url:?} must start with https:// when the server serves HTTPS itself (TLS_DOMAINS or TLS_CERT)")
            }
            (Some(url), _) => url.clone(),
            (
                None,
                Some(TlsSettings {
                    https_addr,
                    certs: CertSource::Acme(acme),
                    ..
                }),
            ) => match https_addr.port() {
                443 => format!("https://{}", acme.domains[0]),
                port => format!("https://{}:{port}", acme.domains[0]),
            },
            (
                None,
                Some(TlsSettings {
                    certs: CertSource::Files { .. },
                    ..
                }),
            ) => {
                anyhow::bail!(
                    "SITE_URL: set it to the https address TLS_CERT is for (https://your.domain)"
                )
            }
            (None, None) => "http://127.0.0.1:3000".into(),
        };
        let workers = if a.ssr_workers == 0 {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
        } else {
            a.ssr_workers
        };
        let blank = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
        Ok(Config {
            addr: a.addr,
            site_url: site_url.trim_end_matches('/').to_string(),
            limits: Limits {
                max_connections: a.max_connections.max(1),
                max_per_client: Some(a.max_connections_per_client)
                    .filter(|n| *n > 0 && tls.is_some()),
                header_read: tls.is_some().then_some(Limits::HEADER_READ),
                workers: a.connection_workers,
                proxy_from: a.proxy_protocol_from,
                ..Limits::default()
            },
            tls,
            sample_team: a.sample_team,
            database_url: a.database.database_url,
            stripe_secret_key: blank(a.stripe_secret_key),
            stripe_webhook_secret: blank(a.stripe_webhook_secret),
            stripe_api_base: a.stripe_api_base,
            notion_token: blank(a.notion.notion_token),
            notion_database_id: blank(a.notion.notion_database_id),
            notion_api_base: a.notion.notion_api_base,
            // Pool sizing, measured with bench/run.mjs on 2 cores: one isolate
            // per core saturates the CPU (a render is pure CPU; more isolates
            // only add ~10 MB each and context switches). 64 waiting renders
            // per worker is ~30 ms of work each at ~1,000 renders/s per core:
            // beyond that a visitor is better served by a quick 503 than by
            // seconds in a queue. Each isolate's heap is capped in render/pool.rs.
            ssr: SsrConfig {
                workers,
                queue: workers * 64,
                deadline: Duration::from_millis(a.ssr_deadline_ms),
                bundle: crate::assets::ssr_bundle().into(),
                snapshot: Some(crate::assets::ssr_snapshot()),
                rebuilds: Default::default(),
                #[cfg(feature = "test-hooks")]
                hooks: RenderHooks::default(),
            },
            page_cache_capacity: a.page_cache_capacity,
            team_refresh: Duration::from_secs(a.team_refresh_secs.max(1)),
            trusted_proxies: a.trusted_proxies,
            metrics_allow: a.metrics_allow,
            post_rate: Rate::per_minute(a.rate_limit_per_minute),
            session_lookup_rate: Rate::per_minute(a.session_lookups_per_minute),
            shutdown_grace: Duration::from_secs(a.shutdown_grace_secs),
            intro_lease: Duration::from_secs(a.intro_lease_secs.max(1)),
            timeouts: Timeouts::default(),
            dev: None,
        })
    }

    /// `dev`: the same, serving the checkout at `root`, with the sample
    /// team in an empty table.
    pub fn from_dev_args(a: DevArgs) -> anyhow::Result<Config> {
        Ok(Config {
            dev: Some(a.root),
            sample_team: true,
            ..Config::from_args(a.serve)?
        })
    }
}

fn sqlite_dir(database_url: &str) -> Option<PathBuf> {
    sqlite_path(database_url)?.parent().map(PathBuf::from)
}

/// The file of a `sqlite://` (or `sqlite:`) database URL, without its
/// options; None for any other database.
pub fn sqlite_path(database_url: &str) -> Option<PathBuf> {
    let path = database_url
        .strip_prefix("sqlite://")
        .or_else(|| database_url.strip_prefix("sqlite:"))?;
    let path = path.split('?').next().unwrap_or(path);
    (!path.is_empty() && path != ":memory:").then(|| PathBuf::from(path))
}

impl Config {
    /// The `sqlite://` database file; None for PostgreSQL.
    pub fn sqlite_path(&self) -> Option<PathBuf> {
        sqlite_path(&self.database_url)
    }
}

#[cfg(test)]
mod tests;
