//! The front-end builder of `dev`: one Node process running
//! `client/build.mjs --watch`, which keeps esbuild's incremental contexts and
//! Tailwind's compiler warm, watches the sources and writes each build to a
//! new folder. It reports every build, and every content change, as one JSON
//! line on its stdout ([`Report`]); its own messages go to the terminal. It
//! exits when its stdin closes, that is when this process is gone.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::Context;
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

/// One line of the builder's stdout.
#[derive(Debug, Deserialize)]
pub struct Report {
    /// The front-end build the change caused, if it was a front-end file.
    pub front: Option<FrontBuild>,
    /// What changed (empty for the first build), from the checkout's root.
    #[serde(default)]
    pub changed: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrontBuild {
    pub ok: bool,
    /// A successful build's folder: ssr.js, ssr.js.map, manifest.json, assets/.
    pub dir: Option<PathBuf>,
    /// Why it failed.
    #[serde(default)]
    pub errors: Vec<BuildError>,
    /// The pages the broken files are part of; None: every page.
    pub pages: Option<Vec<String>>,
    pub ms: u64,
    /// The pages of the route table whose component is not written yet:
    /// left out of the build, each broken alone.
    #[serde(default)]
    pub missing: Vec<MissingComponent>,
}

/// A page of the route table without its component: where the table names
/// it, and the file to create with what it exports.
#[derive(Debug, Deserialize)]
pub struct MissingComponent {
    pub page: String,
    #[serde(flatten)]
    pub error: BuildError,
}

/// One esbuild (or Tailwind) error.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildError {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub text: String,
    pub line_text: Option<String>,
}

pub struct Builder {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    out: PathBuf,
}

/// The checkout `from` is in: `from` itself or the nearest folder above it
/// with the front end's build script (as git and cargo find their root),
/// so `dev` and `pack` run from any folder of a checkout. `hint` says
/// where to run instead.
pub fn checkout_root(from: &Path, hint: &str) -> anyhow::Result<PathBuf> {
    let start =
        std::path::absolute(from).with_context(|| format!("the path of {}", from.display()))?;
    let mut dir = start.as_path();
    loop {
        if dir.join("client/build.mjs").is_file() {
            return Ok(dir.to_path_buf());
        }
        match dir.parent() {
            Some(parent) => dir = parent,
            None => anyhow::bail!(
                "{} is not in a citizen-site checkout (neither it nor a folder above it has client/build.mjs); {hint}",
                from.display()
            ),
        }
    }
}

/// Err unless the checkout `root` has the npm packages its front end is
/// built with. `dev` asks before it starts its builder, `pack` before it
/// builds (after its cheaper, final refusals).
pub fn has_packages(root: &Path) -> anyhow::Result<()> {
    if !root.join("node_modules/esbuild").is_dir() {
        anyhow::bail!(
            "{} has no node_modules: run `npm ci` there first",
            root.display()
        );
    }
    Ok(())
}

impl Builder {
    /// Starts `node client/build.mjs --watch` in the checkout `root`; its
    /// builds go to a folder of its own under the system's temp dir.
    pub fn spawn(root: &Path) -> anyhow::Result<Builder> {
        has_packages(root)?;
        let out = std::env::temp_dir().join(format!("citizen-site-dev-{}", std::process::id()));
        let node = std::env::var("NODE").unwrap_or_else(|_| "node".into());
        let mut child = Command::new(&node)
            .arg("client/build.mjs")
            .arg("--watch")
            .arg(&out)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("`citizen-site dev` builds the front end with Node.js, and {node:?} could not be started"))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        Ok(Builder {
            child,
            lines: BufReader::new(stdout).lines(),
            out,
        })
    }

    /// The next report; Err when the builder has stopped (with its exit
    /// status) or said something that is not a report.
    pub async fn next(&mut self) -> Result<Report, String> {
        match self.lines.next_line().await {
            Ok(Some(line)) => {
                serde_json::from_str(&line).map_err(|e| format!("the builder sent {line:?}: {e}"))
            }
            Ok(None) | Err(_) => {
                let status = self
                    .child
                    .wait()
                    .await
                    .map(|s| s.to_string())
                    .unwrap_or_else(|e| e.to_string());
                Err(format!(
                    "the front-end builder (node client/build.mjs --watch) stopped ({status}); its output is above. Restart `citizen-site dev`"
                ))
            }
        }
    }
}

impl Drop for Builder {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.out);
    }
}
