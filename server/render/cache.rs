//! Rendered pages, cached under everything that changes them: the site they
//! were rendered from (its generation: `dev` swaps in a new one on every
//! change), the URL the page was rendered for (the path plus only the query
//! parameters its loader reads) and the version of the changing data it
//! shows (the team's, the price list's, the day's; see
//! [`crate::pages::plan`]). All three are known before any data is
//! read, so a hit costs one lookup; new data is a new version, so nothing
//! needs invalidating.
//!
//! An entry holds the finished response: the document and its route data
//! (what `/api/route-data` answers for client-side navigation), each in
//! every encoding with a strong ETag, and the `Cache-Control` value.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwapOption;
use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use http_body_util::Full;
use moka::future::Cache;
use rustc_hash::FxBuildHasher;

use crate::assets::{compressed, preferred_encoding, Encoding};
use crate::content::routes::{CachePolicy, PageId};
use crate::metrics::{Histogram, Metrics};
use crate::telemetry::REQUEST_ID_HEADER;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PageKey {
    pub generation: u64,
    pub url: String,
    pub version: u64,
}

/// One body in each encoding, with a strong ETag per encoding (the bytes
/// differ, so the tags must), and the finished headers of each answer: the
/// body in that encoding, or a 304 for it.
#[derive(Debug)]
pub struct Encoded {
    /// Indexed by `encoding as usize`, as `etags` and `heads` are (see
    /// [`ENCODINGS`]).
    bodies: [Bytes; 3],
    etags: [HeaderValue; 3],
    /// Per encoding, the headers of a 200 and of a 304 (`heads[i][1]`): the
    /// page's, its ETag, its encoding (not on a 304), and a request id for
    /// `http::observe` to fill in ([`REQUEST_ID_HEADER`]), so an answer is one copy
    /// of a map that has room for everything it carries.
    heads: [[HeaderMap; 2]; 3],
}

/// What each encoding adds to a kept answer, in [`Encoding`]'s order: its
/// `Content-Encoding` and its ETag's suffix.
const ENCODINGS: [(Option<&str>, &str); 3] =
    [(Some("br"), "-br"), (Some("gzip"), "-gz"), (None, "")];
const _: () = assert!(
    Encoding::Br as usize == 0 && Encoding::Gzip as usize == 1 && Encoding::Identity as usize == 2
);

impl Encoded {
    /// Compresses once ([`compressed`]), at a cost paid once per page
    /// rather than per visit (on a blocking thread: see `pages::make`).
    /// `headers`: what every answer of it carries.
    pub fn new(body: Vec<u8>, headers: &HeaderMap) -> Encoded {
        let (br, gzip) = compressed(&body);
        let mut h = std::collections::hash_map::DefaultHasher::new();
        body.hash(&mut h);
        let tag = |suffix: &str| {
            HeaderValue::from_str(&format!("\"{:016x}{suffix}\"", h.finish()))
                .expect("an etag is ASCII")
        };
        let etags = ENCODINGS.map(|(_, suffix)| tag(suffix));
        let head = |(encoding, _): (Option<&'static str>, &str),
                    etag: &HeaderValue,
                    not_modified: bool| {
            let mut h = HeaderMap::with_capacity(headers.len() + 3);
            h.extend(headers.iter().map(|(k, v)| (k.clone(), v.clone())));
            h.insert(header::ETAG, etag.clone());
            if let (Some(encoding), false) = (encoding, not_modified) {
                h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding));
            }
            h.insert(REQUEST_ID_HEADER, HeaderValue::from_static(""));
            h
        };
        let heads = [0, 1, 2].map(|i| {
            [
                head(ENCODINGS[i], &etags[i], false),
                head(ENCODINGS[i], &etags[i], true),
            ]
        });
        Encoded {
            bodies: [br.into(), gzip.into(), body.into()],
            etags,
            heads,
        }
    }

    /// The bytes of its bodies, every encoding.
    pub fn bytes(&self) -> usize {
        self.bodies.iter().map(Bytes::len).sum()
    }

    /// The strong ETag of the identity body.
    pub fn etag(&self) -> &str {
        self.etags[Encoding::Identity as usize]
            .to_str()
            .expect("an etag is ASCII")
    }

    pub fn identity(&self) -> &Bytes {
        &self.bodies[Encoding::Identity as usize]
    }

    /// The response in the encoding the client prefers, or 304 when the
    /// client's copy (`If-None-Match`) is this one. Nothing is formatted;
    /// the headers are one copy of a finished map, the body is shared.
    fn respond(&self, status: StatusCode, request: &HeaderMap) -> FullResponse {
        let i = preferred_encoding(request) as usize;
        let etag = self.etags[i].as_bytes();
        let current = request.get(header::IF_NONE_MATCH).is_some_and(|v| {
            v.as_bytes()
                .split(|b| *b == b',')
                .any(|t| matches_etag(t, etag))
        });
        let mut res = if current {
            let mut res = FullResponse::new(Full::default());
            *res.status_mut() = StatusCode::NOT_MODIFIED;
            res
        } else {
            let mut res = FullResponse::new(Full::new(self.bodies[i].clone()));
            *res.status_mut() = status;
            res
        };
        *res.headers_mut() = self.heads[i][usize::from(current)].clone();
        res
    }
}

/// One entity tag of an `If-None-Match` list against ours: the weak
/// comparison RFC 9110 asks for there (`W/` is ignored), or `*`.
fn matches_etag(candidate: &[u8], ours: &[u8]) -> bool {
    let t = candidate.trim_ascii();
    t == b"*" || t.strip_prefix(b"W/").unwrap_or(t) == ours
}

/// A finished page, ready to send in any encoding without more work.
#[derive(Debug)]
pub struct CachedPage {
    pub status: StatusCode,
    pub html: Encoded,
    /// The route data embedded in the page, as `/api/route-data` sends it.
    /// Each carries its type, Cache-Control, Vary and the security headers
    /// (the same for every page of a site, and an entry belongs to one
    /// site: its key holds the site's generation).
    pub data: Encoded,
}

impl CachedPage {
    /// `security`: the security headers of the site it was rendered from;
    /// `page_policy`: the page's own Content-Security-Policy, which allows
    /// its inline CSS (the route data keeps the site's).
    pub fn new(
        status: u16,
        cache_control: &'static str,
        html: String,
        route_json: String,
        security: &HeaderMap,
        page_policy: HeaderValue,
    ) -> CachedPage {
        let headers = |content_type: &'static str| {
            let mut h = HeaderMap::with_capacity(security.len() + 3);
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            h.insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static(cache_control),
            );
            h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
            h.extend(security.iter().map(|(k, v)| (k.clone(), v.clone())));
            h
        };
        let mut page = headers("text/html; charset=utf-8");
        page.insert(header::CONTENT_SECURITY_POLICY, page_policy);
        CachedPage {
            status: StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
            html: Encoded::new(html.into_bytes(), &page),
            data: Encoded::new(route_json.into_bytes(), &headers("application/json")),
        }
    }

    /// The bytes it keeps: the page and its route data, every encoding.
    pub fn bytes(&self) -> usize {
        self.html.bytes() + self.data.bytes()
    }

    /// The page, for a request with these headers, its body as kept. Its
    /// headers are complete: the security headers are in (see
    /// [`crate::http::page_handler`]).
    pub fn page(&self, request: &HeaderMap) -> FullResponse {
        self.html.respond(self.status, request)
    }

    /// [`CachedPage::page`] as a response of the router.
    pub fn page_response(&self, request: &HeaderMap) -> Response {
        self.page(request).map(Body::new)
    }

    /// Its route data (the status is the route's, as the page's is).
    pub fn data_response(&self, request: &HeaderMap) -> Response {
        self.data.respond(self.status, request).map(Body::new)
    }
}

/// A response whose whole body is in memory: a cached page's answer, its
/// body shared with the cache, not boxed.
pub type FullResponse = axum::http::Response<Full<Bytes>>;

pub type PageCache = Cache<PageKey, Arc<CachedPage>>;

/// The pages of one site's page list ([`crate::content::Content::page_paths`])
/// as last made, found by the request's path alone: what the page pipeline
/// answers from first ([`crate::pages::latest_for_path`]). One slot per path, made with the
/// site, so nothing a visitor asks for adds one; a slot holds what the page
/// cache last gave for the path, with the version of the data it shows, and
/// a page out of date (another version now) is left to the page cache.
pub struct PagesByPath {
    slots: HashMap<Box<str>, ArcSwapOption<LatestPage>, FxBuildHasher>,
}

/// The page last made for one of the site's paths, in its slot.
pub struct LatestPage {
    pub page: Arc<CachedPage>,
    pub id: PageId,
    /// What its data is (the route's cache policy), and which version of it.
    pub policy: CachePolicy,
    pub version: u64,
    /// Its views' series in the request metrics, its status's and 304's,
    /// each found on its first use (a series appears with its first request,
    /// as the router's do).
    views: [OnceLock<Histogram>; 2],
}

impl LatestPage {
    pub fn new(page: Arc<CachedPage>, id: PageId, policy: CachePolicy, version: u64) -> LatestPage {
        LatestPage {
            page,
            id,
            policy,
            version,
            views: Default::default(),
        }
    }

    /// Counts a view of it answered with `status` that took `seconds`.
    pub fn count_view(&self, metrics: &Metrics, status: StatusCode, seconds: f64) {
        let i = match status {
            s if s == self.page.status => 0,
            StatusCode::NOT_MODIFIED => 1,
            other => return metrics.observe_request(self.id.name(), other.as_u16(), seconds),
        };
        self.views[i]
            .get_or_init(|| metrics.request_series(self.id.name(), status.as_u16()))
            .observe(seconds);
    }
}

impl PagesByPath {
    pub fn new(paths: impl IntoIterator<Item = String>) -> PagesByPath {
        PagesByPath {
            slots: paths
                .into_iter()
                .map(|p| (p.into_boxed_str(), ArcSwapOption::empty()))
                .collect(),
        }
    }

    /// The page last kept for `path`, if it is one of the site's.
    pub fn get(&self, path: &str) -> Option<arc_swap::Guard<Option<Arc<LatestPage>>>> {
        self.slots.get(path).map(ArcSwapOption::load)
    }

    /// Keeps `page` for `url` when the URL is a path of the site's list (a
    /// URL with a query has no slot), unless the slot holds it already (a
    /// page cache hit for `/pricing?utm=...` keeps `/pricing` again).
    pub fn remember(&self, url: &str, page: LatestPage) {
        let Some(slot) = self.slots.get(url) else {
            return;
        };
        let held = slot.load();
        if held
            .as_ref()
            .is_some_and(|h| Arc::ptr_eq(&h.page, &page.page) && h.version == page.version)
        {
            return;
        }
        slot.store(Some(Arc::new(page)));
    }
}

pub fn new_cache(capacity: u64) -> PageCache {
    Cache::builder()
        .max_capacity(capacity)
        .time_to_idle(std::time::Duration::from_secs(60 * 60))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_sites_own_paths_have_a_slot() {
        let by_path = PagesByPath::new(["/".to_owned(), "/about".to_owned()]);
        let page = || {
            Arc::new(CachedPage::new(
                200,
                "no-cache",
                "<p>hi</p>".into(),
                "{}".into(),
                &HeaderMap::new(),
                HeaderValue::from_static("default-src 'none'"),
            ))
        };
        assert!(
            by_path.get("/about").is_some_and(|slot| slot.is_none()),
            "a slot, empty until a page is kept"
        );
        by_path.remember(
            "/about",
            LatestPage::new(page(), PageId::About, CachePolicy::Team, 7),
        );
        assert_eq!(
            by_path.get("/about").unwrap().as_ref().map(|p| p.version),
            Some(7)
        );
        // A URL with a query, or a path outside the list, gets no slot.
        by_path.remember(
            "/about?x=1",
            LatestPage::new(page(), PageId::About, CachePolicy::Team, 8),
        );
        by_path.remember(
            "/ab%6Fut",
            LatestPage::new(page(), PageId::About, CachePolicy::Team, 8),
        );
        assert!(by_path.get("/about?x=1").is_none() && by_path.get("/ab%6Fut").is_none());
        assert_eq!(
            by_path.get("/about").unwrap().as_ref().map(|p| p.version),
            Some(7)
        );
        // The page it holds already, kept again: the slot is left as it is.
        let held = by_path.get("/about").unwrap().as_ref().unwrap().clone();
        by_path.remember(
            "/about",
            LatestPage::new(held.page.clone(), PageId::About, CachePolicy::Team, 7),
        );
        assert!(Arc::ptr_eq(
            by_path.get("/about").unwrap().as_ref().unwrap(),
            &held
        ));
    }

    #[test]
    fn every_answer_has_a_slot_for_its_request_id_and_the_headers_of_its_encoding() {
        let page = CachedPage::new(
            200,
            "no-cache",
            "<p>hello</p>".repeat(50),
            "{}".into(),
            &HeaderMap::new(),
            HeaderValue::from_static("default-src 'none'"),
        );
        for (encoding, expected) in [
            ("br", Some("br")),
            ("gzip", Some("gzip")),
            ("identity", None),
        ] {
            let res = page.page(&request(&[("accept-encoding", encoding)]));
            assert_eq!(
                res.headers()
                    .get("content-encoding")
                    .map(|v| v.to_str().unwrap()),
                expected
            );
            assert!(res.headers().contains_key(REQUEST_ID_HEADER), "{encoding}");
            let tag = res.headers()["etag"].to_str().unwrap().to_owned();
            let again = page.page(&request(&[
                ("accept-encoding", encoding),
                ("if-none-match", &tag),
            ]));
            assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
            assert!(
                again.headers().contains_key(REQUEST_ID_HEADER)
                    && again.headers().get("content-encoding").is_none()
            );
        }
    }

    fn request(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn each_encoding_has_its_own_strong_etag_and_a_current_copy_is_a_304() {
        let mut security = HeaderMap::new();
        security.insert("x-frame-options", HeaderValue::from_static("DENY"));
        let page = CachedPage::new(
            200,
            "no-cache",
            "<p>hello</p>".repeat(50),
            "{}".into(),
            &security,
            HeaderValue::from_static("default-src 'none'"),
        );
        let br = page.page_response(&request(&[("accept-encoding", "gzip, br")]));
        let plain = page.page_response(&HeaderMap::new());
        let (br_tag, plain_tag) = (
            br.headers()["etag"].to_str().unwrap(),
            plain.headers()["etag"].to_str().unwrap(),
        );
        assert!(
            !br_tag.starts_with("W/") && br_tag.ends_with("-br\""),
            "{br_tag}"
        );
        assert_ne!(br_tag, plain_tag);
        assert_eq!(br.headers()["content-encoding"], "br");
        assert_eq!(br.headers()["x-frame-options"], "DENY");
        assert_eq!(br.headers()["cache-control"], "no-cache");
        let again = page.page_response(&request(&[
            ("accept-encoding", "br"),
            ("if-none-match", &format!("\"x\", {br_tag}")),
        ]));
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        assert!(again.headers().get("content-encoding").is_none());
        assert_eq!(again.headers()["etag"], br_tag);
        assert_eq!(again.headers()["vary"], "accept-encoding");
        // The brotli copy's tag does not validate the plain body.
        let other = page.page_response(&request(&[("if-none-match", br_tag)]));
        assert_eq!(other.status(), StatusCode::OK);
    }
}
