//! Assembles configuration -> state -> router, and runs the server.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::net::TcpListener;

use crate::config::{CertSource, Config};
use crate::db::sqlite_file::ServerLock;
use crate::db::Db;
use crate::dev;
use crate::edge::{self, certs::Certs, redirect::Redirect, Addresses};
use crate::http;
use crate::intake::forwarder;
use crate::intake::notion::NotionClient;
use crate::metrics::Metrics;
use crate::payments::Payments;
use crate::rate_limit::ClientLimiter;
use crate::render::cache;
use crate::site::Site;
use crate::state::{AppState, SharedState};

/// Unknown-route requests logged a minute at most (every one is counted in
/// `/metrics` as `http_not_found_total`).
pub const NOT_FOUND_LOG_PER_MINUTE: u32 = 20;

pub struct Application {
    listeners: Listeners,
    state: SharedState,
    /// Running as `dev`: its reload events (routed, and closed at shutdown).
    dev: Option<dev::DevHandle>,
    forwarder_task: Option<tokio::task::JoinHandle<()>>,
    /// The SQLite database's server lock (see `db::sqlite_file`).
    _db_lock: Option<ServerLock>,
    /// The database monitor and the rate limiter's housekeeping: stopped
    /// with the server.
    background: Vec<tokio::task::JoinHandle<()>>,
}

/// The bound sockets: plain HTTP, or HTTPS and the HTTP port's redirect.
enum Listeners {
    Plain(TcpListener),
    Tls {
        https: TcpListener,
        http: TcpListener,
        acceptor: tokio_rustls::TlsAcceptor,
        redirect: Redirect,
    },
}

impl Application {
    /// Binds the listener and starts the isolate pool; the pool loads and the
    /// static pages are prerendered in the background (`/readyz` says when).
    /// With `config.dev` set, it serves that checkout's sources instead: it
    /// returns once their first build is done, and reloads on every change.
    pub async fn build(config: Config) -> anyhow::Result<Application> {
        // A Stripe key that cannot work stops the start, before anything runs.
        let payments = Payments::new(&config)?;
        // The message catalogue is parsed now, not by the first request that
        // shows a message.
        crate::messages::messages();
        crate::db::sqlite_file::make_folder(&config.database_url)?;
        let open_files = edge::raise_open_files();
        if (open_files as usize) < config.limits.max_connections + 256 {
            tracing::warn!(
                open_files,
                max_connections = config.limits.max_connections,
                "the open-file limit is below MAX_CONNECTIONS: raise LimitNOFILE / ulimit -n"
            );
        }
        let mut tls_tasks = Vec::new();
        let listeners = match &config.tls {
            None => Listeners::Plain(bind(config.addr, "ADDR").await?),
            Some(tls) => {
                let certs = Certs::new();
                match &tls.certs {
                    CertSource::Files { cert, key } => {
                        let served =
                            edge::certs::load_files(cert, key).map_err(|e| anyhow::anyhow!(e))?;
                        tracing::info!(serial = %served.info.serial, valid_until = %edge::certs::rfc3339(served.info.not_after), "HTTPS: TLS_CERT is in service");
                        certs.deploy(served);
                        tls_tasks.push(edge::certs::watch_files(
                            certs.clone(),
                            cert.clone(),
                            key.clone(),
                        ));
                    }
                    CertSource::Acme(acme) => {
                        tls_tasks.push(edge::acme::start(acme.clone(), certs.clone())?)
                    }
                }
                Listeners::Tls {
                    https: bind(tls.https_addr, "HTTPS_ADDR").await?,
                    http: bind(tls.http_addr, "HTTP_ADDR").await?,
                    acceptor: tokio_rustls::TlsAcceptor::from(edge::certs::server_config(
                        certs.clone(),
                    )),
                    redirect: Redirect::new(&config.site_url, tls.domains(), certs.clone()),
                }
            }
        };
        let (site, dev_server) = match &config.dev {
            None => (
                Site::embedded(&config).context("bundled content is malformed")?,
                None,
            ),
            Some(root) => {
                let (site, server) = dev::start(root, &config).await?;
                (site, Some(server))
            }
        };
        // Held while the server runs: `citizen-site restore` refuses meanwhile.
        let db_lock = config
            .sqlite_path()
            .map(|file| ServerLock::hold(&file))
            .transpose()?;
        let db = Db::connect_lazy_with(&config.database_url, &config.timeouts)?;
        match db.migrate().await {
            Ok(()) if config.sample_team => match crate::team::seed_sample(&db).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    members = n,
                    "the team table was empty: the sample team is in it (dev, or --sample-team)"
                ),
                Err(e) => tracing::warn!(error = %e, "the sample team could not be added"),
            },
            Ok(()) => {}
            // Pages still render without the database (an empty team list);
            // the monitor migrates it once it is reachable.
            Err(e) => {
                tracing::error!(error = %e, "the database is unreachable at start; serving without it until it is back")
            }
        }
        let mut background = vec![db.spawn_monitor()];
        background.extend(tls_tasks);
        let metrics = Metrics::new();
        let forwarder = match (&config.notion_token, &config.notion_database_id) {
            (Some(token), Some(database)) => {
                let t = &config.timeouts;
                let notion = NotionClient::with_timeouts(
                    &config.notion_api_base,
                    token,
                    database,
                    t.notion_connect,
                    t.notion_request,
                );
                let worker = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4());
                background.push(forwarder::spawn_watch(db.clone()));
                Some(forwarder::spawn(
                    db.clone(),
                    notion,
                    worker,
                    config.intro_lease,
                    metrics.intro_tags_unreadable.clone(),
                ))
            }
            _ => {
                tracing::info!("Notion forwarding is off (NOTION_TOKEN / NOTION_DATABASE_ID unset): intro requests are stored only");
                None
            }
        };
        let state = Arc::new(AppState {
            pages: cache::new_cache(config.page_cache_capacity),
            site: arc_swap::ArcSwap::from_pointee(site),
            db,
            team: crate::live::Live::new(Vec::new()),
            forwarder: forwarder.as_ref().map(|(h, _)| h.clone()),
            payments,
            ready: AtomicBool::new(false),
            draining: AtomicBool::new(false),
            metrics,
            limiter: ClientLimiter::new(config.post_rate),
            not_found_log: crate::telemetry::LogSampler::new(NOT_FOUND_LOG_PER_MINUTE),
            config,
        });
        let weak = Arc::downgrade(&state);
        background.push(tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(60));
            loop {
                every.tick().await;
                let Some(state) = weak.upgrade() else { return };
                state.limiter.forget_idle();
                state.payments.forget_idle();
            }
        }));
        // The team and the price list are read in the background, so a
        // page view never waits on the database or Stripe; the first reads
        // happen before the pages are prerendered (below).
        let weak = Arc::downgrade(&state);
        let team_refresh = state.config.team_refresh;
        background.push(tokio::spawn(async move {
            loop {
                tokio::time::sleep(team_refresh).await;
                let Some(state) = weak.upgrade() else { return };
                state.refresh_team().await;
            }
        }));
        let weak = Arc::downgrade(&state);
        background.push(tokio::spawn(async move {
            loop {
                let Some(state) = weak.upgrade() else { return };
                // None: Stripe is off, and the list is empty for good.
                let Some(next) = state.payments.refresh_prices().await else {
                    return;
                };
                drop(state);
                tokio::time::sleep(next).await;
            }
        }));
        let dev = dev_server.as_ref().map(dev::DevServer::handle);
        if let Some(server) = dev_server {
            // Pages are rendered when asked for: each change clears them anyway.
            background.push(server.spawn(Arc::downgrade(&state)));
            let first = state.clone();
            tokio::spawn(async move { first.refresh_team().await });
            state.ready.store(true, Ordering::Release);
        } else {
            // Warm up in the background: /readyz turns ready when every static
            // page is in the cache, so the first visitors never wait on V8.
            let warm = state.clone();
            tokio::spawn(async move {
                tokio::join!(warm.refresh_team(), warm.payments.price_list());
                if warm.site().front.pool.wait_ready().await.is_ok() {
                    let started = std::time::Instant::now();
                    let n = crate::pages::make::prerender(&warm).await;
                    tracing::info!(pages = n, took = ?started.elapsed(), "prerendered");
                    warm.ready.store(true, Ordering::Release);
                }
            });
        }
        Ok(Application {
            listeners,
            state,
            dev,
            forwarder_task: forwarder.map(|(_, t)| t),
            _db_lock: db_lock,
            background,
        })
    }

    /// Where the site is served: the plain HTTP address, or the HTTPS one.
    pub fn local_addr(&self) -> SocketAddr {
        self.addresses().main
    }

    pub fn addresses(&self) -> Addresses {
        let of = |l: &TcpListener| l.local_addr().expect("a bound listener has an address");
        match &self.listeners {
            Listeners::Plain(l) => Addresses {
                main: of(l),
                redirect: None,
            },
            Listeners::Tls { https, http, .. } => Addresses {
                main: of(https),
                redirect: Some(of(http)),
            },
        }
    }

    pub fn state(&self) -> SharedState {
        self.state.clone()
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
        let state = self.state.clone();
        let (forwarder_task, background, dev) = (self.forwarder_task, self.background, self.dev);
        // `dev` alone has the reload script and its events.
        let extra = dev.clone().map_or_else(axum::Router::new, dev::routes);
        let grace = state.config.shutdown_grace;
        let (begun_tx, begun) = tokio::sync::watch::channel::<Option<tokio::time::Instant>>(None);
        let signal = {
            let state = state.clone();
            async move {
                shutdown.await;
                tracing::info!(grace = ?grace, "shutting down: no new connections; finishing in-flight requests");
                state.draining.store(true, Ordering::Release);
                if let Some(dev) = &dev {
                    dev.close();
                }
                if let Some(forwarder) = &state.forwarder {
                    forwarder.stop();
                }
                let _ = begun_tx.send(Some(tokio::time::Instant::now()));
            }
        };
        let front =
            http::dispatch::Dispatcher::new(state.clone(), http::router(state.clone(), extra));
        let (stop_tx, stop) = tokio::sync::watch::channel(false);
        let signal = async move {
            signal.await;
            let _ = stop_tx.send(true);
        };
        let stopped = move || {
            let mut stop = stop.clone();
            async move {
                let _ = stop.wait_for(|s| *s).await;
            }
        };
        let (limits, exempt) = (
            state.config.limits.clone(),
            state.config.trusted_proxies.clone(),
        );
        let serve = async move {
            match self.listeners {
                Listeners::Plain(listener) => {
                    edge::serve(
                        listener,
                        None,
                        |peer| front.connection(peer),
                        limits,
                        exempt,
                        stopped(),
                    )
                    .await
                }
                Listeners::Tls {
                    https,
                    http,
                    acceptor,
                    redirect,
                } => {
                    tokio::join!(
                        edge::serve(
                            https,
                            Some(acceptor),
                            |peer| front.connection(peer),
                            limits.clone(),
                            exempt.clone(),
                            stopped()
                        ),
                        edge::serve(
                            http,
                            None,
                            edge::Axum::per_connection(redirect),
                            limits,
                            exempt,
                            stopped()
                        ),
                    );
                }
            }
        };
        let serve = async move {
            tokio::join!(serve, signal);
            Ok::<(), anyhow::Error>(())
        };
        tokio::pin!(serve);
        let mut watch = begun.clone();
        let cut_off = async move {
            let at = match watch.wait_for(Option::is_some).await {
                Ok(at) => *at,
                Err(_) => None,
            };
            match at {
                Some(at) => tokio::time::sleep_until(at + grace).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            served = &mut serve => served?,
            _ = cut_off => tracing::warn!(grace = ?grace, "in-flight requests outlived the shutdown grace; closing them"),
        }
        let begun_at = *begun.borrow();
        let deadline = begun_at
            .map(|at| at + grace)
            .unwrap_or_else(tokio::time::Instant::now);
        if let Some(task) = forwarder_task {
            if tokio::time::timeout_at(
                deadline.max(tokio::time::Instant::now() + Duration::from_millis(100)),
                task,
            )
            .await
            .is_err()
            {
                tracing::warn!("the forwarder did not stop in time; its claimed request is retried when the lease runs out");
            }
        }
        for task in background {
            task.abort();
        }
        // Closing the pool lets SQLite fold its write-ahead log into the
        // database file: a stopped site's data is the file alone.
        if tokio::time::timeout(Duration::from_secs(5), state.db.pool.close())
            .await
            .is_err()
        {
            tracing::warn!("database connections still in use after 5 s; closing without waiting");
        }
        tracing::info!("stopped");
        Ok(())
    }
}

async fn bind(addr: SocketAddr, variable: &str) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .with_context(|| format!("{variable}: cannot listen on {addr}"))
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
