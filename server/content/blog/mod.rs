//! Blog posts: `content/blog/<id>.md`, TOML front matter between `+++` lines,
//! then Markdown. Listed newest first. A post whose front matter says
//! `draft = true` is checked like any other but shown only by the dev server.
//! A post dated after now is scheduled: it is in no list, page, sitemap or
//! feed until its time (every reader asks the blog, which reads the clock),
//! then it is, with no restart; `dev` shows it before, marked.

pub mod schedule;

use serde::Serialize;

use super::error::ContentError;
use super::front_matter::{self, FrontMatter};
use super::markdown;
use crate::assets::{Manifest, SiteImage};
use schedule::{now_secs, parse_date, Upcoming};

/// Whether draft posts are part of the blog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drafts {
    /// `serve`: a draft is in no list, page, sitemap or feed.
    Hide,
    /// `dev`: drafts show, marked as such.
    Show,
}

/// Whether posts whose time has not come are part of the blog
/// ([`Blog::set_scheduled`]; a blog starts with `Hide`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scheduled {
    /// `serve`: a post is in no list, page, sitemap or feed before its time.
    #[default]
    Hide,
    /// `dev`, and a check that renders every page: scheduled posts show,
    /// marked as such ([`PostSummary::scheduled`]) until their time.
    Show,
}

/// What a list card shows.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct PostSummary {
    pub id: String,
    pub title: String,
    /// When it is published, as the front matter gives it: a day
    /// (`YYYY-MM-DD`, its start in UTC), or a date and time with its offset
    /// (RFC 3339: `2026-12-01T09:00:00+01:00`, `Z` for UTC).
    pub date: String,
    /// The last revision, in the same forms: the front matter's `updated`,
    /// else `date`.
    pub updated: String,
    pub author: String,
    /// The author's page, if the front matter names one: a path on this
    /// site (starting with `/`) or an https URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub author_url: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    pub read_time: String,
    pub excerpt: String,
    /// The cover, as the build made it, or null when the post has none
    /// (the page shows a placeholder).
    pub image: Option<SiteImage>,
    /// Set only on drafts, which only the dev server lists; the page marks them.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[ts(optional, as = "Option<bool>")]
    pub draft: bool,
    /// Set only on posts whose time (`date`) has not come, which only the
    /// dev server lists; the page marks them with their time.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[ts(optional, as = "Option<bool>")]
    pub scheduled: bool,
}

/// A whole post.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct Post {
    #[serde(flatten)]
    pub summary: PostSummary,
    /// Sanitized HTML of the Markdown body. An image of `content/images/`
    /// named by a path relative to the post is an `<img>` whose `src` is
    /// one of `images`: the page draws it as it draws the cover.
    pub html: String,
    /// The images of `content/images/` the body shows, each once.
    pub images: Vec<SiteImage>,
}

#[derive(Debug, Clone, Default)]
pub struct Blog {
    /// Newest first, each with the second it is published at (Unix time,
    /// rounded up: a post is never out before its time).
    posts: Vec<(Post, i64)>,
    /// The same seconds, oldest first: how many posts are out is one search.
    times: Vec<i64>,
    scheduled: Scheduled,
}

impl Blog {
    /// The posts of `files` (file name, text); every file is checked, drafts
    /// included, whether or not they are kept. Scheduled posts are kept,
    /// and hidden until their time ([`Blog::set_scheduled`] shows them).
    pub fn parse<N: AsRef<str>, T: AsRef<str>>(
        files: &[(N, T)],
        manifest: &Manifest,
        drafts: Drafts,
    ) -> Result<Blog, ContentError> {
        let mut posts = files
            .iter()
            .map(|(name, text)| parse_post(name.as_ref(), text.as_ref(), manifest))
            .collect::<Result<Vec<_>, _>>()?;
        if drafts == Drafts::Hide {
            posts.retain(|(p, _)| !p.summary.draft);
        }
        posts.sort_by(|(a, at_a), (b, at_b)| {
            at_b.cmp(at_a).then_with(|| a.summary.id.cmp(&b.summary.id))
        });
        let mut times: Vec<i64> = posts.iter().map(|(_, at)| *at).collect();
        times.reverse();
        Ok(Blog {
            posts,
            times,
            scheduled: Scheduled::Hide,
        })
    }

    /// Shows (or hides) the posts whose time has not come, from now on.
    pub fn set_scheduled(&mut self, scheduled: Scheduled) {
        self.scheduled = scheduled;
    }

    /// The posts shown at `now`, newest first, each with whether its time
    /// has yet to come.
    fn shown(&self, now: i64) -> impl Iterator<Item = (&Post, bool)> {
        self.posts.iter().filter_map(move |(post, at)| {
            let waiting = *at > now;
            (!waiting || self.scheduled == Scheduled::Show).then_some((post, waiting))
        })
    }

    /// Every post's id shown now, newest first.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.shown(now_secs()).map(|(p, _)| p.summary.id.as_str())
    }

    /// Every post shown now, newest first.
    pub fn list(&self) -> Vec<PostSummary> {
        self.shown(now_secs())
            .map(|(p, waiting)| PostSummary {
                scheduled: waiting,
                ..p.summary.clone()
            })
            .collect()
    }

    /// Whether some post shown now is of this type.
    pub fn has_type(&self, kind: &str) -> bool {
        self.shown(now_secs()).any(|(p, _)| p.summary.kind == kind)
    }

    /// The post `id`, if it is shown now.
    pub fn get(&self, id: &str) -> Option<Post> {
        self.shown(now_secs())
            .find(|(p, _)| p.summary.id == id)
            .map(|(p, waiting)| {
                let mut post = p.clone();
                post.summary.scheduled = waiting;
                post
            })
    }

    /// How many posts are published at `now` (Unix seconds), shown or not:
    /// it changes when a scheduled post's time comes, so the pages that
    /// show posts are kept under it (`pages::plan::version_now`).
    pub fn published_at(&self, now: i64) -> u64 {
        self.times.partition_point(|at| *at <= now) as u64
    }

    /// The posts whose time comes after `now` (Unix seconds), soonest
    /// first, whether or not they are shown.
    pub fn upcoming(&self, now: i64) -> Vec<Upcoming> {
        let mut next: Vec<Upcoming> = self
            .posts
            .iter()
            .filter(|(_, at)| *at > now)
            .map(|(p, at)| Upcoming {
                id: p.summary.id.clone(),
                date: p.summary.date.clone(),
                in_secs: at - now,
            })
            .collect();
        next.reverse();
        next
    }
}

/// The post of one file, with the second it is published at.
fn parse_post(file: &str, text: &str, manifest: &Manifest) -> Result<(Post, i64), ContentError> {
    let path = format!("content/blog/{file}");
    let err = |m: String| ContentError::new(&path, m);
    let (front, body) = front_matter::split(text).map_err(|m| {
        let e = err(m.into());
        if text.starts_with("+++") {
            e
        } else {
            e.at(1, 1)
        }
    })?;
    // Where a byte of the file is, as a line and a column.
    let at_byte = |e: ContentError, offset: usize| {
        let before = &text[..offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        e.at(line, column)
    };
    // Where a position of the front matter is in the file (it starts after "+++").
    let located = |e: ContentError, offset: usize| at_byte(e, 3 + offset);
    // A field's own line, for the checks made after parsing.
    let field = |e: ContentError, key: &str| {
        let mut offset = 0;
        for line in front.split('\n') {
            if line.split('=').next().is_some_and(|k| k.trim() == key) {
                return located(e, offset);
            }
            offset += line.len() + 1;
        }
        e
    };
    let fm: FrontMatter = front_matter::parse(front).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        located(err(format!("front matter: {}", e.message().trim())), offset)
    })?;
    if file.strip_suffix(".md") != Some(fm.id.as_str()) {
        return Err(field(
            err(format!("id {:?} must match the file name", fm.id)),
            "id",
        ));
    }
    let (published, date) = parse_date(&fm.date)
        .map_err(|why| field(err(format!("date {:?} {why}", fm.date)), "date"))?;
    let updated = match &fm.updated {
        None => date.clone(),
        Some(text) => {
            let (revised, updated) = parse_date(text)
                .map_err(|why| field(err(format!("updated {text:?} {why}")), "updated"))?;
            // A day alone is compared as a day: a post of 09:00 revised
            // "that day" is not revised before it was published.
            let before = match updated.len() == 10 || date.len() == 10 {
                true => updated[..10] < date[..10],
                false => revised < published,
            };
            if before {
                return Err(field(
                    err(format!(
                        "updated {text:?} is before the post's date {:?}",
                        fm.date
                    )),
                    "updated",
                ));
            }
            updated
        }
    };
    if let Some(url) = &fm.author_url {
        let on_site = url.starts_with('/') && !url.starts_with("//");
        let https =
            ammonia::Url::parse(url).is_ok_and(|u| u.scheme() == "https" && u.host_str().is_some());
        if !on_site && !https {
            return Err(field(
                err(format!(
                    "authorUrl {url:?} must be a path on this site (\"/about\") or an https URL"
                )),
                "authorUrl",
            ));
        }
    }
    let image = match fm.image {
        None => None,
        Some(image) => Some(
            manifest
                .picture(&image)
                .ok_or_else(|| {
                    field(
                        err(format!("image {image:?} is not under content/images/")),
                        "image",
                    )
                })?
                .clone(),
        ),
    };
    let mut images: Vec<SiteImage> = Vec::new();
    let html = markdown::render(
        body,
        &mut |address| match body_image(&path, address, manifest) {
            Ok(found) => {
                let src = found.src.clone();
                if !images.contains(found) {
                    images.push(found.clone());
                }
                markdown::ImageAddress::Replace(src)
            }
            Err(message) => markdown::ImageAddress::Refuse(message),
        },
    )
    .map_err(|refused| {
        // The body starts where the front matter's closing line ends.
        let body_start = body.as_ptr() as usize - text.as_ptr() as usize;
        at_byte(err(refused.message), body_start + refused.offset)
    })?;
    // Rounded up to the second: never out before its time.
    let at = published.unix_timestamp() + i64::from(published.nanosecond() > 0);
    let post = Post {
        summary: PostSummary {
            id: fm.id,
            title: fm.title,
            updated,
            date,
            author: fm.author,
            author_url: fm.author_url,
            kind: fm.kind,
            read_time: fm.read_time,
            excerpt: fm.excerpt,
            image,
            draft: fm.draft,
            scheduled: false,
        },
        html,
        images,
    };
    Ok((post, at))
}

/// The image of `content/images/` that a post (`content/blog/ID.md`) names
/// by a path relative to itself (`../images/blog/stalls.jpg`) or from the
/// checkout's root (`/content/images/blog/stalls.jpg`), as editors and
/// GitHub preview them, or why there is none.
fn body_image<'m>(
    post: &str,
    address: &str,
    manifest: &'m Manifest,
) -> Result<&'m SiteImage, String> {
    const IMAGES: &str = "content/images/";
    let base = ammonia::Url::parse(&format!("file:///{post}")).expect("a file URL");
    let file = base
        .join(address.trim())
        .ok()
        .and_then(|url| {
            percent_encoding::percent_decode_str(url.path())
                .decode_utf8()
                .ok()
                .map(|p| p.trim_start_matches('/').to_owned())
        })
        .ok_or_else(|| format!("image {address:?} is not a path"))?;
    let Some(key) = file.strip_prefix(IMAGES) else {
        return Err(format!(
            "image {address:?} is {file}, not under {IMAGES}: put the image in {IMAGES} and name it from the post (\"../images/NAME\")"
        ));
    };
    manifest.picture(key).ok_or_else(|| match manifest.image_url(key) {
        // Copied as it is, but not an image pages can show.
        Some(_) => format!("image {address:?} is {file}, which is not an image: name a JPEG, PNG, WebP, AVIF, GIF or SVG"),
        None => format!("image {address:?}: there is no file {file} (the path is relative to {post}, or from the checkout's root when it starts with /); add the image there or fix the path"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) const POST: &str = "+++\nid = \"a\"\ntitle = \"A\"\ndate = \"2024-05-01\"\nauthor = \"Ana\"\ntype = \"Updates\"\nreadTime = \"3 min read\"\nexcerpt = \"E\"\n+++\nBody";

    fn draft(id: &str) -> String {
        POST.replace("id = \"a\"", &format!("id = \"{id}\"\ndraft = true"))
            .replace("2024-05-01", "2024-06-01")
    }

    #[test]
    fn drafts_are_kept_only_when_asked() {
        let manifest = Manifest::embedded();
        let files = [
            ("a.md".to_owned(), POST.to_owned()),
            ("b.md".to_owned(), draft("b")),
        ];
        let shown = Blog::parse(&files, &manifest, Drafts::Show).unwrap();
        assert_eq!(
            shown
                .list()
                .iter()
                .map(|p| (p.id.as_str(), p.draft))
                .collect::<Vec<_>>(),
            vec![("b", true), ("a", false)]
        );
        let hidden = Blog::parse(&files, &manifest, Drafts::Hide).unwrap();
        assert_eq!(hidden.list().len(), 1);
        assert!(hidden.get("b").is_none() && !hidden.has_type("nothing"));
        // Only a draft says so in its JSON.
        assert!(!serde_json::to_string(&hidden.list()[0])
            .unwrap()
            .contains("draft"));
        // A broken draft is still an error: drafts are checked like posts.
        let broken = [("c.md", "+++\nid = \"c\"\ndraft = true\n+++\n")];
        assert!(Blog::parse(&broken, &manifest, Drafts::Hide).is_err());
    }

    #[test]
    fn errors_name_the_file_and_the_line() {
        let manifest = Manifest::embedded();
        let at = |text: &str| {
            let e = Blog::parse(&[("a.md", text)], &manifest, Drafts::Show).unwrap_err();
            (e.to_string(), e.line)
        };
        let (message, line) = at(&POST.replace("title = \"A\"", "title = A"));
        assert_eq!(line, Some(3), "{message}");
        assert!(
            message.starts_with("content/blog/a.md:3:9: front matter: "),
            "{message}"
        );
        let (message, line) = at(&POST.replace("2024-05-01", "May 1st"));
        assert_eq!(line, Some(4), "{message}");
        assert!(
            message.contains("date \"May 1st\" is neither a day (2026-12-01) nor a date and time with its offset"),
            "{message}"
        );
        let (message, _) = at(&POST.replace("id = \"a\"", "id = \"b\""));
        assert!(
            message.starts_with("content/blog/a.md:2:1: id \"b\" must match the file name"),
            "{message}"
        );
        assert_eq!(
            at("no front matter").0,
            "content/blog/a.md:1:1: must start with a +++ front matter block"
        );
    }

    #[test]
    fn an_image_named_relative_to_the_post_is_the_processed_image() {
        let manifest = Manifest::embedded();
        let svg = manifest
            .picture("blog/nfc-integration.svg")
            .unwrap()
            .clone();
        let body = "\n\nIntro.\n\n![Tap](../images/blog/nfc-integration.svg \"A card\")\n\nAgain: ![Twice](./../images/blog/nfc-integration.svg)\n\nFrom the root: ![Thrice](/content/images/blog/nfc-integration.svg)\n\n![Far](https://example.org/x.png)\n";
        let blog = Blog::parse(
            &[("a.md", format!("{POST}{body}"))],
            &manifest,
            Drafts::Show,
        )
        .unwrap();
        let post = blog.get("a").unwrap();
        // Its src is the build's URL, once in the post's images, with its true size.
        assert_eq!(post.images, vec![svg.clone()]);
        assert_eq!((svg.width, svg.height), (800, 400));
        assert_eq!(
            post.html.matches(&format!("src=\"{}\"", svg.src)).count(),
            3,
            "{}",
            post.html
        );
        assert!(post.html.contains(r#"title="A card""#), "{}", post.html);
        // Another site's image is left as written.
        assert!(post.html.contains(r#"src="https://example.org/x.png""#));
    }

    #[test]
    fn an_image_the_post_names_that_is_not_there_is_refused_at_its_line() {
        let manifest = Manifest::embedded();
        let refused = |image: &str| {
            let text = format!("{POST}\n\nIntro.\n\nMore: ![Stalls]({image})\n");
            let e = Blog::parse(&[("a.md", text)], &manifest, Drafts::Show).unwrap_err();
            (e.to_string(), e.line, e.column)
        };
        let (message, line, column) = refused("../images/blog/stals.png");
        assert_eq!((line, column), (Some(14), Some(7)), "{message}");
        assert!(
            message.starts_with("content/blog/a.md:14:7: ")
                && message.contains("there is no file content/images/blog/stals.png (the path is relative to content/blog/a.md, or from the checkout's root when it starts with /)"),
            "{message}"
        );
        let (message, ..) = refused("images/stalls.png");
        assert!(
            message.contains("is content/blog/images/stalls.png, not under content/images/"),
            "{message}"
        );
        // A path of the site that is no file of content/images/ is refused
        // as well: it would be a broken image.
        let (message, ..) = refused("/assets/x.png");
        assert!(
            message.contains("is assets/x.png, not under content/images/"),
            "{message}"
        );
        let (message, ..) = refused("/images/blog/stalls.png");
        assert!(
            message.contains("is images/blog/stalls.png, not under content/images/"),
            "{message}"
        );
        let (message, ..) = refused("../images/blog/my%20stalls.png");
        assert!(
            message.contains("there is no file content/images/blog/my stalls.png"),
            "{message}"
        );
    }

    #[test]
    fn a_revision_date_and_an_author_page_are_optional_and_checked() {
        let manifest = Manifest::embedded();
        let parse = |text: &str| {
            Blog::parse(&[("a.md", text)], &manifest, Drafts::Show).map(|b| b.list()[0].clone())
        };
        let plain = parse(POST).unwrap();
        assert_eq!(
            (plain.updated.as_str(), plain.author_url.as_deref()),
            ("2024-05-01", None),
            "unrevised: updated is the date"
        );
        let revised = parse(&POST.replace(
            "author = ",
            "updated = \"2024-07-02\"\nauthorUrl = \"/about\"\nauthor = ",
        ))
        .unwrap();
        assert_eq!(
            (revised.updated.as_str(), revised.author_url.as_deref()),
            ("2024-07-02", Some("/about"))
        );
        assert!(parse(&POST.replace(
            "author = ",
            "authorUrl = \"https://social.example/@ana\"\nauthor = "
        ))
        .is_ok());

        let message = |text: String| parse(&text).unwrap_err().to_string();
        let early = message(POST.replace("author = ", "updated = \"2024-04-30\"\nauthor = "));
        assert_eq!(early, "content/blog/a.md:5:1: updated \"2024-04-30\" is before the post's date \"2024-05-01\"");
        for bad in [
            "http://ana.example",
            "ana.example",
            "//ana.example/x",
            "javascript:alert(1)",
        ] {
            let e = message(POST.replace("author = ", &format!("authorUrl = {bad:?}\nauthor = ")));
            assert!(
                e.starts_with("content/blog/a.md:5:1: authorUrl ")
                    && e.contains("must be a path on this site"),
                "{bad}: {e}"
            );
        }
    }

    /// The posts of `(id, date)` pairs, as `serve` keeps them.
    pub(super) fn dated(posts: &[(&str, &str)]) -> Result<Blog, ContentError> {
        let files: Vec<(String, String)> = posts
            .iter()
            .map(|(id, date)| {
                let text = POST
                    .replace("id = \"a\"", &format!("id = \"{id}\""))
                    .replace("\"2024-05-01\"", &format!("{date:?}"));
                (format!("{id}.md"), text)
            })
            .collect();
        Blog::parse(&files, &Manifest::embedded(), Drafts::Hide)
    }

    #[test]
    fn scheduled_posts_show_marked_when_asked_and_say_when_they_go_live() {
        let mut blog = dated(&[
            ("out", "2024-05-01"),
            ("monday", "2999-01-04T09:00:00+01:00"),
            ("sunday", "2999-01-03"),
        ])
        .unwrap();
        blog.set_scheduled(Scheduled::Show);
        let listed: Vec<(String, bool)> = blog
            .list()
            .into_iter()
            .map(|p| (p.id, p.scheduled))
            .collect();
        assert_eq!(
            listed,
            [("monday", true), ("sunday", true), ("out", false)].map(|(i, s)| (i.to_owned(), s))
        );
        assert!(blog.get("monday").unwrap().summary.scheduled);
        assert_eq!(blog.ids().count(), 3);
        // Only a scheduled post says so in its JSON.
        let json = serde_json::to_string(&blog.list()).unwrap();
        assert_eq!(json.matches("\"scheduled\":true").count(), 2, "{json}");
        assert_eq!(json.matches("scheduled").count(), 2, "{json}");
    }
}
