//! Everything a request handler can reach.

use std::sync::Arc;

use crate::assets::Manifest;
use crate::config::Config;
use crate::content::Content;
use crate::db::Db;
use crate::intro::forwarder::ForwarderHandle;
use crate::metrics::Metrics;
use crate::payments::Payments;
use crate::rate_limit::PostLimiter;
use crate::routes::table::RouteTable;
use crate::security::SecurityHeaders;
use crate::ssr::cache::PageCache;
use crate::ssr::SsrPool;

pub type SharedState = Arc<AppState>;

pub struct AppState {
    pub config: Config,
    pub pool: SsrPool,
    pub pages: PageCache,
    pub routes: &'static RouteTable,
    pub manifest: &'static Manifest,
    pub content: Content,
    pub db: Db,
    /// Running when Notion keys are set.
    pub forwarder: Option<ForwarderHandle>,
    pub payments: Payments,
    /// Isolates loaded and every static page prerendered.
    pub ready: std::sync::atomic::AtomicBool,
    /// Shutdown has begun: `/readyz` says so while in-flight requests finish.
    pub draining: std::sync::atomic::AtomicBool,
    pub metrics: Metrics,
    pub limiter: PostLimiter,
    pub security: SecurityHeaders,
}
