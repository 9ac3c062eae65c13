//! Configuration: command-line flags, each with an environment variable, and
//! embedded defaults so a fresh clone runs with no account anywhere.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::client_ip::Networks;
use crate::rate_limit::Rate;

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "ADDR", default_value = "127.0.0.1:3000")]
    pub addr: SocketAddr,

    /// Public base URL of the site: checkout return URLs and canonical links.
    #[arg(long, env = "SITE_URL", default_value = "http://127.0.0.1:3000")]
    pub site_url: String,

    /// Database: `sqlite://...` (default: a file under ./data/) or `postgres://...`.
    #[arg(long, env = "DATABASE_URL", default_value = "sqlite://data/citizen-site.db")]
    pub database_url: String,

    /// Stripe secret key; without it every plan shows 'Contact us for pricing'.
    #[arg(long, env = "STRIPE_SECRET_KEY", hide_env_values = true)]
    pub stripe_secret_key: Option<String>,

    /// Secret that signs Stripe webhook events.
    #[arg(long, env = "STRIPE_WEBHOOK_SECRET", hide_env_values = true)]
    pub stripe_webhook_secret: Option<String>,

    /// Stripe API base URL (tests point it at a local stand-in).
    #[arg(long, env = "STRIPE_API_BASE", default_value = "https://api.stripe.com")]
    pub stripe_api_base: String,

    /// Notion integration token; without it intro requests are only stored.
    #[arg(long, env = "NOTION_TOKEN", hide_env_values = true)]
    pub notion_token: Option<String>,

    /// Notion database that receives intro requests.
    #[arg(long, env = "NOTION_DATABASE_ID")]
    pub notion_database_id: Option<String>,

    /// Notion API base URL (tests point it at a local stand-in).
    #[arg(long, env = "NOTION_API_BASE", default_value = "https://api.notion.com")]
    pub notion_api_base: String,

    /// Render workers (V8 isolates); 0 means one per CPU.
    #[arg(long, env = "SSR_WORKERS", default_value_t = 0)]
    pub ssr_workers: usize,

    /// Longest a single render may run before its isolate is terminated.
    #[arg(long, env = "SSR_DEADLINE_MS", default_value_t = 2000)]
    pub ssr_deadline_ms: u64,

    /// Rendered pages kept in memory; 0 turns the page cache off (benchmarks).
    #[arg(long, env = "PAGE_CACHE_CAPACITY", default_value_t = 2_000)]
    pub page_cache_capacity: u64,

    /// How often the team table is read again for /about (seconds): a change
    /// made with `citizen-site team` shows within this long.
    #[arg(long, env = "TEAM_REFRESH_SECS", default_value_t = 5)]
    pub team_refresh_secs: u64,

    /// Log format.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Proxies whose `X-Forwarded-For` names the client: comma-separated
    /// addresses or networks (`10.0.0.0/8,127.0.0.1`). Empty: the peer
    /// address is the client, whatever the headers say.
    #[arg(long, env = "TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: Networks,

    /// Clients that may read `/metrics` (addresses or networks); others get 404.
    #[arg(long, env = "METRICS_ALLOW", default_value = "127.0.0.0/8,::1,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7")]
    pub metrics_allow: Networks,

    /// POST requests one client may make per minute (and in a burst) to the
    /// form and checkout endpoints; 0 turns the limit off.
    #[arg(long, env = "RATE_LIMIT_PER_MINUTE", default_value_t = 10)]
    pub rate_limit_per_minute: u32,

    /// Stripe lookups of checkout sessions one client may cause per minute
    /// (and in a burst): the success page asks Stripe only for sessions it
    /// has not seen lately, and a client over this sees the failure state
    /// with 429. 0 turns the limit off.
    #[arg(long, env = "SESSION_LOOKUPS_PER_MINUTE", default_value_t = 10)]
    pub session_lookups_per_minute: u32,

    /// On SIGTERM or Ctrl-C, how long in-flight requests may take to finish.
    #[arg(long, env = "SHUTDOWN_GRACE_SECS", default_value_t = 10)]
    pub shutdown_grace_secs: u64,

    /// How long an intro request claimed by one process is reserved for it
    /// before another process may retry it (after a crash).
    #[arg(long, env = "INTRO_LEASE_SECS", default_value_t = 60)]
    pub intro_lease_secs: u64,
}

/// `citizen-site dev`: the options of `serve`, and the checkout to serve.
#[derive(Args, Debug, Clone)]
pub struct DevArgs {
    /// The checkout whose sources are served (its client/, ssr-bundle/ and
    /// content/, and its node_modules for the builder).
    #[arg(long, default_value = ".")]
    pub root: PathBuf,

    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// The settled configuration the application is built from.
#[derive(Debug, Clone)]
pub struct Config {
    pub addr: SocketAddr,
    pub site_url: String,
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

/// Bounds on every call the site makes to another service.
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
    /// Tests only: JavaScript evaluated in each isolate after the bundle
    /// (faults are injected by wrapping `__ssr_render`). None in the server.
    pub injected_script: Option<std::sync::Arc<str>>,
    /// Tests only: called on the worker thread with each URL before it is
    /// rendered, so a test can make a worker panic. None in the server.
    pub fault: Option<FaultHook>,
}

/// A test's hook into the render workers (see [`SsrConfig::fault`]).
#[derive(Clone)]
pub struct FaultHook(pub std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for FaultHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FaultHook")
    }
}

impl SsrConfig {
    /// Evaluates `script` in every isolate on top of the bundle (tests inject
    /// faults this way). The isolates still start from the snapshot: V8
    /// shares one read-only heap per process, and isolates started from
    /// different snapshots in one process crash V8.
    pub fn inject_script(&mut self, script: &str) {
        self.injected_script = Some(script.into());
    }
}

impl From<ServeArgs> for Config {
    fn from(a: ServeArgs) -> Self {
        let workers = if a.ssr_workers == 0 { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2) } else { a.ssr_workers };
        let blank = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
        Config {
            addr: a.addr,
            site_url: a.site_url.trim_end_matches('/').to_string(),
            database_url: a.database_url,
            stripe_secret_key: blank(a.stripe_secret_key),
            stripe_webhook_secret: blank(a.stripe_webhook_secret),
            stripe_api_base: a.stripe_api_base,
            notion_token: blank(a.notion_token),
            notion_database_id: blank(a.notion_database_id),
            notion_api_base: a.notion_api_base,
            // Pool sizing, measured with bench/run.mjs on 2 cores: one isolate
            // per core saturates the CPU (a render is pure CPU; more isolates
            // only add ~10 MB each and context switches). 64 waiting renders
            // per worker is ~30 ms of work each at ~1,000 renders/s per core:
            // beyond that a visitor is better served by a quick 503 than by
            // seconds in a queue. Each isolate's heap is capped in ssr/pool.rs.
            ssr: SsrConfig {
                workers,
                queue: workers * 64,
                deadline: Duration::from_millis(a.ssr_deadline_ms),
                bundle: crate::assets::SSR_BUNDLE.into(),
                snapshot: Some(crate::assets::SSR_SNAPSHOT),
                injected_script: None,
                fault: None,
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
        }
    }
}

impl From<DevArgs> for Config {
    fn from(a: DevArgs) -> Self {
        Config { dev: Some(a.root), ..Config::from(a.serve) }
    }
}

impl Config {
    /// Defaults for tests: a random loopback port, a throwaway SQLite file.
    pub fn for_tests(data_dir: &std::path::Path) -> Config {
        use clap::Parser;
        #[derive(Parser)]
        struct Defaults {
            #[command(flatten)]
            serve: ServeArgs,
        }
        let mut cfg: Config = Defaults::parse_from(["citizen-site"]).serve.into();
        cfg.addr = "127.0.0.1:0".parse().unwrap();
        cfg.database_url = format!("sqlite://{}", data_dir.join("test.db").display());
        cfg.ssr.workers = 2;
        cfg.ssr.queue = 128;
        // Tests post many times from one address; the rate-limit tests turn it on.
        cfg.post_rate = Rate::per_minute(0);
        cfg
    }

    /// Directory of a `sqlite://` database file, created at start.
    pub fn sqlite_dir(&self) -> Option<PathBuf> {
        let path = self.database_url.strip_prefix("sqlite://")?;
        let path = path.split('?').next().unwrap_or(path);
        PathBuf::from(path).parent().map(PathBuf::from)
    }
}
