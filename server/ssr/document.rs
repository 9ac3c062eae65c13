//! The HTML document around a render: head tags, the hashed stylesheet, the
//! boot module with the list of modules the page needs, and the loader JSON
//! the client hydrates from.

use crate::assets::Manifest;
use crate::ssr::RenderOutput;

/// Id of the script tag that carries the bootstrap JSON (see entry-client.tsx).
pub const DATA_ELEMENT_ID: &str = "__SITE_DATA__";

/// A full page for a successful render; `head` holds its SEO tags (see
/// crate::seo).
pub fn page(manifest: &Manifest, out: &RenderOutput, head: &str, bootstrap_json: &str) -> String {
    let modules = manifest.modules_for(out.page.name());
    let mut html = String::with_capacity(out.html.len() + bootstrap_json.len() + head.len() + 1024);
    html.push_str(HEAD_START);
    html.push_str(head);
    html.push_str(&shared_head(manifest));
    // Not modulepreload links: the boot module requests these once the
    // document is parsed, so they do not compete with the first paint.
    html.push_str(&format!(r#"<script type="module" src="{}" data-modules="{}"></script>"#, manifest.boot, modules.join(" ")));
    html.push_str(r#"</head><body><div id="root">"#);
    html.push_str(&out.html);
    html.push_str(&format!(r#"</div><script id="{DATA_ELEMENT_ID}" type="application/json">"#));
    html.push_str(&escape_json_for_script(bootstrap_json));
    html.push_str("</script></body></html>");
    html
}

/// The page for a render that could not finish (deadline, crash, overload):
/// the router's error screen, styled, with no scripts to hydrate.
pub fn error_page(manifest: &Manifest, status: u16, reason: &str) -> String {
    // The component's own markup, rendered at build time.
    let screen = manifest.error_screen.replace(crate::assets::ERROR_SLOT, &crate::seo::escape(&format!("{status} {reason}")));
    format!(
        "{HEAD_START}<title>{title}</title>{shared}</head><body><div id=\"root\">{screen}</div></body></html>",
        title = crate::seo::escape(&crate::messages::messages().error_title),
        shared = shared_head(manifest),
    )
}

/// Head tags every document carries: stylesheet, the favicon set and the
/// app manifest.
fn shared_head(manifest: &Manifest) -> String {
    let image = |name: &str| manifest.image_url(name).unwrap_or_else(|| panic!("the build makes {name}"));
    format!(
        r#"<link rel="stylesheet" href="{}"><link rel="icon" type="image/svg+xml" href="{}"><link rel="icon" type="image/png" sizes="32x32" href="{}"><link rel="apple-touch-icon" href="{}"><link rel="manifest" href="/site.webmanifest">"#,
        manifest.css,
        image("favicon.svg"),
        image("icon-32.png"),
        image("icon-180.png"),
    )
}

/// The start of every document, up to the page's own head tags.
pub const HEAD_START: &str = concat!(
    "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
);

/// Makes JSON safe inside `<script type="application/json">`: no `<`, `>` or
/// `&` survives, so no `</script>` or `<!--` in any string can end the tag;
/// U+2028/2029 are escaped for old parsers. `JSON.parse` reads it unchanged.
pub fn escape_json_for_script(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_cannot_close_its_tag() {
        let json = serde_json::json!({ "x": "</script><script>alert(1)</script><!--", "y": "a&b" }).to_string();
        let escaped = escape_json_for_script(&json);
        assert!(!escaped.contains('<') && !escaped.contains('>'));
        let back: serde_json::Value = serde_json::from_str(&escaped).unwrap();
        assert_eq!(back["x"], "</script><script>alert(1)</script><!--");
        assert_eq!(back["y"], "a&b");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2_000, failure_persistence: None, ..Default::default() })]

        /// No string, however built, can end the data script or open a
        /// comment, and the page reads back exactly what was embedded.
        #[test]
        fn no_string_escapes_the_data_script(parts in proptest::collection::vec(proptest::prop_oneof![
            ".{0,12}",
            proptest::strategy::Just("</script>".to_owned()),
            proptest::strategy::Just("</SCRIPT ".to_owned()),
            proptest::strategy::Just("<!--".to_owned()),
            proptest::strategy::Just("\u{2028}\u{2029}".to_owned()),
            proptest::strategy::Just("&lt;".to_owned()),
        ], 0..8)) {
            let s = parts.concat();
            let json = serde_json::json!({ "s": s, "k": { s.clone(): [s.clone()] } }).to_string();
            let escaped = escape_json_for_script(&json);
            proptest::prop_assert!(!escaped.contains('<') && !escaped.contains('>') && !escaped.contains('&'));
            let back: serde_json::Value = serde_json::from_str(&escaped).unwrap();
            proptest::prop_assert_eq!(&back["s"], &serde_json::json!(s));
        }
    }
}
