//! Post content: Markdown rendered by pulldown-cmark, then sanitized by
//! ammonia. Link and image addresses survive only with the protocols the spec
//! allows (http, https, irc, ircs, mailto, xmpp) or when relative; any other
//! Markdown link or image address is emptied (`href=""`), and ammonia drops
//! such addresses from raw HTML. A Markdown image's relative address is the
//! caller's to resolve ([`ImageAddress`]): a post's names a file of
//! `content/images/`, which becomes the processed image's URL.

use std::collections::HashSet;
use std::sync::OnceLock;

use ammonia::Url;
use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag, TagEnd};

const SCHEMES: &[&str] = &["http", "https", "irc", "ircs", "mailto", "xmpp"];

/// What becomes of a Markdown image's address when it names a file: one
/// without a scheme or a host, not only a fragment or a query (relative,
/// or from the root, `/content/images/...`, as GitHub reads it).
pub enum ImageAddress {
    /// Kept as written.
    Keep,
    /// Written as this address instead.
    Replace(String),
    /// Refused, with the reason.
    Refuse(String),
}

/// A Markdown image refused by the resolver: where it is (a byte offset in
/// the Markdown) and why.
#[derive(Debug, PartialEq, Eq)]
pub struct ImageRefused {
    pub offset: usize,
    pub message: String,
}

/// The Markdown as safe HTML, its relative image addresses kept as written
/// (the tests' way in; a post resolves its images with [`render`]).
#[cfg(test)]
pub fn to_safe_html(markdown: &str) -> String {
    render(markdown, &mut |_| ImageAddress::Keep).expect("no image is refused")
}

/// The Markdown as safe HTML, each relative image address given to
/// `resolve`; the first it refuses is the error.
pub fn render(
    markdown: &str,
    resolve: &mut dyn FnMut(&str) -> ImageAddress,
) -> Result<String, ImageRefused> {
    // Per open link: whether it was written out as an external <a> by hand.
    let mut external_stack: Vec<bool> = Vec::new();
    let mut refused = None;
    let events = Parser::new_ext(
        markdown,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    )
    .into_offset_iter()
    .map(|(event, range)| match event {
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) if is_relative_file(&dest_url) => {
            let dest_url = match resolve(&dest_url) {
                ImageAddress::Keep => dest_url,
                ImageAddress::Replace(url) => CowStr::from(url),
                ImageAddress::Refuse(message) => {
                    refused.get_or_insert(ImageRefused {
                        offset: range.start,
                        message,
                    });
                    CowStr::Borrowed("")
                }
            };
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            })
        }
        other => other,
    })
    .map(move |event| match event {
        Event::Start(Tag::Link { dest_url, .. }) if is_external(&dest_url) => {
            // External links open in a new tab (spec section 7).
            external_stack.push(true);
            Event::InlineHtml(CowStr::from(format!(
                r#"<a href="{}" target="_blank">"#,
                attr_escape(&dest_url)
            )))
        }
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            external_stack.push(false);
            let dest_url = if allowed_address(&dest_url) {
                dest_url
            } else {
                CowStr::Borrowed("")
            };
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            })
        }
        Event::End(TagEnd::Link) if external_stack.pop() == Some(true) => {
            Event::InlineHtml(CowStr::Borrowed("</a>"))
        }
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) if !allowed_address(&dest_url) => Event::Start(Tag::Image {
            link_type,
            dest_url: CowStr::Borrowed(""),
            title,
            id,
        }),
        other => other,
    });
    let mut raw = String::with_capacity(markdown.len() * 2);
    html::push_html(&mut raw, events);
    if let Some(refused) = refused {
        return Err(refused);
    }
    // Raw HTML inside the Markdown is cleaned too; a disallowed address there
    // loses its attribute altogether.
    Ok(sanitizer().clean(&raw).to_string())
}

/// An address of a file: no scheme nor host (`//host/...`), nor only a
/// fragment or a query.
fn is_relative_file(value: &str) -> bool {
    let value = value.trim();
    !value.is_empty()
        && !value.starts_with(['#', '?', '\\'])
        && !value.starts_with("//")
        && matches!(
            Url::parse(value),
            Err(ammonia::url::ParseError::RelativeUrlWithoutBase)
        )
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
    value
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
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
        assert!(
            html.contains(r#"<a href="" rel="noopener noreferrer">a</a>"#),
            "{html}"
        );
        assert!(
            html.contains(
                r#"<a href="https://example.org/x" target="_blank" rel="noopener noreferrer">b</a>"#
            ),
            "{html}"
        );
        assert!(
            html.contains(r#"<a href="/pricing" rel="noopener noreferrer">c</a>"#),
            "{html}"
        );
        assert!(html.contains(r#"href="mailto:hi@example.org""#), "{html}");
        assert!(
            html.contains(r#"<a href="" rel="noopener noreferrer">e</a>"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<a href="" rel="noopener noreferrer">f</a>"#),
            "{html}"
        );
        assert!(html.contains(r#"<img src="" alt="g">"#), "{html}");
        assert!(
            html.contains(r#"<img src="https://example.org/i.png" alt="h">"#),
            "{html}"
        );
        assert!(
            html.contains(r#"href="xmpp:me@example.org""#)
                && html.contains(r#"href="irc://irc.example.org/x""#),
            "{html}"
        );
        assert!(
            html.contains(r#"<a href="" rel="noopener noreferrer">k</a>"#),
            "{html}"
        );
        assert!(!html.to_lowercase().contains("javascript"), "{html}");
    }

    #[test]
    fn raw_html_in_markdown_is_sanitized() {
        let html = to_safe_html("Hi <script>alert(1)</script> <img src=x onerror=alert(1)> **bold**\n\n- a\n- b\n\n## Head");
        assert!(
            !html.contains("<script") && !html.contains("onerror"),
            "{html}"
        );
        assert!(
            html.contains("<strong>bold</strong>")
                && html.contains("<li>a</li>")
                && html.contains("<h2>Head</h2>"),
            "{html}"
        );
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        /// Addresses a hostile post might carry.
        fn address() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("javascript:alert(1)".to_owned()),
                Just("JaVaScRiPt:alert(1)".to_owned()),
                Just(" javascript:alert(1)".to_owned()),
                Just("java\tscript:alert(1)".to_owned()),
                Just("&#106;avascript:alert(1)".to_owned()),
                Just("data:text/html;base64,PHNjcmlwdD4=".to_owned()),
                Just("vbscript:msgbox(1)".to_owned()),
                Just("https://example.org/a?b=1&c=\"x\"".to_owned()),
                Just("mailto:hi@example.org".to_owned()),
                Just("/pricing".to_owned()),
                Just("#top".to_owned()),
                "[a-z]{1,8}:[a-z/]{0,10}",
            ]
        }

        fn fragment() -> impl Strategy<Value = String> {
            prop_oneof![
                "[a-zA-Z ]{0,20}",
                address().prop_map(|a| format!("[link]({a})")),
                address().prop_map(|a| format!("![img]({a})")),
                address().prop_map(|a| format!("<{a}>")),
                address().prop_map(|a| format!("[ref]\n\n[ref]: {a}\n")),
                address().prop_map(|a| format!("<a href=\"{a}\" onclick=\"x()\">raw</a>")),
                address().prop_map(|a| format!("<img src=\"{a}\" onerror=\"x()\">")),
                address().prop_map(|a| format!("<iframe src=\"{a}\"></iframe>")),
                Just("<script>alert(1)</script>".to_owned()),
                Just("<style>body{display:none}</style>".to_owned()),
                Just("<svg onload=alert(1)><use href=\"javascript:x\"/></svg>".to_owned()),
                Just("<a href=\"https://e.example\" target=\"_top\">t</a>".to_owned()),
                Just("**bold** _em_ `code`".to_owned()),
                Just("\n\n- item\n- item\n\n".to_owned()),
                Just("\n```\n<script>x</script>\n```\n".to_owned()),
                Just("<!-- comment -->".to_owned()),
                Just("<".to_owned()),
                Just("\"".to_owned()),
            ]
        }

        /// Every tag in serialized HTML as (name, [(attribute, value)]).
        /// Text never holds a raw `<` (the serializer escapes it), so each
        /// `<` opens a tag; values are quoted and may hold `>`.
        fn tags(html: &str) -> Vec<(String, Vec<(String, String)>)> {
            let mut out = Vec::new();
            let mut rest = html;
            while let Some(start) = rest.find('<') {
                rest = &rest[start + 1..];
                let mut end = 0;
                let mut quote = None;
                for (i, c) in rest.char_indices() {
                    match (quote, c) {
                        (None, '"') => quote = Some('"'),
                        (Some('"'), '"') => quote = None,
                        (None, '>') => {
                            end = i;
                            break;
                        }
                        _ => {}
                    }
                }
                let inner = &rest[..end];
                rest = &rest[end..];
                let name: String = inner.chars().take_while(|c| !c.is_whitespace()).collect();
                let mut attrs = Vec::new();
                let mut a = inner[name.len()..].trim_start();
                while let Some(eq) = a.find("=\"") {
                    let key = a[..eq].trim().to_ascii_lowercase();
                    let after = &a[eq + 2..];
                    let close = after.find('"').unwrap_or(after.len());
                    attrs.push((
                        key,
                        after[..close].replace("&amp;", "&").replace("&quot;", "\""),
                    ));
                    a = after.get(close + 1..).unwrap_or("").trim_start();
                }
                out.push((name.to_ascii_lowercase(), attrs));
            }
            out
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 1_500, failure_persistence: None, ..ProptestConfig::default() })]

            /// Whatever a post holds, its HTML has no script, frame or style
            /// element, no event handler or style attribute, only allowed
            /// addresses, only new-tab targets, and is already clean
            /// (sanitizing it again changes nothing).
            #[test]
            fn sanitized_post_html_is_safe(parts in prop::collection::vec(fragment(), 0..12)) {
                let html = to_safe_html(&parts.concat());
                for (name, attrs) in tags(&html) {
                    let name = name.trim_start_matches('/');
                    prop_assert!(!["script", "style", "iframe", "svg", "object", "embed", "use"].contains(&name), "<{}> in {}", name, html);
                    for (key, value) in attrs {
                        prop_assert!(!key.starts_with("on") && key != "style", "{}= in {}", key, html);
                        if key == "href" || key == "src" {
                            prop_assert!(value.is_empty() || allowed_address(&value), "{}={:?} in {}", key, value, html);
                        }
                        if key == "target" {
                            prop_assert_eq!(value.as_str(), "_blank");
                        }
                    }
                }
                prop_assert_eq!(sanitizer().clean(&html).to_string(), html);
            }
        }
    }
}
