//! The classes a page's markup uses: every `class` attribute of its start
//! tags, read as a browser reads them. Text between tags is never taken for
//! an attribute, whatever quotes a post's prose holds.

use rustc_hash::FxHashSet;

/// Elements whose content is text up to their end tag.
const RAW_TEXT: [&str; 4] = ["script", "style", "textarea", "title"];

/// Every class named by a `class` attribute of a start tag of `html`.
pub(super) fn classes_of(html: &str) -> FxHashSet<String> {
    let b = html.as_bytes();
    let mut classes = FxHashSet::default();
    let mut i = 0;
    while let Some(at) = html[i..].find('<') {
        i += at + 1;
        if html[i..].starts_with("!--") {
            i = html[i..].find("-->").map_or(html.len(), |p| i + p + 3);
            continue;
        }
        if !b.get(i).is_some_and(u8::is_ascii_alphabetic) {
            continue;
        }
        let name_end = html[i..]
            .find(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/')
            .map_or(html.len(), |p| i + p);
        let name = html[i..name_end].to_ascii_lowercase();
        i = start_tag(html, name_end, &mut classes);
        if RAW_TEXT.contains(&name.as_str()) {
            let close = format!("</{name}");
            i = find_ignoring_case(html, i, &close).unwrap_or(html.len());
        }
    }
    classes
}

/// Reads the attributes of a start tag from `i` (after its name) up to its
/// `>`, adding its classes to `classes`; the index after the tag.
fn start_tag(html: &str, mut i: usize, classes: &mut FxHashSet<String>) -> usize {
    let b = html.as_bytes();
    loop {
        while b
            .get(i)
            .is_some_and(|c| c.is_ascii_whitespace() || *c == b'/')
        {
            i += 1;
        }
        match b.get(i) {
            None => return html.len(),
            Some(b'>') => return i + 1,
            _ => {}
        }
        let name_start = i;
        while b
            .get(i)
            .is_some_and(|c| !c.is_ascii_whitespace() && !matches!(c, b'=' | b'>' | b'/'))
        {
            i += 1;
        }
        let name = &html[name_start..i];
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if b.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        let value = match b.get(i) {
            Some(&q @ (b'"' | b'\'')) => {
                let close = html[i + 1..]
                    .find(q as char)
                    .map_or(html.len(), |p| i + 1 + p);
                let value = &html[i + 1..close];
                i = (close + 1).min(html.len());
                value
            }
            _ => {
                let start = i;
                while b
                    .get(i)
                    .is_some_and(|c| !c.is_ascii_whitespace() && *c != b'>')
                {
                    i += 1;
                }
                &html[start..i]
            }
        };
        if name.eq_ignore_ascii_case("class") {
            for class in unescape_html(value).split_ascii_whitespace() {
                if !classes.contains(class) {
                    classes.insert(class.to_owned());
                }
            }
        }
    }
}

/// Where `needle` (ASCII) next occurs in `html` from `from`, in any case.
fn find_ignoring_case(html: &str, from: usize, needle: &str) -> Option<usize> {
    html.as_bytes()[from..]
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
        .map(|p| from + p)
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
