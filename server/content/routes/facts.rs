//! What the table says of a route besides its page: how long caches keep
//! it, whether the sitemap lists it and search engines index it, and the
//! query parameters its page reads.

use serde::Deserialize;

/// How long shared caches (a CDN, nginx's `proxy_cache`) may keep a page,
/// by what its data is: a route's `"cache"` in `content/routes.json`
/// (`content` when it says none). Browsers always revalidate (`max-age=0`;
/// the ETag makes that a 304). `stale-while-revalidate` lets a shared cache
/// answer at once with the copy it has while it fetches the next. The
/// caching table of docs/performance.md says the same, and a test compares the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum CachePolicy {
    /// Content compiled into the binary: it changes with a deploy.
    #[default]
    Content,
    /// The team, read again every `TEAM_REFRESH_SECS`.
    Team,
    /// Stripe's price list, read again every minute.
    Prices,
    /// The page shows today's date.
    Daily,
    /// A visitor's own data (the payment on /success): never kept, never shared.
    Private,
    /// The same for everybody but not kept here (unknown routes, filters
    /// that match nothing): a cache must ask each time.
    Revalidate,
}

impl CachePolicy {
    /// The `Cache-Control` value of a page (and of its route data).
    pub const fn header(self) -> &'static str {
        match self {
            CachePolicy::Content => "public, max-age=0, s-maxage=300, stale-while-revalidate=3600",
            CachePolicy::Team => "public, max-age=0, s-maxage=10, stale-while-revalidate=60",
            CachePolicy::Prices => "public, max-age=0, s-maxage=60, stale-while-revalidate=600",
            CachePolicy::Daily => "public, max-age=0, s-maxage=300, stale-while-revalidate=600",
            CachePolicy::Private => "private, no-store",
            CachePolicy::Revalidate => "no-cache",
        }
    }
}

/// What the table says of a route besides its page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteFacts {
    pub cache: CachePolicy,
    /// In the sitemap (`"sitemap": false` leaves it out).
    pub listed: bool,
    /// Indexable (`"index": false` gives its pages `noindex`).
    pub indexed: bool,
}

impl RouteFacts {
    /// The facts of every path the table does not match: the 404 page.
    pub const NOT_FOUND: RouteFacts = RouteFacts {
        cache: CachePolicy::Revalidate,
        listed: false,
        indexed: false,
    };
}

/// A query parameter a page reads (a route's `"query"`): every other one is
/// left out of the page's render URL and cache key, so `?utm=...` variants
/// share one render.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryParam {
    pub name: String,
    /// What a value may be; any other is ignored, as if not given.
    #[serde(default)]
    pub values: ParamValues,
    /// The value that means the same as none (the blog's `All`).
    #[serde(default)]
    pub default: Option<String>,
}

/// The values a query parameter takes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(untagged)]
pub enum ParamValues {
    /// Any value (`"values"` not given): a visitor's own (a session id).
    #[default]
    Any,
    /// One of a closed list; another value is ignored.
    OneOf(Vec<String>),
    /// Any value is read, but only the blog's post types are worth a place
    /// in the page cache (another filter matches no post).
    Named(NamedValues),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum NamedValues {
    #[serde(rename = "post-types")]
    PostTypes,
}

impl QueryParam {
    /// `value` as the page reads it: None when it is as good as not given
    /// (empty, the default, or outside a closed list).
    pub fn read<'v>(&self, value: &'v str) -> Option<&'v str> {
        let allowed = match &self.values {
            ParamValues::OneOf(list) => list.iter().any(|v| v == value),
            ParamValues::Any | ParamValues::Named(_) => true,
        };
        (allowed && !value.is_empty() && self.default.as_deref() != Some(value)).then_some(value)
    }
}
