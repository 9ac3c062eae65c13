//! How messages name what the operator must fix: a file error in words
//! with what to do, a user by name, a database URL without its password.

/// The user this process runs as, for messages about what it may not
/// read or write: `alice (uid 1000)`.
pub fn whoami() -> String {
    // SAFETY: getuid cannot fail.
    user(unsafe { libc::getuid() })
}

/// A file error in words, without Rust's `(os error 2)`.
pub fn io_reason(e: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::NotFound => "no such file".into(),
        ErrorKind::PermissionDenied => format!("permission denied (to {})", whoami()),
        ErrorKind::IsADirectory => "a folder, not a file".into(),
        ErrorKind::NotADirectory => "a part of the path is a file, not a folder".into(),
        ErrorKind::AlreadyExists => "it exists".into(),
        ErrorKind::ReadOnlyFilesystem => "the file system is read-only".into(),
        ErrorKind::StorageFull => "the disk is full".into(),
        // The OS's words, without the number Rust adds.
        _ => {
            let text = e.to_string();
            match text.find(" (os error ") {
                Some(at) => text[..at].to_owned(),
                None => text,
            }
        }
    }
}

/// The file `path` could not be read (`write` false) or written, in the
/// tool's words: `cannot read team.json: no such file; check the path (a
/// relative one starts at /srv/site)`, the reason and what to do.
pub fn io_problem(path: &std::path::Path, write: bool, e: &std::io::Error) -> String {
    use std::io::ErrorKind;
    let verb = if write { "write" } else { "read" };
    let fix = match e.kind() {
        ErrorKind::NotFound if write => {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."));
            format!(
                "its folder must exist: {} or name another",
                make_it_first(dir)
            )
        }
        ErrorKind::NotFound | ErrorKind::NotADirectory => match path.is_relative() {
            true => match std::env::current_dir() {
                Ok(here) => format!(
                    "check the path (a relative one starts at {})",
                    here.display()
                ),
                Err(_) => "check the path".into(),
            },
            false => "check the path".into(),
        },
        ErrorKind::PermissionDenied => format!(
            "run the command as a user who may {verb} it, or give {} {verb} access to it",
            whoami()
        ),
        ErrorKind::IsADirectory => "name the file itself".into(),
        ErrorKind::AlreadyExists => "name a new file".into(),
        ErrorKind::ReadOnlyFilesystem | ErrorKind::StorageFull => {
            "name a file on another file system".into()
        }
        _ => String::new(),
    };
    let reason = io_reason(e);
    match fix.is_empty() {
        true => format!("cannot {verb} {}: {reason}", path.display()),
        false => format!("cannot {verb} {}: {reason}; {fix}", path.display()),
    }
}

/// `make it first (mkdir -p DIR)`, for a folder that is not there: the
/// command as a shell takes it (quoted when it has to be).
pub fn make_it_first(dir: &std::path::Path) -> String {
    let dir = dir.display().to_string();
    let plain = dir
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c));
    match plain && !dir.is_empty() {
        true => format!("make it first (mkdir -p {dir})"),
        false => format!("make it first (mkdir -p '{}')", dir.replace('\'', "'\\''")),
    }
}

/// `alice (uid 1000)`: the user `uid`, by name where it has one.
pub fn user(uid: u32) -> String {
    // SAFETY: getpwuid's result is read at once, on this thread, before any
    // other call that may reuse its buffer.
    unsafe {
        let pw = libc::getpwuid(uid);
        if pw.is_null() || (*pw).pw_name.is_null() {
            return format!("uid {uid}");
        }
        let name = std::ffi::CStr::from_ptr((*pw).pw_name).to_string_lossy();
        format!("{name} (uid {uid})")
    }
}

/// A database URL fit to print: without its password.
pub fn redacted(url: &str) -> String {
    let shown = match reqwest::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        Ok(_) => url.to_owned(),
        // Not a URL (a port that is no number, say): everything between
        // the scheme's `user:` and the last `@` of the whole text is
        // hidden, a password holding `/`, `?` or `#` included.
        Err(_) => match url.split_once("://") {
            Some((scheme, rest)) => match rest.rfind('@') {
                Some(at) => match rest[..at].split_once(':') {
                    Some((user, _)) => format!("{scheme}://{user}:***@{}", &rest[at + 1..]),
                    None => url.to_owned(),
                },
                None => url.to_owned(),
            },
            None => url.to_owned(),
        },
    };
    hide_password_parameters(&shown)
}

/// `password=...` and `sslpassword=...` in a URL's query (PostgreSQL
/// takes the password there too) shown as `***`.
fn hide_password_parameters(url: &str) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_owned();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _))
                if ["password", "sslpassword"].contains(&name.to_ascii_lowercase().as_str()) =>
            {
                format!("{name}=***")
            }
            _ => pair.to_owned(),
        })
        .collect();
    format!("{base}?{}", pairs.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_error_is_worded_with_the_path_and_what_to_do_never_an_os_error_number() {
        use std::io::{Error, ErrorKind};
        use std::path::Path;
        let missing = Error::from(ErrorKind::NotFound);
        let said = io_problem(Path::new("/srv/backups/today.db"), false, &missing);
        assert_eq!(
            said,
            "cannot read /srv/backups/today.db: no such file; check the path"
        );
        let said = io_problem(Path::new("my backups/today.db"), true, &missing);
        assert_eq!(
            said,
            "cannot write my backups/today.db: no such file; its folder must exist: make it first (mkdir -p 'my backups') or name another"
        );
        // An error without a kind of its own keeps the OS's words, not its number.
        let other = Error::from_raw_os_error(libc::EBUSY);
        let said = io_problem(Path::new("a.db"), true, &other);
        assert!(said.starts_with("cannot write a.db: "), "{said}");
        assert!(!said.contains("os error"), "{said}");
        assert_eq!(
            make_it_first(Path::new("out/bin")),
            "make it first (mkdir -p out/bin)"
        );
    }
}
