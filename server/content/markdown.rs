//! Post content: Markdown rendered by pulldown-cmark, then sanitized by
//! ammonia. Link and image addresses survive only with the protocols the spec
//! allows (http, https, irc, ircs, mailto, xmpp) or when relative; any other
//! Markdown link or image address is emptied (`href=""`), and ammonia drops
//! such addresses from raw HTML.

use std::collections::HashSet;
use std::sync::OnceLock;

use ammonia::Url;
use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag, TagEnd};

const SCHEMES: &[&str] = &["http", "https", "irc", "ircs", "mailto", "xmpp"];

pub fn to_safe_html(markdown: &str) -> String {
    // Per open link: whether it was written out as an external <a> by hand.
    let mut external_stack: Vec<bool> = Vec::new();
    let events = Parser::new_ext(markdown, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(move |event| match event {
        Event::Start(Tag::Link { dest_url, .. }) if is_external(&dest_url) => {
            // External links open in a new tab (spec section 7).
            external_stack.push(true);
            Event::InlineHtml(CowStr::from(format!(r#"<a href="{}" target="_blank">"#, attr_escape(&dest_url))))
        }
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            external_stack.push(false);
            let dest_url = if allowed_address(&dest_url) { dest_url } else { CowStr::Borrowed("") };
            Event::Start(Tag::Link { link_type, dest_url, title, id })
        }
        Event::End(TagEnd::Link) if external_stack.pop() == Some(true) => Event::InlineHtml(CowStr::Borrowed("</a>")),
        Event::Start(Tag::Image { link_type, dest_url, title, id }) if !allowed_address(&dest_url) => {
            Event::Start(Tag::Image { link_type, dest_url: CowStr::Borrowed(""), title, id })
        }
        other => other,
    });
    let mut raw = String::with_capacity(markdown.len() * 2);
    html::push_html(&mut raw, events);
    // Raw HTML inside the Markdown is cleaned too; a disallowed address there
    // loses its attribute altogether.
    sanitizer().clean(&raw).to_string()
}

fn sanitizer() -> &'static ammonia::Builder<'static> {
    static B: OnceLock<ammonia::Builder<'static>> = OnceLock::new();
    B.get_or_init(|| {
        let mut b = ammonia::Builder::default();
        b.url_schemes(SCHEMES.iter().copied().collect::<HashSet<_>>());
        b.add_tag_attributes("a", ["target"]);
        b.attribute_filter(|element, attribute, value| match (element, attribute) {
            // Only a new tab is a valid target here.
            ("a", "target") if value != "_blank" => None,
            _ => Some(value.into()),
        });
        b
    })
}

/// An absolute http(s) address: another site.
fn is_external(value: &str) -> bool {
    Url::parse(value.trim()).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

fn attr_escape(value: &str) -> String {
    value.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A relative address, or an absolute one with an allowed protocol.
pub fn allowed_address(value: &str) -> bool {
    match Url::parse(value.trim()) {
        Ok(url) => SCHEMES.contains(&url.scheme()),
        Err(ammonia::url::ParseError::RelativeUrlWithoutBase) => true,
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disallowed_protocols_are_emptied_and_allowed_ones_kept() {
        let html = to_safe_html(
            "[a](javascript:alert(1)) [b](https://example.org/x) [c](/pricing) [d](mailto:hi@example.org) \
             [e](data:text/html,hi) [f](JaVaScRiPt:alert(2)) ![g](vbscript:x) ![h](https://example.org/i.png) \
             [i](xmpp:me@example.org) [j](irc://irc.example.org/x) [k](ftp://example.org)",
        );
        assert!(html.contains(r#"<a href="" rel="noopener noreferrer">a</a>"#), "{html}");
        assert!(html.contains(r#"<a href="https://example.org/x" target="_blank" rel="noopener noreferrer">b</a>"#), "{html}");
        assert!(html.contains(r#"<a href="/pricing" rel="noopener noreferrer">c</a>"#), "{html}");
        assert!(html.contains(r#"href="mailto:hi@example.org""#), "{html}");
        assert!(html.contains(r#"<a href="" rel="noopener noreferrer">e</a>"#), "{html}");
        assert!(html.contains(r#"<a href="" rel="noopener noreferrer">f</a>"#), "{html}");
        assert!(html.contains(r#"<img src="" alt="g">"#), "{html}");
        assert!(html.contains(r#"<img src="https://example.org/i.png" alt="h">"#), "{html}");
        assert!(html.contains(r#"href="xmpp:me@example.org""#) && html.contains(r#"href="irc://irc.example.org/x""#), "{html}");
        assert!(html.contains(r#"<a href="" rel="noopener noreferrer">k</a>"#), "{html}");
        assert!(!html.to_lowercase().contains("javascript"), "{html}");
    }

    #[test]
    fn raw_html_in_markdown_is_sanitized() {
        let html = to_safe_html("Hi <script>alert(1)</script> <img src=x onerror=alert(1)> **bold**\n\n- a\n- b\n\n## Head");
        assert!(!html.contains("<script") && !html.contains("onerror"), "{html}");
        assert!(html.contains("<strong>bold</strong>") && html.contains("<li>a</li>") && html.contains("<h2>Head</h2>"), "{html}");
    }
}
