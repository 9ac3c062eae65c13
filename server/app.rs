//! Assembles configuration -> state -> router, and runs the server.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context;
use tokio::net::TcpListener;

use crate::assets::Manifest;
use crate::config::Config;
use crate::content::Content;
use crate::db::Db;
use crate::integrations::notion::NotionClient;
use crate::intro::forwarder;
use crate::payments::Payments;
use crate::routes::{self, table::RouteTable};
use crate::ssr::{cache, SsrPool};
use crate::state::{AppState, SharedState};

pub struct Application {
    listener: TcpListener,
    state: SharedState,
    forwarder_task: Option<tokio::task::JoinHandle<()>>,
}

impl Application {
    /// Binds the listener and starts the isolate pool; the pool loads and the
    /// static pages are prerendered in the background (`/healthz` says when).
    pub async fn build(config: Config) -> anyhow::Result<Application> {
        if let Some(dir) = config.sqlite_dir() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            }
        }
        let manifest = Manifest::embedded();
        let content = Content::embedded(manifest).context("bundled content is malformed")?;
        let db = Db::connect_lazy(&config.database_url)?;
        match db.migrate().await {
            Ok(()) => {}
            // Pages still render without the database (an empty team list).
            Err(e) => tracing::error!(error = %e, "database migrations failed; continuing without the database"),
        }
        let forwarder = match (&config.notion_token, &config.notion_database_id) {
            (Some(token), Some(database)) => {
                let notion = NotionClient::new(&config.notion_api_base, token, database);
                let worker = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4());
                Some(forwarder::spawn(db.clone(), notion, worker))
            }
            _ => {
                tracing::info!("Notion forwarding is off (NOTION_TOKEN / NOTION_DATABASE_ID unset): intro requests are stored only");
                None
            }
        };
        let listener = TcpListener::bind(config.addr).await.with_context(|| format!("binding {}", config.addr))?;
        let pool = SsrPool::start(&config.ssr);
        let state = Arc::new(AppState {
            pages: cache::new_cache(config.page_cache_capacity),
            pool,
            routes: RouteTable::embedded(),
            manifest,
            content,
            db,
            forwarder: forwarder.as_ref().map(|(h, _)| h.clone()),
            payments: Payments::new(&config),
            ready: AtomicBool::new(false),
            config,
        });
        // Warm up in the background: /healthz turns ready when every static
        // page is in the cache, so the first visitors never wait on V8.
        let warm = state.clone();
        tokio::spawn(async move {
            if warm.pool.wait_ready().await.is_ok() {
                let started = std::time::Instant::now();
                let n = routes::pages::prerender(&warm).await;
                tracing::info!(pages = n, took = ?started.elapsed(), "prerendered");
                warm.ready.store(true, Ordering::Release);
            }
        });
        Ok(Application { listener, state, forwarder_task: forwarder.map(|(_, t)| t) })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().expect("a bound listener has an address")
    }

    pub fn state(&self) -> SharedState {
        self.state.clone()
    }

    /// Serves until `shutdown` resolves, then finishes in-flight requests.
    pub async fn run_until(self, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        let router = routes::router(self.state.clone());
        axum::serve(self.listener, router).with_graceful_shutdown(shutdown).await?;
        if let (Some(handle), Some(task)) = (&self.state.forwarder, self.forwarder_task) {
            handle.stop();
            // A request in flight finishes or its lease lets another process retry it.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(20), task).await;
        }
        Ok(())
    }
}

/// Resolves on Ctrl-C or SIGTERM.
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
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}
