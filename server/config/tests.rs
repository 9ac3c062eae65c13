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
    Config::from_args(ServeArgs::parse_without_env(args)?)
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
    assert!(error(&["--tls-domains", ""]).starts_with("TLS_DOMAINS: empty"));
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
    assert!(error(&["--tls-cert", "/c.pem", "--tls-key", "/k.pem"])
        .starts_with("SITE_URL: set it to the https address"));
    assert!(error(&[
        "--tls-domains",
        "a.example",
        "--site-url",
        "http://a.example"
    ])
    .starts_with("SITE_URL: \"http://a.example\" must start with https://"));
    assert!(error(&[
        "--tls-domains",
        "a.example",
        "--acme-directory",
        "http://ca.example/dir"
    ])
    .starts_with("ACME_DIRECTORY: \"http://ca.example/dir\" must be an https URL"));
    assert!(
        error(&["--tls-domains", "a.example", "--acme-email", "nobody"])
            .starts_with("ACME_EMAIL: \"nobody\" is not an email address")
    );
    let e = error(&[
        "--tls-domains",
        "a.example",
        "--acme-directory-ca",
        "/nonexistent/ca.pem",
    ]);
    assert!(
        e.starts_with("ACME_DIRECTORY_CA: cannot read /nonexistent/ca.pem"),
        "{e}"
    );
    assert!(
        error(&["--tls-domains", "a.example", "--https-addr", "0.0.0.0:80"])
            .starts_with("HTTPS_ADDR and HTTP_ADDR are the same address")
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
            let is_variable = |v: &&str| v.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
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
            Some("false") => assert!(
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
            flags.contains(variable) || variable == "RUST_LOG",
            "README's configuration table lists {variable}, which no flag reads"
        );
    }
}
