//! Pages made for one request, as responses: shared by the page handler
//! and the contact form's plain post (which gets the contact page back);
//! and the `Retry-After` of a response that asks for a wait.

use std::time::Duration;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::content::routes::RouteMatch;
use crate::pages::make::{self, Failed};
use crate::pages::Loaded;
use crate::site::Site;
use crate::state::AppState;

/// A page made for this request alone, uncompressed: the compression layer
/// deals with it.
pub async fn uncached(
    state: &AppState,
    site: &Site,
    route: &RouteMatch,
    loaded: Loaded,
) -> Response {
    let mut res = match make::uncached(state, site, route, &loaded).await {
        Ok((status, doc)) => {
            let mut res = html_response(status, doc.html, loaded.plan.cache_control);
            res.headers_mut().insert(
                header::CONTENT_SECURITY_POLICY,
                site.security.page_policy(&doc.style_source),
            );
            res
        }
        Err(failed) => failed.into_response(),
    };
    set_retry_after(&mut res, loaded.retry_after);
    res
}

/// A page that could not be made, as its error page: never stored by a
/// cache, and a 503 asks to come back in a second. Every request that
/// waited on the same render gets it (hence by reference).
impl IntoResponse for Failed {
    fn into_response(self) -> Response {
        let mut res = html_response(self.status, self.html, "no-store");
        if let Some(csp) = self.csp {
            res.headers_mut()
                .insert(header::CONTENT_SECURITY_POLICY, csp);
        }
        if self.retry_soon {
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        res
    }
}

impl IntoResponse for &Failed {
    fn into_response(self) -> Response {
        self.clone().into_response()
    }
}

fn html_response(status: u16, html: String, cache_control: &'static str) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = [
        (
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        ),
        (
            header::CACHE_CONTROL,
            HeaderValue::from_static(cache_control),
        ),
    ];
    (status, headers, html).into_response()
}

/// Sets `Retry-After` (whole seconds, at least 1) when there is a wait:
/// API errors and pages (a 429 success page, the contact page) alike.
pub fn set_retry_after(res: &mut Response, wait: Option<Duration>) {
    if let Some(wait) = wait {
        res.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(wait.as_secs().max(1)),
        );
    }
}
