//! The stylesheet read and chosen from, on small sheets that show each rule.

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
fn every_group_is_written_whatever_it_holds() {
    let css = "@layer theme,base;@layer theme{.t{a:b}}@layer utilities{.x{a:b}}\
               @media (min-width:48rem){.md\\:x{a:b}}@font-face{font-family:f}";
    assert_eq!(
        css_for(css, r#"<i class="x"></i>"#),
        "@layer theme,base;@layer theme{}@layer utilities{.x{a:b}}@media (min-width:48rem){}@font-face{font-family:f}"
    );
    assert_eq!(
        css_for(css, r#"<i class="md:x"></i>"#),
        "@layer theme,base;@layer theme{}@layer utilities{}@media (min-width:48rem){.md\\:x{a:b}}@font-face{font-family:f}"
    );
}

#[test]
fn variables_registrations_and_keyframes_are_on_every_page() {
    // Tailwind's theme on :root, its defaults on every element, and the
    // registrations and keyframes its utilities use: added later, from the
    // rest, a registration or a variable for every element would restyle
    // every element.
    let css = ":root,:host{--animate-spin:spin 1s;--color-red:red}*,:before{--tw-shadow:0 0 #0000}\
               .shadow{--tw-shadow:0 1px;box-shadow:var(--tw-shadow)}\
               @keyframes spin{to{rotate:1turn}}@property --tw-shadow{syntax:\"*\";inherits:false}";
    assert_eq!(
        css_for(css, "<p></p>"),
        ":root,:host{--animate-spin:spin 1s;--color-red:red}*,:before{--tw-shadow:0 0 #0000}\
         @keyframes spin{to{rotate:1turn}}@property --tw-shadow{syntax:\"*\";inherits:false}"
    );
}

fn rules_of(css: &str) -> serde_json::Value {
    serde_json::from_str(&Stylesheet::parse(css).rules_json()).unwrap()
}

#[test]
fn the_rules_a_page_may_leave_out_have_their_places_in_the_stylesheet() {
    // Groups numbered depth first, the sheet 0; an index counts the
    // group's rules before it in the whole stylesheet, and no comment; a
    // group's length is given where a rule may be left out of it.
    let css = "/*! licence */@layer base,utilities;h1{margin:0}\
               @layer utilities{.a{color:red}.b{margin:0}@media (hover:hover){.c:hover{opacity:0}.d:hover{opacity:1}}.e{x:y}}\
               @layer base{p{margin:0}}.f{z:0}";
    assert_eq!(
        rules_of(css),
        serde_json::json!({
            "groups": 4,
            "lengths": [[2, 2], [1, 4], [0, 5]],
            "rules": [
                [1, 0, ".a{color:red}"],
                [1, 1, ".b{margin:0}"],
                [2, 0, ".c:hover{opacity:0}"],
                [2, 1, ".d:hover{opacity:1}"],
                [1, 3, ".e{x:y}"],
                [0, 4, ".f{z:0}"],
            ],
        })
    );
    // What a page keeps is what its inline CSS holds, named by bit.
    let sheet = Stylesheet::parse(css);
    let inline = sheet.for_markup(r#"<i class="a d"></i>"#);
    assert_eq!(
        inline.text,
        "/*! licence */@layer base,utilities;h1{margin:0}\
         @layer utilities{.a{color:red}@media (hover:hover){.d:hover{opacity:1}}}@layer base{p{margin:0}}"
    );
    // Rules 0 and 3: bits 0 and 3 of the first byte (0b1001).
    assert_eq!(inline.kept, "CQ");
    assert_eq!(sheet.for_markup("").kept, "AA");
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
    let classes =
        classes_of("<a class='x y'>class=\"no\"</a><b\nclass=\"p&amp;q &#x3a;r\"></b><c class=z>");
    let mut got: Vec<_> = classes.into_iter().collect();
    got.sort();
    assert_eq!(got, [":r", "p&q", "x", "y", "z"]);
}

#[test]
fn quotes_in_a_posts_prose_do_not_hide_the_classes_after_them() {
    // ammonia leaves quotes in text as they are; only start tags are read.
    let classes = classes_of(
        "<p>set class='hidden on the element, or class=\"x</p>\
         <!-- <i class=\"commented\"> --><script>let a = '<b class=\"in-script\">';</script>\
         <footer id=f CLASS = \"bg-slate-900\" data-x='a\"b'><a class=hover:text-white>x</a></footer>",
    );
    let mut got: Vec<_> = classes.into_iter().collect();
    got.sort();
    assert_eq!(got, ["bg-slate-900", "hover:text-white"]);
}

#[test]
fn the_text_is_as_a_browser_reads_it_so_its_hash_matches() {
    // A CRLF checkout: Tailwind keeps the CRs in comments and theme values.
    let inline =
        Stylesheet::parse("/*! a\r\nb */:root{--f:a,\r\n b}.x{font-family:var(--f)}\r.y{z:\0}")
            .for_markup(r#"<i class="x y"></i>"#);
    assert_eq!(
        inline.text,
        "/*! a\nb */:root{--f:a,\n b}.x{font-family:var(--f)}.y{z:\u{FFFD}}"
    );
}

#[test]
fn a_comment_in_a_selector_names_no_class() {
    assert_eq!(
        css_for(".a/* .b */{c:d}", r#"<i class="a"></i>"#),
        ".a/* .b */{c:d}"
    );
}
