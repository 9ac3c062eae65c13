//! The flags of `serve` and `dev`, each with its environment variable and
//! default: what an operator types. [`super::Config::from_args`] settles
//! them into the configuration the application is built from.

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::{ArgMatches, Args};

use crate::edge::acme::LETS_ENCRYPT;

/// The settings given on the command line (by clap's id); every other one
/// came from its variable or its default.
#[derive(Debug, Clone, Default)]
pub struct Given(BTreeSet<String>);

impl Given {
    /// The ids whose values `matches` took from the command line.
    pub fn from_matches(matches: &ArgMatches) -> Given {
        Given(
            matches
                .ids()
                .filter(|id| {
                    matches.value_source(id.as_str())
                        == Some(clap::parser::ValueSource::CommandLine)
                })
                .map(|id| id.to_string())
                .collect(),
        )
    }

    /// Whether the command line gave the setting `id`.
    pub fn has(&self, id: &str) -> bool {
        self.0.contains(id)
    }
}

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Which of these the command line gave (the rest came from variables
    /// or defaults): messages name a setting as the operator wrote it.
    #[arg(skip)]
    pub given: Given,

    /// Address to listen on for plain HTTP (behind a proxy; unused when
    /// the server serves HTTPS itself).
    #[arg(long, env = "ADDR", default_value = "127.0.0.1:3000")]
    pub addr: Option<String>,

    /// Public base URL of the site: checkout return URLs and canonical links
    /// [default: http://ADDR (a wildcard address as localhost), or
    /// https://<first of TLS_DOMAINS>].
    #[arg(long, env = "SITE_URL")]
    pub site_url: Option<String>,

    /// Serve HTTPS for these names (comma-separated), with a certificate
    /// obtained and renewed from ACME_DIRECTORY.
    #[arg(long, env = "TLS_DOMAINS")]
    pub tls_domains: Option<String>,

    /// The ACME directory certificates come from.
    #[arg(long, env = "ACME_DIRECTORY", default_value = LETS_ENCRYPT)]
    pub acme_directory: Option<String>,

    /// Contact address of the ACME account (the CA's expiry warnings).
    #[arg(long, env = "ACME_EMAIL")]
    pub acme_email: Option<String>,

    /// A PEM file of an extra CA to trust for ACME_DIRECTORY itself (a test CA).
    #[arg(long, env = "ACME_DIRECTORY_CA")]
    pub acme_directory_ca: Option<String>,

    /// Where this server keeps its local copy of the certificate in
    /// service, served at a start while the database is away (the account
    /// and the certificates live in the database)
    /// [default: acme/ beside the SQLite file, or data/acme].
    #[arg(long, env = "ACME_CACHE_DIR")]
    pub acme_cache_dir: Option<String>,

    /// How the CA validates the names: `tls-alpn-01` (on the HTTPS port)
    /// or `http-01` (on the HTTP port).
    #[arg(long, env = "ACME_CHALLENGE", default_value = "tls-alpn-01")]
    pub acme_challenge: Option<String>,

    /// The CA's certificate profile to order (one the directory lists,
    /// such as Let's Encrypt's `shortlived`); unset: the CA's default.
    #[arg(long, env = "ACME_PROFILE")]
    pub acme_profile: Option<String>,

    /// Serve HTTPS with this certificate chain (PEM) instead of ACME;
    /// reloaded when the file changes. Needs TLS_KEY.
    #[arg(long, env = "TLS_CERT")]
    pub tls_cert: Option<String>,

    /// Tests only: how long one session-ticket key seals new tickets, in
    /// seconds (6 hours otherwise).
    #[cfg(feature = "test-hooks")]
    #[arg(long, env = "TLS_TICKET_PERIOD_SECS", hide = true)]
    pub tls_ticket_period_secs: Option<u64>,

    /// Tests only: how long the certificate order lease lasts unless
    /// renewed, in seconds (30 otherwise).
    #[cfg(feature = "test-hooks")]
    #[arg(long, env = "TLS_LEASE_TTL_SECS", hide = true)]
    pub tls_lease_ttl_secs: Option<u64>,

    /// Tests only: the back-off after a first failed order, in seconds (5
    /// otherwise).
    #[cfg(feature = "test-hooks")]
    #[arg(long, env = "ACME_FIRST_RETRY_SECS", hide = true)]
    pub acme_first_retry_secs: Option<u64>,

    /// Tests only: how long an order waits for every server to hold its
    /// challenge answers, in seconds (10 otherwise).
    #[cfg(feature = "test-hooks")]
    #[arg(long, env = "ACME_CHALLENGE_WAIT_SECS", hide = true)]
    pub acme_challenge_wait_secs: Option<u64>,

    /// Tests only: the least wait before the CA's renewal information is
    /// asked again, in seconds (60 otherwise, as RFC 9773 says).
    #[cfg(feature = "test-hooks")]
    #[arg(long, env = "ACME_ARI_MIN_POLL_SECS", hide = true)]
    pub acme_ari_min_poll_secs: Option<u64>,

    /// The private key (PEM) of TLS_CERT.
    #[arg(long, env = "TLS_KEY")]
    pub tls_key: Option<String>,

    /// Where HTTPS is served (with TLS_DOMAINS or TLS_CERT).
    #[arg(long, env = "HTTPS_ADDR", default_value = "0.0.0.0:443")]
    pub https_addr: Option<String>,

    /// HTTP/3 (QUIC) on HTTPS_ADDR's port over UDP, advertised by Alt-Svc:
    /// `auto` (served, unless PROXY_PROTOCOL_FROM is set: a TCP balancer
    /// carries no UDP), `on` or `off`. Only with TLS_DOMAINS or TLS_CERT.
    #[arg(long, env = "HTTP3", default_value = "auto")]
    pub http3: Option<String>,

    /// Where the HTTP port answers ACME challenges and redirects to https
    /// (with TLS_DOMAINS or TLS_CERT).
    #[arg(long, env = "HTTP_ADDR", default_value = "0.0.0.0:80")]
    pub http_addr: Option<String>,

    /// TCP connections open at once (an equal share for each connection
    /// worker); more wait until one closes. HTTP/3's QUIC connections are
    /// counted apart, up to as many.
    #[arg(long, env = "MAX_CONNECTIONS", default_value = "4096")]
    pub max_connections: Option<String>,

    /// Connections one client address may hold at once when the server
    /// serves HTTPS itself (TRUSTED_PROXIES are exempt); 0: no cap.
    #[arg(long, env = "MAX_CONNECTIONS_PER_CLIENT", default_value = "256")]
    pub max_connections_per_client: Option<String>,

    /// Fill an empty team table with the sample team (`dev` always does):
    /// on or off (also 1/0, true/false, yes/no).
    #[arg(long, env = "SAMPLE_TEAM", num_args = 0..=1, default_value = "off", default_missing_value = "on")]
    pub sample_team: Option<String>,

    #[command(flatten)]
    pub database: DatabaseArgs,

    /// Stripe secret key; without it every plan shows the pricing page's
    /// text for a plan without a price (`PRICING_TEXT.noPrice` in
    /// client/features/pricing/content.ts).
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
    pub stripe_api_base: Option<String>,

    #[command(flatten)]
    pub notion: NotionArgs,

    /// Render workers (V8 isolates); 0 means one per CPU.
    #[arg(long, env = "SSR_WORKERS", default_value = "0")]
    pub ssr_workers: Option<String>,

    /// Threads that accept and serve connections; 0 means one per CPU.
    #[arg(long, env = "CONNECTION_WORKERS", default_value = "0")]
    pub connection_workers: Option<String>,

    /// Longest a single render may run before its isolate is terminated.
    #[arg(long, env = "SSR_DEADLINE_MS", default_value = "2000")]
    pub ssr_deadline_ms: Option<String>,

    /// Rendered pages kept in memory; 0 turns the page cache off (benchmarks).
    #[arg(long, env = "PAGE_CACHE_CAPACITY", default_value = "2000")]
    pub page_cache_capacity: Option<String>,

    /// How often the team table is read again for /about (seconds): a change
    /// made with `citizen-site team` shows within this long.
    #[arg(long, env = "TEAM_REFRESH_SECS", default_value = "5")]
    pub team_refresh_secs: Option<String>,

    /// Log format: `text` or `json`.
    #[arg(long, env = "LOG_FORMAT", default_value = "text")]
    pub log_format: Option<String>,

    /// Proxies whose `X-Forwarded-For` names the client: comma-separated
    /// addresses or networks (`10.0.0.0/8,127.0.0.1`). Empty: the peer
    /// address is the client, whatever the headers say.
    #[arg(long, env = "TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: Option<String>,

    /// TCP balancers whose connections open with a PROXY protocol v2 header
    /// naming the visitor (HAProxy's send-proxy-v2): comma-separated
    /// addresses or networks. Their connections without one are refused,
    /// as is a header from any other address. Empty: none.
    #[arg(long, env = "PROXY_PROTOCOL_FROM", default_value = "")]
    pub proxy_protocol_from: Option<String>,

    /// Clients that may read `/metrics` (addresses or networks); others get 404.
    #[arg(
        long,
        env = "METRICS_ALLOW",
        default_value = "127.0.0.0/8,::1,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7"
    )]
    pub metrics_allow: Option<String>,

    /// POST requests one client may make per minute (and in a burst) to the
    /// form and checkout endpoints; 0 turns the limit off.
    #[arg(long, env = "RATE_LIMIT_PER_MINUTE", default_value = "10")]
    pub rate_limit_per_minute: Option<String>,

    /// Stripe lookups of checkout sessions one client may cause per minute
    /// (and in a burst): the success page asks Stripe only for sessions it
    /// has not seen lately, and a client over this sees the failure state
    /// with 429. 0 turns the limit off.
    #[arg(long, env = "SESSION_LOOKUPS_PER_MINUTE", default_value = "10")]
    pub session_lookups_per_minute: Option<String>,

    /// On SIGTERM or Ctrl-C, how long in-flight requests may take to finish.
    #[arg(long, env = "SHUTDOWN_GRACE_SECS", default_value = "10")]
    pub shutdown_grace_secs: Option<String>,

    /// How long an intro request claimed by one process is reserved for it
    /// before another process may retry it (after a crash).
    #[arg(long, env = "INTRO_LEASE_SECS", default_value = "60")]
    pub intro_lease_secs: Option<String>,
}

/// The site's database, as the server and the operator's commands take it.
#[derive(Args, Debug, Clone)]
pub struct DatabaseArgs {
    /// Database: `sqlite://...` (default: a file under ./data/) or `postgres://...`.
    #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL)]
    pub database_url: Option<String>,
    /// Whether the command line gave `--database-url` (then messages name
    /// it so; otherwise `DATABASE_URL`): set by [`DatabaseArgs::note_given`].
    #[arg(skip)]
    pub given: bool,
}

/// A setting's value, trimmed, or `default` when it is unset or empty.
fn set_or<'a>(value: &'a Option<String>, default: &'a str) -> &'a str {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .unwrap_or(default)
}

/// Where the site keeps its data unless `DATABASE_URL` says otherwise.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/citizen-site.db";

impl DatabaseArgs {
    /// The database's URL: an empty `DATABASE_URL=` is unset, as every
    /// empty variable is.
    pub fn url(&self) -> &str {
        set_or(&self.database_url, DEFAULT_DATABASE_URL)
    }

    /// The setting as the operator wrote it, for messages: `--database-url`
    /// when the command line gave it, else `DATABASE_URL`.
    pub fn setting(&self) -> &'static str {
        match self.given {
            true => "--database-url",
            false => "DATABASE_URL",
        }
    }

    /// Notes whether `matches` (the command's own) took `--database-url`
    /// from the command line.
    pub fn note_given(&mut self, matches: &clap::ArgMatches) {
        self.given = matches.ids().any(|id| id == "database_url")
            && matches.value_source("database_url") == Some(clap::parser::ValueSource::CommandLine);
    }
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
    pub notion_api_base: Option<String>,
}

/// `serve`'s settings as a command of their own, to parse them outside
/// the binary's command line (an upgrade's environment, a test's flags).
#[derive(clap::Parser)]
pub(super) struct Serve {
    #[command(flatten)]
    pub serve: ServeArgs,
}

impl ServeArgs {
    /// The settings the environment gives (no flag), as `serve` would read
    /// them with no arguments.
    pub fn from_environment() -> Result<ServeArgs, clap::Error> {
        use clap::Parser;
        Serve::try_parse_from(["citizen-site"]).map(|s| s.serve)
    }
}

impl NotionArgs {
    /// Notion's API base: an empty `NOTION_API_BASE=` is unset.
    pub fn api_base(&self) -> &str {
        set_or(&self.notion_api_base, "https://api.notion.com")
    }

    /// Whether forwarding to Notion is set up: a token and a database.
    pub fn is_on(&self) -> bool {
        let set = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.trim().is_empty());
        set(&self.notion_token) && set(&self.notion_database_id)
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
