//! Assembles configuration -> state -> router, and runs the server.

use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::net::TcpListener;

use crate::config::Config;
use crate::db::Db;
use crate::dev;
use crate::integrations::notion::NotionClient;
use crate::intro::forwarder;
use crate::metrics::Metrics;
use crate::payments::Payments;
use crate::rate_limit::ClientLimiter;
use crate::routes;
use crate::site::Site;
use crate::ssr::cache;
use crate::state::{AppState, SharedState};

/// Unknown-route requests logged a minute at most (every one is counted in
/// `/metrics` as `http_not_found_total`).
pub const NOT_FOUND_LOG_PER_MINUTE: u32 = 20;

pub struct Application {
    listener: TcpListener,
    state: SharedState,
    forwarder_task: Option<tokio::task::JoinHandle<()>>,
    /// The database monitor and the rate limiter's housekeeping: stopped
    /// with the server.
    background: Vec<tokio::task::JoinHandle<()>>,
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
        if let Some(dir) = config.sqlite_dir() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            }
        }
        let listener = TcpListener::bind(config.addr).await.with_context(|| format!("binding {}", config.addr))?;
        let (site, dev_server) = match &config.dev {
            None => (Site::embedded(&config).context("bundled content is malformed")?, None),
            Some(root) => {
                let (site, server) = dev::start(root, &config).await?;
                (site, Some(server))
            }
        };
        let db = Db::connect_lazy_with(&config.database_url, &config.timeouts)?;
        if let Err(e) = db.migrate().await {
            // Pages still render without the database (an empty team list);
            // the monitor migrates it once it is reachable.
            tracing::error!(error = %e, "the database is unreachable at start; serving without it until it is back");
        }
        let mut background = vec![db.spawn_monitor()];
        let metrics = Metrics::new();
        let forwarder = match (&config.notion_token, &config.notion_database_id) {
            (Some(token), Some(database)) => {
                let t = &config.timeouts;
                let notion = NotionClient::with_timeouts(&config.notion_api_base, token, database, t.notion_connect, t.notion_request);
                let worker = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4());
                Some(forwarder::spawn(db.clone(), notion, worker, config.intro_lease, metrics.intro_tags_unreadable.clone()))
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
            dev: dev_server.as_ref().map(dev::DevServer::handle),
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
                let Some(next) = state.payments.refresh_prices().await else { return };
                drop(state);
                tokio::time::sleep(next).await;
            }
        }));
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
                    let n = routes::pages::prerender(&warm).await;
                    tracing::info!(pages = n, took = ?started.elapsed(), "prerendered");
                    warm.ready.store(true, Ordering::Release);
                }
            });
        }
        Ok(Application { listener, state, forwarder_task: forwarder.map(|(_, t)| t), background })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().expect("a bound listener has an address")
    }

    pub fn state(&self) -> SharedState {
        self.state.clone()
    }

    /// Serves until `shutdown` resolves. Then it stops accepting
    /// connections, says so on `/readyz`, lets in-flight requests finish for
    /// at most the shutdown grace (then drops them), and stops the
    /// forwarder within the same bound (a forward cut short is retried by
    /// another process when its lease runs out).
    pub async fn run_until(self, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        let state = self.state.clone();
        let grace = state.config.shutdown_grace;
        let (begun_tx, begun) = tokio::sync::watch::channel::<Option<tokio::time::Instant>>(None);
        let signal = {
            let state = state.clone();
            async move {
                shutdown.await;
                tracing::info!(grace = ?grace, "shutting down: no new connections; finishing in-flight requests");
                state.draining.store(true, Ordering::Release);
                if let Some(dev) = &state.dev {
                    dev.close();
                }
                if let Some(forwarder) = &state.forwarder {
                    forwarder.stop();
                }
                let _ = begun_tx.send(Some(tokio::time::Instant::now()));
            }
        };
        let front = routes::front::FrontDoor::new(state.clone());
        let serve = axum::serve(self.listener, axum::ServiceExt::<axum::extract::Request>::into_make_service_with_connect_info::<SocketAddr>(front))
            .with_graceful_shutdown(signal)
            .into_future();
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
        let deadline = begun_at.map(|at| at + grace).unwrap_or_else(tokio::time::Instant::now);
        if let Some(task) = self.forwarder_task {
            if tokio::time::timeout_at(deadline.max(tokio::time::Instant::now() + Duration::from_millis(100)), task).await.is_err() {
                tracing::warn!("the forwarder did not stop in time; its claimed request is retried when the lease runs out");
            }
        }
        for task in self.background {
            task.abort();
        }
        tracing::info!("stopped");
        Ok(())
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
