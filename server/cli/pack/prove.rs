//! Every page of a new binary rendered before `pack` writes it: the binary
//! is started as a server starts (its own engine, its own bundle, its
//! snapshot, its content) and renders every route, every post (those
//! scheduled for later too: no pack runs at their hour), each listed
//! query value and the 404 page, then says which did not render and exits. `pack` runs it on
//! the file it is about to link at OUT ([`prove`]); the binary's side is
//! the hidden `prove-pages` command ([`run`]).
//!
//! It starts with the embedded defaults alone: an empty environment but
//! a loopback address of the kernel's choosing and a scratch database, so
//! Stripe, Notion and the operator's database are never asked. Pages
//! whose data comes from them render the spec's state for their absence,
//! as they would on a start while that source is down: only code and
//! content that cannot render are refused.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;

use crate::app::Application;
use crate::config::Config;
use crate::render::Unrendered;

/// The most `pack` waits for the new binary to render every page.
const PROVE_TIMEOUT: Duration = Duration::from_secs(120);

/// What the new binary said: how many pages rendered, and those that did
/// not.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Proved {
    pub rendered: usize,
    pub unrendered: Vec<Unrendered>,
}

/// The binary's side (`citizen-site prove-pages`): starts as `serve`
/// does with `config`, waits until every page is prerendered and prints
/// [`Proved`] as one line of JSON, then exits. Listens on the address
/// given, and answers no one.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let app = Application::build(config).await?;
    let state = app.state();
    state
        .wait_ready()
        .await
        .map_err(|why| anyhow::anyhow!("the SSR bundle cannot run: {why}"))?;
    let unrendered = state.unrendered().to_vec();
    let rendered = state.rendered.load(std::sync::atomic::Ordering::Acquire);
    println!(
        "{}",
        serde_json::to_string(&Proved {
            rendered,
            unrendered
        })?
    );
    use std::io::Write as _;
    std::io::stdout().flush()?;
    // Said: the scratch server (its isolates, its background loops) ends
    // with the process, waiting for none of them.
    std::process::exit(0)
}

/// `pack`'s side: runs `binary prove-pages` in the folder `work` (its
/// scratch database goes there) and reads what it says; how long it took.
pub fn prove(binary: &Path, work: &Path) -> anyhow::Result<(Proved, Duration)> {
    let started = Instant::now();
    // Run from `work`: a relative path would be looked up there (or in
    // PATH), not where it is.
    let binary = &std::path::absolute(binary)?;
    let child = match command(binary, work).spawn() {
        // OUT's folder may be mounted noexec (a volume to carry the
        // binary away): the same bytes are run from the scratch folder.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            let copy = work.join("citizen-site-prove");
            std::fs::copy(binary, &copy)
                .and_then(|_| command(&copy, work).spawn())
                .with_context(|| {
                    format!(
                        "running the new binary to render its pages ({} is not executable there, nor a copy in {})",
                        binary.display(),
                        work.display()
                    )
                })?
        }
        spawned => spawned.with_context(|| {
            format!(
                "starting the new binary ({}) to render its pages",
                binary.display()
            )
        })?,
    };
    let output = wait_at_most(child, PROVE_TIMEOUT)?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let proved = stdout
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str::<Proved>(line).ok());
    match proved {
        Some(proved) if output.status.success() => Ok((proved, started.elapsed())),
        _ => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            anyhow::bail!(
                "the new binary did not start to render its pages ({}):\n{}",
                output.status,
                tail.join("\n")
            )
        }
    }
}

/// `binary prove-pages`, in `work`, with the environment [`prove`] says.
fn command(binary: &Path, work: &Path) -> std::process::Command {
    let mut command = std::process::Command::new(binary);
    command
        .arg("prove-pages")
        .env_clear()
        .env("ADDR", "127.0.0.1:0")
        .env("HTTP3", "off")
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", work.join("prove-pages.db").display()),
        )
        .env("LOG_FORMAT", "text")
        // The team's list rendered with members in it, not only its empty
        // state (the scratch database has none).
        .env("SAMPLE_TEAM", "on")
        // Its log is read only when it fails to start: the errors alone.
        .env("RUST_LOG", "error")
        .current_dir(work)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if let Some(tmp) = std::env::var_os("TMPDIR") {
        command.env("TMPDIR", tmp);
    }
    // Killed with `pack` (Ctrl-C, a kill): never a server left behind.
    // SAFETY: prctl(2) only, async-signal-safe, between fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt as _;
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command
}

/// The child's output, once it exits or `limit` has passed (then it is
/// killed: an error).
fn wait_at_most(
    mut child: std::process::Child,
    limit: Duration,
) -> anyhow::Result<std::process::Output> {
    use std::io::Read as _;
    // Read beside the wait: a child that fills a pipe never ends.
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let reading_out = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = out.read_to_end(&mut bytes);
        bytes
    });
    let reading_err = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = err.read_to_end(&mut bytes);
        bytes
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!(
                "the new binary did not finish rendering its pages within {} s",
                limit.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok(std::process::Output {
        status,
        stdout: reading_out.join().unwrap_or_default(),
        stderr: reading_err.join().unwrap_or_default(),
    })
}
