//! Reading the stylesheet into the rules [`super::Stylesheet`] chooses
//! from: each rule's text and the classes its selectors need. The scanning
//! knows CSS's strings, comments, escapes and brackets, and nothing of
//! property values.

use super::rules::Node;

/// The at-rules whose block holds rules to choose from (the browser's
/// `CSSGroupingRule`s).
const GROUPS: [&str; 5] = ["media", "supports", "layer", "container", "starting-style"];

/// The rules between `start` and `end` of `css`; `rules` counts the style
/// rules that may be kept or not, numbering them.
pub(super) fn parse_list(css: &str, start: usize, end: usize, rules: &mut u32) -> Vec<Node> {
    let b = css.as_bytes();
    let mut nodes = Vec::new();
    let always = |text: String| Node::Always { text, rule: true };
    let mut i = start;
    loop {
        // Space and comments between rules; a `/*!` comment (a licence) stays.
        while i < end {
            if b[i].is_ascii_whitespace() {
                i += 1;
            } else if b[i..end].starts_with(b"/*") {
                let close = skip_comment(b, i, end);
                if b[i..end].starts_with(b"/*!") {
                    nodes.push(Node::Always {
                        text: css[i..close].to_owned(),
                        rule: false,
                    });
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
            // `@charset` is the file's encoding, not a rule of its CSSOM.
            let charset = prelude
                .get(..8)
                .is_some_and(|at| at.eq_ignore_ascii_case("@charset"));
            nodes.push(Node::Always {
                text: format!("{prelude};"),
                rule: !charset,
            });
            i = stop + 1;
            continue;
        }
        let Some(close) = block_end(b, stop + 1, end) else {
            nodes.push(always(css[i..end].to_owned()));
            return nodes;
        };
        let text = css[i..=close].to_owned();
        if let Some(rest) = prelude.strip_prefix('@') {
            let keyword = &rest[..rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .unwrap_or(rest.len())];
            if GROUPS.contains(&keyword.to_ascii_lowercase().as_str()) {
                nodes.push(Node::Group {
                    prelude: prelude.to_owned(),
                    children: parse_list(css, stop + 1, close, rules),
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
            if needs.iter().any(Vec::is_empty) {
                nodes.push(always(text));
            } else {
                nodes.push(Node::Rule {
                    index: *rules,
                    text,
                    needs,
                });
                *rules += 1;
            }
        }
        i = close + 1;
    }
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

/// Where scanning goes on when `i` starts an escape, a string or a comment
/// (past it), or None when `b[i]` is to be read as it is.
fn past_opaque(b: &[u8], i: usize, end: usize) -> Option<usize> {
    match b[i] {
        b'\\' => Some(i + 2),
        b'"' | b'\'' => Some(skip_string(b, i, end)),
        b'/' if b.get(i + 1) == Some(&b'*') => Some(skip_comment(b, i, end)),
        _ => None,
    }
}

/// The first of `stops` at the top level (outside strings, comments,
/// escapes, parentheses and brackets) from `i`.
pub(super) fn find_top(b: &[u8], mut i: usize, end: usize, stops: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    while i < end {
        if let Some(next) = past_opaque(b, i, end) {
            i = next;
            continue;
        }
        match b[i] {
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
        if let Some(next) = past_opaque(b, i, end) {
            i = next;
            continue;
        }
        match b[i] {
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
pub(super) fn split_top(text: &str, sep: u8) -> Vec<&str> {
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
    find_top(b, i + 1, b.len(), b")]").unwrap_or(b.len())
}

/// Pushes onto `out` the classes an element chain must all carry for
/// `selector` to match it (see the module's notes).
pub(super) fn required_classes(selector: &str, out: &mut Vec<String>) {
    let b = selector.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' | b'\'' => i = skip_string(b, i, b.len()),
            b'/' if b.get(i + 1) == Some(&b'*') => i = skip_comment(b, i, b.len()),
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
pub(super) fn identifier(text: &str, mut i: usize) -> (String, usize) {
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
