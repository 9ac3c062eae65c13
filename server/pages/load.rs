//! The loaders: the only source of a page's data. Their JSON is embedded in
//! the server-rendered page and served again by the route-data endpoint for
//! client-side navigation, so the two never disagree. A page without data
//! (the table names no `data` type) has no loader.

use std::net::IpAddr;
use std::time::Duration;

use super::plan::Plan;
use crate::content::routes::{PageId, RouteMatch};
use crate::content::Content;
use crate::contract::{
    AboutData, BlogData, ContactData, DataPage, PageData, PricingData, RouteData, SuccessData,
    TermsData, WalletsData,
};
use crate::intake::{FieldError, IntroForm};
use crate::messages::messages;
use crate::payments::sessions::Miss;
use crate::payments::stripe::PaymentState;
use crate::state::AppState;

/// A loaded route: its plan and its data.
#[derive(Debug)]
pub struct Loaded {
    pub plan: Plan,
    pub route: RouteData,
    /// Sent as `Retry-After` (a 429 page).
    pub retry_after: Option<Duration>,
}

/// Runs the loader of `route` for `plan`. `client` is who asks: the success
/// page's Stripe lookups count against it.
pub async fn load(
    state: &AppState,
    content: &Content,
    route: &RouteMatch,
    plan: Plan,
    client: IpAddr,
) -> Loaded {
    let page_label = crate::metrics::PageLabel {
        page: route.page.name().to_owned(),
    };
    state.metrics.loader_runs.with(&page_label, |c| c.inc());
    let page = match PageData::without_loader(route.page) {
        Ok(data) => {
            let status = if route.page == PageId::NotFound {
                404
            } else {
                200
            };
            return Loaded {
                plan,
                route: RouteData { status, data },
                retry_after: None,
            };
        }
        Err(page) => page,
    };
    let mut retry_after = None;
    // Exhaustive: a page given data in content/routes.json does not compile
    // until it has its arm here.
    let (status, data) = match page {
        DataPage::Blog => {
            // An id that is no post published now (unknown, a draft, or
            // not yet out) answers 404 and shows the list (spec section
            // 2). The id is the post route's one path parameter.
            let id = route.params.values().next();
            let post = id.and_then(|id| content.blog.get(id));
            (
                if id.is_some() && post.is_none() {
                    404
                } else {
                    200
                },
                PageData::Blog(BlogData {
                    posts: content.blog.list(),
                    post,
                    kind: plan.only_param().map(str::to_owned),
                }),
            )
        }
        DataPage::Wallets => (
            200,
            PageData::Wallets(WalletsData {
                communities: content.communities.featured().to_vec(),
            }),
        ),
        // The team as last read (an empty list while the database fails).
        DataPage::About => (
            200,
            PageData::About(AboutData {
                team: state.team.get().value.to_vec(),
            }),
        ),
        DataPage::Success => match plan.only_param().map(str::to_owned) {
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
                let verdict = state.payments.verdict(&state.db, &id, client).await;
                retry_after = verdict.retry_after();
                // The failure state is the page's answer (200), except
                // for a client over its limit, who is told to wait.
                let status = if matches!(verdict.miss, Some(Miss::RateLimited(_))) {
                    state.metrics.rate_limited.inc();
                    429
                } else {
                    200
                };
                let session = verdict
                    .session
                    .as_deref()
                    .filter(|_| verdict.state != PaymentState::Failed)
                    .cloned();
                (
                    status,
                    PageData::Success(SuccessData {
                        session_id: Some(id),
                        state: verdict.state,
                        session,
                        error: verdict.reason.map(str::to_owned),
                        retry_after: retry_after.map(|d| d.as_secs().max(1)),
                    }),
                )
            }
        },
        DataPage::Pricing => match state.payments.price_list().await.value.as_ref() {
            Some(Ok(prices)) => (
                200,
                PageData::Pricing(PricingData {
                    prices: prices.to_vec(),
                    error: false,
                }),
            ),
            // Logged where it was read (payments).
            _ => (
                200,
                PageData::Pricing(PricingData {
                    prices: Vec::new(),
                    error: true,
                }),
            ),
        },
        DataPage::Terms => (
            200,
            PageData::Terms(TermsData {
                // A daily page's version is its day (`plan::version_now`).
                today: date_of_day(plan.version),
            }),
        ),
        DataPage::Contact => (
            200,
            PageData::Contact(ContactData {
                submitted: plan.only_param().is_some(),
                error: None,
                values: None,
                fields: Vec::new(),
            }),
        ),
    };
    Loaded {
        plan,
        route: RouteData { status, data },
        retry_after,
    }
}

/// The contact page (at `path`) for a form post that was refused: `status`
/// and `error` say why, `fields` are marked with what to fix, and the form
/// is filled in again with what the visitor typed.
pub fn contact_refused(
    path: &str,
    status: u16,
    error: String,
    fields: Vec<FieldError>,
    form: IntroForm,
    retry_after: Option<Duration>,
) -> Loaded {
    Loaded {
        plan: Plan::private(path),
        route: RouteData {
            status,
            data: PageData::Contact(ContactData {
                submitted: false,
                error: Some(error),
                values: Some(form),
                fields,
            }),
        },
        retry_after,
    }
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
        assert_eq!(
            date_of_day(super::super::plan::day_number()),
            format!(
                "{:04}-{:02}-{:02}",
                today.year(),
                u8::from(today.month()),
                today.day()
            )
        );
    }
}
