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

use crate::config::LogFormat;

tokio::task_local! {
    static REQUEST_ID: Arc<str>;
}

/// Runs `work` (the serving of one request) with `id` as its request id.
pub async fn with_request_id<F: Future>(id: Arc<str>, work: F) -> F::Output {
    REQUEST_ID.scope(id, work).await
}

/// The id of the request being served on this task, if any.
pub fn current_request_id() -> Option<Arc<str>> {
    REQUEST_ID.try_with(Arc::clone).ok()
}

pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,tower_http=warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let _ = match format {
        LogFormat::Text => builder.event_format(WithRequestId::text()).try_init(),
        LogFormat::Json => builder.json().event_format(WithRequestId::json()).try_init(),
    };
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
        WithRequestId { plain: f.clone().with_ansi(false), coloured: f.with_ansi(true), json: false }
    }
}

impl WithRequestId<Format<Json>> {
    pub fn json() -> Self {
        let f = tracing_subscriber::fmt::format().json();
        WithRequestId { plain: f.clone(), coloured: f, json: true }
    }
}

impl<S, N, F> FormatEvent<S, N> for WithRequestId<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        let inner = if writer.has_ansi_escapes() { &self.coloured } else { &self.plain };
        let Some(id) = current_request_id() else {
            return inner.format_event(ctx, writer, event);
        };
        let mut line = String::new();
        inner.format_event(ctx, Writer::new(&mut line), event)?;
        let body = line.strip_suffix('\n').unwrap_or(&line);
        if self.json {
            // The id is checked plain text (see routes::observe): no escaping needed.
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
        let builder = tracing_subscriber::fmt().with_writer(move || writer.clone()).with_ansi(false);
        let dispatch: tracing::Dispatch = if json {
            builder.json().event_format(WithRequestId::json()).finish().into()
        } else {
            builder.event_format(WithRequestId::text()).finish().into()
        };
        tracing::dispatcher::with_default(&dispatch, || {
            let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
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
        assert!(text[1].contains("inside a request") && text[1].ends_with(" request_id=req-1"), "{}", text[1]);
        assert!(text[2].ends_with(" request_id=req-1"), "{}", text[2]);

        let json = lines(true);
        let parsed: Vec<serde_json::Value> = json.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert!(parsed[0].get("request_id").is_none());
        assert_eq!(parsed[1]["request_id"], "req-1");
        assert_eq!(parsed[1]["fields"]["path"], "/x");
        assert_eq!(parsed[2]["request_id"], "req-1");
    }
}
