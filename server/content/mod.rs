//! Bundled content, parsed once at start into typed values: blog posts
//! (Markdown -> sanitized HTML) and community configs. A malformed file stops
//! the server with a message naming it.

pub mod blog;
pub mod communities;
pub mod markdown;

use crate::assets::Manifest;

mod files {
    include!(concat!(env!("OUT_DIR"), "/content.rs"));
}

#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct ContentError {
    pub file: String,
    pub message: String,
}

impl ContentError {
    pub fn new(file: &str, message: impl std::fmt::Display) -> ContentError {
        ContentError { file: file.to_owned(), message: message.to_string() }
    }
}

/// Everything bundled, ready to serve.
pub struct Content {
    pub blog: blog::Blog,
    pub communities: communities::Communities,
}

impl Content {
    /// Parses the files compiled into the binary.
    pub fn embedded(manifest: &Manifest) -> Result<Content, ContentError> {
        Ok(Content {
            blog: blog::Blog::parse(files::BLOG_FILES, manifest)?,
            communities: communities::Communities::parse(files::COMMUNITY_FILES, manifest)?,
        })
    }
}
