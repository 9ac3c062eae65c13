//! A blog post's front matter: TOML between `+++` lines. The one parser of
//! it: the server reads posts with it (server/content/blog/mod.rs), and build.rs
//! includes this file to hand the build the titles its preview cards show
//! (client/build.mjs). It depends on serde and toml only.

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FrontMatter {
    pub id: String,
    pub title: String,
    pub date: String,
    /// When the post was last revised in substance (ISO), if after `date`.
    pub updated: Option<String>,
    pub author: String,
    /// The author's page, if there is one: a path on this site (`/about`)
    /// or an https URL.
    pub author_url: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    pub read_time: String,
    pub excerpt: String,
    /// Path under content/images/ (e.g. `blog/<id>.svg`).
    pub image: Option<String>,
    #[serde(default)]
    pub draft: bool,
}

/// A post file's front matter text (after the opening `+++`) and its body.
pub fn split(text: &str) -> Result<(&str, &str), &'static str> {
    let rest = text
        .strip_prefix("+++")
        .ok_or("must start with a +++ front matter block")?;
    rest.split_once("\n+++")
        .ok_or("front matter is not closed with +++")
}

pub fn parse(front: &str) -> Result<FrontMatter, toml::de::Error> {
    toml::from_str(front)
}
