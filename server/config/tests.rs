//! The settled configuration: its defaults, values read as people write
//! them, and every problem named as written. HTTPS's settings are
//! `tests/https.rs`'s, the README's table of variables `tests/readme.rs`'s.

mod https;
mod readme;

use super::*;
use clap::{CommandFactory, FromArgMatches, Parser};

#[derive(Parser)]
struct Dev {
    #[command(flatten)]
    dev: DevArgs,
}

fn config(args: &[&str]) -> anyhow::Result<Config> {
    let args = std::iter::once("citizen-site").chain(args.iter().copied());
    Ok(Config::from_args(ServeArgs::parse_without_env(args)?)?)
}

fn error(args: &[&str]) -> String {
    format!("{:#}", config(args).expect_err("refused"))
}

#[test]
fn serve_publishes_no_sample_team_and_dev_does() {
    assert!(!config(&[]).unwrap().sample_team);
    assert!(config(&["--sample-team"]).unwrap().sample_team);
    let command = Dev::command().mut_args(|a| a.env(None::<&'static str>));
    let dev = Dev::from_arg_matches(&command.get_matches_from(["citizen-site"]))
        .unwrap()
        .dev;
    assert!(Config::from_dev_args(dev).unwrap().sample_team);
}

#[test]
fn the_default_site_url_is_the_address_listened_on() {
    let site = |addr: &str| config(&[&format!("--addr={addr}")]).unwrap().site_url;
    assert_eq!(site("127.0.0.1:50925"), "http://127.0.0.1:50925");
    assert_eq!(site("0.0.0.0:8080"), "http://localhost:8080");
    assert_eq!(site("[::]:80"), "http://localhost");
    assert_eq!(site("[::1]:3000"), "http://[::1]:3000");
    assert_eq!(
        config(&["--addr=0.0.0.0:8080", "--site-url=https://example.org"])
            .unwrap()
            .site_url,
        "https://example.org"
    );
}

#[test]
fn behind_a_proxy_is_the_default_and_plain_http() {
    let c = config(&[]).unwrap();
    assert!(c.tls.is_none());
    assert_eq!(c.site_url, "http://127.0.0.1:3000");
    assert_eq!(
        c.limits.max_per_client, None,
        "every connection comes from the proxy"
    );
    assert_eq!(
        c.limits.header_read, None,
        "the proxy bounds request heads and keeps its connections open"
    );
}

/// Every problem of a configuration, as `serve` and `check` list them.
fn problems(args: &[&str]) -> Vec<String> {
    let args = std::iter::once("citizen-site").chain(args.iter().copied());
    Config::from_args(ServeArgs::parse_without_env(args).unwrap())
        .expect_err("refused")
        .0
}

/// The settings as an operator's command line gives them: messages name
/// the flag, not its variable.
fn from_command_line(args: &[&str]) -> Result<Config, Problems> {
    let args = std::iter::once("citizen-site").chain(args.iter().copied());
    let (mut serve, matches) = ServeArgs::matched_without_env(args).unwrap();
    serve.given = Given::from_matches(&matches);
    Config::from_args(serve)
}

#[test]
fn values_are_read_as_people_write_them() {
    for yes in ["1", "true", "TRUE", "yes", "Yes", "on", "ON"] {
        assert!(
            config(&[&format!("--sample-team={yes}")])
                .unwrap()
                .sample_team,
            "{yes}"
        );
    }
    for no in ["0", "false", "no", "off", "Off", ""] {
        assert!(
            !config(&[&format!("--sample-team={no}")])
                .unwrap()
                .sample_team,
            "{no}"
        );
    }
    assert!(
        config(&["--sample-team"]).unwrap().sample_team,
        "the bare switch"
    );
    // Empty means unset: the default applies.
    let c = config(&[
        "--max-connections=",
        "--log-format=",
        "--tls-cert=",
        "--site-url= ",
    ])
    .unwrap();
    assert_eq!(c.limits.max_connections, 4096);
    assert!(c.tls.is_none());
    assert_eq!(c.site_url, "http://127.0.0.1:3000");
    assert_eq!(
        problems(&["--sample-team=maybe"]),
        ["SAMPLE_TEAM=maybe: not a yes/no value (use on/off, 1/0, true/false or yes/no)"]
    );
    assert_eq!(
        problems(&["--log-format=xml"]),
        ["LOG_FORMAT=xml: not one of text, json"]
    );
    assert!(config(&["--log-format=JSON"]).is_ok(), "in any case");
}

#[test]
fn every_problem_is_listed_at_once_naming_the_setting_as_written() {
    let found = problems(&[
        "--max-connections=abc",
        "--addr=localhost",
        "--trusted-proxies=10.0.0.0/8,office",
        "--site-url=example.org",
    ]);
    assert_eq!(
        found,
        [
            "ADDR=localhost: not an address and port (such as 127.0.0.1:3000 or [::]:443)",
            "MAX_CONNECTIONS=abc: not a number (a whole number from 1 to 1048576)",
            "TRUSTED_PROXIES=10.0.0.0/8,office: not a list of addresses or networks (comma-separated, such as 10.0.0.0/8,127.0.0.1)",
            "SITE_URL=example.org: not an absolute URL: write it with its scheme and host (https://example.org)",
        ]
    );
    // Given as flags, they are named as flags.
    let found = from_command_line(&["--max-connections", "abc", "--site-url=ftp://example.org"])
        .unwrap_err()
        .0;
    assert_eq!(
        found,
        [
            "--max-connections=abc: not a number (a whole number from 1 to 1048576)",
            "--site-url=ftp://example.org: not an http(s) URL with a host (https://example.org)",
        ]
    );
    // 0 connections is no "no limit": refused.
    assert_eq!(
        problems(&["--max-connections=0"]),
        ["MAX_CONNECTIONS=0: too small: a whole number from 1 to 1048576"]
    );
}

#[test]
fn every_count_has_a_stated_range_that_check_and_serve_refuse_alike() {
    // Tokio's semaphore panics past usize::MAX >> 3: the start never gets
    // there, and a number too long for any integer is "too large" too.
    for huge in ["4611686018427387904", "99999999999999999999999999"] {
        assert_eq!(
            problems(&[&format!("--max-connections={huge}")]),
            [format!(
                "MAX_CONNECTIONS={huge}: too large: a whole number from 1 to 1048576"
            )]
        );
    }
    // 0 is said to be allowed only where it is, with what it means.
    assert_eq!(
        problems(&["--max-connections-per-client=x"]),
        ["MAX_CONNECTIONS_PER_CLIENT=x: not a number (a whole number from 0 (no cap) to 1048576)"]
    );
    assert_eq!(
        problems(&["--ssr-workers=-1"]),
        ["SSR_WORKERS=-1: not a number (a whole number from 0 (one per CPU) to 1024)"]
    );
    // No silent clamps: what 0 cannot mean is refused, not made 1.
    assert_eq!(
        problems(&[
            "--team-refresh-secs=0",
            "--intro-lease-secs=0",
            "--ssr-deadline-ms=0"
        ]),
        [
            "SSR_DEADLINE_MS=0: too small: a whole number from 1 to 60000",
            "TEAM_REFRESH_SECS=0: too small: a whole number from 1 to 86400",
            "INTRO_LEASE_SECS=0: too small: a whole number from 1 to 86400",
        ]
    );
    for (flag, max, range) in [
        (
            "--rate-limit-per-minute",
            1_000_000u64,
            "0 (no limit) to 1000000",
        ),
        (
            "--session-lookups-per-minute",
            1_000_000,
            "0 (no limit) to 1000000",
        ),
        (
            "--page-cache-capacity",
            1_000_000,
            "0 (the page cache off) to 1000000",
        ),
        ("--shutdown-grace-secs", 3_600, "0 to 3600"),
        ("--connection-workers", 1024, "0 (one per CPU) to 1024"),
    ] {
        assert!(config(&[&format!("{flag}={max}")]).is_ok(), "{flag}={max}");
        let found = problems(&[&format!("{flag}={}", max + 1)]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].ends_with(&format!(
                "={}: too large: a whole number from {range}",
                max + 1
            )),
            "{found:?}"
        );
    }
    // The largest values start a configuration the server can run.
    let c = config(&["--max-connections=1048576", "--team-refresh-secs=1"]).unwrap();
    assert_eq!(c.limits.max_connections, 1 << 20);
    assert_eq!(c.team_refresh, std::time::Duration::from_secs(1));
}

#[test]
fn a_secret_is_named_never_echoed() {
    let found = problems(&[
        "--stripe-secret-key=pk_live_hunter2",
        "--notion-token=ntn_hunter2",
    ]);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("STRIPE_SECRET_KEY: not usable: it is a publishable key"));
    assert_eq!(
        found[1],
        "NOTION_DATABASE_ID: not set, but NOTION_TOKEN is: intro requests reach Notion with both"
    );
    assert!(found.iter().all(|p| !p.contains("hunter2")), "{found:?}");
}

#[test]
fn a_database_url_serve_would_refuse_is_refused_naming_the_setting_and_hiding_its_password() {
    // The URL itself: sqlx's pool refuses it as `serve` starts.
    assert_eq!(
        problems(&["--database-url=postgres://site:hunter2@db.internal:notaport/site"]),
        ["DATABASE_URL=postgres://site:***@db.internal:notaport/site: cannot be read: invalid port number"]
    );
    // The driver's options: the first connection would fail, and every one after.
    // A password holding `/`, `#` or `?` (base64 holds `/`), or given in
    // the query, is never shown, even in a URL that does not parse.
    for (url, shown) in [
        (
            "postgres://site:ab/cd+ef==@db:notaport/site",
            "postgres://site:***@db:notaport/site",
        ),
        (
            "postgres://site:p#ss@db:x/site",
            "postgres://site:***@db:x/site",
        ),
        (
            "postgres://site:pa?ss@db:x/site",
            "postgres://site:***@db:x/site",
        ),
        (
            "postgres://site@db:x/site?password=s3cret&sslmode=require",
            "postgres://site@db:x/site?password=***&sslmode=require",
        ),
    ] {
        let found = problems(&[&format!("--database-url={url}")]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with(&format!("DATABASE_URL={shown}: cannot be read: ")),
            "{found:?}"
        );
        for secret in ["cd+ef", "p#ss", "pa?ss", "s3cret"] {
            assert!(!found[0].contains(secret), "{found:?}");
        }
    }
    let found = problems(&["--database-url=postgres://db.internal/site?sslmode=sometimes"]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(
            "DATABASE_URL=postgres://db.internal/site?sslmode=sometimes: cannot be read: "
        ),
        "{found:?}"
    );
    let found = problems(&["--database-url=sqlite://data/site.db?mode=sometimes"]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("DATABASE_URL=sqlite://data/site.db?mode=sometimes: cannot be read: "),
        "{found:?}"
    );
    assert_eq!(
        problems(&["--database-url=mysql://db/site"]),
        ["DATABASE_URL=mysql://db/site: must start with sqlite:// or postgres://"]
    );
    for good in [
        "postgres://site:pw@db.internal:5432/site?sslmode=require",
        "sqlite://data/site.db",
    ] {
        assert!(
            config(&[&format!("--database-url={good}")]).is_ok(),
            "{good}"
        );
    }
}
