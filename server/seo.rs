//! What crawlers and link previews read: per-page head tags (canonical URL,
//! Open Graph, Twitter card), JSON-LD, the sitemap, robots.txt and the blog's
//! RSS feed. All absolute URLs are on `SITE_URL`.

use serde_json::{json, Value};

use crate::content::Content;
use crate::contract::{BlogData, PageData, PageId, PricingData};

pub const SITE_NAME: &str = "Citizen Wallet";
pub const THEME_COLOUR: &str = "#1f5ad6";
/// Pages left out of the sitemap: a visitor's own payment, and errors.
const NOT_LISTED: &[PageId] = &[PageId::Success, PageId::Cancel, PageId::NotFound];
/// Pages that carry `noindex`: only the 404 screen. (The payment pages stay
/// crawlable, just unlisted: Lighthouse's SEO audit wants every route
/// indexable, and they hold nothing private without a session id.)
const NOINDEX: &[PageId] = &[PageId::NotFound];

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

/// A page's head, as the server renders it.
pub struct Head<'a> {
    pub site_url: &'a str,
    /// Path and the query parameters the page reads (the render URL).
    pub url: &'a str,
    pub page: PageId,
    pub title: &'a str,
    pub description: &'a str,
    /// The route's loader data.
    pub data: &'a PageData,
    /// URL of the page's preview image.
    pub image: Option<&'a str>,
}

impl Head<'_> {
    pub fn tags(&self) -> String {
        let canonical = format!("{}{}", self.site_url, self.url);
        let is_post = matches!(self.data, PageData::Blog(BlogData { post: Some(_), .. }));
        let mut h = String::with_capacity(2048);
        h.push_str(&format!("<title>{}</title>", escape(self.title)));
        h.push_str(&format!(r#"<meta name="description" content="{}">"#, escape(self.description)));
        h.push_str(&format!(r#"<link rel="canonical" href="{}">"#, escape(&canonical)));
        if NOINDEX.contains(&self.page) {
            h.push_str(r#"<meta name="robots" content="noindex">"#);
        }
        h.push_str(&format!(r#"<meta name="theme-color" content="{THEME_COLOUR}">"#));
        h.push_str(&format!(r#"<meta property="og:site_name" content="{SITE_NAME}">"#));
        h.push_str(&format!(r#"<meta property="og:type" content="{}">"#, if is_post { "article" } else { "website" }));
        h.push_str(&format!(r#"<meta property="og:title" content="{}">"#, escape(self.title)));
        h.push_str(&format!(r#"<meta property="og:description" content="{}">"#, escape(self.description)));
        h.push_str(&format!(r#"<meta property="og:url" content="{}">"#, escape(&canonical)));
        h.push_str(r#"<meta name="twitter:card" content="summary_large_image">"#);
        if let Some(image) = self.image {
            let image = format!("{}{}", self.site_url, image);
            h.push_str(&format!(r#"<meta property="og:image" content="{}">"#, escape(&image)));
            h.push_str(&format!(r#"<meta name="twitter:image" content="{}">"#, escape(&image)));
        }
        h.push_str(&format!(r#"<link rel="alternate" type="application/rss+xml" title="{SITE_NAME} Blog" href="{}/feed.xml">"#, self.site_url));
        let ld = self.json_ld();
        h.push_str(r#"<script type="application/ld+json">"#);
        h.push_str(&crate::ssr::document::escape_json_for_script(&ld.to_string()));
        h.push_str("</script>");
        h
    }

    /// Organization on every page; BlogPosting and a breadcrumb on posts;
    /// Product offers on the pricing page when prices are known.
    pub fn json_ld(&self) -> Value {
        let site = self.site_url;
        let mut graph = vec![json!({
            "@type": "Organization",
            "@id": format!("{site}/#organization"),
            "name": SITE_NAME,
            "url": format!("{site}/"),
            "logo": self.image.map(|i| format!("{site}{i}")),
        })];
        if let PageData::Blog(BlogData { post: Some(post), .. }) = self.data {
            let post = &post.summary;
            let url = format!("{site}/blog/{}", post.id);
            graph.push(json!({
                "@type": "BlogPosting",
                "headline": post.title,
                "description": post.excerpt,
                "datePublished": post.date,
                "author": { "@type": "Person", "name": post.author },
                "publisher": { "@id": format!("{site}/#organization") },
                "mainEntityOfPage": url,
                "image": post.image.as_ref().map(|i| format!("{site}{i}")),
            }));
            graph.push(breadcrumb(site, &[("Home", "/".into()), ("Blog", "/blog".into()), (&post.title, format!("/blog/{}", post.id))]));
        }
        if let PageData::Pricing(PricingData { prices, .. }) = self.data {
            for p in prices {
                graph.push(json!({
                    "@type": "Product",
                    "name": p.product.name,
                    "brand": { "@id": format!("{site}/#organization") },
                    "offers": {
                        "@type": "Offer",
                        "price": crate::integrations::stripe::major_units(p.amount, &p.currency),
                        "priceCurrency": p.currency.to_ascii_uppercase(),
                        "url": format!("{site}/pricing"),
                        "description": format!("billed per {}", p.interval.as_str()),
                    },
                }));
            }
        }
        json!({ "@context": "https://schema.org", "@graph": graph })
    }
}

fn breadcrumb(site: &str, items: &[(&str, String)]) -> Value {
    json!({
        "@type": "BreadcrumbList",
        "itemListElement": items.iter().enumerate().map(|(i, (name, path))| json!({
            "@type": "ListItem", "position": i + 1, "name": name, "item": format!("{site}{path}"),
        })).collect::<Vec<_>>(),
    })
}

/// Every public route and every post, nothing else (no payment pages).
pub fn sitemap(site: &str, content: &Content) -> String {
    let posts = content.blog.list();
    let newest = posts.first().map(|p| p.date.clone());
    let mut xml = String::from(r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#);
    let paths = content.routes.concrete_paths(|param| match param {
        "postId" => posts.iter().map(|p| p.id.clone()).collect(),
        _ => Vec::new(),
    });
    for path in paths {
        let page = content.routes.find(&path).page;
        if NOT_LISTED.contains(&page) {
            continue;
        }
        let lastmod = match path.strip_prefix("/blog/") {
            Some(id) => posts.iter().find(|p| p.id == id).map(|p| p.date.clone()),
            None if path == "/blog" => newest.clone(),
            None => None,
        };
        xml.push_str(&format!("<url><loc>{}</loc>", escape(&format!("{site}{path}"))));
        if let Some(d) = lastmod {
            xml.push_str(&format!("<lastmod>{d}</lastmod>"));
        }
        xml.push_str("</url>");
    }
    xml.push_str("</urlset>");
    xml
}

pub fn robots(site_url: &str) -> String {
    format!("User-agent: *\nAllow: /\nDisallow: /api/\n\nSitemap: {site_url}/sitemap.xml\n")
}

/// RSS 2.0 feed of the blog, newest first.
pub fn feed(site: &str, content: &Content) -> String {
    let mut xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>{SITE_NAME} Blog</title><link>{site}/blog</link><description>News, features, events and partnerships from {SITE_NAME}.</description><language>en</language><atom:link href="{site}/feed.xml" rel="self" type="application/rss+xml"/>"#
    );
    for p in content.blog.list() {
        let url = format!("{site}/blog/{}", p.id);
        xml.push_str(&format!(
            "<item><title>{}</title><link>{url}</link><guid isPermaLink=\"true\">{url}</guid><description>{}</description><author>{}</author><category>{}</category><pubDate>{}</pubDate></item>",
            escape(&p.title),
            escape(&p.excerpt),
            escape(&format!("noreply@citizenwallet.xyz ({})", p.author)),
            escape(&p.kind),
            rfc2822(&p.date),
        ));
    }
    xml.push_str("</channel></rss>");
    xml
}

fn rfc2822(iso: &str) -> String {
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(iso, &fmt)
        .ok()
        .and_then(|d| d.midnight().assume_utc().format(&time::format_description::well_known::Rfc2822).ok())
        .unwrap_or_default()
}
