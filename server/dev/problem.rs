//! What `dev` shows instead of a page it cannot serve as the sources say:
//! a build error, a page without its component, a malformed content file,
//! or a render that threw, each with its file, line and message, and the
//! pages it breaks.

use std::fmt;
use std::path::Path;

use super::builder::MissingComponent;
use crate::content::{self, ContentError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub kind: Kind,
    /// Path from the checkout's root, when known.
    pub file: Option<String>,
    /// 1-based.
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// One line: what went wrong.
    pub message: String,
    /// A render's stack trace, mapped to the sources.
    pub trace: Option<String>,
    /// The text of the line at fault.
    pub source_line: Option<String>,
    /// The pages it breaks; None: every page.
    pub pages: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// esbuild or Tailwind could not build the front end.
    Build,
    /// A page of the route table has no component yet.
    Component,
    /// A content file the server reads is malformed.
    Content,
    /// The server bundle threw while loading or rendering.
    Render,
    /// The builder process is gone.
    Builder,
}

impl Kind {
    pub fn title(self) -> &'static str {
        match self {
            Kind::Build => "Build failed",
            Kind::Component => "Component missing",
            Kind::Content => "Content error",
            Kind::Render => "Render failed",
            Kind::Builder => "Builder stopped",
        }
    }
}

impl Problem {
    pub fn breaks(&self, page: &str) -> bool {
        self.pages
            .as_ref()
            .is_none_or(|pages| pages.iter().any(|p| p == page))
    }

    /// `file:line:column`, as much of it as is known.
    pub fn location(&self) -> Option<String> {
        let file = self.file.as_deref()?;
        Some(match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{file}:{l}:{c}"),
            (Some(l), None) => format!("{file}:{l}"),
            _ => file.to_owned(),
        })
    }

    /// A malformed content file. It breaks the pages that show it: posts
    /// the blog, community configs the wallets page, the tags the contact
    /// form; the route table, the embeds (in every page's
    /// Content-Security-Policy) and the accounts (in every page's head)
    /// break every page.
    pub fn from_content(e: &ContentError, root: &Path) -> Problem {
        let pages = if e.file.starts_with("content/blog") {
            Some(vec!["Blog".to_owned()])
        } else if e.file.starts_with("content/communities") {
            Some(vec!["Wallets".to_owned()])
        } else if e.file == content::INTRO_TAGS_FILE {
            Some(vec!["Contact".to_owned()])
        } else {
            None
        };
        Problem {
            kind: Kind::Content,
            file: Some(e.file.clone()),
            line: e.line,
            column: e.column,
            message: e.message.clone(),
            trace: None,
            source_line: e.line.and_then(|l| source_line(root, &e.file, l)),
            pages,
        }
    }

    /// A page the route table names whose component is not written yet:
    /// it breaks that page alone (the build leaves it out).
    pub fn missing(m: MissingComponent) -> Problem {
        Problem {
            kind: Kind::Component,
            file: m.error.file,
            line: m.error.line,
            column: m.error.column,
            message: m.error.text,
            trace: None,
            source_line: m.error.line_text,
            pages: Some(vec![m.page]),
        }
    }

    /// A problem with no place in the sources (the builder is gone, a
    /// build's folder cannot be read): every page shows it.
    pub fn general(kind: Kind, message: String) -> Problem {
        Problem {
            kind,
            file: None,
            line: None,
            column: None,
            message,
            trace: None,
            source_line: None,
            pages: None,
        }
    }
}

/// Line `line` (1-based) of `root/file`.
pub fn source_line(root: &Path, file: &str, line: u32) -> Option<String> {
    let text = std::fs::read_to_string(root.join(file)).ok()?;
    text.lines()
        .nth(usize::try_from(line).ok()?.checked_sub(1)?)
        .map(str::to_owned)
}

/// One line for the terminal: `Build failed: client/features/home/Home.tsx:12:7: Expected ";"`.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location() {
            Some(at) => write!(f, "{}: {at}: {}", self.kind.title(), self.message),
            None => write!(f, "{}: {}", self.kind.title(), self.message),
        }
    }
}

/// Rewrites every `ssr.js:LINE:COLUMN` of a V8 stack trace to the source
/// position `map` gives (`client/features/home/Home.tsx:12:7`), and returns the
/// trace with the first position in the project's own files (not a
/// dependency's), if any.
pub fn map_stack(trace: &str, map: &sourcemap::SourceMap) -> (String, Option<(String, u32, u32)>) {
    const MARK: &str = "ssr.js:";
    let mut out = String::with_capacity(trace.len());
    let mut first_own = None;
    let mut rest = trace;
    while let Some(i) = rest.find(MARK) {
        out.push_str(&rest[..i]);
        let after = &rest[i + MARK.len()..];
        let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let line_len = digits(after);
        let col_len = after[line_len..].strip_prefix(':').map(digits).unwrap_or(0);
        let position = (line_len > 0 && col_len > 0).then(|| {
            let line: u32 = after[..line_len].parse().ok()?;
            let col: u32 = after[line_len + 1..line_len + 1 + col_len].parse().ok()?;
            let token = map.lookup_token(line.checked_sub(1)?, col.checked_sub(1)?)?;
            Some((
                token.get_source()?.to_owned(),
                token.get_src_line() + 1,
                token.get_src_col() + 1,
            ))
        });
        match position.flatten() {
            Some((file, line, col)) => {
                out.push_str(&format!("{file}:{line}:{col}"));
                if first_own.is_none() && !file.contains("node_modules/") {
                    first_own = Some((file, line, col));
                }
                rest = &after[line_len + 1 + col_len..];
            }
            None => {
                out.push_str(MARK);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    (out, first_own)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_positions_map_to_the_sources() {
        // Generated line 1 maps to dep.js, line 2 to client/features/home/Home.tsx:12:5.
        let mut b = sourcemap::SourceMapBuilder::new(Some("ssr.js"));
        b.add(0, 0, 0, 0, Some("node_modules/react/index.js"), None, false);
        b.add(
            1,
            4,
            11,
            4,
            Some("client/features/home/Home.tsx"),
            None,
            false,
        );
        let map = b.into_sourcemap();
        let trace = "Error: boom\n    at inner (ssr.js:1:1)\n    at Home (ssr.js:2:5)\n    at x (ssr.js:99:1)\n    at y (other.js:2:5)";
        let (mapped, first) = map_stack(trace, &map);
        assert_eq!(
            first,
            Some(("client/features/home/Home.tsx".to_owned(), 12, 5))
        );
        assert!(
            mapped.contains("at inner (node_modules/react/index.js:1:1)"),
            "{mapped}"
        );
        assert!(
            mapped.contains("at Home (client/features/home/Home.tsx:12:5)"),
            "{mapped}"
        );
        assert!(mapped.contains("at y (other.js:2:5)"), "{mapped}");
    }

    #[test]
    fn content_problems_break_the_pages_that_show_the_file() {
        let root = Path::new("/nonexistent");
        let blog = Problem::from_content(
            &ContentError::new("content/blog/x.md", "bad").at(3, 1),
            root,
        );
        assert!(blog.breaks("Blog") && !blog.breaks("Home"));
        assert_eq!(
            blog.to_string(),
            "Content error: content/blog/x.md:3:1: bad"
        );
        let routes = Problem::from_content(&ContentError::new(content::ROUTES_FILE, "bad"), root);
        assert!(routes.breaks("Home") && routes.breaks("Blog"));
        let wallets = Problem::from_content(
            &ContentError::new("content/communities/a.json", "bad"),
            root,
        );
        assert!(wallets.breaks("Wallets") && !wallets.breaks("Blog"));
    }
}
