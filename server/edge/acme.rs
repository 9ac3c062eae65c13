//! What the certificate robot (`tls::robot`) is told and what it keeps on
//! this machine: the ACME settings (`TLS_DOMAINS`, `ACME_*`) and the
//! local copy of the certificate in service.
//!
//! The account and the certificates live in the site's database, which
//! every server shares (`tls::store`). Each process also keeps the last
//! certificate it served under `ACME_CACHE_DIR`
//! (`<cache>/<directory>/<names>.pem`: the key, then the chain), readable
//! by the server's user only, so a start while the database is down still
//! serves HTTPS. Versions before the database kept the account there too
//! (`account.json`); the first start of this one takes both over.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::certs::{self, ServedCert};

/// Let's Encrypt's production directory, the default `ACME_DIRECTORY`.
pub const LETS_ENCRYPT: &str = "https://acme-v02.api.letsencrypt.org/directory";

/// The validation the CA is asked for.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Challenge {
    /// On the HTTPS port (RFC 8737): needs only port 443 reachable.
    #[value(name = "tls-alpn-01")]
    #[default]
    TlsAlpn01,
    /// On the HTTP port, at `/.well-known/acme-challenge/` (RFC 8555 8.3).
    #[value(name = "http-01")]
    Http01,
}

/// What `TLS_DOMAINS` and the `ACME_*` variables settled to.
#[derive(Debug, Clone)]
pub struct AcmeSettings {
    pub domains: Vec<String>,
    pub directory: String,
    /// `mailto:` contacts for the account (`ACME_EMAIL`).
    pub contact: Vec<String>,
    /// An extra CA the directory's own certificate may chain to (PEM,
    /// read at start from `ACME_DIRECTORY_CA`).
    pub directory_ca: Option<Vec<u8>>,
    pub cache_dir: PathBuf,
    pub challenge: Challenge,
    /// The CA's profile to order (`ACME_PROFILE`), checked against the
    /// directory's list before anything is ordered.
    pub profile: Option<String>,
    pub timing: AcmeTiming,
}

/// How long the robot waits at each step (`tls::robot`): these defaults
/// in production; tests shorten them (hidden flags under `test-hooks`, as
/// `TLS_TICKET_PERIOD_SECS`), so a fault test takes seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcmeTiming {
    /// How long the order lease lasts unless its holder renews it.
    pub lease_ttl: Duration,
    /// The back-off after a first failure; it doubles with each next one.
    pub first_retry: Duration,
    /// How long an order waits for every member to hold its challenge
    /// answers before it asks the CA to validate.
    pub challenge_wait: Duration,
    /// The least wait before the CA's renewal information is asked again,
    /// whatever its `Retry-After` (RFC 9773: a minute).
    pub ari_min_poll: Duration,
}

impl Default for AcmeTiming {
    fn default() -> Self {
        AcmeTiming {
            lease_ttl: Duration::from_secs(30),
            first_retry: Duration::from_secs(5),
            challenge_wait: Duration::from_secs(10),
            ari_min_poll: Duration::from_secs(60),
        }
    }
}

impl AcmeSettings {
    /// The folder of this directory's account and certificates.
    pub fn folder(&self) -> PathBuf {
        self.cache_dir.join(folder_name(&self.directory))
    }

    /// The names, lowercase, sorted and comma-separated: how the
    /// certificate for them is filed, here and in the database.
    pub fn names_key(&self) -> String {
        let mut names = self.domains.clone();
        names.sort();
        names.join(",")
    }

    /// The local copy of the certificate for these names.
    pub fn cert_file(&self) -> PathBuf {
        self.folder().join(format!("{}.pem", self.names_key()))
    }

    pub fn account_file(&self) -> PathBuf {
        self.folder().join("account.json")
    }
}

/// The name of the folder a cache keeps for the ACME directory
/// `directory`: its URL without `https://`, each character but a letter,
/// a digit, `.` and `-` as `_` (`acme-v02.api.letsencrypt.org_directory`).
pub fn folder_name(directory: &str) -> String {
    let name: String = directory
        .trim_start_matches("https://")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    name.trim_end_matches('_').to_owned()
}

/// Whether `name` is a file the server writes in a directory's folder of
/// the cache: a certificate's local copy (`<names>.pem`,
/// [`AcmeSettings::cert_file`], for these names or earlier ones), an older
/// version's account (`account.json`), or either's next copy on its way in
/// (`.new`, [`write_private`]).
pub fn is_cache_file(name: &str) -> bool {
    if name == "account.json" || name == "account.new" {
        return true;
    }
    let Some(names) = name
        .strip_suffix(".pem")
        .or_else(|| name.strip_suffix(".new"))
    else {
        return false;
    };
    // Host names (a wildcard's `*` among them), comma-separated.
    names.split(',').all(|host| {
        host.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'*')
        })
    })
}

/// The local copy of the certificate (with its PEM), if it is readable,
/// for every one of these names, and not expired by this process's clock
/// (read at start, when the database may be away).
pub fn load_local(settings: &AcmeSettings) -> Option<(ServedCert, String)> {
    let file = settings.cert_file();
    let pem = std::fs::read_to_string(&file).ok()?;
    let name = file.display().to_string();
    usable(settings, &pem, &name, SystemTime::now()).map(|served| (served, pem))
}

/// `pem` (a key, then a chain) as a certificate in service, if it is for
/// every one of these names and not expired at `now` (the fleet's clock,
/// the database's, wherever a member judges what the database holds: a
/// member whose own clock is past a stored certificate's end would write
/// its older one over it); `what` names it in a warning.
pub fn usable(
    settings: &AcmeSettings,
    pem: &str,
    what: &str,
    now: SystemTime,
) -> Option<ServedCert> {
    match certs::parse(pem.as_bytes(), pem.as_bytes(), (what, what)) {
        Ok(served) if served.info.covers(&settings.domains) && served.info.not_after > now => {
            Some(served)
        }
        Ok(_) => None,
        Err(why) => {
            tracing::warn!(error = %why, "HTTPS: a stored certificate cannot be used");
            None
        }
    }
}

pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Writes `bytes` to a new file readable by this user only, then renames it
/// over `path`, so a reader sees the old file or the new one, never half.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("new");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(directory: &str, domains: &[&str]) -> AcmeSettings {
        AcmeSettings {
            domains: domains.iter().map(|s| s.to_string()).collect(),
            directory: directory.into(),
            contact: vec![],
            directory_ca: None,
            cache_dir: PathBuf::from("/var/lib/citizen-site/acme"),
            challenge: Challenge::TlsAlpn01,
            profile: None,
            timing: AcmeTiming::default(),
        }
    }

    #[test]
    fn each_directory_and_set_of_names_has_its_own_files() {
        let s = settings(LETS_ENCRYPT, &["www.site.example", "site.example"]);
        assert_eq!(s.cert_file(), Path::new("/var/lib/citizen-site/acme/acme-v02.api.letsencrypt.org_directory/site.example,www.site.example.pem"));
        assert_eq!(
            s.account_file(),
            Path::new(
                "/var/lib/citizen-site/acme/acme-v02.api.letsencrypt.org_directory/account.json"
            )
        );
        let pebble = settings("https://127.0.0.1:14000/dir", &["localhost"]);
        assert_eq!(
            pebble.cert_file(),
            Path::new("/var/lib/citizen-site/acme/127.0.0.1_14000_dir/localhost.pem")
        );
    }

    /// What `db::private` makes private in a cache: the files named here,
    /// and nothing else a folder may hold.
    #[test]
    fn the_files_the_server_writes_in_the_cache_are_known_by_their_names() {
        let s = settings(LETS_ENCRYPT, &["www.site.example", "*.site.example"]);
        assert_eq!(
            folder_name(LETS_ENCRYPT),
            "acme-v02.api.letsencrypt.org_directory"
        );
        assert_eq!(s.folder(), s.cache_dir.join(folder_name(LETS_ENCRYPT)));
        for file in [s.cert_file(), s.account_file()] {
            for written in [file.clone(), file.with_extension("new")] {
                let name = written.file_name().unwrap().to_str().unwrap();
                assert!(is_cache_file(name), "{name}");
            }
        }
        for other in [
            "public.txt",
            "README",
            "notes.pem.txt",
            ".pem",
            "a..b.pem",
            "x y.pem",
        ] {
            assert!(!is_cache_file(other), "{other}");
        }
    }

    #[test]
    fn private_files_are_readable_by_their_owner_only_and_replaced_whole() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("citizen-acme-{}", uuid::Uuid::new_v4()));
        create_private_dir(&dir.join("a")).unwrap();
        let file = dir.join("a").join("x.pem");
        write_private(&file, b"one").unwrap();
        write_private(&file, b"two").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"two");
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            std::fs::metadata(dir.join("a"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o700
        );
        assert!(!file.with_extension("new").exists());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
