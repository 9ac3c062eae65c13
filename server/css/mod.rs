//! The CSS a page carries in its own `<style>`: the rules of the site's one
//! stylesheet that its markup can use, so that a first visit paints after
//! the HTML alone, with no stylesheet to wait for.
//!
//! The stylesheet is read once per build into a tree of its rules
//! ([`Stylesheet::parse`]). For a page ([`Stylesheet::for_markup`]):
//!
//! - a style rule whose selectors name classes is kept when every class of
//!   one of its selectors is in the page's `class` attributes;
//! - everything else (the base styles, statements, `@font-face`,
//!   `@keyframes`, every `@property`, and the rules for every element:
//!   Tailwind's theme on `:root`, its defaults on `*`) is kept, and so is
//!   every group (`@media`, `@supports`, `@layer`), empty or not.
//!
//! The rules keep their order, and the groups that hold them, so the
//! page's elements get the styles the whole stylesheet would give them.
//! The rest of the stylesheet arrives without blocking the paint
//! ([`Stylesheet::rules_json`], server/css/rest.rs): each rule left out,
//! put in its place in the page's own stylesheet, for what scripts and
//! client navigation show later (see server/render/document.rs and
//! client/boot.ts).
//!
//! A selector's classes are read where they must all match one element
//! chain: outside any pseudo-class's parentheses, and inside `:is()` or
//! `:where()` of a single selector. Classes under `:not()`, `:has()` or a
//! selector list are not required, so such a rule is kept more often than
//! needed, never less.

mod markup;
mod parse;
mod rest;
mod rules;
#[cfg(test)]
mod tests;

use base64::Engine;
use rustc_hash::FxHashSet;
use sha2::{Digest, Sha256};

use markup::classes_of;
use parse::parse_list;
use rules::Node;

/// The site's stylesheet as a tree of rules, each with what it needs.
#[derive(Debug, Default, Clone)]
pub struct Stylesheet {
    nodes: Vec<Node>,
    /// How many rules ([`Node::Rule`]) may be kept or not.
    rules: usize,
}

/// A page's inline CSS, the CSP source that allows it, and which of the
/// rules that may be left out it holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InlineCss {
    pub text: String,
    /// `'sha256-…'` of `text`, for `style-src`.
    pub source: String,
    /// Which rules of [`Stylesheet::rules_json`] `text` holds: the others
    /// are the page's rest.
    pub kept: String,
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
        let mut rules = 0;
        let nodes = parse_list(&css, 0, css.len(), &mut rules);
        Stylesheet {
            nodes,
            rules: rules as usize,
        }
    }

    /// The rules `html` can use, and the CSP source of that text.
    pub fn for_markup(&self, html: &str) -> InlineCss {
        let classes = classes_of(html);
        let mut kept = vec![false; self.rules];
        select(&self.nodes, &classes, &mut kept);
        let mut text = String::with_capacity(16 * 1024);
        write_nodes(&self.nodes, &kept, &mut text);
        // `</style>` in a CSS string would end the element: `\/` is `/`
        // to CSS, and no longer a closing tag to HTML.
        if text.contains("</") {
            text = text.replace("</", "<\\/");
        }
        let source = format!(
            "'sha256-{}'",
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()))
        );
        InlineCss {
            text,
            source,
            kept: rest::key(&kept),
        }
    }

    /// Every rule a page may leave out with its place, as JSON: what each
    /// page takes its rest from (server/css/rest.rs).
    pub fn rules_json(&self) -> String {
        rest::json(&self.nodes)
    }
}

/// Marks in `kept` the rules whose classes are all in `classes` for one of
/// their selectors.
fn select(nodes: &[Node], classes: &FxHashSet<String>, kept: &mut [bool]) {
    for node in nodes {
        match node {
            Node::Rule { index, needs, .. } => {
                kept[*index as usize] = needs
                    .iter()
                    .any(|selector| selector.iter().all(|c| classes.contains(c)));
            }
            Node::Group { children, .. } => select(children, classes, kept),
            Node::Always { .. } => {}
        }
    }
}

fn write_nodes(nodes: &[Node], kept: &[bool], out: &mut String) {
    for node in nodes {
        match node {
            Node::Always { text, .. } => out.push_str(text),
            Node::Rule { index, text, .. } => {
                if kept[*index as usize] {
                    out.push_str(text);
                }
            }
            Node::Group { prelude, children } => {
                out.push_str(prelude);
                out.push('{');
                write_nodes(children, kept, out);
                out.push('}');
            }
        }
    }
}
