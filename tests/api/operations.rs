//! What operators see: liveness and readiness, Prometheus metrics (and who
//! may read them), and a request id on every response.

use serde_json::{json, Value};

use crate::api::helpers::{spawn_app, spawn_app_with};

#[tokio::test]
async fn healthz_says_alive_and_readyz_says_ready_with_each_check() {
    let app = spawn_app().await;
    let (status, body) = app.get_text("/healthz").await;
    assert_eq!((status, body.as_str()), (200, "ok"));
    let res = app.get("/readyz").await;
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({
            "ready": true, "isolates": true, "prerendered": true, "database": true, "draining": false,
            // Every page rendered.
            "unrendered": [],
            "intro_requests": { "pending": 0, "oldest_pending_seconds": 0, "forwarding": false },
            "certificate_orders": null,
        })
    );
}

/// The value of `series` (its name and labels as written) in a scrape.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {series} in\n{text}"))
}

#[tokio::test]
async fn metrics_count_requests_renders_cache_queue_and_pending_requests() {
    let app = spawn_app().await;
    for _ in 0..3 {
        assert_eq!(app.get_text("/wallets").await.0, 200);
    }
    assert_eq!(app.get_text("/no-such-page").await.0, 404);
    assert_eq!(app.get_text("/blog?type=Events").await.0, 200);
    let res = app
        .client
        .post(format!("{}/api/save-to-notion", app.base))
        .json(&json!({ "name": "A", "email": "a@b.example" }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let res = app.get("/metrics").await;
    assert_eq!(res.status(), 200);
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/openmetrics-text"));
    let text = res.text().await.unwrap();
    for line in [
        r#"http_request_duration_seconds_count{route="Wallets",status="200"} 3"#,
        r#"http_request_duration_seconds_count{route="NotFound",status="404"} 1"#,
        r#"http_request_duration_seconds_count{route="/api/save-to-notion",status="200"} 1"#,
        r#"intro_submissions_total{outcome="stored"} 1"#,
        "intro_requests_pending 1",
        "intro_requests_oldest_pending_age_seconds 0",
        "ssr_render_queue_depth 0",
        "database_up 1",
        // Every unknown route is counted (the log only samples them).
        "http_not_found_total 1",
        "intro_tags_unreadable_total 0",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    // Prerendering filled the cache: the three /wallets views were hits;
    // the filtered blog and the 404 needed renders.
    let value = |series: &str| sample(&text, series);
    assert!(value(r#"page_cache_lookups_total{outcome="hit"}"#) >= 3.0);
    assert!(value("ssr_render_duration_seconds_count") >= 2.0);
    // The raw path never becomes a label.
    assert!(!text.contains("no-such-page"));
}

/// The series the operator reads a server by: which build serves (this
/// binary's version, commit and payload), since when, ready and not
/// draining, its open connections, the pages the cache holds.
#[tokio::test]
async fn metrics_say_which_build_serves_since_when_and_what_it_holds() {
    let app = spawn_app().await;
    let text = app.get("/metrics").await.text().await.unwrap();
    let value = |series: &str| sample(&text, series);
    let payload = citizen_site::payload::get().short_hash();
    let build = format!(
        r#"citizen_site_build_info{{version="{}",commit="{}",payload="{payload}"}}"#,
        env!("CARGO_PKG_VERSION"),
        citizen_site::metrics::COMMIT,
    );
    assert_eq!(value(&build), 1.0);
    assert_eq!(payload.len(), 12);
    assert!(
        citizen_site::metrics::COMMIT.len() == 12 || citizen_site::metrics::COMMIT == "unknown"
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let started = value("process_start_time_seconds");
    assert!(started > now - 3600.0 && started <= now, "{started}");
    assert_eq!(value("server_ready"), 1.0);
    assert_eq!(value("server_draining"), 0.0);
    // This very request's connection is open (plain HTTP/1.1).
    assert!(value(r#"http_connections_open{protocol="http1",tls="false"}"#) >= 1.0);
    assert_eq!(
        value(r#"http_connections_open{protocol="h2",tls="true"}"#),
        0.0
    );
    // HTTP/3's series is there at 0 too (behind a proxy: no QUIC).
    assert_eq!(
        value(r#"http_connections_open{protocol="h3",tls="true"}"#),
        0.0
    );
    // The prerendered pages, each in three encodings with its route data.
    let pages = value("page_cache_entries");
    assert!(pages >= 15.0, "{pages}");
    assert!(value("page_cache_bytes") > pages * 1000.0);
    assert_eq!(value("intro_forwarding_enabled"), 0.0);
    // Every series an alert's increase() or a dashboard's rate() reads is
    // there at 0 before its first event (a restart included).
    let kinds = ["issue", "renewal"];
    let acme = kinds.iter().flat_map(|kind| {
        ["success", "failure"]
            .map(|outcome| format!(r#"acme_orders_total{{kind="{kind}",outcome="{outcome}"}}"#))
    });
    let failures = [
        "timeout",
        "heap_limit",
        "script",
        "panic",
        "overloaded",
        "error_screen",
    ]
    .map(|o| format!(r#"ssr_render_failures_total{{outcome="{o}"}}"#));
    let rebuilds = ["timeout", "heap_limit", "script", "panic"]
        .map(|r| format!(r#"ssr_isolate_rebuilds_total{{reason="{r}"}}"#));
    let submissions = ["stored", "duplicate", "spam", "invalid", "failed"]
        .map(|o| format!(r#"intro_submissions_total{{outcome="{o}"}}"#));
    for series in acme.chain(failures).chain(rebuilds).chain(submissions) {
        assert_eq!(value(&series), 0.0, "{series}");
    }
}

/// The operator guide's table of metrics (docs/operate.md, "The metrics")
/// and what `/metrics` has are the same: every metric with its type, and
/// no label on a series that the table does not name.
#[tokio::test]
async fn the_operator_guide_tables_every_metric_its_type_and_labels() {
    let app = spawn_app().await;
    // Request metrics are by route: one request makes the first.
    assert_eq!(app.get_text("/").await.0, 200);
    let text = app.get("/metrics").await.text().await.unwrap();
    // A counter `x` is written `x_total` in OpenMetrics, an info `x` is
    // `x_info`; their TYPE lines say `x`.
    let mut served: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| {
            let (name, kind) = l.split_once(' ').unwrap();
            let name = match kind {
                "counter" => format!("{name}_total"),
                "info" => format!("{name}_info"),
                _ => name.to_owned(),
            };
            (name, kind.to_owned())
        })
        .collect();
    served.sort();
    let guide = include_str!("../../docs/operate.md");
    let table = guide
        .split_once("<!-- metrics-table -->\n")
        .expect("the operator guide's metrics table")
        .1;
    let mut documented: Vec<(String, String, Vec<String>)> = table
        .lines()
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let ticked = |cell: &str| -> Vec<String> {
                cell.split('`')
                    .skip(1)
                    .step_by(2)
                    .map(str::to_owned)
                    .collect()
            };
            let name = ticked(cells[1]).pop().expect("a metric's name in ticks");
            (name, cells[2].to_owned(), ticked(cells[3]))
        })
        .collect();
    documented.sort();
    let named: Vec<(String, String)> = documented
        .iter()
        .map(|(n, k, _)| (n.clone(), k.clone()))
        .collect();
    assert_eq!(named, served, "docs/operate.md (left) and /metrics (right)");
    // Every label of every series is in the table's row for its metric.
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((series, labels)) = line.split_once('{') else {
            continue;
        };
        let row = documented
            .iter()
            .find(|(n, _, _)| {
                series == n
                    || ["_bucket", "_sum", "_count"]
                        .iter()
                        .any(|s| series.strip_suffix(s) == Some(n))
            })
            .unwrap_or_else(|| panic!("{series} is in no row of the table"));
        for pair in labels.split("\",") {
            let key = pair.split('=').next().unwrap().trim_start_matches(',');
            assert!(
                key == "le" || row.2.iter().any(|l| l == key),
                "{series}: label {key} is not in the table ({:?})",
                row.2
            );
        }
    }
}

#[tokio::test]
async fn metrics_are_only_for_the_operators_networks() {
    let app = spawn_app_with(|c| c.trusted_proxies = "127.0.0.1".parse().unwrap()).await;
    // Loopback (the operator's own machine): allowed.
    assert_eq!(app.get("/metrics").await.status(), 200);
    // A visitor from the internet, through the load balancer: the 404 any unknown path gets.
    let res = app
        .client
        .get(format!("{}/metrics", app.base))
        .header("x-forwarded-for", "203.0.113.5")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    // A host on the private network behind the same balancer: allowed.
    let res = app
        .client
        .get(format!("{}/metrics", app.base))
        .header("x-forwarded-for", "10.2.3.4")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn every_response_has_a_request_id_and_only_trusted_proxies_may_set_it() {
    let app = spawn_app().await;
    let a = app.get("/").await.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let b = app.get("/").await.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_ne!(a, b);
    assert!(uuid_like(&a), "{a}");
    // Not from a trusted proxy: replaced.
    let res = app
        .client
        .get(format!("{}/", app.base))
        .header("x-request-id", "lb-123")
        .send()
        .await
        .unwrap();
    assert!(uuid_like(res.headers()["x-request-id"].to_str().unwrap()));

    let app = spawn_app_with(|c| c.trusted_proxies = "127.0.0.1".parse().unwrap()).await;
    let res = app
        .client
        .get(format!("{}/", app.base))
        .header("x-request-id", "lb-123")
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.headers()["x-request-id"],
        "lb-123",
        "the load balancer's id is kept"
    );
    let res = app
        .client
        .get(format!("{}/", app.base))
        .header("x-request-id", "bad id\twith spaces")
        .send()
        .await
        .unwrap();
    assert!(
        uuid_like(res.headers()["x-request-id"].to_str().unwrap()),
        "an id unfit for logs is replaced"
    );
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}
