//! What runs beside the requests while the server runs, each loop its own
//! function: the team and the price list read again (so a page view never
//! waits on the database or Stripe), idle clients forgotten, the pages
//! prerendered at start, the blog's pages made again when a scheduled post
//! goes live, and the intro requests' forwarder. Each holds the state
//! weakly, so it ends when the server is gone.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::config::Config;
use crate::db::Db;
use crate::intake::forwarder::{self, ForwarderHandle};
use crate::intake::notion::NotionClient;
use crate::metrics::Metrics;
use crate::state::AppState;

/// Reads the team table every `TEAM_REFRESH_SECS`: a change made with
/// `citizen-site team` shows on /about within that long.
pub fn refresh_team(state: &Arc<AppState>) -> JoinHandle<()> {
    let (weak, every) = (Arc::downgrade(state), state.config.team_refresh);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let Some(state) = weak.upgrade() else { return };
            state.refresh_team().await;
        }
    })
}

/// Reads Stripe's price list when the last read says (every minute, or
/// sooner after a failure); ends at once when Stripe is off.
pub fn refresh_prices(state: &Arc<AppState>) -> JoinHandle<()> {
    let weak = Arc::downgrade(state);
    tokio::spawn(async move {
        loop {
            let Some(state) = weak.upgrade() else { return };
            // None: Stripe is off, and the list is empty for good.
            let Some(next) = state.payments.refresh_prices().await else {
                return;
            };
            drop(state);
            tokio::time::sleep(next).await;
        }
    })
}

/// Every minute, forgets the clients the rate limits and the session
/// lookups have not seen lately.
pub fn forget_idle_clients(state: &Arc<AppState>) -> JoinHandle<()> {
    let weak = Arc::downgrade(state);
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(60));
        loop {
            every.tick().await;
            let Some(state) = weak.upgrade() else { return };
            state.limiter.forget_idle();
            state.payments.forget_idle();
        }
    })
}

/// The longest [`publish_scheduled`] sleeps before it reads the wall clock
/// again: how late it follows a clock that jumped (set by NTP, a machine
/// resumed), or a post `dev` scheduled since.
const SCHEDULE_NAP: Duration = Duration::from_secs(15);

/// Wakes at each scheduled post's time: says it is published and makes the
/// blog's pages again (the list, its `?type=` views, each post's page: each
/// lists the posts), so the first visitors after the hour are answered from
/// the cache. Whether or not it runs on time, no page made before the hour
/// is served after it: content pages are kept under how many posts are out
/// (`pages::plan::version_now`), and the sitemap and the feed are made per
/// request. It sleeps at most [`SCHEDULE_NAP`] at a time, then reads the
/// wall clock again, never days on a timer set once.
pub fn publish_scheduled(state: &Arc<AppState>) -> JoinHandle<()> {
    let weak = Arc::downgrade(state);
    tokio::spawn(async move {
        // The site and how many posts were out at the last look.
        let mut last: Option<(u64, u64)> = None;
        let mut waiting: Vec<String> = Vec::new();
        loop {
            let Some(state) = weak.upgrade() else { return };
            let site = state.site();
            let now = crate::content::blog::schedule::now_secs();
            let blog = &site.content.blog;
            let out = blog.published_at(now);
            let upcoming = blog.upcoming(now);
            match last {
                Some((generation, before)) if generation == site.generation && before != out => {
                    for id in waiting
                        .iter()
                        .filter(|w| !upcoming.iter().any(|u| &u.id == *w))
                    {
                        tracing::info!(post = %id, "published: /blog/{id} is out, as scheduled");
                    }
                    if out < before {
                        tracing::warn!(
                            "the wall clock went back: {} post(s) wait for their time again",
                            before - out
                        );
                    }
                    let made = make_blog_pages(&state, &site).await;
                    tracing::info!(pages = made, "the blog's pages are made again");
                }
                _ => {}
            }
            last = Some((site.generation, out));
            waiting = upcoming.iter().map(|u| u.id.clone()).collect();
            let nap = upcoming.first().map_or(SCHEDULE_NAP, |next| {
                SCHEDULE_NAP.min(Duration::from_secs(next.in_secs.max(0) as u64))
            });
            drop((site, state));
            tokio::time::sleep(nap).await;
        }
    })
}

/// Renders into the cache every page of `site` that lists the posts: the
/// blog's pages the prerender makes (the list, its view of each post type,
/// each post's page). How many were made.
async fn make_blog_pages(state: &AppState, site: &crate::site::Site) -> usize {
    use crate::pages::make;
    let mut made = 0;
    for url in make::page_urls(site) {
        let path = url.split_once('?').map_or(url.as_str(), |(path, _)| path);
        let blog = site.content.routes.find(path).page == crate::content::routes::PageId::Blog;
        if blog && make::make_url(state, site, &url).await.is_ok() {
            made += 1;
        }
    }
    made
}

/// Reads the team and the prices, then renders every static page into the
/// cache once the isolates are loaded; `/readyz` turns ready after, so the
/// first visitors never wait on V8. The pages that did not render are kept
/// in the state (`/readyz`, `/metrics`, and a successor's refusal).
pub fn prerender(state: &Arc<AppState>, pace: crate::pages::make::Pace) {
    let state = state.clone();
    tokio::spawn(async move {
        tokio::join!(state.refresh_team(), state.payments.price_list());
        if state.site().front.pool.wait_ready().await.is_ok() {
            let started = std::time::Instant::now();
            let made = crate::pages::make::prerender(&state, pace).await;
            tracing::info!(pages = made.done, took = ?started.elapsed(), "prerendered");
            give_back_freed_memory();
            state
                .metrics
                .unrendered(made.unrendered.iter().map(|u| u.path.clone()));
            state
                .rendered
                .store(made.done, std::sync::atomic::Ordering::Release);
            state.unrendered.store(Arc::new(made.unrendered));
            state.prerendered.set();
        }
    });
}

/// Gives the memory starting freed back to the system. The binary's
/// allocator (mimalloc, server/main.rs) does so 10 ms after a free, but only
/// when the thread that freed it allocates again: what the prerender
/// freed (pages rendered and compressed) would otherwise stay resident on
/// threads now idle, 108 MB at start against 69 (`MIMALLOC_PURGE_DELAY=0`
/// gives it back at once, but took 20 % more CPU per request over HTTP/2,
/// bench row 12). Called on the runtime thread that finishes the
/// prerender: 69 to 73 MB at start with it. Under another allocator (the
/// tests') it does nothing.
fn give_back_freed_memory() {
    // SAFETY: collects mimalloc's free pages; callable from any thread.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// The forwarder of intro requests to Notion, with its stalled-backlog
/// watch (pushed on `tasks`), when Notion's keys are set.
pub fn start_forwarder(
    config: &Config,
    db: &Db,
    metrics: &Metrics,
    tasks: &mut Vec<JoinHandle<()>>,
) -> Option<(ForwarderHandle, JoinHandle<()>)> {
    let (Some(token), Some(database)) = (&config.notion_token, &config.notion_database_id) else {
        tracing::info!("Notion forwarding is off (NOTION_TOKEN / NOTION_DATABASE_ID unset): intro requests are stored only");
        return None;
    };
    let t = &config.timeouts;
    let notion = NotionClient::with_timeouts(
        &config.notion_api_base,
        token,
        database,
        t.notion_connect,
        t.notion_request,
    )
    .counted(metrics.upstream.clone());
    let worker = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4());
    tasks.push(forwarder::spawn_watch(db.clone()));
    let unreadable = metrics.intro_tags_unreadable.clone();
    Some(forwarder::spawn(
        db.clone(),
        notion,
        worker,
        config.intro_lease,
        unreadable,
    ))
}
