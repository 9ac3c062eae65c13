//! The site's payload, made from a checkout: the front end built by
//! `client/build.mjs` (the SSR bundle, its V8 startup snapshot, the manifest,
//! every asset with its brotli and gzip bodies) and the content files the
//! server reads (`content/**/*.md` and `*.json`, images aside: those are
//! assets). build.rs compiles this file too (`#[path]`): `cargo build` and
//! `citizen-site pack` make the payload with this one code.
//!
//! Names in the payload: `ssr.js`, `ssr.snap`, `manifest.json`,
//! `web/<file>` (a file of the manifest, and `.br` / `.gz` beside it), and
//! `content/...` as in the checkout.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::front_matter;

/// The folder of `content/` the payload does not carry as content (the
/// build makes assets of its files).
const NOT_CONTENT: &str = "content/images/";

/// The payload's files, made from the checkout at `root` in the empty
/// folder `work`. `warn` hears what does not stop the build (a post that
/// does not parse gets no preview card; the server says why at start).
pub fn files(
    root: &Path,
    work: &Path,
    warn: &mut dyn FnMut(String),
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let posts = work.join("posts.json");
    std::fs::write(&posts, published_posts(root, warn)?.to_string())
        .map_err(|e| format!("{}: {e}", posts.display()))?;
    let web = work.join("web");
    let node = std::env::var("NODE").unwrap_or_else(|_| "node".into());
    let status = Command::new(&node)
        .arg("client/build.mjs")
        .arg(&web)
        .env("SITE_POSTS", &posts)
        .current_dir(root)
        .status()
        .map_err(|e| {
            format!("building the front end: could not start {node:?} ({e}); is Node.js installed?")
        })?;
    if !status.success() {
        return Err(format!(
            "building the front end (node client/build.mjs) failed with {status}: its output is above"
        ));
    }
    let read = |name: &str| {
        std::fs::read(web.join(name)).map_err(|e| format!("{}: {e}", web.join(name).display()))
    };
    let manifest_json = read("manifest.json")?;
    let manifest: serde_json::Value = serde_json::from_slice(&manifest_json)
        .map_err(|e| format!("the build's manifest.json: {e}"))?;
    let bundle = read("ssr.js")?;
    let mut out = vec![
        ("ssr.snap".to_owned(), snapshot(&bundle)?),
        ("ssr.js".to_owned(), bundle),
        ("manifest.json".to_owned(), manifest_json),
    ];
    for f in manifest["files"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let file = f["file"]
            .as_str()
            .ok_or("the build's manifest lists a file without a path")?;
        let compressed = f["compressed"].as_bool().unwrap_or(false);
        let variants: &[&str] = if compressed {
            &["", ".br", ".gz"]
        } else {
            &[""]
        };
        for ext in variants {
            let name = format!("{file}{ext}");
            out.push((format!("web/{name}"), read(&name)?));
        }
    }
    let mut content: Vec<String> = super::engine::files_under(root, "content")?
        .into_iter()
        .filter(|p| !p.starts_with(NOT_CONTENT) && (p.ends_with(".md") || p.ends_with(".json")))
        .collect();
    content.sort();
    for name in content {
        let bytes = std::fs::read(root.join(&name)).map_err(|e| format!("{name}: {e}"))?;
        out.push((name, bytes));
    }
    Ok(out)
}

/// The published posts (id, title, type, cover) for the build's preview
/// cards (a cover photo's is cropped from it). A
/// post that does not parse gets no card: the server refuses to start on it
/// and says where it is wrong.
fn published_posts(root: &Path, warn: &mut dyn FnMut(String)) -> Result<serde_json::Value, String> {
    let dir = root.join("content/blog");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "md"));
    files.sort();
    let mut posts = Vec::new();
    for file in files {
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        match front_matter::split(&text)
            .map_err(str::to_owned)
            .and_then(|(front, _)| front_matter::parse(front).map_err(|e| e.to_string()))
        {
            Ok(fm) if !fm.draft => {
                posts.push(serde_json::json!({ "id": fm.id, "title": fm.title, "type": fm.kind, "image": fm.image }))
            }
            Ok(_) => {}
            Err(e) => warn(format!(
                "{}: {}",
                file.display(),
                e.lines().next().unwrap_or_default()
            )),
        }
    }
    Ok(serde_json::Value::Array(posts))
}

/// A V8 startup snapshot with the SSR bundle already evaluated: an isolate
/// made from it is ready to render without parsing or running React's
/// module code again.
///
/// Made as deno_core's `create_snapshot` makes it, without that helper,
/// which prints its progress and timings on standard output: noise in
/// every `pack` and every build. Nothing is lost: what goes wrong comes
/// back as an error, which `pack` and the build report.
fn snapshot(bundle: &[u8]) -> Result<Vec<u8>, String> {
    use deno_core::{JsRuntimeForSnapshot, RuntimeOptions};
    let bundle = String::from_utf8(bundle.to_vec()).map_err(|_| "ssr.js is not UTF-8")?;
    // V8 posts its delayed tasks (the collector's) to the tokio runtime the
    // isolate is made in, and aborts without one (build.rs runs in none): a
    // private one, as create_snapshot enters.
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| format!("creating the V8 snapshot: {e}"))?;
    let _inside = tokio.enter();
    let mut rt = JsRuntimeForSnapshot::new(RuntimeOptions::default());
    // The result's handle dropped at once: none may be live at the snapshot.
    let ran = rt.execute_script("ssr.js", bundle).map(drop);
    // Settle what module code queued, so no live handle is left.
    rt.v8_isolate().perform_microtask_checkpoint();
    // Taken even after an error: V8 wants a snapshot creator's blob made
    // before the isolate goes.
    let made = rt.snapshot();
    ran.map_err(|e| format!("the SSR bundle does not run: {e}"))?;
    Ok(made.to_vec())
}
