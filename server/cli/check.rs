//! `citizen-site check`: the start's own checks without serving, as
//! `nginx -t` is. It reads the flags and variables as `serve` does and
//! lists every problem at once, each naming its setting as written: the
//! settings themselves (`config`), the site the binary carries, the
//! database (opened read-only: its schema against this binary's), the
//! certificate (the operator's files, or the one stored for ACME), the
//! modes of the site's files (what other users may read) and whether the
//! listening addresses can be bound. `citizen-site upgrade
//! --apply-env` runs it on its own environment before a handover.

use std::net::SocketAddr;
use std::path::Path;

use serde_json::{json, Value};

use super::holders::{self, Held};
use super::output::{print_json, rfc3339, table, Reported};
use crate::config::{redacted, sqlite_path, CertSource, Config, ServeArgs, Transport};
use crate::db::Db;

/// What a check found: problems (the start would fail, or serve wrongly),
/// warnings (the start goes on, but the operator has something to fix: a
/// file of the site other users may read that this user cannot change),
/// notes (worth knowing, nothing to fix), and what it read.
#[derive(Debug, Default)]
pub struct Report {
    pub problems: Vec<String>,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
    pub facts: Vec<(&'static str, String)>,
}

/// Whether to try binding the listening addresses (a handover passes the
/// running server's sockets instead).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bind {
    Try,
    Skip,
}

/// `citizen-site check`: prints the report; an error when it holds a problem.
pub async fn run(args: ServeArgs, json: bool) -> anyhow::Result<()> {
    let report = examine(args, Bind::Try).await;
    if json {
        print_json(&report.json());
    } else {
        print!("{}", report.text());
    }
    if report.problems.is_empty() {
        Ok(())
    } else {
        // Already said, in the report.
        Err(Reported.into())
    }
}

impl Report {
    pub fn json(&self) -> Value {
        let facts: serde_json::Map<String, Value> = self
            .facts
            .iter()
            .map(|(k, v)| ((*k).to_owned(), json!(v)))
            .collect();
        json!({
            "ok": self.problems.is_empty(),
            "problems": self.problems,
            "warnings": self.warnings,
            "notes": self.notes,
            "checked": facts,
        })
    }

    pub fn text(&self) -> String {
        let mut out = String::new();
        let rows: Vec<Vec<String>> = self
            .facts
            .iter()
            .map(|(k, v)| vec![k.replace('_', " "), v.clone()])
            .collect();
        if !rows.is_empty() {
            out.push_str(&table(&["CHECKED", "FOUND"], &rows));
            out.push('\n');
        }
        for note in &self.notes {
            out.push_str(&format!("note: {note}\n"));
        }
        for warning in &self.warnings {
            out.push_str(&format!("warning: {warning}\n"));
        }
        for problem in &self.problems {
            out.push_str(&format!("error: {problem}\n"));
        }
        match self.problems.len() {
            0 => out.push_str("ok: citizen-site serve would start with this configuration\n"),
            1 => out.push_str("1 problem: citizen-site serve would not start\n"),
            n => out.push_str(&format!(
                "{n} problems: citizen-site serve would not start\n"
            )),
        }
        out
    }
}

/// Every check of the start on `args`.
pub async fn examine(args: ServeArgs, bind: Bind) -> Report {
    let mut report = Report::default();
    let database_url = args.database.url().to_owned();
    let names = crate::config::SettingNames::of(&args);
    let addresses = Config::addresses(&args);
    let config = match Config::from_args(args) {
        Ok(config) => Some(config),
        Err(problems) => {
            report.problems.extend(problems.0);
            None
        }
    };
    // After the settings: an address that cannot be had, as the start
    // would meet it next.
    if bind == Bind::Try {
        for (id, addr, transport) in addresses {
            listen(&names.name(id), addr, transport, &database_url, &mut report);
        }
    }
    let db = database(&database_url, &names.name("database_url"), &mut report).await;
    // The site's files as the start finds them: what it makes private
    // itself is a note, what it cannot change a warning (`db::private`).
    let database = sqlite_path(&database_url);
    let acme_folder = match &config {
        Some(config) => config.acme_folder(),
        None => crate::edge::acme::folder_name(crate::edge::acme::LETS_ENCRYPT),
    };
    let places = crate::db::private::Places {
        database: database.as_deref(),
        acme_cache: config.as_ref().and_then(Config::acme_cache_dir),
        acme_folder: &acme_folder,
    };
    for finding in crate::db::private::survey(places) {
        match finding.is_warning() {
            true => report.warnings.push(finding.to_string()),
            false => report.notes.push(finding.to_string()),
        }
    }
    let Some(config) = config else {
        return report;
    };
    report.facts.insert(0, ("site", config.site_url.clone()));
    report.notes.extend(site_url_notes(&config, &names));
    match &config.tls {
        None => {
            report
                .facts
                .push(("listening", format!("{} (plain HTTP)", config.addr)));
            let off = config.http3_off(&names.name("http3")).unwrap_or_default();
            report.facts.push(("http3", format!("off{off}")));
        }
        Some(tls) => {
            let udp = match config.http3 {
                true => format!(", {} over UDP (HTTP/3)", tls.https_addr),
                false => String::new(),
            };
            report.facts.push((
                "listening",
                format!("{} (HTTPS){udp}, {} (HTTP)", tls.https_addr, tls.http_addr),
            ));
            let said = match config.http3_off(&names.name("http3")) {
                None => {
                    let socket = tls.https_addr.port();
                    let public =
                        crate::config::public_https_port(&config.site_url).unwrap_or(socket);
                    format!("on: on UDP port {socket}, advertised by Alt-Svc as port {public} (SITE_URL's)")
                }
                Some(off) => format!("off{off}"),
            };
            report.facts.push(("http3", said));
            match &tls.certs {
                CertSource::Files(files) => {
                    if let Ok(served) = files.load() {
                        report.facts.push((
                            "certificate",
                            format!(
                                "{}: {}, valid until {}",
                                names.name("tls_cert"),
                                served.info.names.join(", "),
                                crate::edge::certs::rfc3339(served.info.not_after)
                            ),
                        ));
                    }
                }
                CertSource::Acme(acme) => {
                    let stored = match &db {
                        Some(db) => {
                            crate::tls::store::certificate(db, &acme.directory, &acme.names_key())
                                .await
                                .ok()
                                .flatten()
                        }
                        None => None,
                    };
                    let found = match stored {
                        None => format!(
                            "ACME ({}): none stored yet; the server orders one for {}",
                            acme.directory,
                            acme.domains.join(", ")
                        ),
                        Some(cert) => {
                            // The names the stored certificate itself holds.
                            let names = crate::edge::certs::first_certificate(&cert.pem)
                                .and_then(|der| crate::edge::certs::info(&der).ok())
                                .map_or_else(|| acme.domains.clone(), |info| info.names);
                            format!(
                                "ACME: stored for {}, serial {}, valid until {}",
                                names.join(", "),
                                cert.serial,
                                rfc3339(cert.not_after)
                            )
                        }
                    };
                    report.facts.push(("certificate", found));
                }
            }
        }
    }
    let on = |set: bool| if set { "on" } else { "off" };
    report
        .facts
        .push(("stripe", on(config.stripe_secret_key.is_some()).to_owned()));
    report.facts.push((
        "notion_forwarding",
        on(config.notion_token.is_some()).to_owned(),
    ));
    if let Some(db) = db {
        db.close().await;
    }
    report
}

/// What the site's own links would name that visitors may not reach: an
/// `http://` `SITE_URL` on another port than the server listens on, with
/// no proxy in front (`TRUSTED_PROXIES`, `PROXY_PROTOCOL_FROM`) to explain
/// it (an `https://` one without HTTPS here is a TLS proxy's; with HTTPS
/// here, a port mapping's); or no `SITE_URL` on a wildcard address, whose
/// links name `localhost`.
fn site_url_notes(config: &Config, names: &crate::config::SettingNames) -> Vec<String> {
    let site = names.name("site_url");
    let addr = names.name("addr");
    if config.site_url_from_addr {
        if config.addr.ip().is_unspecified() {
            return vec![format!(
                "{site} is not set, and {addr}={} listens on every address: the links and sitemap name {}, which only this machine reaches; set {site} to the address visitors use",
                config.addr, config.site_url
            )];
        }
        return Vec::new();
    }
    let Ok(url) = reqwest::Url::parse(&config.site_url) else {
        return Vec::new();
    };
    let explained = config.tls.is_some()
        || url.scheme() != "http"
        || !config.trusted_proxies.is_empty()
        || !config.limits.proxy_from.is_empty();
    let Some(port) = url.port_or_known_default() else {
        return Vec::new();
    };
    if explained || port == config.addr.port() {
        return Vec::new();
    }
    let unset = match site.starts_with("--") {
        true => format!("leave out {site}"),
        false => format!("unset {site}"),
    };
    vec![format!(
        "{site}={} names port {port}, but the server listens on port {} ({addr}={}) and no proxy is set up ({}): its links and sitemap point at a port nothing here serves; {unset} to use {}, or set it to the address visitors use",
        config.site_url,
        config.addr.port(),
        config.addr,
        names.name("trusted_proxies"),
        crate::config::plain_site_url(config.addr),
    )]
}

/// Whether the server can listen on `addr` (bound and let go at once). An
/// address in use is no problem when the site's own server holds it, or
/// systemd's socket unit for it: a reload passes those sockets on.
fn listen(
    name: &str,
    addr: SocketAddr,
    transport: Transport,
    database_url: &str,
    report: &mut Report,
) {
    let bound = match transport {
        Transport::Tcp => std::net::TcpListener::bind(addr).map(drop),
        Transport::Udp => std::net::UdpSocket::bind(addr).map(drop),
    };
    let (over, udp) = match transport {
        Transport::Tcp => ("", ""),
        Transport::Udp => (" over UDP (HTTP/3; HTTP3=off serves without it)", " (UDP)"),
    };
    if let Err(e) = bound {
        let denied = || {
            format!(
                "permission denied to {}: a port below 1024 needs root, CAP_NET_BIND_SERVICE, or systemd's sockets (deploy/citizen-site.socket)",
                crate::config::whoami()
            )
        };
        let why = match e.kind() {
            // Held by the site or its socket unit, a privileged port needs
            // no permission of the server's: it is passed on. So the
            // kernel's refusal (it says "denied" before "in use") still
            // asks who holds it.
            std::io::ErrorKind::AddrInUse | std::io::ErrorKind::PermissionDenied => {
                let held = match holders::held(addr, transport, database_url) {
                    Held::ThisSite(pids) => {
                        let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
                        report.notes.push(format!(
                            "{name}={addr}{udp}: held by this site's running server (pid {}), which passes it on at a reload",
                            pids.join(", ")
                        ));
                        return;
                    }
                    Held::Systemd(unit) => {
                        report.notes.push(format!(
                            "{name}={addr}{udp}: held by systemd ({unit}), which passes it to the server it starts"
                        ));
                        return;
                    }
                    Held::OtherSite(pid, url) => Some(format!(
                        "the address is in use by another citizen-site server (pid {pid}) on another database ({url})"
                    )),
                    Held::Other(holders) => {
                        let named: Vec<String> = holders
                            .iter()
                            .map(|h| format!("{} (pid {})", h.name, h.pid))
                            .collect();
                        Some(format!("the address is in use by {}", named.join(", ")))
                    }
                    Held::Unseen => Some(format!(
                        "the address is in use by a program {} cannot see (run check as root, or as the server's user)",
                        crate::config::whoami()
                    )),
                    Held::Free => None,
                };
                match (e.kind(), held) {
                    (std::io::ErrorKind::PermissionDenied, Some(held)) => {
                        format!("{held}; and {}", denied())
                    }
                    (std::io::ErrorKind::PermissionDenied, None) => denied(),
                    (_, Some(held)) => held,
                    (_, None) => e.to_string(),
                }
            }
            std::io::ErrorKind::AddrNotAvailable => {
                "no network interface of this machine has this address".to_owned()
            }
            _ => e.to_string(),
        };
        report
            .problems
            .push(format!("{name}={addr}: cannot listen there{over}: {why}"));
    }
}

/// The database, read as the server would find it: None when it is not
/// there yet or cannot be read (a problem or a note says which).
async fn database(url: &str, name: &str, report: &mut Report) -> Option<Db> {
    let shown = redacted(url);
    if let Some(file) = sqlite_path(url) {
        if !file.is_file() {
            match unwritable_ancestor(&file) {
                None => report.notes.push(format!(
                    "no database at {} yet: the server makes it on its first start",
                    file.display()
                )),
                Some(dir) => report.problems.push(format!(
                    "{name}={shown}: the server cannot make its database there: {} is not writable by {}",
                    dir.display(),
                    crate::config::whoami()
                )),
            }
            return None;
        }
        if let Some(why) = crate::db::sqlite_file::access_problem(&file, true) {
            report.problems.push(format!("{name}={shown}: {why}"));
            return None;
        }
    }
    let db = Db::connect_read_only(url).ok()?;
    let latest = db.latest_schema();
    match db.schema().await {
        Err(e) if crate::db::is_unreachable(&e) => report.notes.push(format!(
            "cannot reach the database at {shown} now ({}): the server starts without it and uses it once it answers",
            crate::db::reason(&e)
        )),
        Err(e) => report.problems.push(format!(
            "{name}={shown}: cannot read the database: {}",
            crate::db::reason(&e)
        )),
        Ok(None) => report.notes.push(format!(
            "{shown} has none of the site's tables yet: the server makes them on its first start"
        )),
        Ok(Some(v)) if v > latest => report.problems.push(format!(
            "{name}={shown}: its schema ({v}) is newer than this binary's ({latest}): a newer citizen-site brought it up to date; run that one"
        )),
        Ok(Some(v)) => {
            if v < latest {
                report.notes.push(format!(
                    "the database's schema ({v}) is older than this binary's ({latest}): the server brings it up to date on its start"
                ));
            }
            // The file, when the URL's text does not show it as it is
            // (escapes, dot segments: the driver's reading).
            let file = sqlite_path(url)
                .map(|f| f.display().to_string())
                .filter(|f| !url.contains(f.as_str()))
                .map(|f| format!(" (the file {f})"))
                .unwrap_or_default();
            report
                .facts
                .push(("database", format!("{shown}{file}, schema {v}")));
            return Some(db);
        }
    }
    db.close().await;
    None
}

/// The folder where a database file would be made, when this user may not
/// write there (the nearest folder that exists).
fn unwritable_ancestor(file: &Path) -> Option<std::path::PathBuf> {
    let mut dir = file.parent()?;
    if dir.as_os_str().is_empty() {
        dir = Path::new(".");
    }
    while !dir.exists() {
        dir = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
    }
    let writable = crate::db::sqlite_file::may(dir, libc::W_OK | libc::X_OK);
    (!writable).then(|| dir.to_path_buf())
}
