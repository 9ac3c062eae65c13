//! Configuration: command-line flags, each with an environment variable, and
//! embedded defaults so a fresh clone runs with no account anywhere.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use crate::client_ip::Networks;
use crate::edge::acme::{AcmeSettings, Challenge, LETS_ENCRYPT};
use crate::edge::Limits;
use crate::rate_limit::Rate;
pub use crate::telemetry::LogFormat;

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Address to listen on for plain HTTP (behind a proxy; unused when
    /// the server serves HTTPS itself).
    #[arg(long, env = "ADDR", default_value = "127.0.0.1:3000")]
    pub addr: SocketAddr,

    /// Public base URL of the site: checkout return URLs and canonical links
    /// [default: http://127.0.0.1:3000, or https://<first of TLS_DOMAINS>].
    #[arg(long, env = "SITE_URL")]
    pub site_url: Option<String>,

    /// Serve HTTPS for these names (comma-separated), with a certificate
    /// obtained and renewed from ACME_DIRECTORY.
    #[arg(long, env = "TLS_DOMAINS")]
    pub tls_domains: Option<String>,

    /// The ACME directory certificates come from.
    #[arg(long, env = "ACME_DIRECTORY", default_value = LETS_ENCRYPT)]
    pub acme_directory: String,

    /// Contact address of the ACME account (the CA's expiry warnings).
    #[arg(long, env = "ACME_EMAIL")]
    pub acme_email: Option<String>,

    /// A PEM file of an extra CA to trust for ACME_DIRECTORY itself (a test CA).
    #[arg(long, env = "ACME_DIRECTORY_CA")]
    pub acme_directory_ca: Option<PathBuf>,

    /// Where the ACME account key and the certificates are kept
    /// [default: acme/ beside the SQLite file, or data/acme].
    #[arg(long, env = "ACME_CACHE_DIR")]
    pub acme_cache_dir: Option<PathBuf>,

    /// How the CA validates the names: on the HTTPS port (tls-alpn-01) or
    /// the HTTP port (http-01).
    #[arg(long, env = "ACME_CHALLENGE", value_enum, default_value_t = Challenge::TlsAlpn01)]
    pub acme_challenge: Challenge,

    /// Serve HTTPS with this certificate chain (PEM) instead of ACME;
    /// reloaded when the file changes. Needs TLS_KEY.
    #[arg(long, env = "TLS_CERT")]
    pub tls_cert: Option<PathBuf>,

    /// The private key (PEM) of TLS_CERT.
    #[arg(long, env = "TLS_KEY")]
    pub tls_key: Option<PathBuf>,

    /// Where HTTPS is served (with TLS_DOMAINS or TLS_CERT).
    #[arg(long, env = "HTTPS_ADDR", default_value = "0.0.0.0:443")]
    pub https_addr: SocketAddr,

    /// Where the HTTP port answers ACME challenges and redirects to https
    /// (with TLS_DOMAINS or TLS_CERT).
    #[arg(long, env = "HTTP_ADDR", default_value = "0.0.0.0:80")]
    pub http_addr: SocketAddr,

    /// Connections open at once (an equal share for each connection
    /// worker); more wait until one closes.
    #[arg(long, env = "MAX_CONNECTIONS", default_value_t = 4096)]
    pub max_connections: usize,

    /// Connections one client address may hold at once when the server
    /// serves HTTPS itself (TRUSTED_PROXIES are exempt); 0: no cap.
    #[arg(long, env = "MAX_CONNECTIONS_PER_CLIENT", default_value_t = 256)]
    pub max_connections_per_client: usize,

    /// Fill an empty team table with the sample team (`dev` always does).
    #[arg(long, env = "SAMPLE_TEAM")]
    pub sample_team: bool,

    #[command(flatten)]
    pub database: DatabaseArgs,

    /// Stripe secret key; without it every plan shows 'Contact us for pricing'.
    #[arg(long, env = "STRIPE_SECRET_KEY", hide_env_values = true)]
    pub stripe_secret_key: Option<String>,

    /// Secret that signs Stripe webhook events.
    #[arg(long, env = "STRIPE_WEBHOOK_SECRET", hide_env_values = true)]
    pub stripe_webhook_secret: Option<String>,

    /// Stripe API base URL (tests point it at a local stand-in).
    #[arg(
        long,
        env = "STRIPE_API_BASE",
        default_value = "https://api.stripe.com"
    )]
    pub stripe_api_base: String,

    #[command(flatten)]
    pub notion: NotionArgs,

    /// Render workers (V8 isolates); 0 means one per CPU.
    #[arg(long, env = "SSR_WORKERS", default_value_t = 0)]
    pub ssr_workers: usize,

    /// Threads that accept and serve connections; 0 means one per CPU.
    #[arg(long, env = "CONNECTION_WORKERS", default_value_t = 0)]
    pub connection_workers: usize,

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
    #[arg(
        long,
        env = "METRICS_ALLOW",
        default_value = "127.0.0.0/8,::1,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7"
    )]
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

/// The site's database, as the server and the operator's commands take it.
#[derive(Args, Debug, Clone)]
pub struct DatabaseArgs {
    /// Database: `sqlite://...` (default: a file under ./data/) or `postgres://...`.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "sqlite://data/citizen-site.db",
        global = true
    )]
    pub database_url: String,
}

/// Notion, which receives the intro requests: as the server and
/// `citizen-site intro retry` take it.
#[derive(Args, Debug, Clone)]
pub struct NotionArgs {
    /// Notion integration token; without it intro requests are only stored.
    #[arg(long, env = "NOTION_TOKEN", hide_env_values = true)]
    pub notion_token: Option<String>,

    /// Notion database that receives intro requests.
    #[arg(long, env = "NOTION_DATABASE_ID")]
    pub notion_database_id: Option<String>,

    /// Notion API base URL (tests point it at a local stand-in).
    #[arg(
        long,
        env = "NOTION_API_BASE",
        default_value = "https://api.notion.com"
    )]
    pub notion_api_base: String,
}

impl ServeArgs {
    /// The options `args` gives (the program's name first), with every
    /// other one at its default: the environment is not read, so a test's
    /// configuration is the same in any shell.
    pub fn parse_without_env<I, T>(args: I) -> Result<ServeArgs, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::{CommandFactory, FromArgMatches, Parser};
        #[derive(Parser)]
        struct Serve {
            #[command(flatten)]
            serve: ServeArgs,
        }
        let matches = Serve::command()
            .mut_args(|a| a.env(None::<&'static str>))
            .try_get_matches_from(args)?;
        Ok(Serve::from_arg_matches(&matches)?.serve)
    }
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

/// HTTPS served by the binary itself.
#[derive(Debug, Clone)]
pub struct TlsSettings {
    pub https_addr: SocketAddr,
    pub http_addr: SocketAddr,
    pub certs: CertSource,
}

#[derive(Debug, Clone)]
pub enum CertSource {
    /// Obtained and renewed by the ACME robot.
    Acme(AcmeSettings),
    /// The operator's files, reloaded when they change.
    Files { cert: PathBuf, key: PathBuf },
}

impl TlsSettings {
    /// The names the HTTP port may send a visitor back to by name.
    pub fn domains(&self) -> Vec<String> {
        match &self.certs {
            CertSource::Acme(a) => a.domains.clone(),
            CertSource::Files { .. } => Vec::new(),
        }
    }
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
    /// Faults the renderer's tests inject (compiled in for tests only).
    #[cfg(feature = "test-hooks")]
    pub hooks: RenderHooks,
}

/// What the renderer's tests inject into its workers (`tests/api/ssr_faults.rs`).
/// Only the `test-hooks` feature has it, which `cargo test` turns on (the
/// crate's dev-dependency on itself) and a release build refuses, so the
/// shipped render path has nothing to check for it.
#[cfg(feature = "test-hooks")]
#[derive(Clone, Default)]
pub struct RenderHooks {
    /// JavaScript evaluated in every isolate on top of the bundle (a fault
    /// wraps `__ssr_render`). The isolates still start from the snapshot:
    /// V8 shares one read-only heap per process, and isolates started from
    /// different snapshots in one process crash V8.
    pub script: Option<std::sync::Arc<str>>,
    /// Called on the worker thread with each URL before it is rendered (a
    /// test makes the worker panic, or holds it).
    pub before_render: Option<BeforeRender>,
}

/// A test's call before each render (see [`RenderHooks::before_render`]).
#[cfg(feature = "test-hooks")]
pub type BeforeRender = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

#[cfg(feature = "test-hooks")]
impl RenderHooks {
    /// Evaluates `script` in every isolate on top of the bundle.
    pub fn inject_script(&mut self, script: &str) {
        self.script = Some(script.into());
    }

    /// Calls `hook` with each URL before it is rendered, on the worker.
    pub fn before_render(&mut self, hook: impl Fn(&str) + Send + Sync + 'static) {
        self.before_render = Some(std::sync::Arc::new(hook));
    }
}

#[cfg(feature = "test-hooks")]
impl std::fmt::Debug for RenderHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderHooks")
            .field("script", &self.script.is_some())
            .field("before_render", &self.before_render.is_some())
            .finish()
    }
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
                bundle: crate::assets::SSR_BUNDLE.into(),
                snapshot: Some(crate::assets::SSR_SNAPSHOT),
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

/// HTTPS settings from `TLS_DOMAINS`, `TLS_CERT`/`TLS_KEY` and `ACME_*`,
/// or None when neither is set.
fn tls_settings(a: &ServeArgs) -> anyhow::Result<Option<TlsSettings>> {
    let certs = match (&a.tls_domains, &a.tls_cert, &a.tls_key) {
        (None, None, None) => return Ok(None),
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            anyhow::bail!("TLS_DOMAINS and TLS_CERT/TLS_KEY are both set: use TLS_DOMAINS for certificates obtained by ACME, or TLS_CERT and TLS_KEY for your own")
        }
        (None, Some(_), None) => {
            anyhow::bail!("TLS_KEY: not set, but TLS_CERT is: both are needed")
        }
        (None, None, Some(_)) => {
            anyhow::bail!("TLS_CERT: not set, but TLS_KEY is: both are needed")
        }
        (None, Some(cert), Some(key)) => CertSource::Files {
            cert: cert.clone(),
            key: key.clone(),
        },
        (Some(domains), None, None) => {
            let domains = parse_domains(domains)?;
            let directory = a.acme_directory.trim().to_owned();
            let url = reqwest::Url::parse(&directory)
                .map_err(|e| anyhow::anyhow!("ACME_DIRECTORY: {directory:?} is not a URL ({e})"))?;
            anyhow::ensure!(
                url.scheme() == "https",
                "ACME_DIRECTORY: {directory:?} must be an https URL (RFC 8555 requires it)"
            );
            let contact = match a
                .acme_email
                .as_deref()
                .map(str::trim)
                .filter(|e| !e.is_empty())
            {
                None => Vec::new(),
                Some(e) => {
                    anyhow::ensure!(
                        email_address::EmailAddress::is_valid(e),
                        "ACME_EMAIL: {e:?} is not an email address"
                    );
                    vec![format!("mailto:{e}")]
                }
            };
            let directory_ca = match &a.acme_directory_ca {
                None => None,
                Some(path) => {
                    let pem = std::fs::read(path).with_context(|| {
                        format!("ACME_DIRECTORY_CA: cannot read {}", path.display())
                    })?;
                    let found = reqwest::Certificate::from_pem_bundle(&pem)
                        .map(|c| c.len())
                        .unwrap_or(0);
                    anyhow::ensure!(
                        found > 0,
                        "ACME_DIRECTORY_CA: {} holds no PEM certificate",
                        path.display()
                    );
                    Some(pem)
                }
            };
            let cache_dir = match &a.acme_cache_dir {
                Some(dir) => dir.clone(),
                None => sqlite_dir(&a.database.database_url)
                    .unwrap_or_else(|| PathBuf::from("data"))
                    .join("acme"),
            };
            CertSource::Acme(AcmeSettings {
                domains,
                directory,
                contact,
                directory_ca,
                cache_dir,
                challenge: a.acme_challenge,
            })
        }
    };
    anyhow::ensure!(
        a.https_addr != a.http_addr,
        "HTTPS_ADDR and HTTP_ADDR are the same address ({})",
        a.https_addr
    );
    Ok(Some(TlsSettings {
        https_addr: a.https_addr,
        http_addr: a.http_addr,
        certs,
    }))
}

/// `TLS_DOMAINS`: one or more DNS names, comma-separated, lowercased. A
/// wildcard, an address or a port is refused: ACME's HTTP and TLS
/// challenges validate plain names only.
pub fn parse_domains(list: &str) -> anyhow::Result<Vec<String>> {
    let mut domains: Vec<String> = Vec::new();
    for raw in list.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let d = raw.trim_end_matches('.').to_ascii_lowercase();
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        };
        let is_address = d.parse::<std::net::IpAddr>().is_ok()
            || d.split('.').all(|l| l.bytes().all(|b| b.is_ascii_digit()));
        anyhow::ensure!(
            d.len() <= 253 && d.split('.').all(label_ok) && !is_address,
            "TLS_DOMAINS: {raw:?} is not a domain name (letters, digits and hyphens between dots; no wildcard, address or port)"
        );
        if !domains.contains(&d) {
            domains.push(d);
        }
    }
    anyhow::ensure!(!domains.is_empty(), "TLS_DOMAINS: empty; list the names to serve, comma-separated (example.org,www.example.org)");
    Ok(domains)
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
    /// Defaults for tests: the flags' defaults alone (whatever the
    /// environment says), a random loopback port, a throwaway SQLite file.
    pub fn for_tests(data_dir: &std::path::Path) -> Config {
        let defaults = ServeArgs::parse_without_env(["citizen-site"]).expect("no flags to refuse");
        let mut cfg = Config::from_args(defaults).expect("the defaults are valid");
        cfg.addr = "127.0.0.1:0".parse().unwrap();
        cfg.database_url = format!("sqlite://{}", data_dir.join("test.db").display());
        cfg.ssr.workers = 2;
        cfg.ssr.queue = 128;
        // Tests post many times from one address; the rate-limit tests turn it on.
        cfg.post_rate = Rate::per_minute(0);
        // The pages' tests read the sample team; one test checks a fresh
        // database without it.
        cfg.sample_team = true;
        cfg
    }

    /// The `sqlite://` database file; None for PostgreSQL.
    pub fn sqlite_path(&self) -> Option<PathBuf> {
        sqlite_path(&self.database_url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches, Parser};

    #[derive(Parser)]
    struct Dev {
        #[command(flatten)]
        dev: DevArgs,
    }

    fn config(args: &[&str]) -> anyhow::Result<Config> {
        let args = std::iter::once("citizen-site").chain(args.iter().copied());
        Config::from_args(ServeArgs::parse_without_env(args)?)
    }

    fn error(args: &[&str]) -> String {
        format!("{:#}", config(args).expect_err("refused"))
    }

    #[test]
    fn serve_publishes_no_sample_team_and_dev_does() {
        assert!(!config(&[]).unwrap().sample_team);
        assert!(config(&["--sample-team"]).unwrap().sample_team);
        let command = Dev::command().mut_args(|a| a.env(None::<&'static str>));
        let dev = Dev::from_arg_matches(&command.get_matches_from(["citizen-site"]))
            .unwrap()
            .dev;
        assert!(Config::from_dev_args(dev).unwrap().sample_team);
    }

    #[test]
    fn behind_a_proxy_is_the_default_and_plain_http() {
        let c = config(&[]).unwrap();
        assert!(c.tls.is_none());
        assert_eq!(c.site_url, "http://127.0.0.1:3000");
        assert_eq!(
            c.limits.max_per_client, None,
            "every connection comes from the proxy"
        );
        assert_eq!(
            c.limits.header_read, None,
            "the proxy bounds request heads and keeps its connections open"
        );
    }

    #[test]
    fn tls_domains_settle_to_https_with_the_first_name_as_the_site() {
        let c = config(&[
            "--tls-domains",
            " Site.Example, www.site.example.,site.example ",
        ])
        .unwrap();
        let tls = c.tls.expect("tls");
        let CertSource::Acme(acme) = &tls.certs else {
            panic!("acme")
        };
        assert_eq!(acme.domains, ["site.example", "www.site.example"]);
        assert_eq!(acme.directory, crate::edge::acme::LETS_ENCRYPT);
        assert_eq!(
            acme.cache_dir,
            PathBuf::from("data/acme"),
            "beside the SQLite file"
        );
        assert_eq!((tls.https_addr.port(), tls.http_addr.port()), (443, 80));
        assert_eq!(c.site_url, "https://site.example");
        assert_eq!(c.limits.max_per_client, Some(256));
        assert_eq!(c.limits.header_read, Some(Duration::from_secs(10)));
        let c = config(&[
            "--tls-domains",
            "a.example",
            "--https-addr",
            "127.0.0.1:8443",
            "--http-addr",
            "127.0.0.1:8080",
        ])
        .unwrap();
        assert_eq!(c.site_url, "https://a.example:8443");
    }

    #[test]
    fn bad_tls_settings_are_refused_naming_the_variable() {
        assert!(error(&["--tls-domains", ""]).starts_with("TLS_DOMAINS: empty"));
        assert!(error(&["--tls-domains", " , "]).starts_with("TLS_DOMAINS: empty"));
        for bad in [
            "*.site.example",
            "127.0.0.1",
            "site.example:443",
            "https://site.example",
            "-a.example",
            "a..example",
            "ex ample.org",
        ] {
            let e = error(&[&format!("--tls-domains={bad}")]);
            assert!(
                e.starts_with(&format!("TLS_DOMAINS: {bad:?} is not a domain name")),
                "{bad}: {e}"
            );
        }
        assert_eq!(
            error(&["--tls-cert", "/c.pem"]),
            "TLS_KEY: not set, but TLS_CERT is: both are needed"
        );
        assert_eq!(
            error(&["--tls-key", "/k.pem"]),
            "TLS_CERT: not set, but TLS_KEY is: both are needed"
        );
        assert!(error(&[
            "--tls-domains",
            "a.example",
            "--tls-cert",
            "/c.pem",
            "--tls-key",
            "/k.pem"
        ])
        .starts_with("TLS_DOMAINS and TLS_CERT/TLS_KEY are both set"));
        assert!(error(&["--tls-cert", "/c.pem", "--tls-key", "/k.pem"])
            .starts_with("SITE_URL: set it to the https address"));
        assert!(error(&[
            "--tls-domains",
            "a.example",
            "--site-url",
            "http://a.example"
        ])
        .starts_with("SITE_URL: \"http://a.example\" must start with https://"));
        assert!(error(&[
            "--tls-domains",
            "a.example",
            "--acme-directory",
            "http://ca.example/dir"
        ])
        .starts_with("ACME_DIRECTORY: \"http://ca.example/dir\" must be an https URL"));
        assert!(
            error(&["--tls-domains", "a.example", "--acme-email", "nobody"])
                .starts_with("ACME_EMAIL: \"nobody\" is not an email address")
        );
        let e = error(&[
            "--tls-domains",
            "a.example",
            "--acme-directory-ca",
            "/nonexistent/ca.pem",
        ]);
        assert!(
            e.starts_with("ACME_DIRECTORY_CA: cannot read /nonexistent/ca.pem"),
            "{e}"
        );
        assert!(
            error(&["--tls-domains", "a.example", "--https-addr", "0.0.0.0:80"])
                .starts_with("HTTPS_ADDR and HTTP_ADDR are the same address")
        );
    }

    /// The README's configuration table and the flags are the same list:
    /// every variable a flag reads has a row, with the flag's default (in
    /// backticks; `off` for a switch, `empty` for an empty list, a word of
    /// its own where the help says how the default is worked out, `unset`
    /// for none), and every row is a flag's variable (or `RUST_LOG`, read
    /// by the log filter).
    #[test]
    fn the_readme_lists_every_variable_with_its_default() {
        let readme = include_str!("../README.md");
        let table = &readme[readme
            .find("## Configuration")
            .expect("a Configuration section")..];
        let rows: Vec<(String, String)> = table
            .lines()
            .skip_while(|l| !l.starts_with("| Variable"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .flat_map(|l| {
                // A row may name several variables (`TLS_CERT`, `TLS_KEY`).
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                let is_variable = |v: &&str| v.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
                let names: Vec<&str> = cells[1]
                    .split('`')
                    .skip(1)
                    .step_by(2)
                    .filter(is_variable)
                    .collect();
                names
                    .into_iter()
                    .map(|v| (v.to_owned(), cells[2].to_owned()))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert!(rows.len() > 30, "the table is read: {rows:?}");
        let command = Dev::command();
        let mut flags = Vec::new();
        for arg in command.get_arguments() {
            let Some(variable) = arg.get_env().map(|v| v.to_string_lossy().into_owned()) else {
                continue;
            };
            let Some((_, cell)) = rows.iter().find(|(v, _)| *v == variable) else {
                panic!("README's configuration table has no row for {variable}");
            };
            let defaults: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|d| d.to_string_lossy().into_owned())
                .collect();
            let help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            let switch = matches!(arg.get_action(), clap::ArgAction::SetTrue);
            match defaults.first().map(String::as_str) {
                _ if switch => assert!(
                    cell.starts_with("off"),
                    "{variable}: {cell:?} should say off"
                ),
                Some("false") => assert!(
                    cell.starts_with("off"),
                    "{variable}: {cell:?} should say off"
                ),
                Some("") => assert_eq!(cell, "empty", "{variable}"),
                Some(default) => assert!(
                    cell.contains(&format!("`{default}`")),
                    "{variable}: the README says {cell:?}, the flag's default is {default:?}"
                ),
                None if help.contains("[default:") => {
                    assert!(
                        cell != "unset" && cell.contains('`'),
                        "{variable}: {cell:?}"
                    )
                }
                None => assert_eq!(cell, "unset", "{variable}: a flag with no default"),
            }
            flags.push(variable);
        }
        for (variable, _) in &rows {
            assert!(
                flags.contains(variable) || variable == "RUST_LOG",
                "README's configuration table lists {variable}, which no flag reads"
            );
        }
    }
}
