//! Configuration: command-line flags, each with an environment variable
//! ([`flags`]), settled into the [`Config`] the application is built from,
//! with embedded defaults so a fresh clone runs with no account anywhere.
//! HTTPS settings are [`tls`]'s; how messages name a file error, a user
//! or a database URL is `words`'s; what only tests use is in `testing`,
//! compiled with the `test-hooks` feature alone.

pub mod bounds;
pub mod database_url;
mod flags;
#[cfg(feature = "test-hooks")]
mod hooks;
pub(crate) mod read;
#[cfg(any(test, feature = "test-hooks"))]
mod testing;
mod tls;
mod values;
mod words;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub use self::database_url::{sqlite_path, sqlite_url};
pub use self::flags::{DatabaseArgs, DevArgs, Given, NotionArgs, ServeArgs, DEFAULT_DATABASE_URL};
#[cfg(feature = "test-hooks")]
pub use self::hooks::{BeforeRender, RenderHooks};
pub use self::read::{parse_bool, Problems, SettingNames};
use self::read::{setting, Reader};
pub use self::tls::{
    parse_domains, plain_site_url, CertSource, OwnFiles, TlsSettings, TICKET_PERIOD,
};
use self::tls::{site_url, tls_settings};
use self::values::{http_url, Addr, ADDRESS};
pub use self::values::{public_https_port, stripe_key_shape};
pub use self::words::{io_problem, io_reason, make_it_first, redacted, user, whoami};
use crate::client_ip::Networks;
use crate::edge::Limits;
use crate::rate_limit::Rate;
pub use crate::telemetry::LogFormat;

/// The settled configuration the application is built from.
#[derive(Debug, Clone)]
pub struct Config {
    /// Plain HTTP, when `tls` is None.
    pub addr: SocketAddr,
    /// HTTP/3 on the HTTPS port's UDP socket (`HTTP3`, settled: never
    /// without `tls`).
    pub http3: bool,
    /// `HTTP3` as set (what `check` reports beside the outcome).
    pub http3_asked: Http3,
    /// The UDP port HTTP/3 is advertised on in every response's
    /// `Alt-Svc`: the public one (`SITE_URL`'s, whatever the socket's own
    /// is behind a port mapping), set by the application once it holds the
    /// socket (None: nothing advertised).
    pub alt_svc_port: Option<u16>,
    pub site_url: String,
    /// `SITE_URL` was not set, and plain HTTP serves: `site_url` is the
    /// address listened on, settled once the socket is bound (a port 0,
    /// or a socket systemd passed, is known only then).
    pub site_url_from_addr: bool,
    /// Serving HTTPS itself.
    pub tls: Option<TlsSettings>,
    /// What one connection may hold (`edge::serve`).
    pub limits: Limits,
    /// Fill an empty team table with the sample team.
    pub sample_team: bool,
    /// Show the posts whose time has not come (the render of every page
    /// before `pack` writes a binary, which renders them too); never a
    /// setting of its own.
    pub show_scheduled: bool,
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
    /// The settled configuration, or every problem found, each naming its
    /// setting as the operator wrote it.
    pub fn from_args(a: ServeArgs) -> Result<Config, Problems> {
        let mut r = Reader::new(&a.given);
        // First the site this binary carries (the renderer's bundle comes
        // from it): a missing, cut or altered payload stops the start, so
        // an upgrade to such a binary fails and the old server serves on.
        if let Err(why) = crate::payload::load() {
            r.problem(why);
        }
        let addr = r.parse::<Addr>(setting!(a, addr), ADDRESS).0;
        let max_connections: usize = r.count(setting!(a, max_connections), bounds::MAX_CONNECTIONS);
        let max_per_client: usize =
            r.count(setting!(a, max_connections_per_client), bounds::PER_CLIENT);
        let sample_team = r.yes_no(setting!(a, sample_team));
        let ssr_workers: usize = r.count(setting!(a, ssr_workers), bounds::WORKERS);
        let connection_workers: usize = r.count(setting!(a, connection_workers), bounds::WORKERS);
        let ssr_deadline_ms: u64 = r.count(setting!(a, ssr_deadline_ms), bounds::SSR_DEADLINE_MS);
        let page_cache_capacity: u64 =
            r.count(setting!(a, page_cache_capacity), bounds::PAGE_CACHE);
        let team_refresh_secs: u64 = r.count(setting!(a, team_refresh_secs), bounds::REFRESH_SECS);
        let rate_limit_per_minute: u32 =
            r.count(setting!(a, rate_limit_per_minute), bounds::PER_MINUTE);
        let session_lookups_per_minute: u32 =
            r.count(setting!(a, session_lookups_per_minute), bounds::PER_MINUTE);
        let shutdown_grace_secs: u64 =
            r.count(setting!(a, shutdown_grace_secs), bounds::GRACE_SECS);
        let intro_lease_secs: u64 = r.count(setting!(a, intro_lease_secs), bounds::LEASE_SECS);
        let _: LogFormat = r.choice(setting!(a, log_format));
        let http3: Http3 = r.choice(setting!(a, http3));
        let trusted_proxies: Networks = r.parse(setting!(a, trusted_proxies), NETWORKS);
        let proxy_protocol_from: Networks = r.parse(setting!(a, proxy_protocol_from), NETWORKS);
        let metrics_allow: Networks = r.parse(setting!(a, metrics_allow), NETWORKS);
        let database_url = r
            .text(setting!(a, database.database_url))
            .unwrap_or_default();
        if let Some(why) = database_url::url_problem(&database_url) {
            let shown = r.shown("database_url", &redacted(&database_url));
            r.problem(format!("{shown}: {why}"));
        }
        let stripe_api_base = r.text(setting!(a, stripe_api_base)).unwrap_or_default();
        let notion_api_base = r
            .text(setting!(a, notion.notion_api_base))
            .unwrap_or_default();
        for (id, base) in [
            ("stripe_api_base", &stripe_api_base),
            ("notion_api_base", &notion_api_base),
        ] {
            if let Err(why) = http_url(base) {
                r.bad(id, base, why);
            }
        }
        let stripe_secret_key = r.text(setting!(a, stripe_secret_key));
        let stripe_webhook_secret = r.text(setting!(a, stripe_webhook_secret));
        let notion_token = r.text(setting!(a, notion.notion_token));
        let notion_database_id = r.text(setting!(a, notion.notion_database_id));
        if let Some(key) = &stripe_secret_key {
            if let Err(why) = stripe_key_shape(key) {
                let name = r.name("stripe_secret_key");
                r.problem(format!("{name}: not usable: {why}"));
            }
        }
        if notion_token.is_some() != notion_database_id.is_some() {
            let (set, unset) = if notion_token.is_some() {
                ("notion_token", "notion_database_id")
            } else {
                ("notion_database_id", "notion_token")
            };
            let (set, unset) = (r.name(set), r.name(unset));
            r.problem(format!(
                "{unset}: not set, but {set} is: intro requests reach Notion with both"
            ));
        }

        // HTTPS: its files first, as SITE_URL is checked against them.
        let tls = tls_settings(&a, &mut r);
        let site_url = site_url(&a, &mut r, tls.as_ref(), addr);
        if r.has_problems() {
            return Err(r.finish());
        }
        let workers = if ssr_workers == 0 {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
        } else {
            ssr_workers
        };
        let tls = tls.map(|t| t.settings);
        if http3 == Http3::On && tls.is_none() {
            let name = r.name("http3");
            r.problem(format!("{name}=on: HTTP/3 needs HTTPS served by this server (TLS_DOMAINS, or TLS_CERT and TLS_KEY)"));
            return Err(r.finish());
        }
        let http3_asked = http3;
        let http3 = http3.serves(tls.is_some(), !proxy_protocol_from.is_empty());
        Ok(Config {
            http3,
            http3_asked,
            alt_svc_port: None,
            addr,
            site_url_from_addr: tls.is_none() && r.text(setting!(a, site_url)).is_none(),
            site_url,
            limits: Limits {
                max_connections,
                max_per_client: Some(max_per_client).filter(|n| *n > 0 && tls.is_some()),
                header_read: tls.is_some().then_some(Limits::HEADER_READ),
                workers: connection_workers,
                proxy_from: proxy_protocol_from,
                ..Limits::default()
            },
            tls,
            sample_team,
            show_scheduled: false,
            database_url,
            stripe_secret_key,
            stripe_webhook_secret,
            stripe_api_base,
            notion_token,
            notion_database_id,
            notion_api_base,
            // Pool sizing, measured with bench/run.mjs on 2 cores: one isolate
            // per core saturates the CPU (a render is pure CPU; more isolates
            // only add ~10 MB each and context switches). 64 waiting renders
            // per worker is ~30 ms of work each at ~1,000 renders/s per core:
            // beyond that a visitor is better served by a quick 503 than by
            // seconds in a queue. Each isolate's heap is capped in render/pool.rs.
            ssr: SsrConfig {
                workers,
                queue: workers * 64,
                deadline: Duration::from_millis(ssr_deadline_ms),
                bundle: crate::assets::ssr_bundle().into(),
                snapshot: Some(crate::assets::ssr_snapshot()),
                rebuilds: Default::default(),
                #[cfg(feature = "test-hooks")]
                hooks: RenderHooks::default(),
            },
            page_cache_capacity,
            team_refresh: Duration::from_secs(team_refresh_secs),
            trusted_proxies,
            metrics_allow,
            post_rate: Rate::per_minute(rate_limit_per_minute),
            session_lookup_rate: Rate::per_minute(session_lookups_per_minute),
            shutdown_grace: Duration::from_secs(shutdown_grace_secs),
            intro_lease: Duration::from_secs(intro_lease_secs),
            timeouts: Timeouts::default(),
            dev: None,
        })
    }

    /// The addresses `args` would have the server listen on, by setting
    /// (those that read as addresses, whatever else is wrong), and whether
    /// over UDP (HTTP/3's).
    pub fn addresses(args: &ServeArgs) -> Vec<(&'static str, SocketAddr, Transport)> {
        let mut r = Reader::new(&args.given);
        let tls = r.text(setting!(args, tls_domains)).is_some()
            || r.text(setting!(args, tls_cert)).is_some();
        let proxied = r.text(setting!(args, proxy_protocol_from)).is_some();
        let http3 = r
            .choice::<Http3>(setting!(args, http3))
            .serves(tls, proxied);
        let ids = match tls {
            true => vec![
                (setting!(args, https_addr), Transport::Tcp),
                (setting!(args, http_addr), Transport::Tcp),
            ],
            false => vec![(setting!(args, addr), Transport::Tcp)],
        };
        let udp = http3.then_some((setting!(args, https_addr), Transport::Udp));
        ids.into_iter()
            .chain(udp)
            .filter_map(|(s, transport)| {
                let addr = r.parse::<Addr>(s, ADDRESS).0;
                (!r.has_problems_with(s.0)).then_some((s.0, addr, transport))
            })
            .collect()
    }

    /// The log format `args` asks for (the default when it is not one:
    /// [`Config::from_args`] refuses it, with the others).
    pub fn log_format(args: &ServeArgs) -> LogFormat {
        let mut r = Reader::new(&args.given);
        r.choice(setting!(args, log_format))
    }

    /// `dev`: the same, serving the checkout at `root`, with the sample
    /// team in an empty table.
    pub fn from_dev_args(a: DevArgs) -> Result<Config, Problems> {
        Ok(Config {
            dev: Some(a.root),
            sample_team: true,
            ..Config::from_args(a.serve)?
        })
    }
}

/// `HTTP3`: whether the HTTPS port is also served over UDP.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Http3 {
    /// Served, unless PROXY_PROTOCOL_FROM says a TCP balancer is in front.
    #[default]
    Auto,
    On,
    Off,
}

impl Http3 {
    /// Whether HTTP/3 is served, with HTTPS served here (`tls`) and a TCP
    /// balancer in front or not (`proxied`).
    pub fn serves(self, tls: bool, proxied: bool) -> bool {
        match self {
            Http3::Auto => tls && !proxied,
            Http3::On => tls,
            Http3::Off => false,
        }
    }
}

/// How a listening address is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    /// HTTP/3's QUIC.
    Udp,
}

/// What `citizen-site --help` says after the flags: how every value is
/// read, and the one variable no flag has.
pub const HELP_AFTER: &str = "Every setting is a flag or its variable (shown as [env: ...]); \
an empty variable is unset. Yes/no settings take on/off, 1/0, true/false or yes/no. \
RUST_LOG filters the log (tracing's EnvFilter syntax; default: info).";

/// What a list of networks must look like.
const NETWORKS: &str =
    "not a list of addresses or networks (comma-separated, such as 10.0.0.0/8,127.0.0.1)";

impl Config {
    /// Why HTTP/3 is not served, as this configuration settles it, to
    /// follow "off" (None when it is served): `http3` names its setting as
    /// written. `check` and the start's line say the same.
    pub fn http3_off(&self, http3: &str) -> Option<String> {
        match (self.tls.is_some(), self.http3, self.http3_asked) {
            (_, true, _) => None,
            (false, _, _) => Some(
                ": only with HTTPS served here (TLS_DOMAINS, or TLS_CERT and TLS_KEY)".to_owned(),
            ),
            (true, false, Http3::Off) => Some(format!(" ({http3}=off)")),
            (true, false, _) => Some(format!(
                ": PROXY_PROTOCOL_FROM is set, and a TCP balancer carries no UDP ({http3}=on serves it anyway)"
            )),
        }
    }

    /// The `sqlite://` database file; None for PostgreSQL.
    pub fn sqlite_path(&self) -> Option<PathBuf> {
        sqlite_path(&self.database_url)
    }

    /// `ACME_CACHE_DIR`, when the server gets its certificate by ACME.
    pub fn acme_cache_dir(&self) -> Option<&std::path::Path> {
        match &self.tls.as_ref()?.certs {
            CertSource::Acme(acme) => Some(&acme.cache_dir),
            CertSource::Files { .. } => None,
        }
    }

    /// The folder the server keeps in its ACME cache for the CA it orders
    /// from (`ACME_DIRECTORY`'s); Let's Encrypt's when it orders none, as
    /// an earlier start may have.
    pub fn acme_folder(&self) -> String {
        let directory = match self.tls.as_ref().map(|t| &t.certs) {
            Some(CertSource::Acme(acme)) => acme.directory.as_str(),
            _ => crate::edge::acme::LETS_ENCRYPT,
        };
        crate::edge::acme::folder_name(directory)
    }
}

#[cfg(test)]
mod tests;
