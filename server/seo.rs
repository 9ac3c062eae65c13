//! What crawlers and link previews read: per-page head tags (canonical URL,
//! Open Graph, Twitter card), JSON-LD, the sitemap, robots.txt and the blog's
//! RSS feed. All absolute URLs are on `SITE_URL`.

use serde_json::{json, Value};

use crate::assets::{Manifest, RasterImage};
use crate::content::blog::PostSummary;
use crate::content::{Accounts, Content};
use crate::contract::{BlogData, PageData, PageId, PricingData};
use crate::html::escape;

pub const SITE_NAME: &str = "Citizen Wallet";
pub const THEME_COLOUR: &str = "#1f5ad6";

/// The language and region of every page (`<html lang="en">`, US dates).
pub const LOCALE: &str = "en_US";
/// The site's square logo: the favicon mark drawn as a 512 px PNG at build
/// time (client/build.mjs).
const LOGO: &str = "icon-512.png";

/// A page's head, as the server renders it.
pub struct Head<'a> {
    pub site_url: &'a str,
    /// Path and the query parameters the page reads (the render URL).
    pub url: &'a str,
    pub page: PageId,
    /// Indexable (the route's facts in `content/routes.json`; the 404 page
    /// is not): otherwise the page carries `noindex`.
    pub indexed: bool,
    pub title: &'a str,
    pub description: &'a str,
    /// The route's loader data.
    pub data: &'a PageData,
    /// The build's images: the preview cards and the logo.
    pub manifest: &'a Manifest,
    /// The site's accounts elsewhere (`content/site/accounts.json`).
    pub accounts: &'a Accounts,
}

/// Who wrote a post, as the JSON-LD names them.
struct Author<'a> {
    name: &'a str,
    /// Absolute.
    url: Option<String>,
    /// The site itself ("Citizen Wallet Team") rather than a person.
    is_site: bool,
}

impl Head<'_> {
    /// The post this page shows, if it is one.
    fn post(&self) -> Option<&PostSummary> {
        match self.data {
            PageData::Blog(BlogData {
                post: Some(post), ..
            }) => Some(&post.summary),
            _ => None,
        }
    }

    /// The preview card made at build time: the post's own (cropped from
    /// its cover photo, or drawn), else the page's, else the home page's.
    /// None only in a build that draws no cards (`dev`).
    fn card(&self) -> Option<RasterImage<'_>> {
        let own = match self.post() {
            Some(post) => post_card(self.manifest, &post.id),
            None => self
                .manifest
                .raster(&format!("og/{}.png", self.page.name())),
        };
        own.or_else(|| self.manifest.raster("og/Home.png"))
    }

    fn absolute(&self, path: &str) -> String {
        format!("{}{path}", self.site_url)
    }

    fn author<'p>(&self, post: &'p PostSummary) -> Author<'p> {
        let url = post.author_url.as_deref().map(|u| {
            if u.starts_with('/') {
                self.absolute(u)
            } else {
                u.to_owned()
            }
        });
        Author {
            name: &post.author,
            url,
            is_site: post.author.starts_with(SITE_NAME),
        }
    }

    /// The X account behind the page's content: a post's author when their
    /// page is an X profile, the site's own for its pages and its team's posts.
    fn x_creator(&self) -> Option<String> {
        match self.post() {
            None => self.accounts.x_handle.clone(),
            Some(post) => {
                let author = self.author(post);
                let profile = author
                    .url
                    .as_deref()
                    .and_then(|u| ammonia::Url::parse(u).ok());
                match profile.as_ref().and_then(crate::content::x_handle) {
                    Some(handle) => Some(handle),
                    None if author.is_site => self.accounts.x_handle.clone(),
                    None => None,
                }
            }
        }
    }

    pub fn tags(&self) -> String {
        let canonical = self.absolute(self.url);
        let post = self.post();
        let card = self.card();
        let mut h = String::with_capacity(4096);
        h.push_str(&format!("<title>{}</title>", escape(self.title)));
        let mut meta = |attr: &str, key: &str, value: &str| {
            h.push_str(&format!(
                r#"<meta {attr}="{key}" content="{}">"#,
                escape(value)
            ))
        };
        meta("name", "description", self.description);
        meta("name", "theme-color", THEME_COLOUR);
        if !self.indexed {
            meta("name", "robots", "noindex");
        }
        // Open Graph (Facebook, LinkedIn, Slack, Discord...).
        meta("property", "og:site_name", SITE_NAME);
        meta("property", "og:locale", LOCALE);
        meta(
            "property",
            "og:type",
            if post.is_some() { "article" } else { "website" },
        );
        meta("property", "og:title", self.title);
        meta("property", "og:description", self.description);
        meta("property", "og:url", &canonical);
        if let Some(card) = card {
            meta("property", "og:image", &self.absolute(card.url));
            meta("property", "og:image:type", card.content_type());
            meta("property", "og:image:width", &card.width.to_string());
            meta("property", "og:image:height", &card.height.to_string());
            meta("property", "og:image:alt", card.alt);
        }
        if let Some(post) = post {
            meta("property", "article:published_time", &post.date);
            meta("property", "article:modified_time", &post.updated);
            meta("property", "article:section", &post.kind);
        }
        // The Twitter (X) card: its own tags, as its validator reads no og: ones.
        meta(
            "name",
            "twitter:card",
            if card.is_some() {
                "summary_large_image"
            } else {
                "summary"
            },
        );
        if let Some(site) = &self.accounts.x_handle {
            meta("name", "twitter:site", site);
        }
        if let Some(creator) = self.x_creator() {
            meta("name", "twitter:creator", &creator);
        }
        meta("name", "twitter:title", self.title);
        meta("name", "twitter:description", self.description);
        if let Some(card) = card {
            meta("name", "twitter:image", &self.absolute(card.url));
            meta("name", "twitter:image:alt", card.alt);
        }
        h.push_str(&format!(
            r#"<link rel="canonical" href="{}">"#,
            escape(&canonical)
        ));
        h.push_str(&format!(r#"<link rel="alternate" type="application/rss+xml" title="{SITE_NAME} Blog" href="{}/feed.xml">"#, self.site_url));
        for block in self.json_ld() {
            h.push_str(r#"<script type="application/ld+json">"#);
            h.push_str(&crate::html::escape_json_for_script(&block.to_string()));
            h.push_str("</script>");
        }
        h
    }

    /// The JSON-LD blocks, each a node of its own with its `@context` (the
    /// validators read top-level nodes only): the Organization on every
    /// page; a BlogPosting and its breadcrumb on a post; the Blog with its
    /// posts on the list; a Product per price on the pricing page when
    /// prices are known.
    pub fn json_ld(&self) -> Vec<Value> {
        let mut blocks = vec![self.organization()];
        match self.data {
            PageData::Blog(BlogData {
                post: Some(post), ..
            }) => {
                let post = &post.summary;
                blocks.push(self.blog_posting(post, true));
                let crumbs = [
                    ("Home", "/".to_owned()),
                    ("Blog", "/blog".to_owned()),
                    (post.title.as_str(), format!("/blog/{}", post.id)),
                ];
                blocks.push(breadcrumb(self.site_url, &crumbs));
            }
            PageData::Blog(BlogData {
                posts, post: None, ..
            }) => {
                blocks.push(json!({
                    "@type": "Blog",
                    "@id": self.absolute("/blog#blog"),
                    "name": format!("{SITE_NAME} Blog"),
                    "description": self.description,
                    "url": self.absolute("/blog"),
                    "inLanguage": "en",
                    "publisher": self.publisher(),
                    "blogPost": posts.iter().map(|p| self.blog_posting(p, false)).collect::<Vec<_>>(),
                }));
            }
            PageData::Pricing(PricingData { prices, .. }) => {
                for p in prices {
                    blocks.push(json!({
                        "@type": "Product",
                        "name": p.product.name,
                        "description": format!("{}, billed per {}", p.product.name, p.interval.as_str()),
                        "brand": { "@type": "Brand", "name": SITE_NAME },
                        "offers": {
                            "@type": "Offer",
                            "price": crate::payments::stripe::major_units(p.amount, &p.currency),
                            "priceCurrency": p.currency.to_ascii_uppercase(),
                            "url": self.absolute("/pricing"),
                            "availability": "https://schema.org/InStock",
                            "description": format!("billed per {}", p.interval.as_str()),
                        },
                    }));
                }
            }
            _ => {}
        }
        for block in &mut blocks {
            if let Value::Object(node) = block {
                node.insert("@context".into(), json!("https://schema.org"));
            }
        }
        blocks
    }

    /// A built PNG as an ImageObject: absolute URL, real size, its text.
    fn image_object(&self, image: RasterImage) -> Value {
        json!({ "@type": "ImageObject", "url": self.absolute(image.url), "width": image.width, "height": image.height, "caption": image.alt })
    }

    fn logo(&self) -> Option<Value> {
        self.manifest
            .raster(LOGO)
            .map(|logo| self.image_object(logo))
    }

    /// The site's Organization node, with its profiles elsewhere.
    fn organization(&self) -> Value {
        let mut org = self.publisher();
        if !self.accounts.profiles.is_empty() {
            org["sameAs"] = json!(self.accounts.profiles);
        }
        org
    }

    /// The Organization as a post's publisher, whole (validators do not
    /// follow an `@id` to the page's Organization node).
    fn publisher(&self) -> Value {
        json!({ "@type": "Organization", "@id": self.absolute("/#organization"), "name": SITE_NAME, "url": self.absolute("/"), "logo": self.logo() })
    }

    /// A post as Google's article rich result reads it. `whole`: the page
    /// of the post itself (with its publisher); else an item of the list.
    fn blog_posting(&self, post: &PostSummary, whole: bool) -> Value {
        let url = self.absolute(&format!("/blog/{}", post.id));
        let author = self.author(post);
        let mut person = json!({ "@type": if author.is_site { "Organization" } else { "Person" }, "name": author.name });
        if let Some(u) = &author.url {
            person["url"] = json!(u);
        }
        // Google wants raster images at least 1200 px wide: the post's card
        // (its cover photo cropped to 1200 x 630, or drawn when the cover is
        // an SVG or there is none).
        let image = post_card(self.manifest, &post.id).map(|card| json!([self.image_object(card)]));
        let mut posting = json!({
            "@type": "BlogPosting",
            "@id": format!("{url}#post"),
            "headline": post.title,
            "description": post.excerpt,
            "url": url,
            "datePublished": post.date,
            "dateModified": post.updated,
            "author": person,
            "image": image,
            "articleSection": post.kind,
        });
        if whole {
            posting["mainEntityOfPage"] = json!({ "@type": "WebPage", "@id": url });
            posting["publisher"] = self.publisher();
            posting["inLanguage"] = json!("en");
        }
        posting
    }
}

/// A post's preview card: the JPEG cropped from its cover photo, else the
/// card drawn with its title.
fn post_card<'m>(manifest: &'m Manifest, id: &str) -> Option<RasterImage<'m>> {
    manifest
        .raster(&format!("og/post-{id}.jpg"))
        .or_else(|| manifest.raster(&format!("og/post-{id}.png")))
}

fn breadcrumb(site: &str, items: &[(&str, String)]) -> Value {
    json!({
        "@type": "BreadcrumbList",
        "itemListElement": items.iter().enumerate().map(|(i, (name, path))| json!({
            "@type": "ListItem", "position": i + 1, "name": name, "item": format!("{site}{path}"),
        })).collect::<Vec<_>>(),
    })
}

/// Every route the table lists in the sitemap, and every post.
pub fn sitemap(site: &str, content: &Content) -> String {
    let posts = content.blog.list();
    // A post's lastmod is its last revision; the list's, the latest of them.
    let newest = posts.iter().map(|p| p.updated.clone()).max();
    let mut xml = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#,
    );
    for path in content.page_paths() {
        // `"sitemap": false` in the table: the payment pages.
        if !content.routes.find(&path).facts.listed {
            continue;
        }
        let lastmod = match path.strip_prefix("/blog/") {
            Some(id) => posts.iter().find(|p| p.id == id).map(|p| p.updated.clone()),
            None if path == "/blog" => newest.clone(),
            None => None,
        };
        xml.push_str(&format!(
            "<url><loc>{}</loc>",
            escape(&format!("{site}{path}"))
        ));
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

/// A post's `date` (a day, or a date and time with its offset) as RSS
/// writes it: the instant, in its own offset (a day is its start in UTC).
fn rfc2822(date: &str) -> String {
    crate::content::blog::schedule::parse_date(date)
        .ok()
        .and_then(|(at, _)| {
            at.format(&time::format_description::well_known::Rfc2822)
                .ok()
        })
        .unwrap_or_default()
}
