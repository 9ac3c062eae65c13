//! What exists for tests only: the constructors of a test's configuration
//! (the renderer's fault injection is `hooks.rs`). Compiled with the `test-hooks`
//! feature alone (and in the library's own unit tests). `cargo test` turns
//! it on through the crate's dev-dependency on itself; a build without
//! debug assertions refuses it (server/lib.rs). So the shipped binary holds
//! none of it.

use super::{Config, ServeArgs};
use crate::rate_limit::Rate;

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
