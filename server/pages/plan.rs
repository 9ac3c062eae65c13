//! A page's plan: what names it in the page cache, worked out from the URL
//! and the route's facts alone, without reading any data (every page view
//! starts here, and a cache hit ends right after).

use crate::content::blog::schedule::now_secs;
use crate::content::routes::{CachePolicy, NamedValues, PageId, ParamValues, RouteMatch};
use crate::content::Content;
use crate::state::AppState;

/// The render URL (the path and only the query parameters the page reads,
/// so `?utm=...` variants share one render), the version of the changing
/// data it shows, and who may keep it.
#[derive(Debug, Clone)]
pub struct Plan {
    pub render_url: String,
    /// The query parameters the page reads (its route's `"query"`), with
    /// the values given, in the route's order: what its loader reads.
    pub params: Vec<(String, String)>,
    /// The team's or the price list's version on /about and /pricing, the
    /// day on a daily page (/terms); 0 where the data is fixed for the
    /// process.
    pub version: u64,
    /// False for pages that carry what a visitor submitted, and for URLs
    /// not worth a place in the cache (unknown routes and filters).
    pub cacheable: bool,
    /// `Cache-Control` of the page (and of its route data).
    pub cache_control: &'static str,
}

impl Plan {
    /// The plan of a page that holds what one visitor sent (the contact
    /// page with their refused form): never cached, never shared.
    pub fn private(render_url: &str) -> Plan {
        Plan {
            render_url: render_url.to_owned(),
            params: Vec::new(),
            version: 0,
            cacheable: false,
            cache_control: CachePolicy::Private.header(),
        }
    }

    /// The value of the query parameter `name`, when the page reads it and
    /// the request gave one.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The value of the one query parameter a page's route declares, when
    /// the request gave one: whatever `content/routes.json` names it (the
    /// blog's filter, the success page's session id).
    pub fn only_param(&self) -> Option<&str> {
        self.params.first().map(|(_, v)| v.as_str())
    }
}

/// The plan of `path?query` on `route`: the parameters its route declares
/// are read (the first of each name), every other one is ignored.
pub fn plan(
    state: &AppState,
    content: &Content,
    path: &str,
    query: Option<&str>,
    route: &RouteMatch,
) -> Plan {
    let mut policy = route.facts.cache;
    let mut params = Vec::new();
    if !route.query.is_empty() {
        let given: Vec<(String, String)> = form_urlencoded::parse(query.unwrap_or("").as_bytes())
            .into_owned()
            .collect();
        for param in route.query.iter() {
            let first = given.iter().find(|(k, _)| *k == param.name);
            let Some(value) = first.and_then(|(_, v)| param.read(v)) else {
                continue;
            };
            // Any string is a filter (it matches no post), but only the
            // real types are worth a place in the cache.
            if param.values == ParamValues::Named(NamedValues::PostTypes)
                && !content.blog.has_type(value)
            {
                policy = CachePolicy::Revalidate;
            }
            params.push((param.name.clone(), value.to_owned()));
        }
    }
    // A post's address that shows no post (unknown, or not out yet) is
    // kept nowhere: a post published later is not hidden by a copy of the
    // list, and a crawler walking made-up ids fills no cache.
    if route.page == PageId::Blog
        && route
            .params
            .values()
            .next()
            .is_some_and(|id| !content.blog.ids().any(|shown| shown == id))
    {
        policy = CachePolicy::Revalidate;
    }
    let (version, cacheable) =
        version_now(state, content, policy).map_or((0, false), |v| (v, true));
    let mut render_url = path.to_owned();
    if !params.is_empty() {
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in &params {
            q.append_pair(k, v);
        }
        render_url.push('?');
        render_url.push_str(&q.finish());
    }
    Plan {
        render_url,
        params,
        version,
        cacheable,
        cache_control: policy.header(),
    }
}

/// The version of the data a page under `policy` shows, as it is now;
/// None for pages that are never kept. A kept page made from another
/// version is out of date. A content page's is how many posts are out
/// ([`crate::content::blog::Blog::published_at`]): at a scheduled post's
/// time every page made before is out of date, the blog's list and pages
/// first, whoever kept them (the page cache, the pages by path).
pub fn version_now(state: &AppState, content: &Content, policy: CachePolicy) -> Option<u64> {
    match policy {
        CachePolicy::Content => Some(content.blog.published_at(now_secs())),
        CachePolicy::Team => Some(state.team.version()),
        CachePolicy::Prices => Some(state.payments.prices_version()),
        CachePolicy::Daily => Some(day_number()),
        // A visitor's own page, and every unknown URL (a new page each:
        // not kept, so a crawler walking random paths cannot fill the cache).
        CachePolicy::Private | CachePolicy::Revalidate => None,
    }
}

/// Days since 1970-01-01 (UTC): the version of a daily page.
pub(crate) fn day_number() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    now.as_secs() / 86_400
}
