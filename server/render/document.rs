//! The HTML document around a render: head tags, the hashed stylesheet, the
//! boot module with the list of modules the page needs, and the loader JSON
//! the client hydrates from.

use crate::assets::Manifest;
use crate::contract::ImagePreload;
use crate::html::{escape, escape_json_for_script};
use crate::render::RenderOutput;

/// Id of the script tag that carries the bootstrap JSON (see entry-client.tsx).
pub const DATA_ELEMENT_ID: &str = "__SITE_DATA__";

/// A full page for a successful render; `head` holds its SEO tags (see
/// crate::seo).
pub fn page(manifest: &Manifest, out: &RenderOutput, head: &str, bootstrap_json: &str) -> String {
    let modules = manifest.modules_for(out.page.name());
    let mut html = String::with_capacity(out.html.len() + bootstrap_json.len() + head.len() + 1024);
    html.push_str(HEAD_START);
    // The page's first image, fetched from the head at once, before the
    // stylesheet and any script: what its largest paint waits for.
    if let Some(p) = &out.preload {
        html.push_str(&preload_link(p));
    }
    html.push_str(head);
    html.push_str(&shared_head(manifest));
    // Not modulepreload links: the boot module requests these once the
    // document is parsed, so they do not compete with the first paint.
    html.push_str(&format!(
        r#"<script type="module" src="{}" data-modules="{}"></script>"#,
        manifest.boot,
        modules.join(" ")
    ));
    html.push_str(r#"</head><body><div id="root">"#);
    html.push_str(&out.html);
    html.push_str(&format!(
        r#"</div><script id="{DATA_ELEMENT_ID}" type="application/json">"#
    ));
    html.push_str(&escape_json_for_script(bootstrap_json));
    html.push_str("</script></body></html>");
    html
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
/// the router's error screen, styled, with no scripts to hydrate.
pub fn error_page(manifest: &Manifest, status: u16, reason: &str) -> String {
    // The component's own markup, rendered at build time.
    let screen = manifest.error_screen.replace(
        crate::assets::ERROR_SLOT,
        &crate::html::escape(&format!("{status} {reason}")),
    );
    format!(
        "{HEAD_START}<title>{title}</title>{shared}</head><body><div id=\"root\">{screen}</div></body></html>",
        title = crate::html::escape(&crate::messages::messages().error_title),
        shared = shared_head(manifest),
    )
}

/// Head tags every document carries: stylesheet, the favicon set and the
/// app manifest.
fn shared_head(manifest: &Manifest) -> String {
    let image = |name: &str| {
        manifest
            .image_url(name)
            .unwrap_or_else(|| panic!("the build makes {name}"))
    };
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
