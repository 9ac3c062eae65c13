//! The page cache as a visitor, an operator and a shared cache see it: a hit
//! reads no data, a burst of requests for a new page renders it once, the
//! team's changes still show within the stated bound, and every route tells
//! shared caches what the table of docs/performance.md says.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use citizen_site::metrics::PageLabel;
use citizen_site::team::{self, NewMember};
use serde_json::Value;

use crate::api::helpers::{
    eventually, route_table, spawn_app, spawn_app_with, visible_text, TestApp,
};

/// Every route of the table, with a real post for `:postId`: (path,
/// pattern, page).
fn routes() -> Vec<(String, String, String)> {
    route_table()
        .into_iter()
        .map(|r| (r.path("nfc-integration"), r.pattern, r.page))
        .collect()
}

fn loader_runs(app: &TestApp, page: &str) -> u64 {
    app.state
        .metrics
        .loader_runs
        .get_or_create(&PageLabel {
            page: page.to_owned(),
        })
        .get()
}

async fn metric(app: &TestApp, name: &str) -> f64 {
    let text = app.get("/metrics").await.text().await.unwrap();
    text.lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

#[tokio::test]
async fn a_cache_hit_runs_no_loader_on_any_cached_route() {
    let app = spawn_app().await;
    for (url, _, page) in routes() {
        if page == "Success" {
            continue; // a visitor's own payment: never cached (below)
        }
        // Once to be sure it is in the cache (prerendered at start anyway).
        assert_eq!(app.get(&url).await.status(), 200, "{url}");
        let before = loader_runs(&app, &page);
        for _ in 0..3 {
            assert_eq!(app.get(&url).await.status(), 200, "{url}");
            let data = app.get(&format!("/api/route-data?url={url}")).await;
            assert_eq!(data.status(), 200, "{url}");
            assert_eq!(data.json::<Value>().await.unwrap()["page"], page.as_str());
        }
        assert_eq!(
            loader_runs(&app, &page),
            before,
            "{url}: hits of the page and of its route data ran the loader"
        );
    }
    // Query parameters the page does not read share the cached render.
    let before = loader_runs(&app, "Blog");
    assert_eq!(app.get("/blog?utm_source=mail").await.status(), 200);
    assert_eq!(loader_runs(&app, "Blog"), before);
    // The success page is loaded for every visitor.
    let before = loader_runs(&app, "Success");
    app.get("/success").await;
    app.get("/success").await;
    assert_eq!(loader_runs(&app, "Success"), before + 2);
}

/// The page pipeline answers a view of a kept page by its path, before
/// anything else (server/http/page_handler.rs, step 1). What it answers is
/// what its later steps would: counted under the page's label and as a
/// cache hit, the body alone left out for HEAD; and whatever is not a view
/// of a kept page still gets the pipeline's rules.
#[tokio::test]
async fn a_page_answered_by_its_path_is_answered_as_the_pipeline_would() {
    let app = spawn_app().await;
    let (_, page) = app.get_text("/pricing").await;
    let served_metric = r#"http_request_duration_seconds_count{route="Pricing",status="200"}"#;
    let hit_metric = r#"page_cache_lookups_total{outcome="hit"}"#;
    let (served, hits, loads) = (
        metric(&app, served_metric).await,
        metric(&app, hit_metric).await,
        loader_runs(&app, "Pricing"),
    );
    for _ in 0..3 {
        assert_eq!(app.get_text("/pricing").await, (200, page.clone()));
    }
    assert_eq!(
        metric(&app, served_metric).await - served,
        3.0,
        "each view counted under its page"
    );
    assert_eq!(
        metric(&app, hit_metric).await - hits,
        3.0,
        "each view a cache hit"
    );
    assert_eq!(loader_runs(&app, "Pricing"), loads);

    let head = app
        .client
        .head(format!("{}/pricing", app.base))
        .header("accept-encoding", "identity")
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(
        head.headers()["content-length"],
        page.len().to_string().as_str()
    );
    assert!(head.headers()["etag"].to_str().unwrap().starts_with('"'));
    assert!(head.bytes().await.unwrap().is_empty());

    let post = app
        .client
        .post(format!("{}/pricing", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(
        (
            post.status().as_u16(),
            post.headers()["allow"].to_str().unwrap()
        ),
        (405, "GET, HEAD")
    );
    assert_eq!(app.get("/pricing/").await.status(), 308);
    assert_eq!(app.get("/pricing/extra").await.status(), 404);
    assert_eq!(
        app.get("/sitemap.xml").await.headers()["content-type"],
        "application/xml; charset=utf-8"
    );
}

/// A revalidation of a page answered by its path: the copy the browser has is current,
/// so a 304 with the page's ETag and Vary, counted under the page as a 304
/// and as a hit, with a request id of its own; a copy in another encoding
/// is not current. A URL that is not one of the site's paths (one with
/// a query) has no slot of its own: it is kept in the page cache.
#[tokio::test]
async fn a_current_copy_is_a_304_counted_under_its_page_with_its_own_request_id() {
    let app = spawn_app().await;
    let get = |etag: Option<String>, encoding: &'static str| {
        let mut req = app
            .client
            .get(format!("{}/about", app.base))
            .header("accept-encoding", encoding);
        if let Some(tag) = etag {
            req = req.header("if-none-match", tag);
        }
        req.send()
    };
    let first = get(None, "br").await.unwrap();
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    let not_modified = r#"http_request_duration_seconds_count{route="About",status="304"}"#;
    let hit_metric = r#"page_cache_lookups_total{outcome="hit"}"#;
    let hits = metric(&app, hit_metric).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let res = get(Some(etag.clone()), "br").await.unwrap();
        assert_eq!(res.status(), 304);
        assert_eq!(res.headers()["etag"], etag.as_str());
        assert_eq!(res.headers()["vary"], "accept-encoding");
        assert!(
            res.headers().get("content-encoding").is_none(),
            "a 304 has no body to encode"
        );
        ids.push(res.headers()["x-request-id"].to_str().unwrap().to_owned());
    }
    assert!(ids.iter().all(|id| id.len() == 36), "{ids:?}");
    ids.dedup();
    assert_eq!(ids.len(), 3, "each answer its own id: {ids:?}");
    assert_eq!(metric(&app, not_modified).await, 3.0);
    assert_eq!(metric(&app, hit_metric).await - hits, 3.0);
    let other = get(Some(etag), "gzip").await.unwrap();
    assert_eq!(
        (
            other.status().as_u16(),
            other.headers()["content-encoding"].to_str().unwrap()
        ),
        (200, "gzip")
    );

    // A URL with a query has no slot of its own: it is kept in the page
    // cache, rendered once. (The prerender made every value the route
    // lists: the cache is emptied so that this one is new.)
    app.state.page_cache.invalidate_all();
    let loads = loader_runs(&app, "Blog");
    assert_eq!(app.get_text("/blog?type=Events").await.0, 200);
    assert_eq!(
        loader_runs(&app, "Blog") - loads,
        1,
        "a URL outside the site's list is rendered once, then kept"
    );
    assert_eq!(app.get_text("/blog?type=Events").await.0, 200);
    assert_eq!(loader_runs(&app, "Blog") - loads, 1);
}

#[tokio::test]
async fn fifty_requests_together_for_a_new_page_render_it_once() {
    let app = spawn_app().await;
    let url = format!("{}/pricing?billing=yearly", app.base);
    // The prerender made it: emptied, so that it is a new page again.
    app.state.page_cache.invalidate_all();
    let renders = metric(&app, "ssr_render_duration_seconds_count").await;
    let loads = loader_runs(&app, "Pricing");
    let requests = (0..50).map(|_| {
        let (client, url) = (app.client.clone(), url.clone());
        tokio::spawn(async move {
            let res = client
                .get(url)
                .header("accept-encoding", "br")
                .send()
                .await
                .unwrap();
            (
                res.status().as_u16(),
                res.headers()["etag"].to_str().unwrap().to_owned(),
            )
        })
    });
    let answers: Vec<(u16, String)> = futures_util::future::join_all(requests)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(
        answers.iter().all(|a| a == &answers[0] && a.0 == 200),
        "one page for all: {answers:?}"
    );
    assert_eq!(
        metric(&app, "ssr_render_duration_seconds_count").await - renders,
        1.0,
        "renders"
    );
    assert_eq!(loader_runs(&app, "Pricing") - loads, 1, "loader runs");
}

#[tokio::test]
async fn a_team_change_reaches_about_within_the_refresh_interval() {
    let refresh = Duration::from_secs(1);
    let app = spawn_app_with(|c| c.team_refresh = refresh).await;
    let (_, html) = app.get_text("/about").await;
    assert!(!visible_text(&html).contains("Noor Haddad"));
    let loads = loader_runs(&app, "About");
    let added = Instant::now();
    team::import(
        &app.state.db,
        &[NewMember {
            name: "Noor Haddad".into(),
            role: Some("Community".into()),
            ..Default::default()
        }],
        false,
    )
    .await
    .unwrap();
    let shown = eventually(10, || async {
        visible_text(&app.get_text("/about").await.1).contains("Noor Haddad")
    })
    .await;
    let took = added.elapsed();
    assert!(shown, "the new member never showed");
    // The bound: one refresh interval, plus the time one render takes.
    assert!(
        took < refresh + Duration::from_millis(1500),
        "shown after {took:?}"
    );
    assert_eq!(
        loader_runs(&app, "About") - loads,
        1,
        "one new version, one load"
    );
    let data: Value = app
        .get("/api/route-data?url=/about")
        .await
        .json()
        .await
        .unwrap();
    assert!(
        data["data"]["team"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["name"] == "Noor Haddad"),
        "the route data too"
    );
}

/// The Caching table of docs/performance.md: route -> Cache-Control.
fn documented() -> HashMap<String, String> {
    let readme = include_str!("../../docs/performance.md");
    let section = &readme[readme
        .find("## Caching")
        .expect("a Caching section in docs/performance.md")..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| {
            let cells: Vec<&str> = l
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().trim_matches('`'))
                .collect();
            let policy = cells[1].to_owned();
            cells[0]
                .split("`, `")
                .map(|route| (route.to_owned(), policy.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[tokio::test]
async fn every_route_sends_the_documented_cache_control_and_success_is_never_shared() {
    let app = spawn_app().await;
    let table = documented();
    for (url, path, _) in routes() {
        let expected = table
            .get(&path)
            .unwrap_or_else(|| panic!("{path} is not in the Caching table of docs/performance.md"));
        for target in [url.clone(), format!("/api/route-data?url={url}")] {
            let res = app.get(&target).await;
            assert_eq!(
                res.headers()["cache-control"],
                expected.as_str(),
                "{target}"
            );
        }
    }
    // One `"cache"` name in content/routes.json is one policy in docs/performance.md.
    let mut policies: HashMap<String, &str> = HashMap::new();
    for route in route_table() {
        let documented = table[&route.pattern].as_str();
        let first = *policies.entry(route.cache.clone()).or_insert(documented);
        assert_eq!(
            first, documented,
            "routes whose cache is {:?} are documented alike",
            route.cache
        );
    }
    assert_eq!(
        policies.len(),
        5,
        "content, team, prices, daily, private: {policies:?}"
    );
    let unknown = &table["(unknown route: 404)"];
    let res = app.get("/no-such-page").await;
    assert_eq!(
        (
            res.status().as_u16(),
            res.headers()["cache-control"].to_str().unwrap()
        ),
        (404, unknown.as_str())
    );

    // The payment page, whatever it shows, is the visitor's own.
    for target in [
        "/success",
        "/success?session_id=cs_test_abc",
        "/api/route-data?url=/success?session_id=cs_test_abc",
    ] {
        let res = app.get(target).await;
        let policy = res.headers()["cache-control"].to_str().unwrap().to_owned();
        assert!(
            policy.contains("private") && policy.contains("no-store") && !policy.contains("public"),
            "{target}: {policy}"
        );
    }
    // So is a contact page holding what a visitor typed.
    let res = app
        .client
        .post(format!("{}/api/save-to-notion", app.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("name=&email=not-an-email")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"),
        "the contact page, with the error"
    );
    assert_eq!(res.headers()["cache-control"], "private, no-store");
}

/// A successor's prerender (a publish: `Pace::QuarterOfACore`) rests three
/// times as long as each page took of the cores, so that the old process
/// keeps them. A page that took long without them (the process paused by
/// SIGSTOP or a stalled VM) is not rested for: a successor paused 20 s in a
/// render once rested a minute more and missed its 60 s to be ready, and
/// the publish failed. Here the render of `/` is held 4 s by a sleeping
/// hook, which neither runs nor waits for a core.
#[tokio::test]
async fn a_successors_prerender_rests_for_the_work_done_not_for_a_pause() {
    use citizen_site::pages::make::{prerender, Pace};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    const HOLD: Duration = Duration::from_secs(5);
    let hold = Arc::new(AtomicBool::new(false));
    let app = spawn_app_with({
        let hold = hold.clone();
        move |c| {
            c.ssr.hooks.before_render(move |url: &str| {
                if url == "/" && hold.swap(false, Ordering::SeqCst) {
                    std::thread::sleep(HOLD);
                }
            })
        }
    })
    .await;
    // As a successor finds it: nothing rendered yet. Paced once as it
    // comes, then with `/` held: the time the pacing takes grows with a
    // loaded machine, so the held run is judged against the plain one.
    let paced = || async {
        app.state.page_cache.invalidate_all();
        let started = Instant::now();
        let pages = prerender(&app.state, Pace::QuarterOfACore).await.done;
        (pages, started.elapsed())
    };
    let (all, plain) = paced().await;
    hold.store(true, Ordering::SeqCst);
    let (pages, held) = paced().await;
    println!("the paced prerender took {plain:?}, and {held:?} with / held {HOLD:?}");
    assert!(!hold.load(Ordering::SeqCst), "the render of / was held");
    assert_eq!(pages, all, "every page made");
    // The hold itself is in the time; resting three times it would add
    // 15 s more.
    assert!(
        held < plain + HOLD * 5 / 2,
        "the prerender took {held:?} with / held {HOLD:?}, {plain:?} without: rested for the pause"
    );
    app.stop().await;
}
