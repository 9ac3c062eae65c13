//! HTML escaping, the one place it is done: text into elements and
//! attributes ([`escape`]), JSON into a `<script type="application/json">`
//! ([`escape_json_for_script`]).

/// Escapes text for an HTML attribute or element.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

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
    fn text_cannot_open_a_tag_or_close_an_attribute() {
        assert_eq!(
            escape(r#"<a href="x">Tom & Jerry's</a>"#),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;"
        );
    }

    #[test]
    fn script_json_cannot_close_its_tag() {
        let json = serde_json::json!({ "x": "</script><script>alert(1)</script><!--", "y": "a&b" })
            .to_string();
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
