//! Making a page: its loader's data rendered in an isolate, wrapped in the
//! document with its head tags, and for a page the cache keeps, compressed
//! and stored (once however many requests for it arrive together: the
//! cache's `try_get_with` makes the others wait for that one, and the
//! compression runs on a blocking thread, off the async workers).

use std::net::IpAddr;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue};

use super::load::{self, Loaded};
use super::{resolve, Resolved};
use crate::content::routes::PageId;
use crate::content::routes::RouteMatch;
use crate::contract::{Bootstrap, ErrorNotice};
use crate::messages::messages;
use crate::metrics::Metrics;
use crate::render::cache::{CachedPage, PageKey};
use crate::render::document::{self, Document};
use crate::render::{RenderError, RenderOutput, Unrendered};
use crate::site::Site;
use crate::state::AppState;

/// A page that could not be made: the parts of its error response, shared
/// by every request that waited on the same render.
#[derive(Debug, Clone)]
pub struct Failed {
    pub status: u16,
    pub html: String,
    /// A 503 (the render queue is full) asks to come back in a second.
    pub retry_soon: bool,
    /// The policy that allows its inline CSS (none for `dev`'s problem
    /// pages, which have none).
    pub csp: Option<HeaderValue>,
    /// Why, for the log and the prerender's list: the script's error (with
    /// its stack) or the render's failure. None for a 503 (the queue was
    /// full: nothing is wrong with the page).
    pub why: Option<(String, Option<String>)>,
}

impl Failed {
    /// A 500 whose page is `dev`'s problem page.
    fn problem(html: String, why: String, stack: Option<String>) -> Failed {
        Failed {
            status: 500,
            html,
            retry_soon: false,
            csp: None,
            why: Some((why, stack)),
        }
    }

    /// An answer of `status` with the page `doc`.
    fn page(site: &Site, status: u16, doc: Document) -> Failed {
        Failed {
            status,
            csp: Some(site.security.page_policy(&doc.style_source)),
            html: doc.html,
            retry_soon: status == 503,
            why: None,
        }
    }

    /// The same, failed for `why` (and the script's `stack`).
    fn because(mut self, why: String, stack: Option<String>) -> Failed {
        self.why = Some((why, stack));
        self
    }

    /// A 500 with the spec's generic message.
    fn internal(site: &Site, why: String) -> Failed {
        let doc = document::error_page(&site.front.manifest, 500, &messages().internal_error);
        Failed::page(site, 500, doc).because(why, None)
    }
}

/// The kept page under `key`: the page cache's, or made now ([`cached`]).
/// Either way the front pipeline answers its path with it from now on.
pub async fn kept(
    state: &AppState,
    site: &Site,
    route: &RouteMatch,
    key: PageKey,
    plan: super::Plan,
    client: IpAddr,
) -> Result<Arc<CachedPage>, Arc<Failed>> {
    if let Some(hit) = state.page_cache.get(&key).await {
        super::remember_for_path(site, route, &key, &hit);
        state.metrics.page_cache_hits.inc();
        return Ok(hit);
    }
    // Made once however many ask together (a page inserted since the
    // lookup is handed back without a render).
    state.metrics.page_cache_misses.inc();
    cached(state, site, route, key, plan, client).await
}

/// The cached page under `key`, made if it is not there yet; the front
/// pipeline answers its path with it from now on
/// ([`super::remember_for_path`]).
pub async fn cached(
    state: &AppState,
    site: &Site,
    route: &RouteMatch,
    key: PageKey,
    plan: super::Plan,
    client: IpAddr,
) -> Result<Arc<CachedPage>, Arc<Failed>> {
    let key_of_page = key.clone();
    let page = state
        .page_cache
        .try_get_with(key, async {
            let loaded = load::load(state, &site.content, route, plan, client).await;
            // One serialisation: embedded in the page and kept for route data.
            let json = serde_json::to_string(&loaded.route).expect("route data serializes");
            let (status, doc) = document_of(state, site, route, &loaded, &json).await?;
            let cache_control = loaded.plan.cache_control;
            let mut security = HeaderMap::new();
            site.security.apply(&loaded.plan.render_url, &mut security);
            let policy = site.security.page_policy(&doc.style_source);
            let page = tokio::task::spawn_blocking(move || {
                CachedPage::new(status, cache_control, doc.html, json, &security, policy)
            })
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "compressing a page failed");
                Failed::internal(site, format!("compressing the page failed: {e}"))
            })?;
            Ok(Arc::new(page))
        })
        .await?;
    super::remember_for_path(site, route, &key_of_page, &page);
    Ok(page)
}

/// A page that is not cached (it carries what a visitor sent, or the cache
/// is off): its status and document, uncompressed.
pub async fn uncached(
    state: &AppState,
    site: &Site,
    route: &RouteMatch,
    loaded: &Loaded,
) -> Result<(u16, Document), Failed> {
    let bootstrap = serde_json::to_string(&loaded.route).expect("route data serializes");
    document_of(state, site, route, loaded, &bootstrap).await
}

/// What a prerender did: how many pages it rendered into the cache, and
/// the pages that did not render.
#[derive(Debug, Default)]
pub struct Prerendered {
    pub done: usize,
    pub unrendered: Vec<Unrendered>,
}

/// A path no route has: the 404 page, which every unknown path shows, is
/// rendered with the others.
pub const NOT_FOUND_PROBE: &str = "/__citizen-site/not-found";

/// Renders every page of the route table into the cache (done at start,
/// before /readyz says ready): each path, the listed values of their query
/// parameters ([`page_urls`]: `?billing=yearly`, the blog's post types),
/// and the 404 page. Says which did not render: a script that
/// threw, a render that timed out or failed, a page that answered 500,
/// twice in a row (a render cut off once on a busy machine is tried
/// again). A page whose data is away (the team table, Stripe's prices)
/// renders the spec's state for it, and has rendered.
pub async fn prerender(state: &AppState, pace: Pace) -> Prerendered {
    let site = state.site();
    let mut out = Prerendered::default();
    for url in page_urls(&site) {
        // Measured only when paced: a start reads no /proc file.
        let started =
            (pace == Pace::QuarterOfACore).then(|| (std::time::Instant::now(), busy_time()));
        let mut made = make_url(state, &site, &url).await;
        if made.is_err() {
            made = make_url(state, &site, &url).await;
        }
        match made {
            Ok(()) => out.done += 1,
            // A 503 (the queue was full) says nothing of the page.
            Err(None) => {}
            Err(Some((page, error, stack))) => {
                let path = match page {
                    PageId::NotFound => "(the 404 page)".to_owned(),
                    _ => url.clone(),
                };
                tracing::error!(%path, %error, "a page of the site does not render");
                out.unrendered.push(Unrendered { path, error, stack });
            }
        }
        if let Some(started) = started {
            tokio::time::sleep(took_the_cores(started) * 3).await;
        }
    }
    out
}

/// What the prerender makes: every page path of the site, then each path
/// of a route without a path parameter with every value its route lists
/// for a query parameter (one at a time: a page reads them apart), then a
/// path no route has (the 404 page). A post's page is not made once per
/// post type (the type filters the list, which a post's page does not
/// show): 35 more renders, which made a start 3.5 times as long (bench
/// row 16, 61 pages against 23).
pub fn page_urls(site: &Site) -> Vec<String> {
    use crate::content::routes::{NamedValues, ParamValues};
    let paths = site.content.page_paths();
    let mut kinds: Vec<String> = site
        .content
        .blog
        .list()
        .into_iter()
        .map(|p| p.kind)
        .collect();
    kinds.sort();
    kinds.dedup();
    let mut urls = paths.clone();
    for path in paths {
        let route = site.content.routes.find(&path);
        if !route.params.is_empty() {
            continue;
        }
        for param in route.query.iter() {
            let values: &[String] = match &param.values {
                ParamValues::OneOf(list) => list,
                ParamValues::Named(NamedValues::PostTypes) => &kinds,
                // A visitor's own value (a session id): none to try.
                ParamValues::Any => &[],
            };
            for value in values {
                if param.read(value).is_some() {
                    let query = form_urlencoded::Serializer::new(String::new())
                        .append_pair(&param.name, value)
                        .finish();
                    urls.push(format!("{path}?{query}"));
                }
            }
        }
    }
    urls.push(NOT_FOUND_PROBE.to_owned());
    urls
}

/// Makes the page of `url` as a visitor's GET would (into the cache when
/// it keeps it; made all the same when it does not: the 404 page, or
/// every page with the cache off). Why it failed: its page, the error and
/// its stack; None when it only waited for a full queue.
pub async fn make_url(
    state: &AppState,
    site: &Site,
    url: &str,
) -> Result<(), Option<(PageId, String, Option<String>)>> {
    // The server itself asks: no visitor's budget is spent.
    let server = IpAddr::from(std::net::Ipv4Addr::LOCALHOST);
    let (path, query) = url
        .split_once('?')
        .map_or((url, None), |(p, q)| (p, Some(q)));
    let Resolved::Page { route, plan, key } =
        resolve(state, site, &axum::http::Method::GET, path, query)
    else {
        return Ok(());
    };
    let why = match key {
        Some(key) => cached(state, site, &route, key, plan, server)
            .await
            .map(drop)
            .map_err(|failed| failed.why.clone()),
        None => {
            let loaded = load::load(state, &site.content, &route, plan, server).await;
            uncached(state, site, &route, &loaded)
                .await
                .map(drop)
                .map_err(|failed| failed.why)
        }
    };
    why.map_err(|why| why.map(|(error, stack)| (route.page, error, stack)))
}

/// How long each of this process's threads has run or waited for a core
/// (`/proc/self/task/*/schedstat`, by thread id): not the time it was
/// stopped (SIGSTOP, a stalled VM) nor blocked. None where the kernel does
/// not say.
fn busy_time() -> Option<std::collections::HashMap<u32, u64>> {
    let mut threads = std::collections::HashMap::new();
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let task = task.ok()?;
        let Some(id) = task.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        // A thread that ended meanwhile has no file left: not counted.
        let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue;
        };
        let mut fields = stat.split_whitespace().map(str::parse::<u64>);
        let (Some(Ok(ran)), Some(Ok(waited))) = (fields.next(), fields.next()) else {
            return None;
        };
        threads.insert(id, ran.saturating_add(waited));
    }
    Some(threads)
}

/// What a page begun at `started` (its wall clock and [`busy_time`]) took
/// of the cores: the busy time since, each thread's own (one started
/// meanwhile counts whole; one that ended meanwhile, not at all, where a
/// plain sum would lose its whole life), never more than the wall time
/// (the wall time alone where the kernel does not say).
///
/// A page that waited for cores on a loaded machine took them as long as
/// it waited, so the rest is the wall time's, as bench row 15 (a publish's
/// worst wait) was measured with; a process paused meanwhile took nothing,
/// and resting three times the pause once made a successor paused 20 s
/// miss its 60 s to be ready. The busy time of all threads together
/// exceeds the wall time when several run or wait at once (V8's helpers
/// beside the render): resting three times that sum slowed every reload
/// (the live systemd test: 112 s with the sum, 94 s with this bound, one
/// run each on 2 cores).
fn took_the_cores(
    (wall, busy): (
        std::time::Instant,
        Option<std::collections::HashMap<u32, u64>>,
    ),
) -> std::time::Duration {
    let wall = wall.elapsed();
    match (busy, busy_time()) {
        (Some(then), Some(now)) => {
            let nanos = now.iter().fold(0u64, |sum, (id, ns)| {
                sum.saturating_add(ns.saturating_sub(then.get(id).copied().unwrap_or(0)))
            });
            std::time::Duration::from_nanos(nanos).min(wall)
        }
        _ => wall,
    }
}

/// How hard a prerender may work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// As fast as it can: a start, with no one else serving.
    Full,
    /// Resting three times as long as each page took of the cores (its
    /// threads running or waiting for one, at most its wall time:
    /// [`took_the_cores`]), so working a quarter of the time: a successor whose
    /// predecessor serves meanwhile, on the same cores (a publish's worst
    /// wait, bench row 15, is set by how much CPU the new process takes
    /// from the old; it is ready a second or two later, which no one waits
    /// for).
    QuarterOfACore,
}

/// The page's document and status: rendered in an isolate and wrapped in
/// the document shell. A render that failed (or that a broken file breaks,
/// in `dev`) is the error page instead.
async fn document_of(
    state: &AppState,
    site: &Site,
    route: &RouteMatch,
    loaded: &Loaded,
    bootstrap: &str,
) -> Result<(u16, Document), Failed> {
    if let Some(html) = site.dev.as_ref().and_then(|dev| dev.broken(route.page)) {
        let why = "a file it needs is broken (its problem page says which)".to_owned();
        return Err(Failed::problem(html, why, None));
    }
    let m = &state.metrics;
    let started = std::time::Instant::now();
    let front = &site.front;
    let url = &loaded.plan.render_url;
    let rendered = front.pool.render(url, bootstrap).await;
    m.render_seconds.observe(started.elapsed().as_secs_f64());
    if let Err(e) = &rendered {
        Metrics::outcome(&m.render_failures, e.name());
    }
    match rendered {
        Ok(out) if out.error.is_some() || out.status >= 500 => {
            Metrics::outcome(&m.render_failures, "error_screen");
            tracing::error!(%url, error = out.error.as_deref().unwrap_or(""), "render error");
            let why = match &out.error {
                Some(error) => error.clone(),
                None => format!("the page answered {}", out.status),
            };
            if let (Some(dev), Some(error)) = (&site.dev, &out.error) {
                let html = dev.threw(out.page, error, out.stack.as_deref());
                return Err(Failed::problem(html, why, out.stack));
            }
            let doc = document::page(
                &front.manifest,
                &out,
                &head(state, site, route, loaded, &out),
                &error_bootstrap(loaded),
            );
            Err(Failed::page(site, 500, doc).because(why, out.stack))
        }
        Ok(out) => Ok((
            out.status,
            document::page(
                &front.manifest,
                &out,
                &head(state, site, route, loaded, &out),
                bootstrap,
            ),
        )),
        Err(RenderError::Overloaded) => {
            tracing::warn!(%url, "render queue full; shedding");
            let doc = document::error_page(&front.manifest, 503, &messages().unavailable);
            Err(Failed::page(site, 503, doc))
        }
        Err(e) => {
            tracing::error!(%url, error = %e, "render failed");
            Err(Failed::internal(site, e.to_string()))
        }
    }
}

fn head(
    state: &AppState,
    site: &Site,
    route: &RouteMatch,
    loaded: &Loaded,
    out: &RenderOutput,
) -> String {
    let mut tags = crate::seo::Head {
        site_url: &state.config.site_url,
        url: &loaded.plan.render_url,
        page: out.page,
        indexed: route.facts.indexed,
        title: &out.title,
        description: &out.description,
        data: &loaded.route.data,
        manifest: &site.front.manifest,
        accounts: &site.content.accounts,
    }
    .tags();
    if let Some(dev) = &site.dev {
        tags.push_str(&dev.head_tags());
    }
    tags
}

/// The bootstrap of a page whose render threw: the client shows the same
/// error screen instead of re-running the page.
fn error_bootstrap(loaded: &Loaded) -> String {
    let error = ErrorNotice {
        status: 500,
        message: messages().internal_error.clone(),
    };
    serde_json::to_string(&Bootstrap {
        route: &loaded.route,
        error: Some(error),
    })
    .expect("route data serializes")
}
