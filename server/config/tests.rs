//! The settled configuration: defaults, HTTPS settings and their errors, and
//! the README's table of variables.

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

#[test]
fn tls_domains_settle_to_https_with_the_first_name_as_the_site() {
    let c = config(&[
        "--tls-domains",
        " Site.Example, www.site.example.,site.example ",
    ])
    .unwrap();
    let tls = c.tls.expect("tls");
    let CertSource::Acme(acme) = &tls.certs else {
        panic!("acme")
    };
    assert_eq!(acme.domains, ["site.example", "www.site.example"]);
    assert_eq!(acme.directory, crate::edge::acme::LETS_ENCRYPT);
    assert_eq!(
        acme.cache_dir,
        PathBuf::from("data/acme"),
        "beside the SQLite file"
    );
    assert_eq!((tls.https_addr.port(), tls.http_addr.port()), (443, 80));
    assert_eq!(c.site_url, "https://site.example");
    assert_eq!(c.limits.max_per_client, Some(256));
    assert_eq!(c.limits.header_read, Some(Duration::from_secs(10)));
    let c = config(&[
        "--tls-domains",
        "a.example",
        "--https-addr",
        "127.0.0.1:8443",
        "--http-addr",
        "127.0.0.1:8080",
    ])
    .unwrap();
    assert_eq!(c.site_url, "https://a.example:8443");
}

#[test]
fn bad_tls_settings_are_refused_naming_the_variable() {
    assert!(error(&["--tls-domains", " , "]).starts_with("TLS_DOMAINS: empty"));
    for bad in [
        "*.site.example",
        "127.0.0.1",
        "site.example:443",
        "https://site.example",
        "-a.example",
        "a..example",
        "ex ample.org",
    ] {
        let e = error(&[&format!("--tls-domains={bad}")]);
        assert!(
            e.starts_with(&format!("TLS_DOMAINS: {bad:?} is not a domain name")),
            "{bad}: {e}"
        );
    }
    assert_eq!(
        error(&["--tls-cert", "/c.pem"]),
        "TLS_KEY: not set, but TLS_CERT is: both are needed"
    );
    assert_eq!(
        error(&["--tls-key", "/k.pem"]),
        "TLS_CERT: not set, but TLS_KEY is: both are needed"
    );
    assert!(error(&[
        "--tls-domains",
        "a.example",
        "--tls-cert",
        "/c.pem",
        "--tls-key",
        "/k.pem"
    ])
    .starts_with("TLS_DOMAINS and TLS_CERT/TLS_KEY are both set"));
    // A missing file first, then what follows from it.
    let e = problems(&[
        "--tls-cert",
        "/nonexistent/c.pem",
        "--tls-key",
        "/nonexistent/k.pem",
    ]);
    assert_eq!(
        e,
        [
            "TLS_CERT=/nonexistent/c.pem: cannot read the file: no such file",
            "TLS_KEY=/nonexistent/k.pem: cannot read the file: no such file",
            "SITE_URL: set it to the https address TLS_CERT is for (https://your.domain)",
        ]
    );
    assert!(error(&[
        "--tls-domains",
        "a.example",
        "--site-url",
        "http://a.example"
    ])
    .starts_with("SITE_URL=http://a.example: must start with https://"));
    assert!(error(&[
        "--tls-domains",
        "a.example",
        "--acme-directory",
        "http://ca.example/dir"
    ])
    .starts_with("ACME_DIRECTORY=http://ca.example/dir: must be an https URL"));
    assert!(
        error(&["--tls-domains", "a.example", "--acme-email", "nobody"])
            .starts_with("ACME_EMAIL=nobody: not an email address")
    );
    assert!(error(&[
        "--tls-domains",
        "a.example",
        "--acme-profile",
        "short lived"
    ])
    .starts_with("ACME_PROFILE=short lived: not a profile name"));
    let e = error(&[
        "--tls-domains",
        "a.example",
        "--acme-directory-ca",
        "/nonexistent/ca.pem",
    ]);
    assert!(
        e.starts_with("ACME_DIRECTORY_CA=/nonexistent/ca.pem: cannot read the file"),
        "{e}"
    );
    assert!(
        error(&["--tls-domains", "a.example", "--https-addr", "0.0.0.0:80"])
            .starts_with("HTTPS_ADDR and HTTP_ADDR are the same address")
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
fn an_operators_certificate_must_be_usable_and_for_the_site() {
    let dir = std::env::temp_dir().join(format!("cs-config-cert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let make = |name: &str, days: (i64, i64)| {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec![name.to_owned()]).unwrap();
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now + time::Duration::days(days.0);
        params.not_after = now + time::Duration::days(days.1);
        let cert = params.self_signed(&key).unwrap();
        let (c, k) = (
            dir.join(format!("{name}.{}.crt", days.1)),
            dir.join(format!("{name}.{}.key", days.1)),
        );
        std::fs::write(&c, cert.pem()).unwrap();
        std::fs::write(&k, key.serialize_pem()).unwrap();
        (c.display().to_string(), k.display().to_string())
    };
    let (cert, key) = make("site.example", (-1, 90));
    let ok = config(&[
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--site-url",
        "https://site.example",
    ])
    .unwrap();
    assert_eq!(ok.site_url, "https://site.example");
    let found = problems(&[
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--site-url",
        "https://other.example",
    ]);
    assert_eq!(
        found,
        ["SITE_URL=https://other.example: the certificate in TLS_CERT is not for other.example (it is for site.example)"]
    );
    let (old, old_key) = make("site.example", (-90, -1));
    let found = problems(&[
        "--tls-cert",
        &old,
        "--tls-key",
        &old_key,
        "--site-url",
        "https://site.example",
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(&format!("TLS_CERT={old}: the certificate expired at ")),
        "{found:?}"
    );
    let found = problems(&[
        "--tls-cert",
        &cert,
        "--tls-key",
        &old_key,
        "--site-url",
        "https://site.example",
    ]);
    assert_eq!(
        found,
        [format!("TLS_CERT={cert} and TLS_KEY={old_key} do not belong together: the key is not the certificate's")]
    );
    assert!(tls::name_covers("*.site.example", "www.site.example"));
    assert!(!tls::name_covers("*.site.example", "site.example"));
    assert!(!tls::name_covers("*.site.example", "a.b.site.example"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn own_files_that_cannot_be_read_are_each_named_in_words() {
    let dir = std::env::temp_dir().join(format!("cs-config-unread-{}", std::process::id()));
    let files = OwnFiles {
        cert: dir.join("cert.pem"),
        key: dir.join("key.pem"),
        named: ("TLS_CERT=c".into(), "TLS_KEY=k".into()),
    };
    assert_eq!(
        files.load().err().unwrap().0,
        [
            "TLS_CERT=c: cannot read the file: no such file",
            "TLS_KEY=k: cannot read the file: no such file"
        ]
    );
}

/// The README's configuration table and the flags are the same list:
/// every variable a flag reads has a row, with the flag's default (in
/// backticks; `off` for a switch, `empty` for an empty list, a word of
/// its own where the help says how the default is worked out, `unset`
/// for none), and every row is a flag's variable (or `RUST_LOG`, read
/// by the log filter).
#[test]
fn the_readme_lists_every_variable_with_its_default() {
    let readme = include_str!("../../README.md");
    let table = &readme[readme
        .find("## Configuration")
        .expect("a Configuration section")..];
    let rows: Vec<(String, String)> = table
        .lines()
        .skip_while(|l| !l.starts_with("| Variable"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .flat_map(|l| {
            // A row may name several variables (`TLS_CERT`, `TLS_KEY`).
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let is_variable = |v: &&str| {
                v.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            };
            let names: Vec<&str> = cells[1]
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(is_variable)
                .collect();
            names
                .into_iter()
                .map(|v| (v.to_owned(), cells[2].to_owned()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(rows.len() > 30, "the table is read: {rows:?}");
    let command = Dev::command();
    let mut flags = Vec::new();
    for arg in command.get_arguments() {
        let Some(variable) = arg.get_env().map(|v| v.to_string_lossy().into_owned()) else {
            continue;
        };
        // Hidden: a test hook (compiled in for tests only), not a setting.
        if arg.is_hide_set() {
            continue;
        }
        let Some((_, cell)) = rows.iter().find(|(v, _)| *v == variable) else {
            panic!("README's configuration table has no row for {variable}");
        };
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|d| d.to_string_lossy().into_owned())
            .collect();
        let help = arg
            .get_long_help()
            .or(arg.get_help())
            .map(|h| h.to_string())
            .unwrap_or_default();
        let switch = matches!(arg.get_action(), clap::ArgAction::SetTrue);
        match defaults.first().map(String::as_str) {
            _ if switch => assert!(
                cell.starts_with("off"),
                "{variable}: {cell:?} should say off"
            ),
            Some("false" | "off") => assert!(
                cell.starts_with("off"),
                "{variable}: {cell:?} should say off"
            ),
            Some("") => assert_eq!(cell, "empty", "{variable}"),
            Some(default) => assert!(
                cell.contains(&format!("`{default}`")),
                "{variable}: the README says {cell:?}, the flag's default is {default:?}"
            ),
            None if help.contains("[default:") => {
                assert!(
                    cell != "unset" && cell.contains('`'),
                    "{variable}: {cell:?}"
                )
            }
            None => assert_eq!(cell, "unset", "{variable}: a flag with no default"),
        }
        flags.push(variable);
    }
    for (variable, _) in &rows {
        assert!(
            flags.contains(variable) || HELP_AFTER.contains(variable.as_str()),
            "README's configuration table lists {variable}, which `--help` does not"
        );
    }
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
