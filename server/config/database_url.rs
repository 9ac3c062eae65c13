//! `DATABASE_URL` read as the pool reads it (`db::Db`), so that `check`
//! and `serve` refuse the same URLs, each naming the setting.

/// The URL the pool is given: SQLite's with the file's `mode` unless the
/// URL names one. An error when it is neither database's.
pub fn pool_url(url: &str, mode: &str) -> Result<String, String> {
    if url.starts_with("sqlite:") {
        Ok(if url.contains("mode=") {
            url.to_owned()
        } else if url.contains('?') {
            format!("{url}&mode={mode}")
        } else {
            format!("{url}?mode={mode}")
        })
    } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        Ok(url.to_owned())
    } else {
        Err("must start with sqlite:// or postgres://".into())
    }
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
    read.err().map(|e| url_reason(&e))
}

/// A URL's problem as sqlx says it, without its "error with
/// configuration" wrapping.
pub fn url_reason(e: &sqlx::Error) -> String {
    match e {
        sqlx::Error::Configuration(inner) => format!("cannot be read: {inner}"),
        other => format!("cannot be read: {other}"),
    }
}
