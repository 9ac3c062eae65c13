//! The content the server reads itself, parsed into typed values: blog posts
//! (Markdown -> sanitized HTML), community configs, the route table, the
//! intro-request tags, the embedded frames' origins and the site's own
//! accounts elsewhere. `serve` parses the
//! copies in the binary's payload once at start; `dev` parses the files of a
//! checkout on every change. Both go through [`Content::load`]'s parsers, so a
//! malformed file fails the same way in each, naming the file (and the line
//! where the parser can tell).

pub mod blog;
pub mod communities;
pub mod error;
pub mod front_matter;
pub mod links;
pub mod markdown;
pub mod routes;

use std::path::Path;

use crate::assets::Manifest;
use crate::payload::Payload;
use blog::{Blog, Drafts};
use communities::Communities;
pub use error::{ContentError, ACCOUNTS_FILE, EMBEDS_FILE, INTRO_TAGS_FILE, ROUTES_FILE};
use links::Links;
use routes::{PageId, RouteTable};

/// Where the content files are read from.
#[derive(Clone, Copy)]
pub enum Source<'a> {
    /// The copies in a binary's payload (`serve`; `pack` checks the one it makes).
    Payload(&'a Payload),
    /// A checkout's `content/` folder (`dev`).
    Dir(&'a Path),
}

impl Source<'_> {
    /// Every `*.ext` file of `content/<dir>/` as (file name, text), by name.
    fn files(&self, dir: &str, ext: &str) -> Result<Vec<(String, String)>, ContentError> {
        match self {
            Source::Payload(payload) => payload
                .names_in(&format!("content/{dir}"), ext)
                .into_iter()
                .map(|path| {
                    let text = payload.text(path).map_err(|e| ContentError::new(path, e))?;
                    let name = path.rsplit('/').next().unwrap_or(path);
                    Ok((name.to_owned(), text.to_owned()))
                })
                .collect(),
            Source::Dir(root) => {
                let folder = format!("content/{dir}");
                let unreadable =
                    |e: std::io::Error| ContentError::new(&folder, format!("cannot be read: {e}"));
                let mut names: Vec<String> = std::fs::read_dir(root.join(&folder))
                    .map_err(unreadable)?
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|n| {
                        !n.starts_with('.') && n.rsplit_once('.').is_some_and(|(_, e)| e == ext)
                    })
                    .collect();
                names.sort();
                names
                    .into_iter()
                    .map(|name| {
                        let path = format!("{folder}/{name}");
                        let text = std::fs::read_to_string(root.join(&path)).map_err(|e| {
                            ContentError::new(&path, format!("cannot be read: {e}"))
                        })?;
                        Ok((name, text))
                    })
                    .collect()
            }
        }
    }

    /// One file, by its path from the root.
    fn file(&self, path: &str) -> Result<String, ContentError> {
        match self {
            Source::Payload(payload) => payload
                .text(path)
                .map(str::to_owned)
                .map_err(|e| ContentError::new(path, e)),
            Source::Dir(root) => std::fs::read_to_string(root.join(path))
                .map_err(|e| ContentError::new(path, format!("cannot be read: {e}"))),
        }
    }
}

/// Everything the server reads from `content/`, ready to serve.
#[derive(Clone, Default)]
pub struct Content {
    pub blog: Blog,
    pub communities: Communities,
    pub routes: RouteTable,
    /// Where the server sends visitors, read from `routes`.
    pub links: Links,
    /// The intro-request tag options, in the form's order (the form reads
    /// the same file).
    pub intro_tags: Vec<String>,
    /// Origins of the embedded frames, for the Content-Security-Policy (the
    /// pages read the same file).
    pub frame_origins: Vec<String>,
    /// The site's own accounts elsewhere (the pages link the same file).
    pub accounts: Accounts,
}

/// Each part of [`Content`], parsed on its own.
struct Parts {
    blog: Result<Blog, ContentError>,
    communities: Result<Communities, ContentError>,
    /// The route table and the links read from it.
    routes: Result<(RouteTable, Links), ContentError>,
    intro_tags: Result<Vec<String>, ContentError>,
    frame_origins: Result<Vec<String>, ContentError>,
    accounts: Result<Accounts, ContentError>,
}

impl Parts {
    fn parse(source: Source, manifest: &Manifest, drafts: Drafts) -> Parts {
        Parts {
            blog: source
                .files("blog", "md")
                .and_then(|f| Blog::parse(&f, manifest, drafts)),
            communities: source
                .files("communities", "json")
                .and_then(|f| Communities::parse(&f, manifest)),
            routes: source
                .file(ROUTES_FILE)
                .and_then(|t| RouteTable::parse(&t))
                .and_then(|table| Links::read(&table).map(|links| (table, links))),
            intro_tags: source
                .file(INTRO_TAGS_FILE)
                .and_then(|t| parse_intro_tags(&t)),
            frame_origins: source
                .file(EMBEDS_FILE)
                .and_then(|t| parse_frame_origins(&t)),
            accounts: source.file(ACCOUNTS_FILE).and_then(|t| parse_accounts(&t)),
        }
    }
}

impl Content {
    /// Every concrete path of the route table: each published post's for
    /// `/blog/:postId` (what is prerendered, and what the sitemap chooses from).
    pub fn page_paths(&self) -> Vec<String> {
        self.routes.concrete_paths(|page| match page {
            PageId::Blog => self.blog.ids().map(str::to_owned).collect(),
            _ => Vec::new(),
        })
    }

    /// All of it, or the first file that is malformed.
    pub fn load(
        source: Source,
        manifest: &Manifest,
        drafts: Drafts,
    ) -> Result<Content, ContentError> {
        let p = Parts::parse(source, manifest, drafts);
        let (routes, links) = p.routes?;
        Ok(Content {
            blog: p.blog?,
            communities: p.communities?,
            routes,
            links,
            intro_tags: p.intro_tags?,
            frame_origins: p.frame_origins?,
            accounts: p.accounts?,
        })
    }

    /// The content of the binary's payload, as `serve` shows it (no drafts).
    pub fn embedded(manifest: &Manifest) -> Result<Content, ContentError> {
        Content::load(
            Source::Payload(crate::payload::get()),
            manifest,
            Drafts::Hide,
        )
    }

    /// Every part that parses; a part that does not keeps its value in
    /// `previous` (empty without one) and its error is returned. The dev
    /// server keeps serving the last good version of a broken file this way.
    pub fn reload(
        source: Source,
        manifest: &Manifest,
        drafts: Drafts,
        previous: Option<&Content>,
    ) -> (Content, Vec<ContentError>) {
        let p = Parts::parse(source, manifest, drafts);
        let mut errors = Vec::new();
        let last_routes = previous.map(|c| (c.routes.clone(), c.links.clone()));
        let (routes, links) = keep(p.routes, last_routes.as_ref(), &mut errors);
        let content = Content {
            blog: keep(p.blog, previous.map(|c| &c.blog), &mut errors),
            communities: keep(p.communities, previous.map(|c| &c.communities), &mut errors),
            routes,
            links,
            intro_tags: keep(p.intro_tags, previous.map(|c| &c.intro_tags), &mut errors),
            frame_origins: keep(
                p.frame_origins,
                previous.map(|c| &c.frame_origins),
                &mut errors,
            ),
            accounts: keep(p.accounts, previous.map(|c| &c.accounts), &mut errors),
        };
        (content, errors)
    }
}

/// The part as parsed, or (recording why not) the last good one.
fn keep<T: Clone + Default>(
    part: Result<T, ContentError>,
    last: Option<&T>,
    errors: &mut Vec<ContentError>,
) -> T {
    part.unwrap_or_else(|e| {
        errors.push(e);
        last.cloned().unwrap_or_default()
    })
}

/// `content/site/intro-tags.json`: a list of distinct, non-empty tags.
pub fn parse_intro_tags(text: &str) -> Result<Vec<String>, ContentError> {
    let tags: Vec<String> =
        serde_json::from_str(text).map_err(|e| ContentError::json(INTRO_TAGS_FILE, &e))?;
    if let Some(blank) = tags.iter().position(|t| t.trim().is_empty()) {
        return Err(ContentError::new(
            INTRO_TAGS_FILE,
            format!("tag {} is empty", blank + 1),
        ));
    }
    Ok(tags)
}

/// A JSON file of name -> https URL (`embeds.json`, `accounts.json`): each
/// entry as (name, the URL as written, the URL parsed), by name.
fn https_urls(file: &str, text: &str) -> Result<Vec<(String, String, ammonia::Url)>, ContentError> {
    let named: std::collections::BTreeMap<String, String> =
        serde_json::from_str(text).map_err(|e| ContentError::json(file, &e))?;
    named
        .into_iter()
        .map(|(name, u)| match ammonia::Url::parse(&u) {
            Ok(url) if url.scheme() == "https" => Ok((name, u, url)),
            Ok(_) => Err(ContentError::new(
                file,
                format!("{name}: {u:?} must be an https URL"),
            )),
            Err(e) => Err(ContentError::new(
                file,
                format!("{name}: {u:?} is not a URL: {e}"),
            )),
        })
        .collect()
}

/// `content/site/embeds.json` (name -> https URL): the origins, sorted.
pub fn parse_frame_origins(text: &str) -> Result<Vec<String>, ContentError> {
    let mut origins: Vec<String> = https_urls(EMBEDS_FILE, text)?
        .iter()
        .map(|(_, _, url)| url.origin().ascii_serialization())
        .collect();
    origins.sort();
    origins.dedup();
    Ok(origins)
}

/// The site's own accounts on other platforms (`content/site/accounts.json`,
/// name -> https URL of the profile): the community channels link them, and
/// search engines and link previews are told about them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Accounts {
    /// Every profile URL, by account name: the Organization's `sameAs`.
    pub profiles: Vec<String>,
    /// `@handle` of the X (Twitter) profile, if one is listed: the share
    /// cards' `twitter:site`.
    pub x_handle: Option<String>,
}

pub fn parse_accounts(text: &str) -> Result<Accounts, ContentError> {
    let mut accounts = Accounts::default();
    for (_, written, url) in https_urls(ACCOUNTS_FILE, text)? {
        if accounts.x_handle.is_none() {
            accounts.x_handle = x_handle(&url);
        }
        accounts.profiles.push(written);
    }
    Ok(accounts)
}

/// `@name` of an X profile address (`https://x.com/name`, or twitter.com).
pub fn x_handle(url: &ammonia::Url) -> Option<String> {
    let host = url.host_str()?.trim_start_matches("www.");
    let name = url.path().trim_matches('/');
    let valid = (1..=15).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    (matches!(host, "x.com" | "twitter.com") && valid).then(|| format!("@{name}"))
}

/// What `pack` says of the blog in the payload `bytes` (one it checked):
/// one line for each post it publishes later (drafts never), soonest first.
pub fn schedule_of(bytes: &'static [u8]) -> Vec<String> {
    let upcoming = || -> Result<Vec<blog::schedule::Upcoming>, String> {
        let payload = crate::payload::Payload::read(bytes)?;
        let manifest = crate::assets::Manifest::of(&payload)?;
        let files = Source::Payload(&payload)
            .files("blog", "md")
            .map_err(|e| e.to_string())?;
        let blog =
            blog::Blog::parse(&files, &manifest, blog::Drafts::Hide).map_err(|e| e.to_string())?;
        Ok(blog.upcoming(blog::schedule::now_secs()))
    };
    match upcoming() {
        Ok(posts) => posts
            .iter()
            .map(blog::schedule::Upcoming::to_string)
            .collect(),
        Err(e) => vec![format!("the scheduled posts could not be read: {e}")],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_errors_carry_the_file_line_and_column() {
        let e = parse_intro_tags("[\n  \"a\",\n  b\n]").unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.column),
            (INTRO_TAGS_FILE, Some(3), Some(3))
        );
        assert_eq!(
            e.to_string(),
            "content/site/intro-tags.json:3:3: expected value"
        );
        assert!(parse_intro_tags("[\"a\", \" \"]")
            .unwrap_err()
            .to_string()
            .ends_with("tag 2 is empty"));
    }

    #[test]
    fn frames_must_be_https() {
        assert_eq!(
            parse_frame_origins(r#"{"a": "https://x.example/p", "b": "https://x.example/q"}"#)
                .unwrap(),
            vec!["https://x.example"]
        );
        let e = parse_frame_origins(r#"{"a": "http://x.example/p"}"#).unwrap_err();
        assert!(e.to_string().contains("must be an https URL"), "{e}");
    }

    #[test]
    fn accounts_are_https_profiles_and_the_x_one_gives_the_handle() {
        let a = parse_accounts(
            r#"{"github": "https://github.com/org", "twitter": "https://x.com/org_1/"}"#,
        )
        .unwrap();
        assert_eq!(
            a.profiles,
            ["https://github.com/org", "https://x.com/org_1/"]
        );
        assert_eq!(a.x_handle.as_deref(), Some("@org_1"));
        let none = parse_accounts(
            r#"{"x": "https://x.com/i/lists/1", "mastodon": "https://social.example/@org"}"#,
        )
        .unwrap();
        assert_eq!(
            none.x_handle, None,
            "a list is not a profile, and other hosts have no X handle"
        );
        let e = parse_accounts(r#"{"discord": "discord.gg/org"}"#).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "content/site/accounts.json: discord: \"discord.gg/org\" is not a URL"
            ),
            "{e}"
        );
        assert!(parse_accounts(r#"{"x": "http://x.com/org"}"#)
            .unwrap_err()
            .to_string()
            .contains("must be an https URL"));
    }

    #[test]
    fn a_reload_keeps_the_last_good_part_and_reports_the_broken_file() {
        let root = std::env::temp_dir().join(format!("citizen-content-{}", std::process::id()));
        let manifest = Manifest::embedded();
        let copy = |rel: &str| {
            let to = root.join(rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel), to).unwrap();
        };
        for f in [
            ROUTES_FILE,
            INTRO_TAGS_FILE,
            EMBEDS_FILE,
            ACCOUNTS_FILE,
            "content/blog/nfc-integration.md",
            "content/communities/brussels-pay.json",
        ] {
            copy(f);
        }
        let (good, errors) = Content::reload(Source::Dir(&root), &manifest, Drafts::Show, None);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(good.blog.list().len(), 1);

        std::fs::write(
            root.join("content/blog/nfc-integration.md"),
            "+++\nid = \"nfc-integration\"\ntitle = \n+++\n",
        )
        .unwrap();
        std::fs::write(root.join(INTRO_TAGS_FILE), "[\"only\"]").unwrap();
        let (next, errors) =
            Content::reload(Source::Dir(&root), &manifest, Drafts::Show, Some(&good));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(
            (errors[0].file.as_str(), errors[0].line),
            ("content/blog/nfc-integration.md", Some(3))
        );
        assert_eq!(
            next.blog.list()[0].id,
            "nfc-integration",
            "the last good blog stays"
        );
        assert_eq!(
            next.intro_tags,
            vec!["only"],
            "the parts that parse are new"
        );
        assert!(
            Content::load(Source::Dir(&root), &manifest, Drafts::Show).is_err(),
            "load is all or nothing"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
