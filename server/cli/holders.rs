//! Who holds a listening address `check` cannot bind: the site's own
//! server (then `check`, run before a `systemctl reload` on a running
//! host, passes), systemd's socket unit for it, or another program (a
//! problem, named). Read from `/proc` as `ss -p` reads it: the socket's
//! inode in `/proc/net/{tcp,tcp6,udp,udp6}`, then the processes whose
//! descriptors point at it. A process this user may not look into is
//! not found, and `check` says so.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use crate::config::{sqlite_path, Transport};

/// One process holding the address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// Its command name (`/proc/PID/comm`).
    pub name: String,
}

/// What holds an address, as `check` judges it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// A server of this site (the same database): `serve` gets its
    /// sockets from it on an upgrade, or from systemd.
    ThisSite(Vec<u32>),
    /// Only systemd, for a socket unit that starts this binary.
    Systemd(String),
    /// A server of the site's binary on another database.
    OtherSite(u32, String),
    /// Some other program.
    Other(Vec<Holder>),
    /// No holder this user can see.
    Unseen,
}

/// Who holds `addr`, judged against the database this check reads.
pub fn held(addr: SocketAddr, transport: Transport, database_url: &str) -> Held {
    let inodes = socket_inodes(addr, transport);
    let holders = processes_holding(&inodes);
    if holders.is_empty() {
        return Held::Unseen;
    }
    let is_systemd = |h: &Holder| h.pid == 1 || h.name == "systemd";
    let (ours, rest): (Vec<Holder>, Vec<Holder>) =
        holders.into_iter().partition(|h| is_site_binary(h.pid));
    // Anything else that holds it beside systemd is named, ours or not.
    let others: Vec<Holder> = rest.iter().filter(|h| !is_systemd(h)).cloned().collect();
    if !others.is_empty() {
        return Held::Other(others);
    }
    if !ours.is_empty() {
        let mine = same_database(database_url);
        let mut same = Vec::new();
        for h in &ours {
            match database_of(h.pid) {
                // Its settings cannot be read (another user's, or it just
                // ended): not vouched for.
                None => return Held::Unseen,
                Some(theirs) if !mine(&theirs) => {
                    return Held::OtherSite(h.pid, crate::config::redacted(&theirs.url))
                }
                Some(_) => same.push(h.pid),
            }
        }
        return Held::ThisSite(same);
    }
    // Only systemd holds it.
    match socket_unit_for_site(addr) {
        Some(unit) => Held::Systemd(unit),
        None => Held::Other(rest),
    }
}

/// The inodes of the sockets bound to `addr`'s port that a bind of
/// `addr` would clash with (listening, for TCP).
fn socket_inodes(addr: SocketAddr, transport: Transport) -> Vec<u64> {
    let files: [&str; 2] = match transport {
        Transport::Tcp => ["/proc/net/tcp", "/proc/net/tcp6"],
        Transport::Udp => ["/proc/net/udp", "/proc/net/udp6"],
    };
    let mut inodes = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            // 0A: LISTEN. A bound UDP socket has no connection state to show.
            if transport == Transport::Tcp && *state != "0A" {
                continue;
            }
            let Some((ip, port)) = parse_local(local) else {
                continue;
            };
            let clashes = port == addr.port()
                && (ip.is_unspecified() || addr.ip().is_unspecified() || same_ip(ip, addr.ip()));
            if let (true, Ok(inode)) = (clashes, inode.parse::<u64>()) {
                if inode != 0 {
                    inodes.push(inode);
                }
            }
        }
    }
    inodes
}

fn same_ip(a: IpAddr, b: IpAddr) -> bool {
    let v4 = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    v4(a) == v4(b)
}

/// `0100007F:1F90` (IPv4) or 32 hex digits and a port (IPv6), as the
/// kernel prints them: each 32-bit word in the machine's byte order.
fn parse_local(text: &str) -> Option<(IpAddr, u16)> {
    let (ip, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let words: Option<Vec<u32>> = (0..ip.len() / 8)
        .map(|i| u32::from_str_radix(ip.get(i * 8..i * 8 + 8)?, 16).ok())
        .collect();
    let bytes: Vec<u8> = words?.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let ip = match bytes.len() {
        4 => IpAddr::from(<[u8; 4]>::try_from(bytes).ok()?),
        16 => IpAddr::from(<[u8; 16]>::try_from(bytes).ok()?),
        _ => return None,
    };
    Some((ip, port))
}

/// The processes with a descriptor on one of `inodes`.
fn processes_holding(inodes: &[u64]) -> Vec<Holder> {
    if inodes.is_empty() {
        return Vec::new();
    }
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    let mut found = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in procs.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|target| wanted.iter().any(|w| target.as_os_str() == w.as_str()))
        });
        if holds {
            let name = std::fs::read_to_string(entry.path().join("comm"))
                .map(|c| c.trim().to_owned())
                .unwrap_or_default();
            found.push(Holder { pid, name });
        }
    }
    found.sort_by_key(|h| h.pid);
    found
}

/// Whether `pid` runs this site's binary: the very file this process runs
/// (its device and inode, whatever path each process sees it by), or,
/// after a new binary was installed over it (the running one shows
/// ` (deleted)`) or seen through another mount, a file of the same name
/// owned by root. Not by the process's name: any program can call itself
/// citizen-site, but only root owns what is installed.
fn is_site_binary(pid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let exe = format!("/proc/{pid}/exe");
    let (Ok(mine), Ok(theirs)) = (std::env::current_exe(), std::fs::metadata(&exe)) else {
        return false;
    };
    let Ok(my_file) = std::fs::metadata(&mine) else {
        return false;
    };
    if (my_file.dev(), my_file.ino()) == (theirs.dev(), theirs.ino()) {
        return true;
    }
    let name = |p: &Path| {
        p.file_name().map(|n| {
            let n = n.to_string_lossy();
            n.strip_suffix(" (deleted)").unwrap_or(&n).to_owned()
        })
    };
    let their_path = std::fs::read_link(&exe).ok();
    theirs.uid() == 0
        && name(&mine).is_some()
        && name(&mine) == their_path.as_deref().and_then(name)
}

/// A running server's database: its `--database-url` or `DATABASE_URL`
/// (else the default), and the folder a relative SQLite path is read from.
struct TheirDatabase {
    url: String,
    cwd: Option<PathBuf>,
}

fn database_of(pid: u32) -> Option<TheirDatabase> {
    let split = |bytes: Vec<u8>| -> Vec<String> {
        bytes
            .split(|b| *b == 0)
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect()
    };
    let args = split(std::fs::read(format!("/proc/{pid}/cmdline")).ok()?);
    let env = split(std::fs::read(format!("/proc/{pid}/environ")).ok()?);
    let from_args = args.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix("--database-url=")
            .map(str::to_owned)
            .or_else(|| {
                (a == "--database-url")
                    .then(|| args.get(i + 1).cloned())
                    .flatten()
            })
    });
    let from_env = env
        .iter()
        .find_map(|e| e.strip_prefix("DATABASE_URL="))
        .filter(|v| !v.trim().is_empty())
        .map(|v| v.trim().to_owned());
    let url = from_args
        .or(from_env)
        .unwrap_or_else(|| crate::config::DEFAULT_DATABASE_URL.to_owned());
    Some(TheirDatabase {
        url,
        cwd: std::fs::read_link(format!("/proc/{pid}/cwd")).ok(),
    })
}

/// Whether a server's database is the one `mine` names: the same SQLite
/// file (each path resolved from its own process's folder), or the same
/// PostgreSQL URL.
fn same_database(mine: &str) -> impl Fn(&TheirDatabase) -> bool + '_ {
    let resolve = |url: &str, cwd: Option<&Path>| {
        sqlite_path(url).map(|file| {
            let file = match (file.is_relative(), cwd) {
                (true, Some(dir)) => dir.join(file),
                _ => file,
            };
            std::fs::canonicalize(&file).unwrap_or(file)
        })
    };
    let my_cwd = std::env::current_dir().ok();
    // PostgreSQL: the same server and database, however the URL is spelt
    // (a password changed since, the port written or not).
    let place = |url: &str| {
        url.parse::<sqlx::postgres::PgConnectOptions>()
            .ok()
            .map(|o| {
                (
                    o.get_host().to_owned(),
                    o.get_port(),
                    o.get_database().map(str::to_owned),
                )
            })
    };
    move |theirs: &TheirDatabase| match (
        resolve(mine, my_cwd.as_deref()),
        resolve(&theirs.url, theirs.cwd.as_deref()),
    ) {
        (Some(a), Some(b)) => a == b,
        (None, None) => place(mine).is_some_and(|p| Some(p) == place(&theirs.url)),
        _ => false,
    }
}

/// The socket unit systemd listens on `addr` for, when the service it
/// starts runs this binary (`systemctl list-sockets`, then the service's
/// `ExecStart`).
fn socket_unit_for_site(addr: SocketAddr) -> Option<String> {
    let out = std::process::Command::new("systemctl")
        .args(["list-sockets", "--all", "--no-legend", "--plain", "--full"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let port = format!(":{}", addr.port());
    let mine = std::env::current_exe().ok()?;
    let name = mine.file_name()?.to_string_lossy().into_owned();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [listen, unit, activates @ ..] = fields.as_slice() else {
            continue;
        };
        if !listen.ends_with(&port) {
            continue;
        }
        for service in activates {
            let exec = std::process::Command::new("systemctl")
                .args(["show", "-p", "ExecStart", "--value", service])
                .output()
                .ok()?;
            if String::from_utf8_lossy(&exec.stdout).contains(&name) {
                return Some((*unit).to_owned());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_addresses_read_back() {
        // 127.0.0.1:8080 and [::]:443 as /proc/net/tcp{,6} print them on
        // a little-endian machine.
        if cfg!(target_endian = "little") {
            assert_eq!(
                parse_local("0100007F:1F90"),
                Some(("127.0.0.1".parse().unwrap(), 8080))
            );
            assert_eq!(
                parse_local("00000000000000000000000000000000:01BB"),
                Some(("::".parse().unwrap(), 443))
            );
            assert_eq!(
                parse_local("0000000000000000FFFF00000100007F:0050"),
                Some(("::ffff:127.0.0.1".parse().unwrap(), 80))
            );
        }
        assert!(same_ip(
            "::ffff:127.0.0.1".parse().unwrap(),
            "127.0.0.1".parse().unwrap()
        ));
    }

    #[test]
    fn a_postgres_database_is_the_same_however_its_url_is_spelt() {
        let theirs = |url: &str| TheirDatabase {
            url: url.to_owned(),
            cwd: None,
        };
        // A password rotated since the server started, the port spelt out.
        let mine = same_database("postgres://site:new@db.internal/site");
        assert!(mine(&theirs(
            "postgresql://site:old@db.internal:5432/site?sslmode=prefer"
        )));
        assert!(!mine(&theirs("postgres://site:new@db.internal/other")));
        assert!(!mine(&theirs("postgres://site:new@db2.internal/site")));
        assert!(!mine(&theirs("sqlite://data/site.db")));
    }

    #[test]
    fn a_listener_is_found_with_its_process() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let inodes = socket_inodes(addr, Transport::Tcp);
        assert_eq!(inodes.len(), 1, "{inodes:?}");
        let holders = processes_holding(&inodes);
        assert_eq!(
            holders.iter().map(|h| h.pid).collect::<Vec<_>>(),
            [std::process::id()]
        );
        drop(listener);
        assert!(socket_inodes(addr, Transport::Tcp).is_empty());
        // Another program (not this binary): named, with its pid.
        let mut other = std::process::Command::new("python3")
            .args([
                "-c",
                "import socket,time; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(30)",
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(other.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{}", line.trim()).parse().unwrap();
        let found = held(addr, Transport::Tcp, "sqlite://nowhere.db");
        let _ = other.kill();
        let _ = other.wait();
        match found {
            Held::Other(holders) => {
                assert_eq!(holders.len(), 1, "{holders:?}");
                assert_eq!(holders[0].pid, other.id());
                assert!(holders[0].name.starts_with("python3"), "{holders:?}");
            }
            other => panic!("{other:?}"),
        }
    }
}
