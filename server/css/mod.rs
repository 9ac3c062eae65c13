//! The CSS a page carries in its own `<style>`: the rules of the site's one
//! stylesheet that its markup can use, so that a first visit paints after
//! the HTML alone, with no stylesheet to wait for.
//!
//! The stylesheet is read once per build into a tree of its rules
//! ([`Stylesheet::parse`]). For a page ([`Stylesheet::for_markup`]):
//!
//! - a style rule whose selectors name classes is kept when every class of
//!   one of its selectors is in the page's `class` attributes;
//! - a custom property declared for every element (Tailwind's theme on
//!   `:root`, its `*` defaults), an `@property` and an `@keyframes` are
//!   kept when something kept names them;
//! - everything else (the base styles, statements, `@font-face`) is kept.
//!
//! The rules keep their order, and the groups (`@media`, `@supports`,
//! `@layer`) that hold them, so the page's elements get the styles the
//! whole stylesheet would give them. The whole stylesheet still arrives,
//! without blocking the paint, for what scripts and client navigation show
//! later (see server/render/document.rs and client/boot.ts).
//!
//! A selector's classes are read where they must all match one element
//! chain: outside any pseudo-class's parentheses, and inside `:is()` or
//! `:where()` of a single selector. Classes under `:not()`, `:has()` or a
//! selector list are not required, so such a rule is kept more often than
//! needed, never less.

mod markup;
mod parse;
mod rules;
#[cfg(test)]
mod tests;

use base64::Engine;
use rustc_hash::{FxHashMap, FxHashSet};
use sha2::{Digest, Sha256};

use markup::classes_of;
use parse::{annotate, parse_list};
use rules::Node;

/// The site's stylesheet as a tree of rules, each with what it needs.
#[derive(Debug, Default, Clone)]
pub struct Stylesheet {
    nodes: Vec<Node>,
    /// How many names ([`Node::Named`], [`rules::Declaration`]) may be kept or not.
    names: usize,
}

/// A page's inline CSS and the CSP source that allows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InlineCss {
    pub text: String,
    /// `'sha256-…'` of `text`, for `style-src`.
    pub source: String,
}

impl Stylesheet {
    /// Reads `css` (minified or not). It never fails: text it cannot make
    /// out (an unclosed block) is kept whole for every page.
    pub fn parse(css: &str) -> Stylesheet {
        // As the browser reads the element's text, which its CSP hash is
        // checked against: line breaks made LF, NUL made U+FFFD (a checkout
        // with CRLF line ends gives Tailwind's output CRs).
        let css = css
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .replace('\0', "\u{FFFD}");
        let css = css.as_str();
        let mut names = FxHashMap::default();
        let mut nodes = parse_list(css, 0, css.len(), &mut names);
        annotate(&mut nodes, &names);
        Stylesheet {
            nodes,
            names: names.len(),
        }
    }

    /// The rules `html` can use, and the CSP source of that text.
    pub fn for_markup(&self, html: &str) -> InlineCss {
        let classes = classes_of(html);
        // The names the kept rules mention, then those that the variables
        // so kept mention, until no new one is.
        let mut named = vec![false; self.names];
        mentioned(&self.nodes, &classes, &mut named);
        while declarations_mention(&self.nodes, &mut named) {}
        let mut text = String::with_capacity(16 * 1024);
        write_nodes(&self.nodes, &classes, &named, &mut text);
        // `</style>` in a CSS string would end the element: `\/` is `/`
        // to CSS, and no longer a closing tag to HTML.
        if text.contains("</") {
            text = text.replace("</", "<\\/");
        }
        let source = format!(
            "'sha256-{}'",
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()))
        );
        InlineCss { text, source }
    }
}

fn kept(needs: &[Vec<String>], classes: &FxHashSet<String>) -> bool {
    needs
        .iter()
        .any(|selector| selector.iter().all(|c| classes.contains(c)))
}

/// Marks in `named` what the rules kept for `classes` mention.
fn mentioned(nodes: &[Node], classes: &FxHashSet<String>, named: &mut [bool]) {
    for node in nodes {
        let mentions = match node {
            Node::Always { mentions, .. } => mentions,
            Node::Rule {
                needs, mentions, ..
            } if kept(needs, classes) => mentions,
            Node::Group { children, .. } => {
                mentioned(children, classes, named);
                continue;
            }
            _ => continue,
        };
        for &m in mentions {
            named[m as usize] = true;
        }
    }
}

/// Marks what the kept declarations and keyframes mention; whether that
/// marked a new name.
fn declarations_mention(nodes: &[Node], named: &mut [bool]) -> bool {
    fn mark(mentions: &[u32], named: &mut [bool]) -> bool {
        let mut new = false;
        for &m in mentions {
            new |= !std::mem::replace(&mut named[m as usize], true);
        }
        new
    }
    let mut more = false;
    for node in nodes {
        match node {
            Node::Variables { declarations, .. } => {
                for d in declarations {
                    if named[d.name as usize] {
                        more |= mark(&d.mentions, named);
                    }
                }
            }
            Node::Named { name, mentions, .. } if named[*name as usize] => {
                more |= mark(mentions, named);
            }
            Node::Group { children, .. } => more |= declarations_mention(children, named),
            _ => {}
        }
    }
    more
}

fn write_nodes(
    nodes: &[Node],
    classes: &FxHashSet<String>,
    named: &[bool],
    out: &mut String,
) -> bool {
    let mut wrote = false;
    for node in nodes {
        match node {
            Node::Always { text, .. } => {
                out.push_str(text);
                wrote = true;
            }
            Node::Rule { text, needs, .. } => {
                if kept(needs, classes) {
                    out.push_str(text);
                    wrote = true;
                }
            }
            Node::Named { name, text, .. } => {
                if named[*name as usize] {
                    out.push_str(text);
                    wrote = true;
                }
            }
            Node::Variables {
                selector,
                declarations,
            } => {
                let mut first = true;
                for d in declarations.iter().filter(|d| named[d.name as usize]) {
                    if first {
                        out.push_str(selector);
                        out.push('{');
                        first = false;
                    } else {
                        out.push(';');
                    }
                    out.push_str(&d.text);
                }
                if !first {
                    out.push('}');
                    wrote = true;
                }
            }
            Node::Group {
                prelude,
                children,
                kept_empty,
            } => {
                let mark = out.len();
                out.push_str(prelude);
                out.push('{');
                if write_nodes(children, classes, named, out) || *kept_empty {
                    out.push('}');
                    wrote = true;
                } else {
                    out.truncate(mark);
                }
            }
        }
    }
    wrote
}
