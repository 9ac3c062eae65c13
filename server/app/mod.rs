//! Assembles configuration -> state -> listeners, and runs the server:
//! [`Application::build`] is the list of what a running site starts;
//! [`Application::run_until`] serves until told to stop, then drains.

mod background;
pub mod handover;
pub mod inherited;
mod listeners;
pub mod notify;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::Context;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::config::Config;
use crate::db::sqlite_file::ServerLock;
use crate::db::Db;
use crate::dev;
use crate::edge::Addresses;
use crate::http;
use crate::live::Flag;
use crate::metrics::Metrics;
use crate::payments::Payments;
use crate::rate_limit::ClientLimiter;
use crate::render::cache;
use crate::site::Site;
use crate::state::{AppState, SharedState};
use handover::Handover;
use inherited::Inherited;
use listeners::Listeners;

/// Unknown-route requests logged a minute at most (every one is counted in
/// `/metrics` as `http_not_found_total`).
pub const NOT_FOUND_LOG_PER_MINUTE: u32 = 20;

/// How long a start waits for the shared TLS state when the database is up.
const TLS_STATE_WAIT: Duration = Duration::from_secs(5);

pub struct Application {
    listeners: Listeners,
    state: SharedState,
    /// Running as `dev`: its reload events (routed, and closed at shutdown).
    dev: Option<dev::DevHandle>,
    forwarder_task: Option<JoinHandle<()>>,
    /// The SQLite database's server lock (see `db::sqlite_file`).
    _db_lock: Option<ServerLock>,
    /// The loops of [`background`], the database monitor and the
    /// certificate's tasks: stopped with the server.
    background: Vec<JoinHandle<()>>,
    /// The sockets as a successor would take them (see [`handover`]).
    handover: Handover,
    /// Started by a predecessor that serves until this one is ready: accept
    /// only once the pages are rendered.
    accept_when_ready: bool,
}

/// The site's files on this machine (the SQLite database's folder and
/// files, the ACME cache) made its user's alone, whatever the umask and
/// whatever an earlier start left: each change logged, and what this user
/// cannot change logged as a warning (`db::private`).
fn keep_private(config: &Config) {
    let database = config.sqlite_path();
    let acme_folder = config.acme_folder();
    let places = crate::db::private::Places {
        database: database.as_deref(),
        acme_cache: config.acme_cache_dir(),
        acme_folder: &acme_folder,
    };
    for finding in crate::db::private::tighten(places) {
        match finding.is_warning() {
            true => tracing::warn!("{finding}"),
            false => tracing::info!("{finding}"),
        }
    }
}

impl Application {
    /// Binds the listeners and starts the isolate pool; the pool loads and
    /// the static pages are prerendered in the background (`/readyz` says
    /// when). With `config.dev` set, it serves that checkout's sources
    /// instead: it returns once their first build is done, and reloads on
    /// every change.
    pub async fn build(config: Config) -> anyhow::Result<Application> {
        Application::build_on(config, Inherited::default()).await
    }

    /// [`Application::build`], serving the sockets `inherited` holds (from
    /// systemd, or the server handing over to this one) where it has them.
    pub async fn build_on(
        mut config: Config,
        mut inherited: Inherited,
    ) -> anyhow::Result<Application> {
        let metrics = Metrics::new();
        config.ssr.rebuilds = metrics.isolate_rebuilds.clone();
        config.limits.counted = metrics.connections.clone();
        // A Stripe key that cannot work stops the start, before anything runs.
        let payments = Payments::new(&config, metrics.upstream.clone())?;
        // The message catalogue is parsed now, not by the first request
        // that shows a message.
        crate::messages::messages();
        if crate::db::sqlite_file::make_folder_and_file(&config.database_url)? {
            // A first start, or a mistyped path: either way, said.
            if let Some(file) = config.sqlite_path() {
                tracing::info!(
                    "no database at {}: made a new one (DATABASE_URL)",
                    file.display()
                );
            }
        }
        keep_private(&config);
        // Connects on first use: HTTPS reads its shared state from it.
        let db = Db::connect_lazy_with(&config.database_url, &config.timeouts)?;
        let (listeners, mut tasks, identity) =
            Listeners::bind(&config, &mut inherited, &db, &metrics.acme).await?;
        // SITE_URL unset: the address the socket has, now it is bound (a
        // port 0, or a socket systemd passed in, differs from ADDR's). Not
        // when the site URL was set since (a test's).
        if config.site_url_from_addr
            && config.site_url == crate::config::plain_site_url(config.addr)
        {
            config.site_url = crate::config::plain_site_url(listeners.addresses().main);
        }
        // Every HTTPS response advertises HTTP/3 where it is served: on the
        // public port SITE_URL names (a container's 443 maps to its 8443),
        // the socket's own when SITE_URL is not HTTPS.
        config.alt_svc_port = listeners
            .h3_port()
            .map(|own| crate::config::public_https_port(&config.site_url).unwrap_or(own));
        let unrendered: Arc<arc_swap::ArcSwap<Vec<crate::render::Unrendered>>> = Arc::default();
        let handover = Handover {
            unrendered: unrendered.clone(),
            sockets: Arc::new(listeners.for_successor()?),
            quic: listeners.handoff(),
            supervised: inherited.supervised,
            exe: inherited.exe,
            predecessor: inherited.predecessor_pid,
            grace: config.shutdown_grace,
        };
        let (site, dev_server) = site(&config).await?;
        // Held while the server runs: `citizen-site restore` refuses meanwhile.
        let db_lock = config
            .sqlite_path()
            .map(|file| ServerLock::hold(&file))
            .transpose()?;
        migrate_database(&db, &config).await;
        tasks.push(db.spawn_monitor());
        if let Some(identity) = identity.as_ref().filter(|_| db.is_up()) {
            // The shared TLS state (ticket keys above all) before any page
            // is made, so "ready" means it resumes the fleet's sessions.
            let read = tokio::time::timeout(TLS_STATE_WAIT, identity.read.wait()).await;
            if read.is_err() {
                tracing::warn!("HTTPS: the shared TLS state was not read within {TLS_STATE_WAIT:?}; going on with this process's own");
            }
        }
        let forwarder = background::start_forwarder(&config, &db, &metrics, &mut tasks);
        metrics.intro_forwarding.set(i64::from(forwarder.is_some()));
        let state = Arc::new(AppState {
            page_cache: cache::new_cache(config.page_cache_capacity),
            site: arc_swap::ArcSwap::from_pointee(site),
            db,
            team: crate::live::Live::new(Vec::new()),
            forwarder: forwarder.as_ref().map(|(handle, _)| handle.clone()),
            payments,
            prerendered: Flag::default(),
            unrendered,
            rendered: Default::default(),
            predecessor_unrendered: inherited.predecessor_unrendered.take(),
            draining: AtomicBool::new(false),
            metrics,
            tls: identity,
            limiter: ClientLimiter::new(config.post_rate),
            not_found_log: crate::telemetry::LogSampler::new(NOT_FOUND_LOG_PER_MINUTE),
            config,
        });
        tasks.push(background::forget_idle_clients(&state));
        tasks.push(background::refresh_team(&state));
        tasks.push(background::refresh_prices(&state));
        tasks.push(background::publish_scheduled(&state));
        let dev = dev_server.as_ref().map(dev::DevServer::handle);
        match dev_server {
            // Pages are rendered when asked for: each change clears them anyway.
            Some(server) => {
                tasks.push(server.spawn(Arc::downgrade(&state)));
                let first = state.clone();
                tokio::spawn(async move { first.refresh_team().await });
                state.prerendered.set();
            }
            // A successor shares the cores with the predecessor serving.
            None => background::prerender(
                &state,
                match inherited.from_predecessor {
                    true => crate::pages::make::Pace::QuarterOfACore,
                    false => crate::pages::make::Pace::Full,
                },
            ),
        }
        Ok(Application {
            listeners,
            state,
            dev,
            forwarder_task: forwarder.map(|(_, task)| task),
            _db_lock: db_lock,
            background: tasks,
            handover,
            accept_when_ready: inherited.from_predecessor,
        })
    }

    /// Where the site is served: the plain HTTP address, or the HTTPS one.
    pub fn local_addr(&self) -> SocketAddr {
        self.addresses().main
    }

    pub fn addresses(&self) -> Addresses {
        self.listeners.addresses()
    }

    /// Every socket served, in one sentence for the start's log: HTTPS
    /// over TCP, HTTP/3 over UDP (or why not), the HTTP port, and where
    /// `/metrics` answers.
    pub fn sockets_said(&self) -> String {
        let config = &self.state.config;
        let addresses = self.addresses();
        let metrics = "/metrics on it for METRICS_ALLOW";
        let http3 = match (self.listeners.quic_addr(), config.http3_off("HTTP3")) {
            (Some(udp), _) => format!(
                "HTTP/3 on {udp} (UDP), advertised as port {}",
                config.alt_svc_port.unwrap_or(udp.port())
            ),
            (None, Some(off)) => format!("HTTP/3 off{off}"),
            (None, None) => format!(
                "HTTP/3 off: {}",
                self.listeners
                    .no_http3()
                    .unwrap_or("its UDP socket could not be set up")
            ),
        };
        let Some(http) = addresses.redirect else {
            return format!(
                "listening: HTTP on {} (TCP), {metrics}; {http3}",
                addresses.main
            );
        };
        format!(
            "listening: HTTPS on {} (TCP), {metrics}; {http3}; HTTP on {http} (TCP), redirecting to HTTPS",
            addresses.main
        )
    }

    pub fn state(&self) -> SharedState {
        self.state.clone()
    }

    /// What a successor is handed (`Handover::on_signal` starts one).
    pub fn handover(&self) -> Handover {
        self.handover.clone()
    }

    /// Serves until `shutdown` resolves. Then it stops accepting
    /// connections, says so on `/readyz`, lets in-flight requests finish for
    /// at most the shutdown grace (then drops them), and stops the
    /// forwarder within the same bound (a forward cut short is retried by
    /// another process when its lease runs out), then closes the database.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let Application {
            listeners,
            state,
            dev,
            forwarder_task,
            background,
            accept_when_ready,
            handover,
            ..
        } = self;
        // Its copies of the sockets must not hold them open once this
        // process drains (a new connection is then refused, not queued
        // for no one); a successor has its own.
        drop(handover);
        // `dev` alone has the reload script and its events.
        let extra = dev.clone().map_or_else(axum::Router::new, dev::routes);
        let dispatcher =
            http::dispatch::Dispatcher::new(state.clone(), http::router(state.clone(), extra));
        let grace = state.config.shutdown_grace;
        let (stop, begun) = (Flag::default(), OnceLock::<Instant>::new());
        let begin = async {
            shutdown.await;
            tracing::info!(grace = ?grace, "shutting down: no new connections; finishing in-flight requests");
            state.draining.store(true, Ordering::Release);
            notify::notify_stopping();
            if let Some(dev) = &dev {
                dev.close();
            }
            if let Some(forwarder) = &state.forwarder {
                forwarder.stop();
            }
            let _ = begun.set(Instant::now());
            stop.set();
        };
        let (limits, exempt) = (
            state.config.limits.clone(),
            state.config.trusted_proxies.clone(),
        );
        let serve = async {
            if accept_when_ready {
                // The predecessor serves meanwhile; a draining start
                // accepts nothing.
                tokio::select! {
                    _ = state.wait_ready() => {}
                    () = stop.wait() => {}
                }
                // A successor with a page that does not render refuses to
                // take over (server/main.rs says why and exits): it accepts
                // nothing, not one request, meanwhile.
                if !state.refuses_for().is_empty() {
                    return stop.wait().await;
                }
            }
            listeners
                .serve(dispatcher, limits, exempt, || stop.wait())
                .await
        };
        let cut_off = async {
            stop.wait().await;
            tokio::time::sleep(grace).await;
        };
        tokio::select! {
            _ = async { tokio::join!(serve, begin) } => {}
            _ = cut_off => tracing::warn!(grace = ?grace, "in-flight requests outlived the shutdown grace; closing them"),
        }
        let deadline = begun.get().map_or_else(Instant::now, |at| *at + grace);
        stop_the_rest(&state, forwarder_task, background, deadline).await;
        tracing::info!("stopped");
        Ok(())
    }
}

/// The site to serve: the one compiled in, or `dev`'s first build of the
/// checkout (with the dev server that makes the next ones).
async fn site(config: &Config) -> anyhow::Result<(Site, Option<dev::DevServer>)> {
    match &config.dev {
        None => Ok((
            Site::embedded(config).context("bundled content is malformed")?,
            None,
        )),
        Some(root) => {
            let (site, server) = dev::start(root, config).await?;
            Ok((site, Some(server)))
        }
    }
}

/// Migrates the site's database (with the sample team in an empty table
/// when asked). One that cannot be reached is not fatal: pages still
/// render without it (an empty team list), and the monitor migrates it once
/// it is reachable.
async fn migrate_database(db: &Db, config: &Config) {
    match db.migrate().await {
        Ok(()) if config.sample_team => match crate::team::seed_sample(db).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                members = n,
                "the team table was empty: the sample team is in it (dev, or --sample-team)"
            ),
            Err(e) => tracing::warn!(error = %e, "the sample team could not be added"),
        },
        Ok(()) => {}
        Err(e) => {
            tracing::error!(error = %e, "the database is unreachable at start; serving without it until it is back")
        }
    }
}

/// After the listeners: the forwarder gets until `deadline` (at least
/// 100 ms) to finish the request in hand, the background tasks stop, the
/// fleet forgets this server (`tls::Identity::leave`), and the database
/// closes, SQLite's write-ahead log folded into the database file: a
/// stopped site's data is the file alone (`fold_after_close`).
async fn stop_the_rest(
    state: &AppState,
    forwarder: Option<JoinHandle<()>>,
    background: Vec<JoinHandle<()>>,
    deadline: Instant,
) {
    if let Some(task) = forwarder {
        let deadline = deadline.max(Instant::now() + Duration::from_millis(100));
        if tokio::time::timeout_at(deadline, task).await.is_err() {
            tracing::warn!("the forwarder did not stop in time; its claimed request is retried when the lease runs out");
        }
    }
    for task in &background {
        task.abort();
    }
    // Ended before the member leaves: a lease take already sent would
    // otherwise land after the release, and the fleet wait out its TTL.
    for task in background {
        let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
    }
    if let Some(tls) = &state.tls {
        tls.leave().await;
    }
    if tokio::time::timeout(Duration::from_secs(5), state.db.close())
        .await
        .is_err()
    {
        tracing::warn!("database connections still in use after 5 s; closing without waiting");
    } else if state.db.dialect == crate::db::Dialect::Sqlite {
        crate::db::sqlite_file::fold_after_close(
            &state.config.database_url,
            Duration::from_millis(500),
        )
        .await;
    }
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => tracing::info!("interrupted (Ctrl-C)"),
        _ = term => tracing::info!("SIGTERM received"),
    }
}
