//! The spec's route table (`content/routes.json`, shared with the client):
//! which page a path shows, the path's parameters, and each route's facts
//! (how long caches keep it, whether the sitemap lists it and search
//! engines index it). Every other part asks these facts here instead of
//! keeping a list of pages of its own.
//!
//! A page's name is `page.rs`, a route's facts `facts.rs`; the table
//! itself, read and matched, and the server's own segments are here.

mod facts;
mod page;

use std::collections::HashMap;
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use serde::Deserialize;

use super::error::{ContentError, ROUTES_FILE};
pub use facts::{CachePolicy, NamedValues, ParamValues, QueryParam, RouteFacts};
pub use page::{DataPage, PageId};

/// Why a route's `"data"` is not what this build's loaders give its page:
/// a page with data (new, or its type changed) needs the compiler.
fn data_mismatch(page: PageId, table: Option<&str>, compiled: Option<DataPage>) -> String {
    let build = "a page's data is compiled in: after adding its loader, build again (cargo build --release) and start dev or serve from the new binary (docs/content.md)";
    match (table, compiled) {
        (Some(t), None) => format!(
            "page {page:?} has \"data\": {t:?}, but this build has no loader for it; {build}"
        ),
        (t, Some(c)) => format!(
            "page {page:?} has {}, but this build's loader gives it {:?}; {build}",
            t.map_or("no \"data\"".to_owned(), |t| format!("\"data\": {t:?}")),
            c.data_type()
        ),
        (None, None) => unreachable!("a page without data matches"),
    }
}

/// First path segments the server answers itself, never with a page: the
/// API, the assets, the SEO files, health and metrics, and `dev`'s own
/// files. A route may not start with one (the dispatcher, see
/// [`crate::http::dispatch`], relies on it; `http::tests` checks the list against
/// the router).
pub const SERVER_SEGMENTS: [&str; 10] = [
    "api",
    "assets",
    "__dev",
    "sitemap.xml",
    "robots.txt",
    "feed.xml",
    "site.webmanifest",
    "healthz",
    "readyz",
    "metrics",
];

/// Whether `path` starts with one of [`SERVER_SEGMENTS`]: the one test of
/// whose a path is, for the dispatcher, the router's registrations and the
/// route table's own check.
pub fn is_the_servers(path: &str) -> bool {
    split(path)
        .next()
        .is_some_and(|first| SERVER_SEGMENTS.contains(&first))
}

#[derive(Deserialize)]
struct TableFile {
    routes: Vec<RouteDef>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteDef {
    path: String,
    page: String,
    /// The type of the page's loader data (build.rs compiles the loaders
    /// from it; the table is held to them here).
    #[serde(default)]
    data: Option<String>,
    #[serde(default)]
    cache: CachePolicy,
    #[serde(default = "yes")]
    sitemap: bool,
    #[serde(default = "yes")]
    index: bool,
    #[serde(default)]
    query: Vec<QueryParam>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone)]
enum Segment {
    Literal(String),
    Param(String),
}

#[derive(Debug, Clone)]
struct Route {
    segments: Vec<Segment>,
    page: PageId,
    facts: RouteFacts,
    query: Arc<[QueryParam]>,
}

/// Parsed from `content/routes.json` with the rest of the content
/// ([`crate::content::Content`]).
#[derive(Debug, Clone, Default)]
pub struct RouteTable {
    routes: Vec<Route>,
}

/// A path matched against the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteMatch {
    pub page: PageId,
    /// Path parameters, percent-decoded.
    pub params: HashMap<String, String>,
    pub facts: RouteFacts,
    /// The query parameters its page reads.
    pub query: Arc<[QueryParam]>,
}

impl RouteMatch {
    pub fn is_not_found(&self) -> bool {
        self.page == PageId::NotFound
    }
}

impl RouteTable {
    pub fn parse(json: &str) -> Result<RouteTable, ContentError> {
        let file: TableFile =
            serde_json::from_str(json).map_err(|e| ContentError::json(ROUTES_FILE, &e))?;
        if let Some(taken) = file.routes.iter().find(|r| is_the_servers(&r.path)) {
            return Err(ContentError::new(
                ROUTES_FILE,
                format!(
                    "the path \"{}\" is the server's own (no route may start with /{})",
                    taken.path,
                    SERVER_SEGMENTS.join(", /")
                ),
            ));
        }
        let routes = file
            .routes
            .into_iter()
            .map(|r| {
                let page = PageId::from_name(&r.page).ok_or_else(|| {
                    ContentError::new(
                        ROUTES_FILE,
                        format!(
                            "page {:?} must be a name like \"NfcWallet\" (A-Z first, then letters and digits)",
                            r.page
                        ),
                    )
                })?;
                // A page without data is content; the pages with data and
                // their types are compiled in (their loaders).
                let compiled = DataPage::of(page);
                if compiled.map(DataPage::data_type) != r.data.as_deref() {
                    return Err(ContentError::new(ROUTES_FILE, data_mismatch(page, r.data.as_deref(), compiled)));
                }
                let segments = split(&r.path)
                    .map(|s| match s.strip_prefix(':') {
                        Some(name) => Segment::Param(name.to_owned()),
                        None => Segment::Literal(s.to_owned()),
                    })
                    .collect();
                if page == PageId::NotFound {
                    return Err(ContentError::new(ROUTES_FILE, "NotFound is the page of every path the table does not match; no route may name it"));
                }
                // A page without a loader cannot tell a value that exists
                // from one that does not: every value would answer 200 and
                // take its own place in the page cache.
                if compiled.is_none() {
                    if r.path.split('/').any(|s| s.starts_with(':')) {
                        return Err(ContentError::new(ROUTES_FILE, format!("page {page:?} has a path parameter ({}) but no \"data\": only a page with a loader can say which values exist", r.path)));
                    }
                    if let Some(open) = r.query.iter().find(|q| q.values == ParamValues::Any) {
                        return Err(ContentError::new(ROUTES_FILE, format!("page {page:?} reads the query parameter {:?} with any value but has no \"data\": give it \"values\" (a closed list)", open.name)));
                    }
                }
                let facts = RouteFacts { cache: r.cache, listed: r.sitemap, indexed: r.index };
                Ok(Route { segments, page, facts, query: r.query.into() })
            })
            .collect::<Result<_, ContentError>>()?;
        Ok(RouteTable { routes })
    }

    /// The path and query parameters of `page`'s first route without path
    /// parameters (`/contact`), if it has one: where the server can send a
    /// visitor to that page.
    pub fn fixed(&self, page: PageId) -> Option<(String, &[QueryParam])> {
        let route = self.routes.iter().find(|r| {
            r.page == page && r.segments.iter().all(|s| matches!(s, Segment::Literal(_)))
        })?;
        let path: String = route
            .segments
            .iter()
            .filter_map(|s| match s {
                Segment::Literal(l) => Some(format!("/{l}")),
                Segment::Param(_) => None,
            })
            .collect();
        let path = if path.is_empty() {
            "/".to_owned()
        } else {
            path
        };
        Some((path, &route.query))
    }

    /// Every concrete path of the table, with `fill` giving the values of a
    /// page's path parameter (for the blog's `/blog/:postId`, the post ids).
    pub fn concrete_paths(&self, fill: impl Fn(PageId) -> Vec<String>) -> Vec<String> {
        let mut out = Vec::new();
        for r in &self.routes {
            let mut paths = vec![String::new()];
            for seg in &r.segments {
                let values = match seg {
                    Segment::Literal(l) => vec![l.clone()],
                    Segment::Param(_) => fill(r.page),
                };
                paths = paths
                    .iter()
                    .flat_map(|p| values.iter().map(move |v| format!("{p}/{v}")))
                    .collect();
            }
            out.extend(
                paths
                    .into_iter()
                    .map(|p| if p.is_empty() { "/".to_owned() } else { p }),
            );
        }
        out
    }

    /// The page for a (still percent-encoded) path. A trailing slash is not
    /// part of the match; callers redirect such paths to their canonical form.
    pub fn find(&self, path: &str) -> RouteMatch {
        let parts: Vec<&str> = split(path).collect();
        'routes: for route in &self.routes {
            if route.segments.len() != parts.len() {
                continue;
            }
            let mut params = HashMap::new();
            for (seg, part) in route.segments.iter().zip(&parts) {
                match seg {
                    Segment::Literal(lit) if lit == part => {}
                    Segment::Literal(_) => continue 'routes,
                    Segment::Param(name) => {
                        let Ok(value) = percent_decode_str(part).decode_utf8() else {
                            continue 'routes;
                        };
                        params.insert(name.clone(), value.into_owned());
                    }
                }
            }
            return RouteMatch {
                page: route.page,
                params,
                facts: route.facts,
                query: route.query.clone(),
            };
        }
        RouteMatch {
            page: PageId::NotFound,
            params: HashMap::new(),
            facts: RouteFacts::NOT_FOUND,
            query: Arc::new([]),
        }
    }
}

/// Path segments; an empty segment (`//`) is kept so it never matches.
fn split(path: &str) -> impl Iterator<Item = &str> {
    let trimmed = path.strip_prefix('/').unwrap_or(path);
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    trimmed.split('/').filter(move |_| !trimmed.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> RouteTable {
        RouteTable::parse(include_str!("../../content/routes.json")).unwrap()
    }

    #[test]
    fn matches_the_spec_routes() {
        let t = table();
        assert_eq!(t.find("/").page, PageId::Home);
        assert_eq!(t.find("/wallets").page, PageId::Wallets);
        assert_eq!(t.find("/blog").page, PageId::Blog);
        let post = t.find("/blog/nfc-integration");
        assert_eq!(post.page, PageId::Blog);
        assert_eq!(post.params["postId"], "nfc-integration");
        assert_eq!(t.find("/blog/a%20b").params["postId"], "a b");
        assert!(t.find("/blog/a/b").is_not_found());
        assert!(t.find("/nope").is_not_found());
        assert!(t.find("//wallets").is_not_found());
        assert!(t.find("/Wallets").is_not_found());
    }

    #[test]
    fn the_first_segment_alone_says_whose_a_path_is() {
        for path in [
            "/api/route-data",
            "/assets/app.css",
            "/robots.txt",
            "/metrics",
            "/api",
            "/api/",
        ] {
            assert!(is_the_servers(path), "{path}");
        }
        for path in [
            "/",
            "/about",
            "/apis",
            "/blog/api",
            "/assetsx/y",
            "//api",
            "",
        ] {
            assert!(!is_the_servers(path), "{path}");
        }
    }

    #[test]
    fn a_route_may_not_take_a_path_the_server_answers_itself() {
        let e = RouteTable::parse(
            r#"{"routes": [{"path": "/", "page": "Home"}, {"path": "/api/x", "page": "X"}]}"#,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("content/routes.json: the path \"/api/x\" is the server's own"),
            "{e}"
        );
        assert!(
            RouteTable::parse(r#"{"routes": [{"path": "/metrics", "page": "Home"}]}"#).is_err()
        );
        assert!(RouteTable::parse(r#"{"routes": [{"path": "/apis", "page": "Home"}]}"#).is_ok());
    }

    #[test]
    fn moving_a_page_is_content_and_no_route_names_not_found() {
        let moved =
            RouteTable::parse(r#"{"routes": [{"path": "/start", "page": "Home"}]}"#).unwrap();
        assert_eq!(moved.find("/start").page, PageId::Home);
        let e = RouteTable::parse(r#"{"routes": [{"path": "/gone", "page": "NotFound"}]}"#)
            .unwrap_err();
        assert!(e.to_string().contains("no route may name it"), "{e}");
    }

    #[test]
    fn each_route_carries_the_facts_the_table_gives_it() {
        let t = table();
        let facts = |path: &str| t.find(path).facts;
        assert_eq!(
            facts("/"),
            RouteFacts {
                cache: CachePolicy::Content,
                listed: true,
                indexed: true
            }
        );
        assert_eq!(facts("/about").cache, CachePolicy::Team);
        assert_eq!(facts("/pricing").cache, CachePolicy::Prices);
        assert_eq!(facts("/terms").cache, CachePolicy::Daily);
        assert_eq!(
            facts("/success"),
            RouteFacts {
                cache: CachePolicy::Private,
                listed: false,
                indexed: true
            }
        );
        assert_eq!(
            facts("/cancel"),
            RouteFacts {
                cache: CachePolicy::Content,
                listed: false,
                indexed: true
            }
        );
        assert_eq!(facts("/no-such-page"), RouteFacts::NOT_FOUND);
        let moved = RouteTable::parse(r#"{"routes": [{"path": "/x", "page": "Home", "cache": "daily", "sitemap": false, "index": false}]}"#).unwrap();
        assert_eq!(
            moved.find("/x").facts,
            RouteFacts {
                cache: CachePolicy::Daily,
                listed: false,
                indexed: false
            }
        );
        let e = RouteTable::parse(
            r#"{"routes": [{"path": "/x", "page": "Home", "cache": "forever"}]}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown variant `forever`"), "{e}");
        assert!(RouteTable::parse(
            r#"{"routes": [{"path": "/x", "page": "Home", "sitemapp": false}]}"#
        )
        .is_err());
    }

    #[test]
    fn each_route_declares_the_query_parameters_its_page_reads() {
        let t = table();
        let names = |path: &str| {
            t.find(path)
                .query
                .iter()
                .map(|q| q.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names("/blog"), ["type"]);
        assert_eq!(names("/blog/nfc-integration"), ["type"]);
        assert_eq!(names("/pricing"), ["billing"]);
        assert_eq!(names("/contact"), ["submitted"]);
        assert_eq!(names("/success"), ["session_id"]);
        assert!(names("/about").is_empty() && names("/nope").is_empty());

        let billing = &t.find("/pricing").query[0];
        assert_eq!(billing.read("yearly"), Some("yearly"));
        assert_eq!(billing.read("weekly"), None, "outside the closed list");
        let kind = &t.find("/blog").query[0];
        assert_eq!(kind.values, ParamValues::Named(NamedValues::PostTypes));
        assert_eq!(kind.read("Events"), Some("Events"));
        assert_eq!(
            kind.read("anything"),
            Some("anything"),
            "any filter is read"
        );
        assert_eq!(kind.read("All"), None, "the default is no filter");
        assert_eq!(kind.read(""), None);

        let e = RouteTable::parse(r#"{"routes": [{"path": "/x", "page": "Home", "query": [{"name": "a", "value": ["b"]}]}]}"#)
            .unwrap_err();
        assert!(e.to_string().contains("unknown field `value`"), "{e}");
        assert!(RouteTable::parse(r#"{"routes": [{"path": "/x", "page": "Home", "query": [{"name": "a", "values": "colours"}]}]}"#).is_err());
    }

    #[test]
    fn a_new_page_is_content_and_a_page_with_data_must_be_compiled_in() {
        let events = RouteTable::parse(
            r#"{"routes": [{"path": "/events", "page": "Events", "query": [{"name": "city", "values": ["ghent"]}]}]}"#,
        )
        .unwrap();
        assert_eq!(events.find("/events").page.name(), "Events");
        // A render's echo of a page is read only as a page some table named.
        assert_eq!(PageId::known("Events"), Some(events.find("/events").page));
        assert_eq!(PageId::known("NeverInATable"), None);
        assert!(serde_json::from_str::<PageId>("\"NeverInATable\"").is_err());
        for (table, says) in [
            (
                r#"{"routes": [{"path": "/events", "page": "Events", "data": "EventsData"}]}"#,
                r#"page Events has "data": "EventsData", but this build has no loader for it; a page's data is compiled in: after adding its loader, build again"#,
            ),
            (
                r#"{"routes": [{"path": "/pricing", "page": "Pricing"}]}"#,
                r#"page Pricing has no "data", but this build's loader gives it "PricingData""#,
            ),
            (
                r#"{"routes": [{"path": "/pricing", "page": "Pricing", "data": "TermsData"}]}"#,
                r#"page Pricing has "data": "TermsData", but this build's loader gives it "PricingData""#,
            ),
            (
                r#"{"routes": [{"path": "/x", "page": "events"}]}"#,
                r#"page "events" must be a name like "NfcWallet""#,
            ),
            (
                r#"{"routes": [{"path": "/events/:city", "page": "Events"}]}"#,
                r#"page Events has a path parameter (/events/:city) but no "data""#,
            ),
            (
                r#"{"routes": [{"path": "/events", "page": "Events", "query": [{"name": "city"}]}]}"#,
                r#"page Events reads the query parameter "city" with any value but has no "data""#,
            ),
        ] {
            let e = RouteTable::parse(table).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn concrete_paths_fill_parameters() {
        let paths = table().concrete_paths(|p| {
            if p == PageId::Blog {
                vec!["a".into(), "b".into()]
            } else {
                vec![]
            }
        });
        assert_eq!(paths.len(), 18);
        assert!(
            paths.contains(&"/".to_string())
                && paths.contains(&"/blog/a".to_string())
                && paths.contains(&"/blog/b".to_string())
        );
    }
}
