//! What exists for tests only: the renderer's fault injection and the
//! constructors of a test's configuration. Compiled with the `test-hooks`
//! feature alone (and in the library's own unit tests). `cargo test` turns
//! it on through the crate's dev-dependency on itself; a build without
//! debug assertions refuses it (server/lib.rs). So the shipped binary holds
//! none of it.

use super::{Config, ServeArgs};
use crate::rate_limit::Rate;

/// What the renderer's tests inject into its workers
/// (`tests/api/ssr_faults.rs`): the shipped render path has nothing to
/// check for it.
#[cfg(feature = "test-hooks")]
#[derive(Clone, Default)]
pub struct RenderHooks {
    /// JavaScript evaluated in every isolate on top of the bundle (a fault
    /// wraps `__ssr_render`). The isolates still start from the snapshot:
    /// V8 shares one read-only heap per process, and isolates started from
    /// different snapshots in one process crash V8.
    pub script: Option<std::sync::Arc<str>>,
    /// Called on the worker thread with each URL before it is rendered (a
    /// test makes the worker panic, or holds it).
    pub before_render: Option<BeforeRender>,
}

/// A test's call before each render (see [`RenderHooks::before_render`]).
#[cfg(feature = "test-hooks")]
pub type BeforeRender = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

#[cfg(feature = "test-hooks")]
impl RenderHooks {
    /// Evaluates `script` in every isolate on top of the bundle.
    pub fn inject_script(&mut self, script: &str) {
        self.script = Some(script.into());
    }

    /// Calls `hook` with each URL before it is rendered, on the worker.
    pub fn before_render(&mut self, hook: impl Fn(&str) + Send + Sync + 'static) {
        self.before_render = Some(std::sync::Arc::new(hook));
    }
}

#[cfg(feature = "test-hooks")]
impl std::fmt::Debug for RenderHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderHooks")
            .field("script", &self.script.is_some())
            .field("before_render", &self.before_render.is_some())
            .finish()
    }
}

impl ServeArgs {
    /// The options `args` gives (the program's name first), with every
    /// other one at its default: the environment is not read, so a test's
    /// configuration is the same in any shell.
    pub fn parse_without_env<I, T>(args: I) -> Result<ServeArgs, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        Ok(ServeArgs::matched_without_env(args)?.0)
    }

    /// The same, with what clap matched (which settings the command line
    /// gave: [`super::Given`]).
    pub fn matched_without_env<I, T>(args: I) -> Result<(ServeArgs, clap::ArgMatches), clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use super::flags::Serve;
        use clap::{CommandFactory, FromArgMatches};
        let matches = Serve::command()
            .mut_args(|a| a.env(None::<&'static str>))
            .try_get_matches_from(args)?;
        Ok((Serve::from_arg_matches(&matches)?.serve, matches))
    }
}

impl Config {
    /// Defaults for tests: the flags' defaults alone (whatever the
    /// environment says), a random loopback port, a throwaway SQLite file.
    pub fn for_tests(data_dir: &std::path::Path) -> Config {
        let defaults = ServeArgs::parse_without_env(["citizen-site"]).expect("no flags to refuse");
        let mut cfg = Config::from_args(defaults).expect("the defaults are valid");
        cfg.addr = "127.0.0.1:0".parse().unwrap();
        cfg.database_url = format!("sqlite://{}", data_dir.join("test.db").display());
        cfg.ssr.workers = 2;
        cfg.ssr.queue = 128;
        // Tests post many times from one address; the rate-limit tests turn it on.
        cfg.post_rate = Rate::per_minute(0);
        // The pages' tests read the sample team; one test checks a fresh
        // database without it.
        cfg.sample_team = true;
        cfg
    }
}
