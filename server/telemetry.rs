//! Logs through tracing: human-readable text by default, JSON lines with
//! `LOG_FORMAT=json`; the level from `RUST_LOG` (default `info`).
//!
//! Every line logged while a request is served carries its id
//! (`request_id`): the request middleware runs the request inside
//! [`with_request_id`], and the formatter adds the id to each line. A task
//! local instead of a tracing span because a span is made (and its fields
//! formatted) for every request, logged or not, which cost the cached-page
//! path about a fifth of its throughput; the task local costs nothing until a
//! line is written.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{Format, Full, Json, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::EnvFilter;

/// How log lines are written (`LOG_FORMAT`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

tokio::task_local! {
    static REQUEST_ID: Arc<str>;
}

/// The header a request's id is sent back in (and a trusted proxy's id
/// read from).
pub const REQUEST_ID_HEADER: axum::http::HeaderName =
    axum::http::HeaderName::from_static("x-request-id");

/// Runs `work` (the serving of one request) with `id` as its request id.
pub async fn with_request_id<F: Future>(id: Arc<str>, work: F) -> F::Output {
    REQUEST_ID.scope(id, work).await
}

/// A new request id: a random number drawn once per process and a count
/// of the ids made, laid out as a UUID (version 8, RFC 9562), so ids are
/// unique across processes and restarts without a random draw per request.
pub fn new_request_id() -> axum::http::HeaderValue {
    use std::sync::atomic::{AtomicU64, Ordering};
    static PROCESS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let process = *PROCESS.get_or_init(|| uuid::Uuid::new_v4().as_u64_pair().0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    let id = uuid::Builder::from_custom_bytes(
        ((u128::from(process) << 64) | u128::from(n)).to_be_bytes(),
    )
    .into_uuid();
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    axum::http::HeaderValue::from_str(id.hyphenated().encode_lower(&mut text))
        .expect("a UUID is a header value")
}

/// The id of the request being served on this task, if any.
pub fn current_request_id() -> Option<Arc<str>> {
    REQUEST_ID.try_with(Arc::clone).ok()
}

/// Log lines keep at most 200 characters of a path or any other text a
/// visitor chose (a hostile 60 kB path would otherwise be copied into every
/// line of its request).
pub fn shorten(path: &str) -> &str {
    match path.char_indices().nth(200) {
        Some((i, _)) => &path[..i],
        None => path,
    }
}

/// Lets through at most `per_minute` log lines of one kind a minute (a
/// crawler's stream of 404s); the next line let through says how many
/// were held back.
pub struct LogSampler {
    per_minute: u32,
    started: std::time::Instant,
    /// (minute since start, lines let through in it), packed as one word so
    /// that a new minute and its first line are one step.
    window: std::sync::atomic::AtomicU64,
    skipped: std::sync::atomic::AtomicU64,
}

impl LogSampler {
    pub fn new(per_minute: u32) -> LogSampler {
        LogSampler {
            per_minute,
            started: std::time::Instant::now(),
            window: Default::default(),
            skipped: Default::default(),
        }
    }

    /// Some(lines held back since the last one let through) when this line
    /// may be written; None when it is held back.
    pub fn admit(&self) -> Option<u64> {
        self.admit_at(self.started.elapsed())
    }

    fn admit_at(&self, since_start: std::time::Duration) -> Option<u64> {
        use std::sync::atomic::Ordering::Relaxed;
        let minute = since_start.as_secs() / 60;
        let pass = self.window.fetch_update(Relaxed, Relaxed, |w| {
            let (m, n) = (w >> 32, w & 0xffff_ffff);
            if m != minute {
                Some(minute << 32 | 1)
            } else if n < u64::from(self.per_minute) {
                Some(w + 1)
            } else {
                None
            }
        });
        match pass {
            Ok(_) => Some(self.skipped.swap(0, Relaxed)),
            Err(_) => {
                self.skipped.fetch_add(1, Relaxed);
                None
            }
        }
    }
}

pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,tower_http=warn"));
    // Colours for a person at a terminal; none in a file or the journal.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stdout())
        && std::env::var_os("NO_COLOR").is_none();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour);
    let _ = match format {
        LogFormat::Text => builder.event_format(WithRequestId::text()).try_init(),
        LogFormat::Json => builder
            .json()
            .event_format(WithRequestId::json())
            .try_init(),
    };
}

/// Logging for the operator's commands: warnings and errors (or what
/// `RUST_LOG` asks for) as text on standard error, which keeps standard
/// output for the command's own output.
pub fn init_cli() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour)
        .with_writer(std::io::stderr)
        .try_init();
}

/// The standard line, plus `request_id` when there is one: appended to a
/// text line, a top-level field of a JSON line.
pub struct WithRequestId<F> {
    plain: F,
    coloured: F,
    json: bool,
}

impl WithRequestId<Format<Full>> {
    pub fn text() -> Self {
        let f = tracing_subscriber::fmt::format();
        WithRequestId {
            plain: f.clone().with_ansi(false),
            coloured: f.with_ansi(true),
            json: false,
        }
    }
}

impl WithRequestId<Format<Json>> {
    pub fn json() -> Self {
        let f = tracing_subscriber::fmt::format().json();
        WithRequestId {
            plain: f.clone(),
            coloured: f,
            json: true,
        }
    }
}

impl<S, N, F> FormatEvent<S, N> for WithRequestId<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let inner = if writer.has_ansi_escapes() {
            &self.coloured
        } else {
            &self.plain
        };
        let Some(id) = current_request_id() else {
            return inner.format_event(ctx, writer, event);
        };
        let mut line = String::new();
        inner.format_event(ctx, Writer::new(&mut line), event)?;
        let body = line.strip_suffix('\n').unwrap_or(&line);
        if self.json {
            // The id is checked plain text (see http::observe): no escaping needed.
            match body.strip_prefix('{') {
                Some(rest) => writeln!(writer, "{{\"request_id\":\"{id}\",{rest}"),
                None => writeln!(writer, "{body}"),
            }
        } else {
            writeln!(writer, "{body} request_id={id}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn request_ids_are_uuids_of_one_process_and_never_repeat() {
        let ids: Vec<uuid::Uuid> = (0..1000)
            .map(|_| new_request_id().to_str().unwrap().parse().unwrap())
            .collect();
        assert!(
            ids.iter()
                .all(|id| id.get_version_num() == 8 && id.get_variant() == uuid::Variant::RFC4122),
            "{}",
            ids[0]
        );
        let mut seen = ids.clone();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), ids.len(), "an id came twice");
        assert!(
            ids.iter()
                .all(|id| id.as_u64_pair().0 == ids[0].as_u64_pair().0),
            "one process, one random half"
        );
    }

    #[test]
    fn a_sampler_lets_some_lines_through_each_minute_and_counts_the_rest() {
        let s = LogSampler::new(3);
        let at = |secs| s.admit_at(std::time::Duration::from_secs(secs));
        assert_eq!(
            [at(0), at(1), at(2), at(3), at(59)],
            [Some(0), Some(0), Some(0), None, None]
        );
        assert_eq!(
            at(60),
            Some(2),
            "the next minute's first line says two were held back"
        );
        assert_eq!([at(61), at(62), at(63)], [Some(0), Some(0), None]);
        assert_eq!(shorten(&"é".repeat(300)).chars().count(), 200);
    }

    /// Captures what the subscriber writes.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn lines(json: bool) -> Vec<String> {
        let out = Captured::default();
        let writer = out.clone();
        let builder = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false);
        let dispatch: tracing::Dispatch = if json {
            builder
                .json()
                .event_format(WithRequestId::json())
                .finish()
                .into()
        } else {
            builder.event_format(WithRequestId::text()).finish().into()
        };
        tracing::dispatcher::with_default(&dispatch, || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            tracing::warn!("outside any request");
            rt.block_on(with_request_id("req-1".into(), async {
                tracing::warn!(path = "/x", "inside a request");
                tokio::task::yield_now().await;
                tracing::error!("still inside");
            }));
        });
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        text.lines().map(str::to_owned).collect()
    }

    #[test]
    fn lines_written_while_serving_a_request_carry_its_id() {
        let text = lines(false);
        assert_eq!(text.len(), 3, "{text:?}");
        assert!(!text[0].contains("request_id"), "{}", text[0]);
        assert!(
            text[1].contains("inside a request") && text[1].ends_with(" request_id=req-1"),
            "{}",
            text[1]
        );
        assert!(text[2].ends_with(" request_id=req-1"), "{}", text[2]);

        let json = lines(true);
        let parsed: Vec<serde_json::Value> = json
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(parsed[0].get("request_id").is_none());
        assert_eq!(parsed[1]["request_id"], "req-1");
        assert_eq!(parsed[1]["fields"]["path"], "/x");
        assert_eq!(parsed[2]["request_id"], "req-1");
    }
}
