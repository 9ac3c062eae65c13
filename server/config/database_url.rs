//! `DATABASE_URL` read as the pool reads it (`db::Db`), so that `check`
//! and `serve` refuse the same URLs, each naming the setting, and so that
//! the SQLite file every part of the site names (the start makes it and
//! keeps it private, `check`, `backup`, `restore` and `check`'s holders
//! read it) is the one the driver opens: [`sqlite_path`].

use std::path::{Path, PathBuf};

use sqlx::ConnectOptions;

/// The URL the pool is given: SQLite's with the file's `mode` unless the
/// URL names one (among its options, as SQLite's driver reads them: after
/// the first `?`). An error when it is neither database's.
pub fn pool_url(url: &str, mode: &str) -> Result<String, String> {
    if url.starts_with("sqlite:") {
        Ok(match url.split_once('?') {
            Some((_, options)) if sqlite_option(options, "mode").is_some() => url.to_owned(),
            Some(_) => format!("{url}&mode={mode}"),
            None => format!("{url}?mode={mode}"),
        })
    } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        Ok(url.to_owned())
    } else {
        Err("must start with sqlite:// or postgres://".into())
    }
}

/// One of a SQLite URL's options (what follows its first `?`), decoded.
fn sqlite_option(options: &str, name: &str) -> Option<String> {
    url::form_urlencoded::parse(options.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

/// Whether the pool may make the SQLite file `url` names when it is not
/// there (its `mode`, `rwc` unless the URL says otherwise).
pub fn sqlite_makes_file(url: &str) -> bool {
    sqlite_parts(url)
        .is_some_and(|(_, options)| sqlite_option(&options, "mode").as_deref() == Some("rwc"))
}

/// Why `url` cannot be the site's database, read as the pool reads it:
/// the URL itself (at the pool's making, as `serve` starts), then the
/// driver's options (at its first connection, which would fail on every
/// try). None when both read it.
pub fn url_problem(url: &str) -> Option<String> {
    let url = match pool_url(url, "rwc") {
        Ok(url) => url,
        Err(why) => return Some(why),
    };
    let read = url.parse::<sqlx::any::AnyConnectOptions>().and_then(|_| {
        match url.starts_with("sqlite:") {
            true => url.parse::<sqlx::sqlite::SqliteConnectOptions>().map(drop),
            false => url.parse::<sqlx::postgres::PgConnectOptions>().map(drop),
        }
    });
    if let Err(e) = read {
        return Some(url_reason(&e));
    }
    let (name, options) = sqlite_parts(&url)?;
    // An option given twice: SQLite's options take each, so a later
    // `mode` undoes what the first says (a file made, then opened in
    // memory or read-only).
    let mut keys: Vec<String> = url::form_urlencoded::parse(options.as_bytes())
        .map(|(key, _)| key.into_owned())
        .collect();
    keys.sort();
    if let Some(twice) = keys.windows(2).find(|w| w[0] == w[1]) {
        return Some(format!("names the option {} twice", twice[0]));
    }
    let file = sqlite_path(&url);
    let file_text = file.as_ref().map(|f| f.to_string_lossy().into_owned());
    match file_text.as_deref() {
        // SQLite opens a temporary database for an empty name, and a
        // decoded `:memory:` in memory: nothing would be kept.
        None if name.is_empty() => {
            Some("names no database file (sqlite:///path/to/site.db)".to_owned())
        }
        Some(":memory:") => Some(
            "names :memory: escaped, which SQLite opens in memory: name a file (sqlite:///path/to/site.db)"
                .to_owned(),
        ),
        // SQLite reads a file name that starts with `file:` as a URI of
        // its own, naming another file than the one the site names.
        Some(f) if f.starts_with("file:") => Some("names a SQLite URI (file:...), which SQLite would read as another file: name the file itself (sqlite:///path/to/site.db)".to_owned()),
        _ => None,
    }
}

/// The SQLite file `url` names, as the pool's driver reads it: sqlx parses
/// the URL (dot segments removed, `a/../a` is `a`), then SQLite's options
/// take its path with its percent escapes decoded (`my%20site.db` is
/// `my site.db`). None for PostgreSQL, an in-memory database, or a URL the
/// pool cannot read ([`url_problem`] says why).
pub fn sqlite_path(url: &str) -> Option<PathBuf> {
    let (name, options_text) = sqlite_parts(url)?;
    // In memory as SQLite's options read it (`from_db_and_params`): the
    // name `:memory:`, or any `mode=memory` among the options.
    let in_memory = name == ":memory:"
        || url::form_urlencoded::parse(options_text.as_bytes())
            .any(|(key, value)| key == "mode" && value == "memory");
    let options = sqlite_options(url, "rwc").ok()?;
    let file = options.get_filename();
    (!in_memory && !file.as_os_str().is_empty()).then(|| file.to_path_buf())
}

/// SQLite's options for `url` (its `mode`, `mode` unless it names one),
/// as the Any driver hands them to SQLite's (sqlx-sqlite's
/// `TryFrom<&AnyConnectOptions>`): from the URL once parsed.
pub fn sqlite_options(
    url: &str,
    mode: &str,
) -> Result<sqlx::sqlite::SqliteConnectOptions, sqlx::Error> {
    let url = pool_url(url, mode).map_err(|why| sqlx::Error::Configuration(why.into()))?;
    let any = url.parse::<sqlx::any::AnyConnectOptions>()?;
    sqlx::sqlite::SqliteConnectOptions::from_url(&any.database_url)
}

/// A SQLite URL's name and options as SQLite's options read them, once
/// the URL is parsed: None for any other database.
fn sqlite_parts(url: &str) -> Option<(String, String)> {
    let url = pool_url(url, "rwc").ok()?;
    if !url.starts_with("sqlite:") {
        return None;
    }
    let any = url.parse::<sqlx::any::AnyConnectOptions>().ok()?;
    let read = any
        .database_url
        .as_str()
        .trim_start_matches("sqlite://")
        .trim_start_matches("sqlite:")
        .to_owned();
    let (name, options) = read.split_once('?').unwrap_or((&read, ""));
    Some((name.to_owned(), options.to_owned()))
}

/// A URL for the SQLite file `file` (opened in `mode`) that the driver
/// reads back as that very file: each character a URL gives a meaning to
/// escaped. An error for a path no URL names as it is written (an
/// absolute path's `..`, which a URL's reading removes).
pub fn sqlite_url(file: &Path, mode: &str) -> Result<String, String> {
    use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
    const ESCAPED: &AsciiSet = &CONTROLS
        .add(b' ')
        .add(b'"')
        .add(b'#')
        .add(b'%')
        .add(b'<')
        .add(b'>')
        .add(b'?')
        .add(b'[')
        .add(b'\\')
        .add(b']')
        .add(b'^')
        .add(b'`')
        .add(b'{')
        .add(b'|')
        .add(b'}');
    let text = file
        .to_str()
        .ok_or_else(|| format!("{}: SQLite needs a UTF-8 file name", file.display()))?;
    if text.starts_with("file:") {
        return Err(format!(
            "{}: SQLite reads a name that starts with file: as a URI of its own",
            file.display()
        ));
    }
    // `sqlite:` without `//`: a relative path's first folder would be read
    // as a host (and its letters lowered).
    let url = format!("sqlite:{}?mode={mode}", utf8_percent_encode(text, ESCAPED));
    match sqlite_path(&url) {
        Some(read) if read == file => Ok(url),
        _ => Err(format!(
            "{}: no database URL names this file as it is written (a .. in it?)",
            file.display()
        )),
    }
}

/// A URL's problem as sqlx says it, without its "error with
/// configuration" wrapping.
pub fn url_reason(e: &sqlx::Error) -> String {
    match e {
        sqlx::Error::Configuration(inner) => format!("cannot be read: {inner}"),
        other => format!("cannot be read: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_the_one_the_driver_opens() {
        let file = |url: &str| sqlite_path(url).map(|p| p.display().to_string());
        // Escapes decoded, dot segments removed, as sqlx reads the URL.
        assert_eq!(
            file("sqlite:///srv/a/../a/my%20site.db").as_deref(),
            Some("/srv/a/my site.db")
        );
        assert_eq!(
            file("sqlite://data/citizen-site.db?mode=rwc").as_deref(),
            Some("data/citizen-site.db")
        );
        assert_eq!(file("sqlite:data/site.db").as_deref(), Some("data/site.db"));
        // No file: in memory, another database, or no URL at all.
        for url in [
            "sqlite::memory:",
            "sqlite:///srv/site.db?mode=memory",
            "postgres://site@db/site",
            "mysql://db/site",
        ] {
            assert_eq!(file(url), None, "{url}");
        }
    }

    #[test]
    fn a_files_url_reads_back_as_that_file() {
        for path in [
            "/srv/my site#1?%20.db",
            "/srv/100%/mode=ro.db",
            "Data/My Site.db",
            "data/citizen-site.db",
        ] {
            let url = sqlite_url(Path::new(path), "ro").unwrap();
            assert_eq!(sqlite_path(&url).as_deref(), Some(Path::new(path)), "{url}");
            assert!(!sqlite_makes_file(&url), "{url}");
        }
        // A URL's reading removes an absolute path's `..`: refused.
        assert!(sqlite_url(Path::new("/srv/a/../site.db"), "rw").is_err());
        for kept in ["/srv/./site.db", "data/../site.db"] {
            let url = sqlite_url(Path::new(kept), "rw").unwrap();
            assert_eq!(sqlite_path(&url).as_deref(), Some(Path::new(kept)), "{url}");
        }
    }

    #[test]
    fn the_mode_is_read_from_the_options_alone() {
        // A file whose name holds "mode=" still gets the pool's mode.
        assert_eq!(
            pool_url("sqlite:///srv/mode=1.db", "ro").unwrap(),
            "sqlite:///srv/mode=1.db?mode=ro"
        );
        assert_eq!(
            pool_url("sqlite:///srv/site.db?cache=private", "ro").unwrap(),
            "sqlite:///srv/site.db?cache=private&mode=ro"
        );
        assert!(sqlite_makes_file("sqlite:///srv/site.db"));
        assert!(sqlite_makes_file("sqlite:///srv/mode=ro.db"));
        assert!(!sqlite_makes_file("sqlite:///srv/site.db?mode=rw"));
    }

    #[test]
    fn a_url_whose_file_sqlite_would_not_keep_is_refused() {
        for (url, said) in [
            ("sqlite:file:site.db?vfs=unix", "names a SQLite URI"),
            ("sqlite:%3Amemory%3A", "names :memory: escaped"),
            (
                "sqlite:///srv/site.db?mode=rwc&mode=memory",
                "names the option mode twice",
            ),
            (
                "sqlite:///srv/site.db?mode=rwc&mode=ro",
                "names the option mode twice",
            ),
            ("sqlite:", "names no database file"),
            ("sqlite://", "names no database file"),
        ] {
            let why = url_problem(url).unwrap_or_default();
            assert!(why.starts_with(said), "{url}: {why:?}");
        }
        assert_eq!(url_problem("sqlite:///srv/site.db"), None);
        assert_eq!(url_problem("sqlite::memory:"), None);
        assert!(sqlite_url(Path::new("file:site.db"), "rw").is_err());
    }
}
