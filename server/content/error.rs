//! A content file that cannot be used, and the files the server reads by
//! name: what every parser of `content/` reports, in one shape (`dev`
//! shows it on the pages it breaks; `serve` refuses to start on it).

pub const ROUTES_FILE: &str = "content/routes.json";
pub const INTRO_TAGS_FILE: &str = "content/site/intro-tags.json";
pub const EMBEDS_FILE: &str = "content/site/embeds.json";
pub const ACCOUNTS_FILE: &str = "content/site/accounts.json";

/// A content file that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", at(*line, *column))]
pub struct ContentError {
    /// Its path from the checkout's root, e.g. `content/blog/x.md`.
    pub file: String,
    /// 1-based, when the parser tells.
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub message: String,
}

fn at(line: Option<u32>, column: Option<u32>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

impl ContentError {
    pub fn new(file: &str, message: impl std::fmt::Display) -> ContentError {
        ContentError {
            file: file.to_owned(),
            line: None,
            column: None,
            message: message.to_string(),
        }
    }

    pub fn at(mut self, line: usize, column: usize) -> ContentError {
        self.line = u32::try_from(line).ok();
        self.column = u32::try_from(column).ok();
        self
    }

    /// A JSON file serde_json could not read: the line and column it gives.
    pub fn json(file: &str, e: &serde_json::Error) -> ContentError {
        let message = e.to_string();
        // serde_json appends " at line L column C"; the location has its own fields.
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m)
            .to_owned();
        ContentError::new(file, message).at(e.line(), e.column())
    }
}
