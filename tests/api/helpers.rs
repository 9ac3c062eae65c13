use std::time::Duration;

use citizen_site::app::Application;
use citizen_site::config::Config;

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub state: citizen_site::state::SharedState,
    pub shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    pub server: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    _data: tempdir::TempDir,
}

impl TestApp {
    /// Stops the server as SIGTERM would (graceful, forwarder stopped).
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
    }
}

impl TestApp {
    /// The server's `host:port`.
    pub fn addr(&self) -> &str {
        self.base.trim_start_matches("http://")
    }

    /// Sends `request` byte for byte (no client normalises the path) and
    /// reads the answer until the server closes the connection.
    pub async fn raw(&self, request: &[u8]) -> RawResponse {
        raw_request(self.addr(), request).await
    }

    /// A GET of `target` exactly as written.
    pub async fn raw_get(&self, target: &str) -> RawResponse {
        self.raw(
            format!("GET {target} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .expect("request failed")
    }

    pub async fn get_text(&self, path: &str) -> (u16, String) {
        let res = self.get(path).await;
        let status = res.status().as_u16();
        (status, res.text().await.unwrap())
    }
}

/// An HTTP/1.1 answer read off the wire.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    /// Header lines, lower-cased names.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

pub async fn raw_request(addr: &str, request: &[u8]) -> RawResponse {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("send");
    let mut bytes = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut bytes))
        .await
        .expect("the server answers and closes");
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP head in {:?}", String::from_utf8_lossy(&bytes)));
    let head = String::from_utf8_lossy(&bytes[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect::<Vec<_>>();
    let mut body = bytes[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    RawResponse {
        status,
        headers,
        body,
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = data.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = usize::from_str_radix(
            String::from_utf8_lossy(&data[..eol])
                .split(';')
                .next()
                .unwrap()
                .trim(),
            16,
        )
        .unwrap_or(0);
        if size == 0 {
            return out;
        }
        let start = eol + 2;
        out.extend_from_slice(&data[start..(start + size).min(data.len())]);
        data = &data[(start + size + 2).min(data.len())..];
    }
}

/// Starts the app with test defaults, changed by `tweak`, and waits until
/// its isolates are ready.
pub async fn spawn_app_with(tweak: impl FnOnce(&mut Config)) -> TestApp {
    let data = tempdir::TempDir::new();
    let mut config = Config::for_tests(data.path());
    tweak(&mut config);
    let app = Application::build(config).await.expect("app builds");
    let base = format!("http://{}", app.local_addr());
    let state = app.state();
    let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(app.run_until(async move {
        let _ = stopped.await;
    }));
    tokio::time::timeout(Duration::from_secs(60), state.wait_ready())
        .await
        .expect("isolates loaded and pages prerendered in time")
        .expect("bundle evaluates");
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    TestApp {
        base,
        client,
        state,
        shutdown: Some(shutdown),
        server: Some(server),
        _data: data,
    }
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// The loader JSON embedded in a server-rendered page.
/// The page's JSON-LD block, parsed.
/// Every JSON-LD block of the page, in order, each parsed (a block that
/// does not parse fails the test with its text).
pub fn json_ld(html: &str) -> Vec<serde_json::Value> {
    let tag = r#"<script type="application/ld+json">"#;
    let blocks: Vec<serde_json::Value> = html
        .split(tag)
        .skip(1)
        .map(|rest| {
            let text = &rest[..rest
                .find("</script>")
                .expect("the JSON-LD script is closed")];
            serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("JSON-LD block does not parse: {e}\n{text}"))
        })
        .collect();
    assert!(!blocks.is_empty(), "JSON-LD present");
    blocks
}

/// The page's JSON-LD nodes of type `kind`.
pub fn json_ld_of(html: &str, kind: &str) -> Vec<serde_json::Value> {
    json_ld(html)
        .into_iter()
        .filter(|n| n["@type"] == kind)
        .collect()
}

/// The text of the page's `<title>`, as sent (entities not decoded).
pub fn title(html: &str) -> &str {
    html.split("<title>")
        .nth(1)
        .expect("a title")
        .split("</title>")
        .next()
        .unwrap()
}

pub fn bootstrap_json(html: &str) -> serde_json::Value {
    let start_tag = r#"<script id="__SITE_DATA__" type="application/json">"#;
    let start = html.find(start_tag).expect("page embeds its loader JSON") + start_tag.len();
    let end = start
        + html[start..]
            .find("</script>")
            .expect("the data script is closed");
    serde_json::from_str(&html[start..end]).expect("embedded loader JSON parses")
}

/// Text of the page without tags, so assertions read like what a visitor sees.
pub fn visible_text(html: &str) -> String {
    let body = html.split("<body>").nth(1).unwrap_or(html);
    let body = body
        .split(r#"<script id="__SITE_DATA__""#)
        .next()
        .unwrap_or(body);
    let mut out = String::new();
    let mut in_tag = false;
    for c in body.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    decode_entities(&out)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// HTML text with the entities React and the server's head write decoded
/// (`&amp;` last, so `&amp;lt;` stays `&lt;`).
pub fn decode_entities(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

pub mod tempdir {
    /// A directory removed when dropped.
    pub struct TempDir(std::path::PathBuf);

    impl TempDir {
        pub fn new() -> TempDir {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "citizen-site-test-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
        pub fn path(&self) -> &std::path::Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Every link in `html` as (href, visible text), in document order.
pub fn links(html: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<a ") {
        rest = &rest[start..];
        let tag_end = rest.find('>').unwrap();
        let tag = &rest[..tag_end];
        let close = rest.find("</a>").unwrap();
        let href = tag
            .split(" href=\"")
            .nth(1)
            .map(|h| h.split('"').next().unwrap().to_owned())
            .unwrap_or_default();
        out.push((
            href,
            visible_text(&format!("<body>{}", &rest[tag_end + 1..close])),
        ));
        rest = &rest[close..];
    }
    out
}

/// The markup of the first `<tag ...>...</tag>` element.
pub fn element<'a>(html: &'a str, tag: &str) -> &'a str {
    let start = html
        .find(&format!("<{tag}"))
        .unwrap_or_else(|| panic!("no <{tag}>"));
    let end = html
        .find(&format!("</{tag}>"))
        .unwrap_or_else(|| panic!("no </{tag}>"));
    &html[start..end]
}

/// A fresh, empty database of each kind the site supports: a SQLite file in
/// `dir`, and a new PostgreSQL database on the local server
/// ([`postgres_admin_url`]; SQLite alone in the quick tier). Each goes when
/// its [`TestDb`] is dropped.
pub async fn fresh_databases(dir: &std::path::Path) -> Vec<(&'static str, TestDb)> {
    let sqlite = dir.join(format!("db-{}.sqlite", uuid_like()));
    let url = format!("sqlite://{}", sqlite.display());
    let mut dbs = vec![(
        "sqlite",
        TestDb {
            url,
            made: Made::Sqlite(sqlite),
        },
    )];
    if let Some(postgres) = fresh_postgres().await {
        dbs.push(("postgres", postgres));
    }
    dbs
}

/// The PostgreSQL server the database tests make their databases on:
/// `TEST_POSTGRES_URL`, default postgres://postgres@127.0.0.1:5432/test.
/// `TEST_POSTGRES_URL=none` is the quick tier (README, "Test it"): no
/// PostgreSQL, so the database tests run on SQLite alone and the tests of
/// PostgreSQL itself say they were skipped. `cargo test` (CI) has one.
pub fn postgres_admin_url() -> Option<String> {
    match std::env::var("TEST_POSTGRES_URL") {
        Ok(url) if url == "none" => None,
        Ok(url) => Some(url),
        Err(_) => Some("postgres://postgres@127.0.0.1:5432/test".into()),
    }
}

/// A database made for one test, removed when this is dropped: at the end
/// of the test, and when it fails (a panic unwinds through it).
pub struct TestDb {
    pub url: String,
    made: Made,
}

enum Made {
    Sqlite(std::path::PathBuf),
    /// The admin URL it was created through, and its name.
    Postgres {
        admin: String,
        name: String,
    },
}

impl Drop for TestDb {
    fn drop(&mut self) {
        match &self.made {
            Made::Sqlite(file) => {
                for suffix in ["", "-wal", "-shm", "-journal"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
                }
            }
            Made::Postgres { admin, name } => {
                // Drop runs inside the test's runtime: the statement runs on a
                // thread of its own. FORCE ends connections a server under test
                // still holds (an app dropped without `stop`).
                let (admin, statement) = (
                    admin.clone(),
                    format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
                );
                let dropped = std::thread::spawn(move || {
                    use sqlx::Connection;
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .expect("a runtime to drop the test database");
                    runtime.block_on(async {
                        let mut conn = sqlx::postgres::PgConnection::connect(&admin).await?;
                        sqlx::query(&statement).execute(&mut conn).await.map(|_| ())
                    })
                })
                .join();
                match dropped {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => eprintln!("could not drop the test database {name}: {e}"),
                    Err(_) => eprintln!(
                        "could not drop the test database {name}: the dropping thread panicked"
                    ),
                }
            }
        }
    }
}

/// A new, empty PostgreSQL database; None in the quick tier (see
/// [`postgres_admin_url`]), which the calling test takes as skipped.
pub async fn fresh_postgres() -> Option<TestDb> {
    use sqlx::Connection;
    let Some(admin) = postgres_admin_url() else {
        eprintln!("skipped on PostgreSQL: TEST_POSTGRES_URL=none (the quick tier)");
        return None;
    };
    let name = format!("citizen_test_{}", uuid_like());
    let mut conn = sqlx::postgres::PgConnection::connect(&admin)
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL at {admin} is needed for the database tests: {e}"));
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .expect("create test database");
    let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or(&admin);
    Some(TestDb {
        url: format!("{base}/{name}"),
        made: Made::Postgres { admin, name },
    })
}

pub fn uuid_like() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{}_{}_{}",
        std::process::id(),
        nanos,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Polls `check` until it is true or `secs` pass.
pub async fn eventually<F, Fut>(secs: u64, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    while std::time::Instant::now() < deadline {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// A TCP server that accepts connections and never answers: a service that
/// hangs. Connections are held open until it is dropped.
pub struct Blackhole {
    pub addr: std::net::SocketAddr,
    accepted: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Blackhole {
    pub async fn start() -> Blackhole {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = accepted.clone();
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                held.push(socket);
            }
        });
        Blackhole {
            addr,
            accepted,
            task,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Connections accepted so far; every one is still open and unanswered.
    pub fn accepted(&self) -> usize {
        self.accepted.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for Blackhole {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How [`FlakyProxy`] treats connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// Bytes flow both ways.
    Up,
    /// New connections are closed at once; open ones are cut.
    Down,
    /// Connections are accepted but nothing flows: a server that hangs.
    Hanging,
}

/// A TCP proxy in front of a real server whose link the test switches: the
/// database going away and coming back, without touching the database.
pub struct FlakyProxy {
    pub addr: std::net::SocketAddr,
    link: tokio::sync::watch::Sender<Link>,
    frozen: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl FlakyProxy {
    pub async fn start(upstream: std::net::SocketAddr, link: Link) -> FlakyProxy {
        use std::sync::atomic::Ordering::SeqCst;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::watch::channel(link);
        let frozen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = frozen.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let mut rx = rx.clone();
                let frozen = counter.clone();
                tokio::spawn(async move {
                    let at_start = *rx.borrow_and_update();
                    match at_start {
                        Link::Down => return,
                        Link::Hanging => {
                            // Hold it, silent, until the link changes; then drop it.
                            frozen.fetch_add(1, SeqCst);
                            let _ = rx.changed().await;
                            frozen.fetch_sub(1, SeqCst);
                            return;
                        }
                        Link::Up => {}
                    }
                    let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await else {
                        return;
                    };
                    let next = tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => return,
                        next = async {
                            loop {
                                if rx.changed().await.is_err() {
                                    return Link::Down;
                                }
                                let now = *rx.borrow();
                                if now != Link::Up {
                                    return now;
                                }
                            }
                        } => next,
                    };
                    if next == Link::Hanging {
                        // Frozen: both sockets stay open, nothing moves.
                        frozen.fetch_add(1, SeqCst);
                        let _ = rx.changed().await;
                        frozen.fetch_sub(1, SeqCst);
                    }
                    drop((client, server));
                });
            }
        });
        FlakyProxy {
            addr,
            link: tx,
            frozen,
            task,
        }
    }

    pub fn set(&self, link: Link) {
        self.link.send_replace(link);
    }

    /// Connections held frozen right now: the database has been asked
    /// something on each and has not answered.
    pub fn frozen(&self) -> usize {
        self.frozen.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for FlakyProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One route of `content/routes.json` as the tests read it: with
/// serde_json, not the server's parser, so what the server makes of the
/// table is checked against the file itself.
pub struct TableRoute {
    /// As written: `/blog/:postId`.
    pub pattern: String,
    pub page: String,
    /// `"cache"`, `content` when the entry says none.
    pub cache: String,
    /// In the sitemap (`"sitemap": false` says not).
    pub listed: bool,
}

impl TableRoute {
    /// The concrete path, with `post` for `:postId`.
    pub fn path(&self, post: &str) -> String {
        self.pattern.replace(":postId", post)
    }
}

/// Every route of `content/routes.json`, in its order.
pub fn route_table() -> Vec<TableRoute> {
    let table: serde_json::Value =
        serde_json::from_str(include_str!("../../content/routes.json")).unwrap();
    table["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| TableRoute {
            pattern: r["path"].as_str().unwrap().to_owned(),
            page: r["page"].as_str().unwrap().to_owned(),
            cache: r["cache"].as_str().unwrap_or("content").to_owned(),
            listed: r["sitemap"].as_bool().unwrap_or(true),
        })
        .collect()
}

/// The posts `serve` publishes, read from `content/blog/*.md` directly: a
/// file whose front matter says `draft = true` is not one.
pub fn published_posts() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("content/blog");
    let mut ids = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let front = text.split("+++").nth(1).unwrap_or("");
        let value = |key: &str| {
            front.lines().find_map(|l| {
                l.strip_prefix(key)?
                    .trim_start()
                    .strip_prefix('=')
                    .map(|v| v.trim().trim_matches('"').to_owned())
            })
        };
        if value("draft").as_deref() != Some("true") {
            ids.push(value("id").expect("every post has an id"));
        }
    }
    ids.sort();
    ids
}

pub use process::SiteProcess;

mod process {
    use std::io::{BufRead, BufReader};
    use std::process::{Child, Command, Stdio};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use serde_json::Value;

    use super::tempdir::TempDir;

    /// The real binary serving, as an operator runs it: its own SQLite file
    /// unless `DATABASE_URL` is given, JSON logs collected, killed when dropped.
    pub struct SiteProcess {
        pub child: Child,
        pub base: String,
        pub logs: Arc<Mutex<Vec<String>>>,
        _data: TempDir,
    }

    impl SiteProcess {
        pub async fn start(env: &[(&str, String)]) -> SiteProcess {
            // Not the kernel's pick (its ephemeral range, which outgoing
            // connections of tests side by side take from too).
            let port = crate::support::free_port();
            let data = TempDir::new();
            let mut child = Command::new(env!("CARGO_BIN_EXE_citizen-site"))
                .env("ADDR", format!("127.0.0.1:{port}"))
                .env(
                    "DATABASE_URL",
                    format!("sqlite://{}/site.db", data.path().display()),
                )
                .env("LOG_FORMAT", "json")
                .env("RUST_LOG", "info")
                .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("starting the server binary");
            let logs = Arc::new(Mutex::new(Vec::new()));
            for stream in [
                Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
                Box::new(child.stderr.take().unwrap()),
            ] {
                let logs = logs.clone();
                std::thread::spawn(move || {
                    for line in BufReader::new(stream).lines().map_while(Result::ok) {
                        logs.lock().unwrap().push(line);
                    }
                });
            }
            let base = format!("http://127.0.0.1:{port}");
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                if let Ok(res) = reqwest::get(format!("{base}/readyz")).await {
                    if res.status() == 200 {
                        break;
                    }
                }
                assert!(
                    Instant::now() < deadline,
                    "not ready in 30 s: {:?}",
                    logs.lock().unwrap()
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            SiteProcess {
                child,
                base,
                logs,
                _data: data,
            }
        }

        pub fn signal(&self, sig: &str) {
            let ok = Command::new("kill")
                .args([&format!("-{sig}"), &self.child.id().to_string()])
                .status()
                .unwrap()
                .success();
            assert!(ok, "kill -{sig}");
        }

        /// Waits for the process to exit; its exit status and how long it took.
        pub async fn exited(&mut self, within: Duration) -> (std::process::ExitStatus, Duration) {
            let started = Instant::now();
            loop {
                if let Some(status) = self.child.try_wait().unwrap() {
                    return (status, started.elapsed());
                }
                assert!(started.elapsed() < within, "still running after {within:?}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }

        /// Stops it as an operator does (SIGTERM) and waits for it to exit.
        pub async fn stop(mut self) {
            self.signal("TERM");
            let (status, _) = self.exited(Duration::from_secs(20)).await;
            assert!(status.success(), "the server exited with {status}");
        }

        pub fn logged(&self) -> Vec<Value> {
            self.logs
                .lock()
                .unwrap()
                .iter()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()
        }
    }

    impl Drop for SiteProcess {
        fn drop(&mut self) {
            let _ = self.child.kill();
        }
    }
}

/// What an operator's command did: its exit code and its two outputs.
#[derive(Debug)]
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// Standard output as JSON, which a successful `--json` command prints.
    pub fn json(&self) -> serde_json::Value {
        assert_eq!(self.code, 0, "{self:?}");
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }
}

/// Runs `citizen-site ARGS` on the database `database_url`, with `env`, the
/// way an operator would (off the async runtime: it may take a while).
pub async fn operate(database_url: &str, args: &[&str], env: &[(&str, &str)]) -> Ran {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_citizen-site"));
    command
        .args(args)
        .env("DATABASE_URL", database_url)
        .env("RUST_BACKTRACE", "0")
        .env_remove("RUST_LOG");
    for var in ["NOTION_TOKEN", "NOTION_DATABASE_ID", "NOTION_API_BASE"] {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    let out = tokio::task::spawn_blocking(move || command.output().expect("running citizen-site"))
        .await
        .unwrap();
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("UTF-8 output"),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
