//! Server-side rendering: a pool of V8 isolates running the React bundle
//! (`pool`), the HTML document around their output (`document`) with the
//! CSS its markup uses (`inline_css`), and the page cache (`cache`).

pub mod cache;
pub mod document;
pub mod inline_css;
pub mod pool;

pub use pool::{RenderError, RenderOutput, SsrPool};
