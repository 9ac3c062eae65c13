//! Everything a request handler can reach.

use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::config::Config;
use crate::db::Db;
use crate::intake::forwarder::ForwarderHandle;
use crate::live::Live;
use crate::metrics::Metrics;
use crate::payments::Payments;
use crate::rate_limit::ClientLimiter;
use crate::render::cache::PageCache;
use crate::site::Site;
use crate::team::TeamMember;

pub type SharedState = Arc<AppState>;

pub struct AppState {
    pub config: Config,
    /// The front end and content being served (see [`crate::site`]); read
    /// it with [`AppState::site`].
    pub(crate) site: ArcSwap<Site>,
    pub page_cache: PageCache,
    pub db: Db,
    /// The team table as last read ([`AppState::refresh_team`]); /about is
    /// cached by its version.
    pub team: Live<Vec<TeamMember>>,
    /// Running when Notion keys are set.
    pub forwarder: Option<ForwarderHandle>,
    pub payments: Payments,
    /// Every static page is prerendered (in `dev`: set at start).
    pub prerendered: crate::live::Flag,
    /// The pages the prerender could not render (said at start, on
    /// `/readyz` and `/metrics`; a successor refuses to take over), shared
    /// with the hand-over, which tells a successor.
    pub unrendered: Arc<arc_swap::ArcSwap<Vec<crate::render::Unrendered>>>,
    /// How many pages the prerender made.
    pub rendered: std::sync::atomic::AtomicUsize,
    /// A successor's: the pages its predecessor did not render. None on a
    /// start with no predecessor.
    pub predecessor_unrendered: Option<Vec<String>>,
    /// Shutdown has begun: `/readyz` says so while in-flight requests finish.
    pub draining: std::sync::atomic::AtomicBool,
    pub metrics: Metrics,
    /// The HTTPS identity (certificate, session-ticket keys), when serving
    /// HTTPS: what `/metrics` says of them.
    pub tls: Option<Arc<crate::tls::Identity>>,
    pub limiter: ClientLimiter,
    /// Which unknown-route requests are logged (all are counted).
    pub not_found_log: crate::telemetry::LogSampler,
}

impl AppState {
    /// The site as it is now; a request keeps the one it started with.
    pub fn site(&self) -> Arc<Site> {
        self.site.load_full()
    }

    /// Returns once the site is ready for visitors: every isolate has loaded
    /// the bundle and every static page is prerendered; or why the bundle
    /// cannot run.
    pub async fn wait_ready(&self) -> Result<(), String> {
        self.site().front.pool.wait_ready().await?;
        self.prerendered.wait().await;
        Ok(())
    }

    /// The pages the last prerender could not render.
    pub fn unrendered(&self) -> Arc<Vec<crate::render::Unrendered>> {
        self.unrendered.load_full()
    }

    /// The pages for which a successor refuses to take over: those it did
    /// not render that its predecessor did (a page already broken before
    /// it is not made worse, and never blocks a reload that fixes
    /// something else). None on a start with no predecessor.
    pub fn refuses_for(&self) -> Vec<crate::render::Unrendered> {
        let Some(before) = &self.predecessor_unrendered else {
            return Vec::new();
        };
        self.unrendered()
            .iter()
            .filter(|u| !before.contains(&u.path))
            .cloned()
            .collect()
    }

    /// Reads the team table again (see [`crate::team::refresh`]).
    pub async fn refresh_team(&self) {
        crate::team::refresh(&self.db, &self.team).await;
    }

    /// Serves `site` from now on. Pages rendered from the old one are
    /// dropped from the cache (and are keyed by its generation, so one
    /// finishing its render after this is never served).
    pub fn replace_site(&self, site: Site) {
        self.site.store(Arc::new(site));
        self.page_cache.invalidate_all();
    }
}
