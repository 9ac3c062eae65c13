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
//! later (see `document.rs` and client/boot.ts).
//!
//! A selector's classes are read where they must all match one element
//! chain: outside any pseudo-class's parentheses, and inside `:is()` or
//! `:where()` of a single selector. Classes under `:not()`, `:has()` or a
//! selector list are not required, so such a rule is kept more often than
//! needed, never less.

use base64::Engine;
use rustc_hash::{FxHashMap, FxHashSet};
use sha2::{Digest, Sha256};

/// The site's stylesheet as a tree of rules, each with what it needs.
#[derive(Debug, Default, Clone)]
pub struct Stylesheet {
    nodes: Vec<Node>,
    /// How many names ([`Node::Named`], [`Declaration`]) may be kept or not.
    names: usize,
}

/// The names of custom properties and keyframes a piece of CSS mentions,
/// by their index.
type Mentions = Vec<u32>;

#[derive(Debug, Clone)]
enum Node {
    /// Kept on every page.
    Always { text: String, mentions: Mentions },
    /// A style rule, kept when all the classes of one of its selectors are
    /// on the page.
    Rule {
        text: String,
        needs: Vec<Vec<String>>,
        mentions: Mentions,
    },
    /// `@property --x` or `@keyframes x`, kept when something kept names it.
    Named {
        name: u32,
        text: String,
        mentions: Mentions,
    },
    /// A rule for every element that declares custom properties alone
    /// (`:root,:host{--color-x:…}`): each declaration kept when something
    /// kept names it.
    Variables {
        selector: String,
        declarations: Vec<Declaration>,
    },
    /// `@media`, `@supports`, `@layer`, `@container` or `@starting-style`
    /// with its rules: written when one of them is kept (a `@layer` always,
    /// since the first mention of a layer sets its order).
    Group {
        prelude: String,
        children: Vec<Node>,
        kept_empty: bool,
    },
}

#[derive(Debug, Clone)]
struct Declaration {
    name: u32,
    /// `--x:value`, without its `;`.
    text: String,
    /// What its value names (a theme variable naming another).
    mentions: Mentions,
}

/// A page's inline CSS and the CSP source that allows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InlineCss {
    pub text: String,
    /// `'sha256-…'` of `text`, for `style-src`.
    pub source: String,
}

/// The at-rules whose block holds rules to choose from.
const GROUPS: [&str; 5] = ["media", "supports", "layer", "container", "starting-style"];

impl Stylesheet {
    /// Reads `css` (minified or not). It never fails: text it cannot make
    /// out (an unclosed block) is kept whole for every page.
    pub fn parse(css: &str) -> Stylesheet {
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
            Node::Named { name, mentions, .. } => {
                if named[*name as usize] {
                    more |= mark(mentions, named);
                }
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

/// The index of `name` among the names that may be kept or not.
fn name_index(names: &mut FxHashMap<String, u32>, name: &str) -> u32 {
    let next = names.len() as u32;
    *names.entry(name.to_owned()).or_insert(next)
}

/// The rules between `start` and `end` of `css`; `names` gets the name of
/// every `@property`, `@keyframes` and variable declaration.
fn parse_list(
    css: &str,
    start: usize,
    end: usize,
    names: &mut FxHashMap<String, u32>,
) -> Vec<Node> {
    let b = css.as_bytes();
    let mut nodes = Vec::new();
    let always = |text: String| Node::Always {
        text,
        mentions: Vec::new(),
    };
    let mut i = start;
    loop {
        // Space and comments between rules; a `/*!` comment (a licence) stays.
        while i < end {
            if b[i].is_ascii_whitespace() {
                i += 1;
            } else if b[i..end].starts_with(b"/*") {
                let close = skip_comment(b, i, end);
                if b[i..end].starts_with(b"/*!") {
                    nodes.push(always(css[i..close].to_owned()));
                }
                i = close;
            } else {
                break;
            }
        }
        if i >= end {
            return nodes;
        }
        let Some(stop) = find_top(b, i, end, b"{;") else {
            nodes.push(always(css[i..end].to_owned()));
            return nodes;
        };
        let prelude = css[i..stop].trim_end();
        if b[stop] == b';' {
            nodes.push(always(format!("{prelude};")));
            i = stop + 1;
            continue;
        }
        let Some(close) = block_end(b, stop + 1, end) else {
            nodes.push(always(css[i..end].to_owned()));
            return nodes;
        };
        let text = css[i..=close].to_owned();
        if let Some(rest) = prelude.strip_prefix('@') {
            let (keyword, argument) = rest.split_at(
                rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                    .unwrap_or(rest.len()),
            );
            let keyword = keyword.to_ascii_lowercase();
            let argument = argument.trim();
            if GROUPS.contains(&keyword.as_str()) {
                nodes.push(Node::Group {
                    prelude: prelude.to_owned(),
                    children: parse_list(css, stop + 1, close, names),
                    kept_empty: keyword == "layer",
                });
            } else if (keyword == "property" || keyword.ends_with("keyframes"))
                && is_plain_name(argument)
            {
                nodes.push(Node::Named {
                    name: name_index(names, argument),
                    text,
                    mentions: Vec::new(),
                });
            } else {
                nodes.push(always(text));
            }
        } else {
            let needs: Vec<Vec<String>> = split_top(prelude, b',')
                .into_iter()
                .map(|selector| {
                    let mut classes = Vec::new();
                    required_classes(selector, &mut classes);
                    classes
                })
                .collect();
            if !needs.iter().any(Vec::is_empty) {
                nodes.push(Node::Rule {
                    text,
                    needs,
                    mentions: Vec::new(),
                });
            } else if let Some(declarations) = custom_properties(&css[stop + 1..close], names) {
                nodes.push(Node::Variables {
                    selector: prelude.to_owned(),
                    declarations,
                });
            } else {
                nodes.push(always(text));
            }
        }
        i = close + 1;
    }
}

/// A name as `@property` and `@keyframes` take it, with nothing to unescape.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
}

/// A block's declarations, if every one declares a custom property.
fn custom_properties(block: &str, names: &mut FxHashMap<String, u32>) -> Option<Vec<Declaration>> {
    let mut declarations = Vec::new();
    for d in split_top(block, b';') {
        let d = d.trim();
        if d.is_empty() {
            continue;
        }
        let (name, _) = d.split_once(':')?;
        let name = name.trim_end();
        if !name.starts_with("--") || !is_plain_name(name) || d.contains(['{', '}']) {
            return None;
        }
        declarations.push(Declaration {
            name: name_index(names, name),
            text: d.to_owned(),
            mentions: Vec::new(),
        });
    }
    (!declarations.is_empty()).then_some(declarations)
}

/// Fills in what each rule and declaration mentions of `names`.
fn annotate(nodes: &mut [Node], names: &FxHashMap<String, u32>) {
    for node in nodes {
        match node {
            Node::Always { text, mentions }
            | Node::Rule { text, mentions, .. }
            | Node::Named { text, mentions, .. } => {
                *mentions = mentions_in(text, names);
            }
            Node::Variables { declarations, .. } => {
                for d in declarations {
                    let value = d.text.split_once(':').map_or("", |(_, v)| v);
                    d.mentions = mentions_in(value, names);
                }
            }
            Node::Group { children, .. } => annotate(children, names),
        }
    }
}

/// The names among `names` that occur in `text` as whole words.
fn mentions_in(text: &str, names: &FxHashMap<String, u32>) -> Mentions {
    let mut found: Mentions = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .filter_map(|word| names.get(word).copied())
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}

/// The index just past the comment that starts at `i` (or `end`).
fn skip_comment(b: &[u8], i: usize, end: usize) -> usize {
    b[i + 2..end]
        .windows(2)
        .position(|w| w == b"*/")
        .map_or(end, |p| i + 2 + p + 2)
}

/// The index just past the string whose quote is at `i` (or `end`).
fn skip_string(b: &[u8], i: usize, end: usize) -> usize {
    let quote = b[i];
    let mut j = i + 1;
    while j < end {
        match b[j] {
            b'\\' => j += 2,
            c if c == quote => return j + 1,
            _ => j += 1,
        }
    }
    end
}

/// The first of `stops` at the top level (outside strings, comments,
/// escapes, parentheses and brackets) from `i`.
fn find_top(b: &[u8], mut i: usize, end: usize, stops: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    while i < end {
        match b[i] {
            b'\\' => {
                i += 2;
                continue;
            }
            b'"' | b'\'' => {
                i = skip_string(b, i, end);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = skip_comment(b, i, end);
                continue;
            }
            c if depth == 0 && stops.contains(&c) => return Some(i),
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The `}` that closes the block whose content starts at `i`.
fn block_end(b: &[u8], mut i: usize, end: usize) -> Option<usize> {
    let mut depth = 0usize;
    while i < end {
        match b[i] {
            b'\\' => {
                i += 2;
                continue;
            }
            b'"' | b'\'' => {
                i = skip_string(b, i, end);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = skip_comment(b, i, end);
                continue;
            }
            b'{' => depth += 1,
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

/// `text` split at its top-level `sep`s.
fn split_top(text: &str, sep: u8) -> Vec<&str> {
    let b = text.as_bytes();
    let mut parts = Vec::new();
    let mut start = 0;
    while let Some(at) = find_top(b, start, b.len(), &[sep]) {
        parts.push(&text[start..at]);
        start = at + 1;
    }
    parts.push(&text[start..]);
    parts
}

/// The index of the bracket that closes the one at `i`, or the end.
fn closing(b: &[u8], i: usize) -> usize {
    find_top(b, i + 1, b.len(), &[b')', b']']).unwrap_or(b.len())
}

/// Pushes onto `out` the classes an element chain must all carry for
/// `selector` to match it (see the module's notes).
fn required_classes(selector: &str, out: &mut Vec<String>) {
    let b = selector.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' | b'\'' => i = skip_string(b, i, b.len()),
            b'[' | b'(' => i = closing(b, i) + 1,
            b'.' => {
                let (name, next) = identifier(selector, i + 1);
                if !name.is_empty() {
                    out.push(name);
                }
                i = next.max(i + 1);
            }
            b':' => {
                i += 1;
                if b.get(i) == Some(&b':') {
                    i += 1;
                }
                let (name, next) = identifier(selector, i);
                i = next;
                if b.get(i) == Some(&b'(') {
                    let close = closing(b, i);
                    let argument = &selector[i + 1..close.min(b.len())];
                    let one_selector = split_top(argument, b',').len() == 1;
                    if one_selector
                        && matches!(
                            name.to_ascii_lowercase().as_str(),
                            "is" | "where" | "matches" | "-webkit-any" | "-moz-any"
                        )
                    {
                        required_classes(argument, out);
                    }
                    i = close + 1;
                }
            }
            _ => i += 1,
        }
    }
}

/// The CSS identifier at `i` of `text`, unescaped, and the index after it.
fn identifier(text: &str, mut i: usize) -> (String, usize) {
    let b = text.as_bytes();
    let mut name = String::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphanumeric() || c == b'-' || c == b'_' {
            name.push(c as char);
            i += 1;
        } else if c >= 0x80 {
            let ch = text[i..].chars().next().expect("a char starts here");
            name.push(ch);
            i += ch.len_utf8();
        } else if c == b'\\' && i + 1 < b.len() && b[i + 1] != b'\n' {
            i += 1;
            let hex = b[i..]
                .iter()
                .take(6)
                .take_while(|c| c.is_ascii_hexdigit())
                .count();
            if hex > 0 {
                let code = u32::from_str_radix(&text[i..i + hex], 16).unwrap_or(0);
                name.push(
                    char::from_u32(code)
                        .filter(|&c| c != '\0')
                        .unwrap_or('\u{FFFD}'),
                );
                i += hex;
                if b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
                    i += 1;
                }
            } else {
                let ch = text[i..].chars().next().expect("a char starts here");
                name.push(ch);
                i += ch.len_utf8();
            }
        } else {
            break;
        }
    }
    (name, i)
}

/// Every class named by a `class` attribute of `html`.
fn classes_of(html: &str) -> FxHashSet<String> {
    let b = html.as_bytes();
    let mut classes = FxHashSet::default();
    let mut from = 0;
    while let Some(at) = html[from..].find("class=") {
        let at = from + at;
        from = at + "class=".len();
        if at == 0 || !b[at - 1].is_ascii_whitespace() {
            continue;
        }
        let (value, next) = match b.get(from) {
            Some(&q @ (b'"' | b'\'')) => {
                let close = html[from + 1..]
                    .find(q as char)
                    .map_or(html.len(), |p| from + 1 + p);
                (&html[from + 1..close], close)
            }
            _ => {
                let close = html[from..]
                    .find(|c: char| c.is_ascii_whitespace() || c == '>')
                    .map_or(html.len(), |p| from + p);
                (&html[from..close], close)
            }
        };
        for class in unescape_html(value).split_ascii_whitespace() {
            if !classes.contains(class) {
                classes.insert(class.to_owned());
            }
        }
        from = next;
    }
    classes
}

/// An attribute value's text: its character references replaced.
fn unescape_html(value: &str) -> std::borrow::Cow<'_, str> {
    if !value.contains('&') {
        return value.into();
    }
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let decoded = rest.find(';').filter(|&semi| semi <= 10).and_then(|semi| {
            let name = &rest[1..semi];
            let ch = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ => {
                    let code = match name.strip_prefix('#') {
                        Some(n) if n.starts_with(['x', 'X']) => u32::from_str_radix(&n[1..], 16),
                        Some(n) => n.parse(),
                        None => return None,
                    };
                    code.ok().and_then(char::from_u32)
                }
            }?;
            Some((ch, semi))
        });
        match decoded {
            Some((ch, semi)) => {
                out.push(ch);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn css_for(css: &str, html: &str) -> String {
        Stylesheet::parse(css).for_markup(html).text
    }

    #[test]
    fn a_rule_is_kept_only_where_its_classes_are() {
        let css = ".flex{display:flex}.grid{display:grid}h1{font-size:inherit}";
        assert_eq!(
            css_for(css, r#"<div class="flex p-2">x</div>"#),
            ".flex{display:flex}h1{font-size:inherit}"
        );
        assert_eq!(css_for(css, "<p>no classes</p>"), "h1{font-size:inherit}");
    }

    #[test]
    fn escaped_class_names_match_the_markups_classes() {
        let css = r".md\:flex{display:flex}.w-1\/2{width:50%}.\[\&\>svg\]\:w-4>svg{width:1rem}.\32xl\:p-1{padding:1px}";
        let html = r#"<a class="md:flex w-1/2 [&amp;&gt;svg]:w-4 2xl:p-1"></a>"#;
        assert_eq!(css_for(css, html), css);
        assert_eq!(css_for(css, r#"<a class="md:block"></a>"#), "");
    }

    #[test]
    fn groups_are_written_only_around_kept_rules_and_layers_always() {
        let css = "@layer theme,base;@layer theme{:root{--a:1}}@layer utilities{.x{a:b}}\
                   @media (min-width:48rem){.md\\:x{a:b}}@font-face{font-family:f}";
        assert_eq!(
            css_for(css, r#"<i class="x"></i>"#),
            "@layer theme,base;@layer theme{}@layer utilities{.x{a:b}}@font-face{font-family:f}"
        );
        assert_eq!(
            css_for(css, r#"<i class="md:x"></i>"#),
            "@layer theme,base;@layer theme{}@layer utilities{}@media (min-width:48rem){.md\\:x{a:b}}@font-face{font-family:f}"
        );
    }

    #[test]
    fn variables_properties_and_keyframes_are_kept_when_something_kept_names_them() {
        // Tailwind's theme on :root, its defaults on every element, and the
        // registrations and keyframes its utilities use.
        let css = ":root,:host{--animate-spin:spin 1s var(--ease);--ease:linear;--color-red:red;--unused:0}\
                   *,:before{--tw-shadow:0 0 #0000;--tw-blur:initial}\
                   .animate-spin{animation:var(--animate-spin)}.shadow{--tw-shadow:0 1px;box-shadow:var(--tw-shadow)}\
                   .text-red{color:var(--color-red)}\
                   @keyframes spin{to{rotate:1turn}}@keyframes ping{to{scale:2}}\
                   @property --tw-shadow{syntax:\"*\";inherits:false}@property --tw-blur{syntax:\"*\";inherits:false}";
        assert_eq!(
            css_for(css, r#"<i class="animate-spin shadow"></i>"#),
            ":root,:host{--animate-spin:spin 1s var(--ease);--ease:linear}*,:before{--tw-shadow:0 0 #0000}\
             .animate-spin{animation:var(--animate-spin)}.shadow{--tw-shadow:0 1px;box-shadow:var(--tw-shadow)}\
             @keyframes spin{to{rotate:1turn}}@property --tw-shadow{syntax:\"*\";inherits:false}"
        );
        // Nothing named: no empty rule is left.
        assert_eq!(css_for(css, "<p></p>"), "");
    }

    #[test]
    fn classes_under_not_has_or_a_list_are_not_required() {
        // Tailwind's space-y, group-hover and a list of alternatives.
        let css = ":where(.space-y-4>:not(:last-child)){m:1}\
                   :is(:where(.group):hover .group-hover\\:c){c:1}\
                   .a:not(.b){d:1}.c:has(.d){e:1}:is(.e,.f) .g{f:1}.h,.i{g:1}";
        assert_eq!(
            css_for(css, r#"<i class="space-y-4"></i>"#),
            ":where(.space-y-4>:not(:last-child)){m:1}"
        );
        assert_eq!(css_for(css, r#"<i class="group-hover:c"></i>"#), "");
        assert_eq!(
            css_for(css, r#"<i class="group"><b class="group-hover:c"></b></i>"#),
            ":is(:where(.group):hover .group-hover\\:c){c:1}"
        );
        assert_eq!(
            css_for(css, r#"<i class="a c g i"></i>"#),
            ".a:not(.b){d:1}.c:has(.d){e:1}:is(.e,.f) .g{f:1}.h,.i{g:1}"
        );
    }

    #[test]
    fn strings_comments_and_unclosed_text_lose_nothing() {
        let css = "/*! licence */ /* note */ .q[data-x=\"a{b}.c\"]::after{content:\"}.x{\"} .z{";
        let kept = css_for(css, r#"<i class="q"></i>"#);
        assert_eq!(
            kept,
            "/*! licence */.q[data-x=\"a{b}.c\"]::after{content:\"}.x{\"}.z{"
        );
    }

    #[test]
    fn a_closing_tag_in_a_string_cannot_end_the_style_element() {
        let css = r#".x::after{content:"</style><script>"}"#;
        let kept = css_for(css, r#"<i class="x"></i>"#);
        assert_eq!(kept, r#".x::after{content:"<\/style><script>"}"#);
    }

    #[test]
    fn the_source_is_the_hash_of_the_text() {
        let inline = Stylesheet::parse("p{color:red}").for_markup("");
        // printf 'p{color:red}' | openssl dgst -sha256 -binary | base64
        assert_eq!(
            inline.source,
            "'sha256-p0bF+un5yUb9MBO6xRb8kPHlY2BdpHVtLiFkDrZPF64='"
        );
    }

    #[test]
    fn class_attributes_are_read_as_html_gives_them() {
        let classes = classes_of(
            "<a class='x y'>class=\"no\"</a><b\nclass=\"p&amp;q &#x3a;r\"></b><c class=z>",
        );
        let mut got: Vec<_> = classes.into_iter().collect();
        got.sort();
        assert_eq!(got, [":r", "p&q", "x", "y", "z"]);
    }
}
