//! The front end's build outputs: the asset manifest, and the files served
//! under `/assets/`. `serve` uses the build in the binary's payload (the SSR
//! bundle, its V8 snapshot and every hashed asset with its precompressed
//! brotli and gzip bodies, see server/payload/); `dev` uses the folder of
//! its latest watch build.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use axum::http::{header, HeaderMap};
use base64::Engine;
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use sha2::Digest;

use crate::css::{InlineCss, Stylesheet};
use crate::payload::{self, Payload};

/// One file served under `/assets/`, from the payload.
#[derive(Debug)]
pub struct EmbeddedFile {
    pub url: String,
    pub content_type: String,
    pub body: &'static [u8],
    pub br: Option<&'static [u8]>,
    pub gzip: Option<&'static [u8]>,
}

/// The server bundle of the binary's payload.
pub fn ssr_bundle() -> &'static str {
    payload::get()
        .text("ssr.js")
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The V8 startup snapshot of [`ssr_bundle`], made when the payload was.
pub fn ssr_snapshot() -> &'static [u8] {
    payload::get()
        .bytes("ssr.snap")
        .unwrap_or_else(|| panic!("ssr.snap is not in the binary's payload"))
}

/// What the esbuild script reports about the client build.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// The one script a page names: it fetches the page's modules once the
    /// document is parsed (client/boot.ts).
    pub boot: String,
    /// The client entry module.
    pub entry: String,
    /// Chunks the entry imports statically.
    pub entry_imports: Vec<String>,
    /// The one stylesheet.
    pub css: String,
    /// Per page id: its chunk first, then every chunk it imports statically.
    pub pages: HashMap<String, Vec<String>>,
    /// `content/images/PATH` -> its hashed URL (a raster image's largest
    /// fallback variant: the file itself is never served).
    pub images: HashMap<String, String>,
    /// `content/images/PATH` -> the image as the pages show it: its true
    /// size and, for a raster image, its variants (client/build/photos.mjs).
    #[serde(default)]
    pub pictures: HashMap<String, SiteImage>,
    /// The PNGs the build draws (preview cards `og/...`, icons `icon-N.png`),
    /// keyed as in `images`: their real size and the text drawn on them.
    #[serde(default)]
    pub rasters: HashMap<String, Raster>,
    /// Every file of the build served under `/assets/`.
    #[serde(default)]
    pub files: Vec<ManifestFile>,
    /// The error screen's markup (client/components/ErrorScreen.tsx,
    /// rendered by client/build.mjs) with [`ERROR_SLOT`] for its line.
    #[serde(rename = "errorScreen")]
    pub error_screen: String,
    /// The stylesheet's rules, from which each page's inline CSS is chosen
    /// ([`Manifest::with_styles`]).
    #[serde(skip)]
    pub styles: Stylesheet,
    /// The error screen's inline CSS, chosen once (its classes are the
    /// same whatever status it shows).
    #[serde(skip)]
    pub error_css: InlineCss,
    /// What each page's rest of the stylesheet is taken from.
    #[serde(skip)]
    pub rules: RulesFile,
}

/// A PNG drawn by the build, as its header gives it.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Raster {
    pub width: u32,
    pub height: u32,
    /// Its text alternative: what it shows (a card's kicker and title).
    pub alt: String,
}

/// An image of `content/images/` as the build made it, what `<Picture>`
/// (client/components/Picture.tsx) draws: an SVG as it is, or a raster
/// image's variants, upright and without metadata, in AVIF, WebP and its
/// own format at the widths the layouts show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct SiteImage {
    /// The URL an `<img src>` names: the SVG, or the largest variant in the
    /// image's own format.
    pub src: String,
    /// Its true size in pixels (a photo's after its EXIF orientation).
    pub width: u32,
    pub height: u32,
    /// A raster image's variants by format, best first (AVIF, WebP), its
    /// own format last; each a `srcset` of its widths. None for an SVG.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<ImageSource>>")]
    pub sources: Vec<ImageSource>,
    /// An opaque raster image's placeholder: the stylesheet class that
    /// paints its blurred preview behind it while it loads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub placeholder: Option<String>,
}

/// One format of a raster image: its MIME type and its `srcset`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ImageSource {
    #[serde(rename = "type")]
    pub kind: String,
    pub srcset: String,
}

/// A built PNG or JPEG with its URL: what a page's head and JSON-LD name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RasterImage<'a> {
    /// Path on the site (`/assets/images/...`).
    pub url: &'a str,
    pub width: u32,
    pub height: u32,
    pub alt: &'a str,
}

impl RasterImage<'_> {
    /// Its MIME type, by its name.
    pub fn content_type(&self) -> &'static str {
        if self.url.ends_with(".jpg") {
            "image/jpeg"
        } else {
            "image/png"
        }
    }
}

/// Where the error screen's template takes the status and reason.
pub const ERROR_SLOT: &str = "%ERROR%";

#[derive(Debug, Clone, Deserialize)]
pub struct ManifestFile {
    pub url: String,
    /// Its path in the build's folder.
    pub file: String,
    #[serde(rename = "type")]
    pub content_type: String,
}

impl Manifest {
    /// The manifest of the binary's payload.
    pub fn embedded() -> Manifest {
        Manifest::of(payload::get()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The manifest of `payload`, with its stylesheet read.
    pub fn of(payload: &Payload) -> Result<Manifest, String> {
        let manifest = Manifest::listing(payload)?;
        let file = manifest.css_file()?;
        let css = payload.text(&format!("web/{file}"))?;
        Ok(manifest.with_styles(css))
    }

    /// The manifest of `payload` as written, its stylesheet not read.
    fn listing(payload: &Payload) -> Result<Manifest, String> {
        serde_json::from_str(payload.text("manifest.json")?)
            .map_err(|e| format!("the payload's manifest.json: {e}"))
    }

    /// A manifest read from a build's folder `dir`, with its stylesheet.
    pub fn in_dir(dir: &Path) -> Result<Manifest, String> {
        let read = |name: &str| {
            std::fs::read_to_string(dir.join(name))
                .map_err(|e| format!("reading {}: {e}", dir.join(name).display()))
        };
        let manifest: Manifest = serde_json::from_str(&read("manifest.json")?)
            .map_err(|e| format!("the build's manifest: {e}"))?;
        let css = read(manifest.css_file()?)?;
        Ok(manifest.with_styles(&css))
    }

    /// The stylesheet's path in the build's folder.
    fn css_file(&self) -> Result<&str, String> {
        self.files
            .iter()
            .find(|f| f.url == self.css)
            .map(|f| f.file.as_str())
            .ok_or_else(|| format!("the manifest lists no file for its stylesheet {}", self.css))
    }

    /// This manifest with `css`, its stylesheet, read into rules.
    pub fn with_styles(mut self, css: &str) -> Manifest {
        self.styles = Stylesheet::parse(css);
        self.error_css = self.styles.for_markup(&self.error_screen);
        self.rules = RulesFile::of(&self.css, &self.styles);
        self
    }

    /// The hashed URL of `content/images/PATH`, if the build has that file.
    pub fn image_url(&self, path: &str) -> Option<&str> {
        self.images.get(path).map(String::as_str)
    }

    /// The image `content/images/PATH` as pages show it, if the build has it.
    pub fn picture(&self, path: &str) -> Option<&SiteImage> {
        self.pictures.get(path)
    }

    /// A PNG the build drew (`og/Home.png`, `icon-512.png`), or a JPEG it
    /// cropped from a post's cover (`og/post-ID.jpg`), if it has it.
    pub fn raster(&self, key: &str) -> Option<RasterImage<'_>> {
        let r = self.rasters.get(key)?;
        Some(RasterImage {
            url: self.image_url(key)?,
            width: r.width,
            height: r.height,
            alt: &r.alt,
        })
    }

    /// Every module a page needs on first load, entry first, without repeats.
    pub fn modules_for(&self, page: &str) -> Vec<&str> {
        let mut out: Vec<&str> = vec![&self.entry];
        let page_chunks = self.pages.get(page).into_iter().flatten();
        for m in self.entry_imports.iter().chain(page_chunks) {
            if !out.contains(&m.as_str()) {
                out.push(m);
            }
        }
        out
    }
}

/// The rules a page may leave out of its inline CSS, with their places
/// (crate::css::Stylesheet::rules_json): one file per stylesheet, named by
/// its content beside the stylesheet, made and compressed when the
/// manifest is read.
#[derive(Debug, Clone, Default)]
pub struct RulesFile {
    pub url: String,
    /// The JSON, and its brotli and gzip bodies.
    pub body: Bytes,
    pub br: Bytes,
    pub gzip: Bytes,
}

impl RulesFile {
    fn of(stylesheet_url: &str, styles: &Stylesheet) -> RulesFile {
        let json = styles.rules_json();
        let digest = sha2::Sha256::digest(json.as_bytes());
        let name = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..8]);
        let stem = stylesheet_url
            .strip_suffix(".css")
            .unwrap_or(stylesheet_url);
        let (br, gzip) = compressed(json.as_bytes());
        RulesFile {
            url: format!("{stem}.rules-{}.json", &name[..10]),
            body: json.into(),
            br: br.into(),
            gzip: gzip.into(),
        }
    }
}

/// `body` compressed as a kept answer is: brotli at quality 9 and gzip at
/// level 9, nearly the smallest bodies, for a cost paid once.
pub fn compressed(body: &[u8]) -> (Vec<u8>, Vec<u8>) {
    use std::io::Write;
    let mut br = Vec::with_capacity(body.len() / 4);
    {
        let mut w = brotli::CompressorWriter::new(&mut br, 4096, 9, 22);
        w.write_all(body).expect("compressing into memory");
    }
    let mut gz = flate2::write::GzEncoder::new(
        Vec::with_capacity(body.len() / 3),
        flate2::Compression::best(),
    );
    gz.write_all(body).expect("compressing into memory");
    (br, gz.finish().expect("compressing into memory"))
}

/// Where the files under `/assets/` come from.
#[derive(Debug)]
pub enum AssetFiles {
    /// Compiled into the binary, with brotli and gzip bodies made at build time.
    Embedded,
    /// A watch build's folder: URL -> (file, content type).
    Dir(HashMap<String, (PathBuf, String)>),
}

impl AssetFiles {
    /// The files a manifest lists, in the build folder `dir`.
    pub fn in_dir(dir: &Path, manifest: &Manifest) -> AssetFiles {
        AssetFiles::Dir(
            manifest
                .files
                .iter()
                .map(|f| (f.url.clone(), (dir.join(&f.file), f.content_type.clone())))
                .collect(),
        )
    }
}

/// Looks a file of the payload up by its URL path (`/assets/...`).
pub fn file(url: &str) -> Option<&'static EmbeddedFile> {
    static INDEX: OnceLock<HashMap<String, EmbeddedFile>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            let payload = payload::get();
            Manifest::listing(payload)
                .unwrap_or_else(|e| panic!("{e}"))
                .files
                .into_iter()
                .map(|f| {
                    let at = |ext: &str| payload.bytes(&format!("web/{}{ext}", f.file));
                    let file = EmbeddedFile {
                        body: at("").unwrap_or_else(|| {
                            panic!("{} is in the manifest, not in the payload", f.file)
                        }),
                        br: at(".br"),
                        gzip: at(".gz"),
                        url: f.url.clone(),
                        content_type: f.content_type,
                    };
                    (f.url, file)
                })
                .collect()
        })
        .get(url)
}

/// How a body is sent: the encodings the build makes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Encoding {
    Br,
    Gzip,
    Identity,
}

/// The best encoding the client accepts (q=0 means refused).
pub fn preferred_encoding(headers: &HeaderMap) -> Encoding {
    let mut br = false;
    let mut gzip = false;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.trim().split(';');
            // Every page view asks this: no allocation.
            let name = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| {
                let p = p.trim();
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            if name.eq_ignore_ascii_case("br") {
                br = !refused;
            } else if name.eq_ignore_ascii_case("gzip") {
                gzip = !refused;
            }
        }
    }
    if br {
        Encoding::Br
    } else if gzip {
        Encoding::Gzip
    } else {
        Encoding::Identity
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn enc(v: &str) -> Encoding {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
        preferred_encoding(&h)
    }

    #[test]
    fn picks_the_best_accepted_encoding() {
        assert_eq!(enc("gzip, deflate, br"), Encoding::Br);
        assert_eq!(enc("gzip"), Encoding::Gzip);
        assert_eq!(enc("br;q=0, gzip"), Encoding::Gzip);
        assert_eq!(enc("identity"), Encoding::Identity);
        assert_eq!(enc("GZIP"), Encoding::Gzip);
    }
}
