//! Blog posts: `content/blog/<id>.md`, TOML front matter between `+++` lines,
//! then Markdown. Listed newest first.

use serde::{Deserialize, Serialize};

use super::markdown;
use super::ContentError;
use crate::assets::Manifest;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FrontMatter {
    id: String,
    title: String,
    date: String,
    author: String,
    #[serde(rename = "type")]
    kind: String,
    read_time: String,
    excerpt: String,
    /// Path under content/images/ (e.g. `blog/<id>.svg`).
    image: Option<String>,
}

/// What a list card shows (`PostSummary` in client/lib/types.ts).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PostSummary {
    pub id: String,
    pub title: String,
    /// ISO date.
    pub date: String,
    pub author: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub read_time: String,
    pub excerpt: String,
    /// Hashed image URL, or None (the page shows a placeholder).
    pub image: Option<String>,
}

/// A whole post (`Post` in client/lib/types.ts).
#[derive(Debug, Clone, Serialize)]
pub struct Post {
    #[serde(flatten)]
    pub summary: PostSummary,
    /// Sanitized HTML of the Markdown body.
    pub html: String,
}

pub struct Blog {
    /// Newest first.
    posts: Vec<Post>,
}

impl Blog {
    pub fn parse(files: &[(&str, &str)], manifest: &Manifest) -> Result<Blog, ContentError> {
        let mut posts = files
            .iter()
            .map(|(name, text)| parse_post(name, text, manifest))
            .collect::<Result<Vec<_>, _>>()?;
        posts.sort_by(|a, b| b.summary.date.cmp(&a.summary.date).then_with(|| a.summary.id.cmp(&b.summary.id)));
        Ok(Blog { posts })
    }

    /// Every post, newest first.
    pub fn list(&self) -> Vec<PostSummary> {
        self.posts.iter().map(|p| p.summary.clone()).collect()
    }

    /// Whether some post is of this type.
    pub fn has_type(&self, kind: &str) -> bool {
        self.posts.iter().any(|p| p.summary.kind == kind)
    }

    pub fn get(&self, id: &str) -> Option<&Post> {
        self.posts.iter().find(|p| p.summary.id == id)
    }
}

fn parse_post(file: &str, text: &str, manifest: &Manifest) -> Result<Post, ContentError> {
    let err = |m: String| ContentError::new(&format!("content/blog/{file}"), m);
    let rest = text.strip_prefix("+++").ok_or_else(|| err("must start with a +++ front matter block".into()))?;
    let (front, body) = rest.split_once("\n+++").ok_or_else(|| err("front matter is not closed with +++".into()))?;
    let fm: FrontMatter = toml::from_str(front).map_err(|e| err(format!("front matter: {e}")))?;
    if file.strip_suffix(".md") != Some(fm.id.as_str()) {
        return Err(err(format!("id {:?} must match the file name", fm.id)));
    }
    let iso = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(&fm.date, &iso).map_err(|e| err(format!("date {:?} is not YYYY-MM-DD: {e}", fm.date)))?;
    let image = match fm.image {
        None => None,
        Some(path) => Some(
            manifest
                .image_url(&path)
                .ok_or_else(|| err(format!("image {path:?} is not under content/images/")))?
                .to_owned(),
        ),
    };
    Ok(Post {
        summary: PostSummary {
            id: fm.id,
            title: fm.title,
            date: fm.date,
            author: fm.author,
            kind: fm.kind,
            read_time: fm.read_time,
            excerpt: fm.excerpt,
            image,
        },
        html: markdown::to_safe_html(body),
    })
}
