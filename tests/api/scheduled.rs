//! A scheduled post, as `serve` publishes it: the built binary, its own
//! bundled posts, and a wall clock set (libfaketime, re-read from a file
//! while the server runs) to before the newest post's day. Until its time
//! the post is in no list, page, sitemap, feed or route data; at its time
//! it is in all of them with no restart, and the server has woken for it
//! and made the blog's pages again.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::api::helpers::{bootstrap_json, tempdir::TempDir, SiteProcess};
use crate::support::needs;

/// The newest bundled post, the only one of its type: `date = "2024-10-08"`,
/// out at 2024-10-08T00:00:00Z.
const POST: &str = "brussels-pay-launch";
const TITLE: &str = "Brussels Pay Is Live";
const KIND: &str = "Announcements";
const OUT_AT: i64 = 1_728_345_600;

fn libfaketime() -> &'static str {
    needs("faketime", "faketime");
    [
        "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
        "/usr/lib/faketime/libfaketimeMT.so.1",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .expect("libfaketime (apt-get install faketime)")
}

/// Sets the server's wall clock to `unix` now (it runs on from there),
/// through the file libfaketime reads again every second.
fn set_clock(file: &Path, unix: i64) {
    let real = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    std::fs::write(file, format!("{:+}", unix - real)).unwrap();
}

/// What a visitor, a crawler and a feed reader are shown of the post.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    list: bool,
    type_view: bool,
    page_status: u16,
    page: bool,
    sitemap: bool,
    feed: bool,
    route_data: bool,
    post_route_data: (u64, bool),
}

async fn seen(base: &str) -> Seen {
    let get = |path: &str| {
        let url = format!("{base}{path}");
        async move {
            let res = reqwest::get(url).await.unwrap();
            (res.status().as_u16(), res.text().await.unwrap())
        }
    };
    let listed = |html: &str| {
        bootstrap_json(html)["data"]["posts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == POST)
    };
    let (list_status, list) = get("/blog").await;
    assert_eq!(list_status, 200);
    let (_, type_view) = get(&format!("/blog?type={KIND}")).await;
    let (page_status, page) = get(&format!("/blog/{POST}")).await;
    let (_, sitemap) = get("/sitemap.xml").await;
    let (_, feed) = get("/feed.xml").await;
    let (_, data) = get("/api/route-data?url=/blog").await;
    let (_, post_data) = get(&format!("/api/route-data?url=/blog/{POST}")).await;
    let data: serde_json::Value = serde_json::from_str(&data).unwrap();
    let post_data: serde_json::Value = serde_json::from_str(&post_data).unwrap();
    Seen {
        list: listed(&list) && list.contains(TITLE),
        type_view: listed(&type_view) && !type_view.contains("No posts found"),
        page_status,
        page: bootstrap_json(&page)["data"]["post"]["id"] == POST,
        sitemap: sitemap.contains(&format!("/blog/{POST}</loc>")),
        feed: feed.contains(&format!("/blog/{POST}</link>")),
        route_data: data["data"]["posts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == POST),
        post_route_data: (
            post_data["status"].as_u64().unwrap(),
            post_data["data"]["post"]["id"] == POST,
        ),
    }
}

const ABSENT: Seen = Seen {
    list: false,
    type_view: false,
    page_status: 404,
    page: false,
    sitemap: false,
    feed: false,
    route_data: false,
    post_route_data: (404, false),
};

const PRESENT: Seen = Seen {
    list: true,
    type_view: true,
    page_status: 200,
    page: true,
    sitemap: true,
    feed: true,
    route_data: true,
    post_route_data: (200, true),
};

/// The Blog page's loader runs, from `/metrics`.
async fn blog_loader_runs(base: &str) -> u64 {
    let text = reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find(|l| l.starts_with("route_loader_runs_total{page=\"Blog\"}"))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no Blog loader runs in\n{text}"))
}

fn published_logs(server: &SiteProcess) -> Vec<String> {
    server
        .logged()
        .iter()
        .filter(|l| l["fields"]["post"] == POST)
        .filter_map(|l| l["fields"]["message"].as_str().map(String::from))
        .collect()
}

#[tokio::test]
async fn a_post_dated_ahead_is_nowhere_until_its_time_then_everywhere_without_a_restart() {
    let post = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/content/blog/brussels-pay-launch.md"
    ))
    .unwrap();
    assert!(
        post.contains("date = \"2024-10-08\"") && post.contains(&format!("type = \"{KIND}\"")),
        "the newest bundled post, alone of its type"
    );
    let dir = TempDir::new();
    let clock: PathBuf = dir.path().join("faketime.rc");
    // An hour before: how long the start takes does not matter.
    set_clock(&clock, OUT_AT - 3_600);
    let server = SiteProcess::start(&[
        ("LD_PRELOAD", libfaketime().to_owned()),
        ("FAKETIME_TIMESTAMP_FILE", clock.display().to_string()),
        ("FAKETIME_CACHE_DURATION", "1".to_owned()),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_owned()),
    ])
    .await;
    let base = server.base.clone();
    assert_eq!(seen(&base).await, ABSENT, "an hour before its time");
    // Not kept by a shared cache either: its address must answer the post
    // as soon as it is out.
    let res = reqwest::get(format!("{base}/blog/{POST}")).await.unwrap();
    assert_eq!(res.headers()["cache-control"], "no-cache");

    // The clock jumps to 20 s before (the server slept on the hour it had
    // read): it follows, and wakes at the post's time.
    set_clock(&clock, OUT_AT - 20);
    let out = Instant::now() + Duration::from_secs(20);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(seen(&base).await, ABSENT, "seconds before its time");
    tokio::time::sleep(out.saturating_duration_since(Instant::now()) - Duration::from_secs(2))
        .await;
    assert_eq!(seen(&base).await, ABSENT, "two seconds before its time");
    assert!(
        published_logs(&server).is_empty(),
        "not said before its time"
    );

    // The server wakes at its time (not at its next look at the clock, up
    // to 15 s later), says so, and makes the pages that list the posts
    // again before anyone asks for them.
    let said = |server: &SiteProcess, what: &str| {
        server
            .logged()
            .iter()
            .any(|l| l["fields"]["message"] == what)
    };
    let made = "the blog's pages are made again";
    while !said(&server, made) && Instant::now() < out + Duration::from_secs(15) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let woke = Instant::now().saturating_duration_since(out);
    assert_eq!(
        published_logs(&server),
        [format!("published: /blog/{POST} is out, as scheduled")],
        "{:?}",
        server.logs.lock().unwrap()
    );
    assert!(
        said(&server, made) && woke < Duration::from_secs(5),
        "made again {woke:?} after its time: {:?}",
        server.logs.lock().unwrap()
    );
    let runs = blog_loader_runs(&base).await;
    for path in [
        "/blog".to_owned(),
        format!("/blog?type={KIND}"),
        format!("/blog/{POST}"),
        "/blog/nfc-integration".to_owned(),
    ] {
        let res = reqwest::get(format!("{base}{path}")).await.unwrap();
        assert_eq!(res.status().as_u16(), 200, "{path}");
        assert!(res.text().await.unwrap().contains(TITLE), "{path}");
    }
    assert_eq!(
        blog_loader_runs(&base).await,
        runs,
        "the blog's pages were made before anyone asked"
    );
    assert_eq!(
        seen(&base).await,
        PRESENT,
        "at its time, with no restart and no new pack"
    );
    server.stop().await;
}
