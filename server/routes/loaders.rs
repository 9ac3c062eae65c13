//! One loader per route: the only source of a page's data. Its JSON is
//! embedded in the server-rendered page and served again by the route-data
//! endpoint for client-side navigation, so the two never disagree.

use std::net::IpAddr;
use std::time::Duration;

use super::table::{PageId, RouteMatch};
use crate::content::Content;
pub use crate::contract::RouteData;
use crate::contract::{AboutData, BlogData, ContactData, PageData, PricingData, SuccessData, TermsData, WalletsData};
use crate::integrations::stripe::PaymentState;
use crate::messages::messages;
use crate::routes::api::stripe::check_session;
use crate::state::AppState;

/// What names a page in the page cache, worked out from the URL alone,
/// without reading any data: the URL it is rendered for (the path and only
/// the query parameters the page reads, so `?utm=...` variants share one
/// render), the version of the changing data it shows, and who may keep it.
#[derive(Debug, Clone)]
pub struct Plan {
    pub render_url: String,
    /// The team's or the price list's version on /about and /pricing, the
    /// day on /terms; 0 where the data is fixed for the process.
    pub version: u64,
    /// False for pages that carry what a visitor submitted, and for URLs
    /// not worth a place in the cache (unknown routes and filters).
    pub cacheable: bool,
    /// `Cache-Control` of the page (and of its route data).
    pub cache_control: &'static str,
}

/// A loaded route: its plan and its data.
#[derive(Debug)]
pub struct Loaded {
    pub plan: Plan,
    pub route: RouteData,
    /// Sent as `Retry-After` (a 429 page).
    pub retry_after: Option<Duration>,
}

/// How long shared caches (a CDN, nginx's `proxy_cache`) may keep a page,
/// by what its data is (the README's table, which a test compares with what
/// is sent). Browsers always revalidate (`max-age=0`; the ETag makes that a
/// 304). `stale-while-revalidate` lets a shared cache answer at once with
/// the copy it has while it fetches the next.
pub mod cache_control {
    /// Content compiled into the binary: it changes with a deploy.
    pub const CONTENT: &str = "public, max-age=0, s-maxage=300, stale-while-revalidate=3600";
    /// /about: the team, read again every `TEAM_REFRESH_SECS`.
    pub const TEAM: &str = "public, max-age=0, s-maxage=10, stale-while-revalidate=60";
    /// /pricing: Stripe's price list, read again every minute.
    pub const PRICES: &str = "public, max-age=0, s-maxage=60, stale-while-revalidate=600";
    /// /terms shows today's date.
    pub const DAILY: &str = "public, max-age=0, s-maxage=300, stale-while-revalidate=600";
    /// The same for everybody but not kept here (unknown routes, filters
    /// that match nothing): a cache must ask each time.
    pub const REVALIDATE: &str = "no-cache";
    /// A visitor's own data (the payment on /success), and error pages.
    pub const PRIVATE: &str = "private, no-store";
}

/// The plan of `path?query` on `route`: string work only, no data read
/// (every page view starts here, and a cache hit ends right after).
pub fn plan(state: &AppState, content: &Content, path: &str, query: Option<&str>, route: &RouteMatch) -> Plan {
    let params = parse_query(query);
    let param = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let mut kept: Vec<(&str, &str)> = Vec::new();
    let (version, cacheable, cache_control) = match route.page {
        PageId::Blog => match param("type").filter(|t| !t.is_empty() && *t != "All") {
            Some(t) => {
                kept.push(("type", t));
                // Any string is a filter (it matches no post), but only the
                // real types are worth a place in the cache.
                let real = content.blog.has_type(t);
                (0, real, if real { cache_control::CONTENT } else { cache_control::REVALIDATE })
            }
            None => (0, true, cache_control::CONTENT),
        },
        PageId::About => (state.team.version(), true, cache_control::TEAM),
        PageId::Success => {
            // A customer's own payment: never cached, never shared.
            if let Some(id) = param("session_id").filter(|s| !s.is_empty()) {
                kept.push(("session_id", id));
            }
            (0, false, cache_control::PRIVATE)
        }
        PageId::Pricing => {
            if let Some(b) = param("billing").filter(|b| *b == "monthly" || *b == "yearly") {
                kept.push(("billing", b));
            }
            (state.payments.prices_version(), true, cache_control::PRICES)
        }
        PageId::Terms => (day_number(), true, cache_control::DAILY),
        PageId::Contact => {
            if param("submitted") == Some("1") {
                kept.push(("submitted", "1"));
            }
            (0, true, cache_control::CONTENT)
        }
        // Every unknown URL is a new page: not kept, so a crawler walking
        // random paths cannot fill the cache.
        PageId::NotFound => (0, false, cache_control::REVALIDATE),
        _ => (0, true, cache_control::CONTENT),
    };
    let mut render_url = path.to_owned();
    if !kept.is_empty() {
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in kept {
            q.append_pair(k, v);
        }
        render_url.push('?');
        render_url.push_str(&q.finish());
    }
    Plan { render_url, version, cacheable, cache_control }
}

/// Runs the loader of `route` for `plan`. `client` is who asks: the success
/// page's Stripe lookups count against it.
pub async fn load(state: &AppState, content: &Content, route: &RouteMatch, plan: Plan, client: IpAddr) -> Loaded {
    state.metrics.loader_runs.get_or_create(&crate::metrics::PageLabel { page: route.page.name().to_owned() }).inc();
    // The query as the plan kept it: only what the page reads.
    let params = parse_query(plan.render_url.split_once('?').map(|(_, q)| q));
    let param = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let mut retry_after = None;

    // Exhaustive: a page added to content/routes.json does not compile
    // until it has its arm here.
    let (status, data) = match route.page {
        PageId::Blog => {
            // An unknown post id shows the list (spec section 2).
            let post = route.params.get("postId").and_then(|id| content.blog.get(id)).cloned();
            (200, PageData::Blog(BlogData { posts: content.blog.list(), post, kind: param("type") }))
        }
        PageId::Wallets => (200, PageData::Wallets(WalletsData { communities: content.communities.featured().to_vec() })),
        // The team as last read (an empty list while the database fails).
        PageId::About => (200, PageData::About(AboutData { team: state.team.get().value.to_vec() })),
        PageId::Success => match param("session_id") {
            None => (
                200,
                PageData::Success(SuccessData {
                    session_id: None,
                    state: PaymentState::Failed,
                    session: None,
                    error: Some(messages().no_session_id.clone()),
                    retry_after: None,
                }),
            ),
            Some(id) => {
                let verdict = check_session(state, &id, client).await;
                // The failure state is the page's answer (200), except
                // for a client over its limit, who is told to wait.
                let status = if verdict.status == axum::http::StatusCode::TOO_MANY_REQUESTS { 429 } else { 200 };
                retry_after = verdict.retry_after;
                let session = verdict.session.as_deref().filter(|_| verdict.state != PaymentState::Failed).cloned();
                (
                    status,
                    PageData::Success(SuccessData {
                        session_id: Some(id),
                        state: verdict.state,
                        session,
                        error: verdict.reason.map(str::to_owned),
                        retry_after: verdict.retry_after.map(|d| d.as_secs().max(1)),
                    }),
                )
            }
        },
        PageId::Pricing => match state.payments.price_list().await.value.as_ref() {
            Some(Ok(prices)) => (200, PageData::Pricing(PricingData { prices: prices.to_vec(), error: false })),
            // Logged where it was read (payments.rs).
            _ => (200, PageData::Pricing(PricingData { prices: Vec::new(), error: true })),
        },
        PageId::Terms => (200, PageData::Terms(TermsData { today: date_of_day(plan.version) })),
        PageId::Contact => (200, PageData::Contact(ContactData { submitted: param("submitted").is_some(), error: None, values: None })),
        PageId::NotFound => (404, PageData::NotFound),
        PageId::Home => (200, PageData::Home),
        PageId::Services => (200, PageData::Services),
        PageId::Community => (200, PageData::Community),
        PageId::NfcWallet => (200, PageData::NfcWallet),
        PageId::MobileApp => (200, PageData::MobileApp),
        PageId::DiscordWallet => (200, PageData::DiscordWallet),
        PageId::Ctzn => (200, PageData::Ctzn),
        PageId::Privacy => (200, PageData::Privacy),
        PageId::Cancel => (200, PageData::Cancel),
    };
    Loaded { plan, route: RouteData { status, data }, retry_after }
}

fn parse_query(query: Option<&str>) -> Vec<(String, String)> {
    form_urlencoded::parse(query.unwrap_or("").as_bytes()).into_owned().collect()
}

/// Days since 1970-01-01 (UTC): the terms page's version.
fn day_number() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    now.as_secs() / 86_400
}

/// The date `day` days after 1970-01-01, as `YYYY-MM-DD`; the terms page
/// shows today's.
fn date_of_day(day: u64) -> String {
    let d = time::OffsetDateTime::UNIX_EPOCH.date() + time::Duration::days(day as i64);
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terms_date_is_the_day_of_its_version() {
        assert_eq!(date_of_day(0), "1970-01-01");
        assert_eq!(date_of_day(20_415), "2025-11-23");
        let today = time::OffsetDateTime::now_utc().date();
        assert_eq!(date_of_day(day_number()), format!("{:04}-{:02}-{:02}", today.year(), u8::from(today.month()), today.day()));
    }
}
