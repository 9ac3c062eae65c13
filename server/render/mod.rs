//! Server-side rendering: a pool of V8 isolates running the React bundle
//! (`pool`), the HTML document around their output (`document`, with the
//! CSS its markup uses: [`crate::css`]), and the page cache (`cache`).

pub mod cache;
pub mod document;
pub mod pool;

pub use pool::{RenderError, RenderOutput, SsrPool};
