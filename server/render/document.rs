//! The HTML document around a render: head tags, the CSS its markup uses
//! (inline, so the first paint waits for nothing else: [`crate::css`]), the
//! rest of the stylesheet fetched without blocking that paint, the boot module
//! with the list of modules the page needs, and the loader JSON the client
//! hydrates from.

use crate::assets::Manifest;
use crate::contract::ImagePreload;
use crate::css::InlineCss;
use crate::html::{escape, escape_json_for_script};
use crate::render::RenderOutput;

/// Id of the script tag that carries the bootstrap JSON (see entry-client.tsx).
pub const DATA_ELEMENT_ID: &str = "__SITE_DATA__";

/// A finished document, and the CSP source (`'sha256-…'`) its inline CSS
/// needs in `style-src` (see [`crate::security`]).
#[derive(Debug, Clone)]
pub struct Document {
    pub html: String,
    pub style_source: String,
}

/// A full page for a successful render; `head` holds its SEO tags (see
/// crate::seo).
pub fn page(manifest: &Manifest, out: &RenderOutput, head: &str, bootstrap_json: &str) -> Document {
    let modules = manifest.modules_for(out.page.name());
    let css = manifest.styles.for_markup(&out.html);
    let mut html = String::with_capacity(
        out.html.len() + bootstrap_json.len() + head.len() + css.text.len() + 1024,
    );
    html.push_str(HEAD_START);
    // The page's first image, fetched from the head at once, before the
    // stylesheet and any script: what its largest paint waits for.
    if let Some(p) = &out.preload {
        html.push_str(&preload_link(p));
    }
    html.push_str(head);
    push_style(&mut html, &css);
    // The rest of the stylesheet, for what scripts and client navigation
    // show later: client/boot.ts requests the rules a page may leave out
    // (`data-css`) with the modules once the page has painted, puts those
    // this one did not keep (`data-kept`) in its inline CSS and hydrates
    // once it has; nothing waits for it before the first paint. The whole
    // stylesheet (`data-stylesheet`) where that cannot be done, and in the
    // <noscript> link without scripts.
    html.push_str(&format!(
        r#"<noscript><link rel="stylesheet" href="{}"></noscript>"#,
        manifest.css
    ));
    html.push_str(&icons(manifest));
    // Not modulepreload links: the boot module requests these once the
    // document is parsed, so they do not compete with the first paint.
    html.push_str(&format!(
        r#"<script type="module" src="{}" data-modules="{}" data-css="{}" data-kept="{}" data-stylesheet="{}"></script>"#,
        manifest.boot,
        modules.join(" "),
        manifest.rules.url,
        css.kept,
        manifest.css
    ));
    html.push_str(r#"</head><body><div id="root">"#);
    html.push_str(&out.html);
    html.push_str(&format!(
        r#"</div><script id="{DATA_ELEMENT_ID}" type="application/json">"#
    ));
    html.push_str(&escape_json_for_script(bootstrap_json));
    html.push_str("</script></body></html>");
    Document {
        html,
        style_source: css.source,
    }
}

fn push_style(html: &mut String, css: &InlineCss) {
    html.push_str("<style>");
    html.push_str(&css.text);
    html.push_str("</style>");
}

/// `<link rel="preload" as="image">` for a page's first image: the
/// variants of its best format with the layout's sizes (a browser that
/// cannot take that type skips it), or an SVG's URL.
fn preload_link(p: &ImagePreload) -> String {
    let mut link = String::from(r#"<link rel="preload" as="image" fetchpriority="high""#);
    match (&p.imagesrcset, &p.imagesizes) {
        (Some(srcset), Some(sizes)) => {
            link.push_str(&format!(
                r#" imagesrcset="{}" imagesizes="{}""#,
                escape(srcset),
                escape(sizes)
            ));
        }
        _ => link.push_str(&format!(r#" href="{}""#, escape(&p.href))),
    }
    if let Some(kind) = &p.kind {
        link.push_str(&format!(r#" type="{}""#, escape(kind)));
    }
    link.push('>');
    link
}

/// The page for a render that could not finish (deadline, crash, overload):
/// the router's error screen, styled by its own inline CSS alone (it has no
/// script, and nothing on it changes), with no scripts to hydrate.
pub fn error_page(manifest: &Manifest, status: u16, reason: &str) -> Document {
    // The component's own markup, rendered at build time.
    let screen = manifest.error_screen.replace(
        crate::assets::ERROR_SLOT,
        &crate::html::escape(&format!("{status} {reason}")),
    );
    let css = &manifest.error_css;
    let mut html = format!(
        "{HEAD_START}<title>{title}</title>",
        title = crate::html::escape(&crate::messages::messages().error_title),
    );
    push_style(&mut html, css);
    html.push_str(&icons(manifest));
    html.push_str(&format!(
        "</head><body><div id=\"root\">{screen}</div></body></html>"
    ));
    Document {
        html,
        style_source: css.source.clone(),
    }
}

/// Head tags every document carries: the favicon set and the app manifest.
fn icons(manifest: &Manifest) -> String {
    let image = |name: &str| {
        manifest
            .image_url(name)
            .unwrap_or_else(|| panic!("the build makes {name}"))
    };
    format!(
        r#"<link rel="icon" type="image/svg+xml" href="{}"><link rel="icon" type="image/png" sizes="32x32" href="{}"><link rel="apple-touch-icon" href="{}"><link rel="manifest" href="/site.webmanifest">"#,
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
