//! Server-side rendering: a pool of V8 isolates running the React bundle
//! (`pool`), the HTML document around their output (`document`, with the
//! CSS its markup uses: [`crate::css`]), and the page cache (`cache`).

pub mod cache;
pub mod document;
pub mod pool;

pub use pool::{RenderError, RenderOutput, SsrPool};

/// A page of the site that did not render when it was made: its path,
/// what went wrong (the script's error, a timeout, a 500) and, for a
/// script's error, its stack trace (positions in the server bundle). What
/// the prerender found (`AppState::unrendered`): a start says it, a
/// successor refuses to take over with it, `pack` refuses to write the
/// binary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Unrendered {
    pub path: String,
    pub error: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
}

/// The pages that did not render, in one sentence for a log or a refusal:
/// `2 pages of the site do not render: /events (TypeError: …); /about (…)`.
pub fn unrendered_said(pages: &[Unrendered]) -> String {
    let each: Vec<String> = pages
        .iter()
        .map(|u| format!("{} ({})", u.path, u.error))
        .collect();
    match pages.len() {
        1 => format!("a page of the site does not render: {}", each[0]),
        n => format!("{n} pages of the site do not render: {}", each.join("; ")),
    }
}
