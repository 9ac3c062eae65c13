//! `citizen-site dev`: the site served from a checkout's sources, rebuilt
//! and reloaded on every change without restarting this process.
//!
//! One Node process ([`builder`]) watches `client/`, `ssr-bundle/` and
//! `content/`; on a change it rebuilds the front end with esbuild's
//! incremental contexts and Tailwind's compiler into a new folder, and
//! reports. For each report this module makes a new [`Site`]: a successful
//! build gets fresh isolates loaded with its server bundle (no startup
//! snapshot) and its manifest and files; the content is read from disk
//! through the same parsers `serve` uses. The site is swapped in whole, the
//! page cache cleared, and the reload script in every open page is told.
//!
//! Nothing broken replaces what worked: a build that fails keeps the last
//! good front end, a malformed file keeps its last good content, and the
//! pages they break answer with the error (the problem page, through the
//! [`DevPages`] hook each dev site carries) until it is fixed, the rest of
//! the site being served as usual.

pub mod builder;
pub(crate) mod problem;

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use axum::http::header;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tokio::sync::watch;

use problem::{map_stack, source_line, Kind, Problem};

use crate::assets::{AssetFiles, Manifest};
use crate::config::{Config, SsrConfig};
use crate::content::blog::{Drafts, Scheduled};
use crate::content::routes::PageId;
use crate::content::{Content, Source};
use crate::html::escape;
use crate::http::ReservedRoutes;
use crate::render::SsrPool;
use crate::site::{DevPages, Frontend, Site};
use crate::state::{AppState, SharedState};
use builder::{Builder, FrontBuild, Report};

/// The reload script's URL; the only script a dev page adds.
pub const SCRIPT_URL: &str = "/__dev/client.js";
const STYLE_URL: &str = "/__dev/problems.css";
const EVENTS_URL: &str = "/__dev/events";

/// How long a new server bundle may take to load in the isolates.
const LOAD_TIMEOUT: Duration = Duration::from_secs(30);

/// What the reload script hears on [`EVENTS_URL`].
#[derive(Debug, Clone)]
enum Announcement {
    Site {
        generation: u64,
        problems: usize,
    },
    /// The server is shutting down: the event streams end.
    Closing,
}

/// The part of `dev` the application holds: the reload events (served by
/// [`routes`], closed at shutdown).
#[derive(Clone)]
pub struct DevHandle {
    announcements: watch::Sender<Announcement>,
    root: Arc<PathBuf>,
}

impl DevHandle {
    /// Ends every event stream (at shutdown, so open pages do not hold it up).
    pub fn close(&self) {
        self.announcements.send_replace(Announcement::Closing);
    }

    /// The checkout being served.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn announce(&self, generation: u64, problems: usize) {
        self.announcements.send_replace(Announcement::Site {
            generation,
            problems,
        });
    }
}

/// The builder and what the reloads remember between reports.
pub struct DevServer {
    builder: Builder,
    handle: DevHandle,
    /// Why the last front-end build failed; kept until one succeeds.
    front_problems: Vec<Problem>,
    generation: u64,
    /// How many problems the last site made has.
    problems: usize,
}

/// Starts the builder in `root` and makes the site of its first build (a
/// failed first build gives a site that shows the failure on every page).
pub async fn start(root: &Path, config: &Config) -> anyhow::Result<(Site, DevServer)> {
    let root = root
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("--root {}: {e}", root.display()))?;
    let builder = Builder::spawn(&root)?;
    tracing::info!(root = %root.display(), "dev: building the front end (node client/build.mjs --watch)");
    // Generations continue across restarts (milliseconds since 1970), so a
    // page from an earlier run always reloads.
    let generation = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let (announcements, _) = watch::channel(Announcement::Site {
        generation,
        problems: 0,
    });
    let mut dev = DevServer {
        builder,
        handle: DevHandle {
            announcements,
            root: Arc::new(root),
        },
        front_problems: Vec::new(),
        generation,
        problems: 0,
    };
    let first = dev.builder.next().await.map_err(anyhow::Error::msg)?;
    let site = dev.next_site(None, first, config).await;
    dev.handle.announce(dev.generation, dev.problems);
    Ok((site, dev))
}

impl DevServer {
    pub fn handle(&self) -> DevHandle {
        self.handle.clone()
    }

    /// Applies the builder's reports until the application is gone. When
    /// the builder stops, every page says so.
    pub fn spawn(mut self, state: Weak<AppState>) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                let report = self.builder.next().await;
                let Some(state) = state.upgrade() else { return };
                let current = state.site();
                let (site, stopped) = match report {
                    Ok(report) => (
                        self.next_site(Some(&current), report, &state.config).await,
                        false,
                    ),
                    Err(why) => {
                        let problem = Problem::general(Kind::Builder, why);
                        tracing::error!("{problem}");
                        let site = self.site(
                            current.front.clone(),
                            current.content.clone(),
                            vec![problem],
                            &state.config,
                        );
                        (site, true)
                    }
                };
                // Told after the swap, so a page that reloads gets the new site.
                state.replace_site(site);
                self.handle.announce(self.generation, self.problems);
                if stopped {
                    return;
                }
            }
        })
    }

    /// The site after `report`, made from `current` and what changed.
    async fn next_site(
        &mut self,
        current: Option<&Site>,
        mut report: Report,
        config: &Config,
    ) -> Site {
        let started = Instant::now();
        let root = self.handle.root.clone();
        let last_front = || {
            current
                .map(|s| s.front.clone())
                .unwrap_or_else(|| Arc::new(Frontend::none(&config.ssr)))
        };
        let build_ms = report.front.as_ref().map(|b| b.ms);
        // Said by every front-end build, whether it worked or not.
        let missing = report
            .front
            .as_mut()
            .map(|b| std::mem::take(&mut b.missing));
        let front = match report.front {
            None => last_front(),
            Some(FrontBuild {
                ok: true,
                dir: Some(dir),
                ..
            }) => match load_front(&dir, &config.ssr, &root).await {
                Ok(front) => {
                    self.front_problems.clear();
                    Arc::new(front)
                }
                Err(problem) => {
                    self.front_problems = vec![problem];
                    last_front()
                }
            },
            Some(build) => {
                self.front_problems = build
                    .errors
                    .into_iter()
                    .map(|e| Problem {
                        kind: Kind::Build,
                        file: e.file,
                        line: e.line,
                        column: e.column,
                        message: e.text,
                        trace: None,
                        source_line: e.line_text,
                        pages: build.pages.clone(),
                    })
                    .collect();
                last_front()
            }
        };
        if let Some(missing) = missing {
            self.front_problems
                .extend(missing.into_iter().map(Problem::missing));
        }
        // Without any build there are no image URLs to check content against.
        let (mut content, errors) = if front.manifest.entry.is_empty() {
            (Content::default(), Vec::new())
        } else {
            Content::reload(
                Source::Dir(&root),
                &front.manifest,
                Drafts::Show,
                current.map(|s| &*s.content),
            )
        };
        // Posts whose time has not come show too, marked, until it comes.
        content.blog.set_scheduled(Scheduled::Show);
        let mut problems = self.front_problems.clone();
        problems.extend(errors.iter().map(|e| Problem::from_content(e, &root)));
        for p in &problems {
            tracing::error!("{p}");
        }
        let changed = if report.changed.is_empty() {
            "start".to_owned()
        } else {
            report.changed.join(", ")
        };
        if problems.is_empty() {
            tracing::info!(
                build_ms,
                total_ms = started.elapsed().as_millis() as u64 + build_ms.unwrap_or(0),
                "dev: reloaded ({changed})"
            );
        } else {
            tracing::warn!(
                problems = problems.len(),
                "dev: reloaded with problems ({changed}); the pages they break show them"
            );
        }
        self.site(front, Arc::new(content), problems, config)
    }

    /// The next site: a new generation, carrying its problems in its hook.
    fn site(
        &mut self,
        front: Arc<Frontend>,
        content: Arc<Content>,
        problems: Vec<Problem>,
        config: &Config,
    ) -> Site {
        self.generation += 1;
        self.problems = problems.len();
        let pages = DevSite {
            generation: self.generation,
            problems,
            front: front.clone(),
            root: self.handle.root.clone(),
        };
        Site::new(
            self.generation,
            front,
            content,
            Some(Arc::new(pages)),
            config,
        )
    }
}

/// What a dev site changes in its pages: the reload script in every head,
/// nothing cached while something is broken, and the problem page instead
/// of a page a problem breaks or whose render throws.
struct DevSite {
    generation: u64,
    problems: Vec<Problem>,
    /// Its source map turns a render's stack into source positions.
    front: Arc<Frontend>,
    root: Arc<PathBuf>,
}

impl DevPages for DevSite {
    fn caches(&self) -> bool {
        self.problems.is_empty()
    }

    fn broken(&self, page: PageId) -> Option<String> {
        let breaking: Vec<&Problem> = self
            .problems
            .iter()
            .filter(|p| p.breaks(page.name()))
            .collect();
        (!breaking.is_empty()).then(|| problem_html(self.generation, &breaking))
    }

    fn threw(&self, page: PageId, error: &str, stack: Option<&str>) -> String {
        let problem = render_problem(
            error,
            stack,
            self.front.source_map.as_ref(),
            &self.root,
            Some(page.name()),
        );
        tracing::error!("{problem}");
        problem_html(self.generation, &[&problem])
    }

    fn head_tags(&self) -> String {
        script_tag(self.generation)
    }
}

/// A finished build: its manifest and files, and isolates that have loaded
/// its server bundle; or why the bundle does not load.
async fn load_front(dir: &Path, ssr: &SsrConfig, root: &Path) -> Result<Frontend, Problem> {
    let (manifest, bundle, source_map) =
        read_build(dir).map_err(|why| Problem::general(Kind::Build, why))?;
    let pool = SsrPool::start(&SsrConfig {
        bundle: bundle.into(),
        snapshot: None,
        ..ssr.clone()
    });
    match tokio::time::timeout(LOAD_TIMEOUT, pool.wait_ready()).await {
        Ok(Ok(())) => Ok(Frontend {
            pool,
            files: AssetFiles::in_dir(dir, &manifest),
            manifest,
            source_map,
        }),
        Ok(Err(why)) => Err(render_problem(&why, None, source_map.as_ref(), root, None)),
        Err(_) => Err(Problem::general(
            Kind::Build,
            format!("the server bundle did not load within {LOAD_TIMEOUT:?}"),
        )),
    }
}

/// A build folder's manifest, server bundle and its source map.
fn read_build(dir: &Path) -> Result<(Manifest, String, Option<sourcemap::SourceMap>), String> {
    let read = |name: &str| {
        std::fs::read(dir.join(name))
            .map_err(|e| format!("reading {}: {e}", dir.join(name).display()))
    };
    let manifest = Manifest::in_dir(dir)?;
    let bundle = String::from_utf8(read("ssr.js")?).map_err(|e| format!("ssr.js: {e}"))?;
    let source_map = read("ssr.js.map")
        .ok()
        .and_then(|b| sourcemap::SourceMap::from_slice(&b).ok());
    Ok((manifest, bundle, source_map))
}

/// A render (or the bundle's loading) that threw: its message, and where in
/// the sources, from the stack trace through the bundle's source map.
fn render_problem(
    error: &str,
    stack: Option<&str>,
    map: Option<&sourcemap::SourceMap>,
    root: &Path,
    page: Option<&str>,
) -> Problem {
    // A render's error comes with its stack; a failed load's message is
    // the message followed by the stack.
    let trace = stack.unwrap_or(error);
    let (mapped, at) = match map {
        Some(map) => map_stack(trace, map),
        None => (trace.to_owned(), None),
    };
    let message = error
        .lines()
        .next()
        .unwrap_or(error)
        .trim_start_matches("Uncaught ")
        .to_owned();
    // The frames, without React's own dozens below the page's.
    let frames: Vec<&str> = mapped
        .lines()
        .filter(|l| l.trim_start().starts_with("at "))
        .take(TRACE_FRAMES)
        .collect();
    let (file, line, column) = match at {
        Some((f, l, c)) => (Some(f), Some(l), Some(c)),
        None => (None, None, None),
    };
    Problem {
        kind: Kind::Render,
        source_line: file
            .as_deref()
            .zip(line)
            .and_then(|(f, l)| source_line(root, f, l)),
        file,
        line,
        column,
        message,
        trace: (!frames.is_empty()).then(|| frames.join("\n")),
        pages: page.map(|p| vec![p.to_owned()]),
    }
}

/// Stack frames a problem page shows.
const TRACE_FRAMES: usize = 8;

/// The `<script>` a dev page carries: it reloads the page when the site
/// changes. External, so the Content-Security-Policy holds as in `serve`.
fn script_tag(generation: u64) -> String {
    format!(r#"<script type="module" src="{SCRIPT_URL}" data-generation="{generation}"></script>"#)
}

/// The page shown instead of one that `problems` break (served with 500
/// and `no-store`): each problem's kind, file, line and message, and the
/// source line at fault.
fn problem_html(generation: u64, problems: &[&Problem]) -> String {
    let mut html = String::from(crate::render::document::HEAD_START);
    let title = problems.first().map_or("Problem", |p| p.kind.title());
    html.push_str(&format!(
        r#"<title>{title} — citizen-site dev</title><link rel="stylesheet" href="{STYLE_URL}">"#
    ));
    html.push_str(&script_tag(generation));
    html.push_str(r#"</head><body><main class="problems">"#);
    for p in problems {
        html.push_str(r#"<section class="problem">"#);
        html.push_str(&format!("<h1>{}</h1>", p.kind.title()));
        if let Some(at) = p.location() {
            html.push_str(&format!(r#"<p class="where">{}</p>"#, escape(&at)));
        }
        html.push_str(&format!(
            r#"<pre class="message">{}</pre>"#,
            escape(&p.message)
        ));
        if let Some(trace) = &p.trace {
            html.push_str(&format!(r#"<pre class="trace">{}</pre>"#, escape(trace)));
        }
        if let (Some(text), Some(line)) = (&p.source_line, p.line) {
            let gutter = format!("{line} | ");
            let mut frame = format!("{gutter}{text}");
            if let Some(col) = p.column {
                let pad: String = text
                    .chars()
                    .take(col.saturating_sub(1) as usize)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                frame.push_str(&format!("\n{}{pad}^", " ".repeat(gutter.len())));
            }
            html.push_str(&format!(r#"<pre class="source">{}</pre>"#, escape(&frame)));
        }
        html.push_str("</section>");
    }
    html.push_str(r#"<p class="hint">Fix the file and save: this page reloads by itself. Pages this does not break are served as usual.</p>"#);
    html.push_str("</main></body></html>");
    html
}

/// `/__dev/*`: the reload script, its event stream and the problem page's
/// stylesheet. Only `dev` routes them.
pub fn routes(handle: DevHandle) -> Router<SharedState> {
    Router::new()
        .reserved_route(
            SCRIPT_URL,
            get(|| async { asset("text/javascript; charset=utf-8", include_str!("client.js")) }),
        )
        .reserved_route(
            STYLE_URL,
            get(|| async { asset("text/css; charset=utf-8", include_str!("problems.css")) }),
        )
        .reserved_route(EVENTS_URL, get(move || events(handle.clone())))
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// Server-sent events: the site's generation and how many problems it has,
/// now and after every change, until shutdown.
async fn events(dev: DevHandle) -> Response {
    let rx = dev.announcements.subscribe();
    let stream = futures_util::stream::unfold((rx, true), |(mut rx, first)| async move {
        if !first && rx.changed().await.is_err() {
            return None;
        }
        let now = rx.borrow_and_update().clone();
        match now {
            Announcement::Closing => None,
            Announcement::Site {
                generation,
                problems,
            } => {
                let data = serde_json::json!({ "generation": generation.to_string(), "problems": problems }).to_string();
                Some((
                    Ok::<_, Infallible>(Event::default().event("site").data(data)),
                    (rx, false),
                ))
            }
        }
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}
