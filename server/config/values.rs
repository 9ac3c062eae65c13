//! What a setting's value must be: an address and port, an http(s) URL,
//! a Stripe secret key's shape, and the folder of an SQLite database.

use std::net::SocketAddr;
use std::path::PathBuf;

use super::database_url::sqlite_path;

/// What an address setting must look like.
pub(super) const ADDRESS: &str = "not an address and port (such as 127.0.0.1:3000 or [::]:443)";
/// A socket address, with a default for [`Reader::parse`](super::read::Reader::parse) (never used:
/// a value that does not parse refuses the configuration).
pub(super) struct Addr(pub(super) SocketAddr);

impl Default for Addr {
    fn default() -> Addr {
        Addr(SocketAddr::from(([127, 0, 0, 1], 0)))
    }
}

impl std::str::FromStr for Addr {
    type Err = std::net::AddrParseError;
    fn from_str(s: &str) -> Result<Addr, Self::Err> {
        s.parse().map(Addr)
    }
}

/// An absolute http(s) URL with a host, or why not.
pub(super) fn http_url(text: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(text).map_err(|_| {
        "not an absolute URL: write it with its scheme and host (https://example.org)".to_owned()
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err("not an http(s) URL with a host (https://example.org)".into());
    }
    Ok(url)
}

/// The port a visitor reaches `site_url` on over HTTPS: the one it names,
/// or 443; None when it is not an `https://` address.
pub fn public_https_port(site_url: &str) -> Option<u16> {
    let url = reqwest::Url::parse(site_url).ok()?;
    match url.scheme() {
        "https" => url.port_or_known_default(),
        _ => None,
    }
}

/// Why `key` cannot be a Stripe secret key, if it cannot (the key itself is
/// never in the reason).
pub fn stripe_key_shape(key: &str) -> Result<(), String> {
    let kind = ["sk_test_", "sk_live_", "rk_test_", "rk_live_"]
        .iter()
        .find(|p| key.starts_with(**p));
    let bad = |why: String| Err(why);
    match kind {
        None if key.starts_with("pk_") => {
            bad("it is a publishable key (pk_...); the server needs the secret key (sk_...) or a restricted key (rk_...)".into())
        }
        None => bad("a Stripe secret key starts with sk_test_, sk_live_, rk_test_ or rk_live_".into()),
        Some(p) if key.len() == p.len() => bad(format!("it is only the prefix {p}")),
        Some(_) if !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') => {
            bad("it holds characters no Stripe key has (spaces, quotes or line breaks copied with it?)".into())
        }
        Some(_) => Ok(()),
    }
}

/// The folder of the `sqlite://` database file; None for PostgreSQL.
pub(super) fn sqlite_dir(database_url: &str) -> Option<PathBuf> {
    sqlite_path(database_url)?.parent().map(PathBuf::from)
}
