//! Who holds a listening address `check` cannot bind: the site's own
//! server (then `check`, run before a `systemctl reload` on a running
//! host, passes), systemd's socket unit for it, or another program (a
//! problem, named). Read from `/proc` as `ss -p` reads it: each socket's
//! inode in `/proc/net/{tcp,tcp6,udp,udp6}`, then the processes whose
//! descriptors point at it. Nothing is vouched for on a name a process
//! gives itself: systemd is PID 1 or root running root's systemd binary,
//! the site's server runs a binary of the site's, and a socket unit is
//! systemd's word (active, its service's `ExecStart` this binary's path).
//! A socket whose holder this user may not look into makes the answer
//! "unseen", whatever holds the others, and `check` says so.

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
    /// A socket on it whose holder this user cannot see.
    Unseen,
    /// No socket is bound to it (the bind failed for another reason).
    Free,
}

/// Who holds `addr`, judged against the database this check reads.
pub fn held(addr: SocketAddr, transport: Transport, database_url: &str) -> Held {
    judge(addr, transport, database_url, &Systemctl)
}

/// What systemd says of its units: `systemctl`'s answers, or a test's.
pub(crate) trait Units {
    /// `systemctl list-sockets`: the active socket units, a line each
    /// (address, unit, the services it activates).
    fn sockets(&self) -> Option<String>;
    /// One property of a unit (`systemctl show -p NAME --value UNIT`).
    fn property(&self, unit: &str, name: &str) -> Option<String>;
}

struct Systemctl;

impl Units for Systemctl {
    fn sockets(&self) -> Option<String> {
        // Without --all: the units listening now, not those merely installed.
        systemctl(&["list-sockets", "--no-legend", "--plain", "--full"])
    }

    fn property(&self, unit: &str, name: &str) -> Option<String> {
        systemctl(&["show", "-p", name, "--value", unit])
    }
}

fn systemctl(args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("systemctl")
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn judge(addr: SocketAddr, transport: Transport, database_url: &str, units: &dyn Units) -> Held {
    let inodes = socket_inodes(addr, transport);
    if inodes.is_empty() {
        return Held::Free;
    }
    let holding = processes_holding(&inodes);
    // Every socket's holder seen, or nothing is vouched for: one the user
    // cannot see may be anyone's, whoever holds the others.
    if inodes
        .iter()
        .any(|inode| !holding.iter().any(|(_, held)| held.contains(inode)))
    {
        return Held::Unseen;
    }
    let holders: Vec<Holder> = holding.into_iter().map(|(h, _)| h).collect();
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
            // Anyone may run a copy of the binary and give it the site's
            // settings: only a process of the site's own users is its.
            if !runs_as_the_sites_user(h.pid, database_url) {
                return Held::Other(vec![h.clone()]);
            }
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
    match socket_unit_for_site(addr, transport, units) {
        Some(unit) => Held::Systemd(unit),
        None => Held::Other(rest),
    }
}

/// Whether `pid` runs as root, as this check's user, as the owner of the
/// site's SQLite file, or as the owner of this binary: a user the site's
/// server may run as. Another user's copy of the binary is none of them.
fn runs_as_the_sites_user(pid: u32, database_url: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(uid) = process_uid(pid) else {
        return false;
    };
    // SAFETY: geteuid(2) cannot fail.
    let me = unsafe { libc::geteuid() };
    let owner = |path: Option<PathBuf>| {
        path.and_then(|p| std::fs::metadata(p).ok())
            .map(|m| m.uid())
    };
    uid == 0
        || uid == me
        || owner(sqlite_path(database_url)) == Some(uid)
        || owner(std::env::current_exe().ok()) == Some(uid)
}

/// A process's user: its real, effective, saved and file-system user IDs,
/// when they are one (`/proc/PID/status`).
fn process_uid(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let ids: Vec<u32> = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .filter_map(|id| id.parse().ok())
        .collect();
    (!ids.is_empty() && ids.iter().all(|id| *id == ids[0])).then(|| ids[0])
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

/// Whether `h` is systemd: PID 1 (of this PID namespace), or a process
/// of root's running root's `systemd` binary. Not by its name alone: any
/// user can name a program systemd.
fn is_systemd(h: &Holder) -> bool {
    use std::os::unix::fs::MetadataExt;
    if h.pid == 1 {
        return true;
    }
    let runs_as_root = process_uid(h.pid) == Some(0);
    let exe = format!("/proc/{}/exe", h.pid);
    let roots_systemd = std::fs::metadata(&exe).is_ok_and(|m| m.uid() == 0)
        && std::fs::read_link(&exe)
            .ok()
            .and_then(|p| file_name(&p))
            .is_some_and(|name| name == "systemd");
    runs_as_root && roots_systemd
}

/// A path's last part, without the ` (deleted)` the kernel adds to a
/// running binary whose file was replaced.
fn file_name(path: &Path) -> Option<String> {
    path.file_name().map(|n| {
        let n = n.to_string_lossy();
        n.strip_suffix(" (deleted)").unwrap_or(&n).to_owned()
    })
}

/// The processes with a descriptor on one of `inodes`, each with those it
/// holds.
fn processes_holding(inodes: &[u64]) -> Vec<(Holder, Vec<u64>)> {
    if inodes.is_empty() {
        return Vec::new();
    }
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
        let mut held: Vec<u64> = fds
            .flatten()
            .filter_map(|fd| {
                let target = std::fs::read_link(fd.path()).ok()?;
                let inode = target
                    .to_str()?
                    .strip_prefix("socket:[")?
                    .strip_suffix(']')?
                    .parse::<u64>()
                    .ok()?;
                inodes.contains(&inode).then_some(inode)
            })
            .collect();
        if !held.is_empty() {
            held.sort_unstable();
            held.dedup();
            let name = std::fs::read_to_string(entry.path().join("comm"))
                .map(|c| c.trim().to_owned())
                .unwrap_or_default();
            found.push((Holder { pid, name }, held));
        }
    }
    found.sort_by_key(|(h, _)| h.pid);
    found
}

/// Whether `pid` runs this site's binary: the very file this process runs
/// (its device and inode, whatever path each process sees it by), a file
/// of the same content (a copy, whoever owns it), or one of the same name
/// (the running one shows ` (deleted)` once another was installed over
/// it) that is the same engine with another site packed in (a publish) or
/// that root owns (an upgrade installed by root). Not by the process's
/// name: any program can call itself citizen-site.
fn is_site_binary(pid: u32) -> bool {
    let exe = PathBuf::from(format!("/proc/{pid}/exe"));
    let their_name = std::fs::read_link(&exe).ok().and_then(|p| file_name(&p));
    match std::env::current_exe() {
        Ok(mine) => is_site_file(&mine, &exe, their_name.as_deref()),
        Err(_) => false,
    }
}

/// [`is_site_binary`] for the file `theirs` (named `their_name`), against
/// this site's binary `mine`.
fn is_site_file(mine: &Path, theirs: &Path, their_name: Option<&str>) -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(my_file), Ok(their_file)) = (std::fs::File::open(mine), std::fs::File::open(theirs))
    else {
        return false;
    };
    let (Ok(my_meta), Ok(their_meta)) = (my_file.metadata(), their_file.metadata()) else {
        return false;
    };
    if (my_meta.dev(), my_meta.ino()) == (their_meta.dev(), their_meta.ino()) {
        return true;
    }
    if my_meta.len() == their_meta.len() && same_bytes(&my_file, &their_file) {
        return true;
    }
    let same_name = their_name.is_some() && file_name(mine).as_deref() == their_name;
    let same_engine = || {
        let ours = crate::payload::engine_of(&my_file);
        ours.is_some() && ours == crate::payload::engine_of(&their_file)
    };
    same_name && (their_meta.uid() == 0 || same_engine())
}

/// Whether two files of the same length hold the same bytes.
fn same_bytes(a: &std::fs::File, b: &std::fs::File) -> bool {
    use std::io::Read;
    let (mut a, mut b) = (std::io::BufReader::new(a), std::io::BufReader::new(b));
    let (mut x, mut y) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let n = match a.read(&mut x) {
            Ok(0) => return b.read(&mut y).is_ok_and(|m| m == 0),
            Ok(n) => n,
            Err(_) => return false,
        };
        if b.read_exact(&mut y[..n]).is_err() || x[..n] != y[..n] {
            return false;
        }
    }
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

/// The active socket unit systemd listens on `addr` for over `transport`
/// (its `Listen`: `[::]:443 (Stream)`, `(Datagram)` for UDP), when the
/// service it starts runs this binary: the service's `ExecStart` names
/// this binary's file (compared as a path, not as text).
fn socket_unit_for_site(
    addr: SocketAddr,
    transport: Transport,
    units: &dyn Units,
) -> Option<String> {
    let text = units.sockets()?;
    let port = format!(":{}", addr.port());
    let mine = std::env::current_exe().ok()?;
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [listen, unit, activates @ ..] = fields.as_slice() else {
            continue;
        };
        if !listen.ends_with(&port) {
            continue;
        }
        if units
            .property(unit, "ActiveState")
            .as_deref()
            .map(str::trim)
            != Some("active")
        {
            continue;
        }
        let kind = match transport {
            Transport::Tcp => "(Stream)",
            Transport::Udp => "(Datagram)",
        };
        let listens = units.property(unit, "Listen").unwrap_or_default();
        let on_it = listens.lines().any(|l| {
            let mut parts = l.split_whitespace();
            parts.next().is_some_and(|a| a.ends_with(&port)) && parts.next() == Some(kind)
        });
        if !on_it {
            continue;
        }
        for service in activates {
            let exec = units.property(service, "ExecStart").unwrap_or_default();
            if exec_paths(&exec).any(|path| same_file(Path::new(path), &mine)) {
                return Some((*unit).to_owned());
            }
        }
    }
    None
}

/// The programs of an `ExecStart` as `systemctl show` prints it: each
/// command's `path=` (`{ path=/usr/bin/x ; argv[]=/usr/bin/x serve ; ... }`).
fn exec_paths(exec: &str) -> impl Iterator<Item = &str> {
    exec.split(';')
        .filter_map(|part| {
            part.trim()
                .trim_start_matches('{')
                .trim()
                .strip_prefix("path=")
        })
        .map(str::trim)
}

/// Whether two paths name one file (the same device and inode).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
