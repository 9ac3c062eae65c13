//! holders' own tests: the kernel's tables read, and each way a holder is judged.

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
        holders.iter().map(|(h, _)| h.pid).collect::<Vec<_>>(),
        [std::process::id()]
    );
    drop(listener);
    assert!(socket_inodes(addr, Transport::Tcp).is_empty());
    // Another program (not this binary): named, with its pid.
    let (mut other, addr) = python_listening("");
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

/// systemd's answers as a test gives them.
struct FakeUnits {
    sockets: String,
    /// (unit, property, value)
    properties: Vec<(String, &'static str, String)>,
}

impl Units for FakeUnits {
    fn sockets(&self) -> Option<String> {
        Some(self.sockets.clone())
    }

    fn property(&self, unit: &str, name: &str) -> Option<String> {
        self.properties
            .iter()
            .find(|(u, n, _)| u == unit && *n == name)
            .map(|(_, _, v)| v.clone())
    }
}

/// An active socket unit on `port` whose service runs `exec` (as
/// `systemctl show -p ExecStart` prints it).
fn unit_on(port: u16, state: &str, exec: String) -> FakeUnits {
    FakeUnits {
        sockets: format!("127.0.0.1:{port} site.socket site.service\n"),
        properties: vec![
            ("site.socket".into(), "ActiveState", state.into()),
            (
                "site.socket".into(),
                "Listen",
                format!("127.0.0.1:{port} (Stream)\n"),
            ),
            ("site.service".into(), "ExecStart", exec),
        ],
    }
}

fn exec_start(path: &Path, args: &str) -> String {
    format!(
        "{{ path={} ; argv[]={} {args} ; ignore_errors=no ; start_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }}",
        path.display(),
        path.display()
    )
}

/// A Python program that runs `first` (Python statements), then listens
/// on a port of 127.0.0.1: (the child, its address).
fn python_listening(first: &str) -> (std::process::Child, SocketAddr) {
    let mut child = std::process::Command::new("python3")
        .args([
            "-c",
            &format!("import ctypes,socket,time; {first}s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(30)"),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    (child, format!("127.0.0.1:{}", line.trim()).parse().unwrap())
}

/// A program of root's that names itself `systemd` (as any user may) and
/// listens: (the child, its address).
fn named_systemd() -> (std::process::Child, SocketAddr) {
    python_listening("ctypes.CDLL(None).prctl(15, b'systemd', 0, 0, 0); ")
}

#[test]
fn a_program_that_names_itself_systemd_is_another_program() {
    let (mut child, addr) = named_systemd();
    let comm = std::fs::read_to_string(format!("/proc/{}/comm", child.id())).unwrap();
    assert_eq!(comm.trim(), "systemd");
    // Beside a unit that would start this binary on that port.
    let units = unit_on(
        addr.port(),
        "active",
        exec_start(&std::env::current_exe().unwrap(), "serve"),
    );
    let found = judge(addr, Transport::Tcp, DEFAULT, &units);
    let _ = child.kill();
    let _ = child.wait();
    match found {
        Held::Other(holders) => assert_eq!(holders[0].pid, child.id(), "{holders:?}"),
        other => panic!("a process named systemd was taken for systemd: {other:?}"),
    }
}

const DEFAULT: &str = crate::config::DEFAULT_DATABASE_URL;

#[test]
fn only_an_active_unit_whose_service_runs_this_binary_counts() {
    let me = std::env::current_exe().unwrap();
    let addr: SocketAddr = "127.0.0.1:8443".parse().unwrap();
    let unit = |state: &str, exec: String| {
        socket_unit_for_site(addr, Transport::Tcp, &unit_on(8443, state, exec))
    };
    assert_eq!(
        unit("active", exec_start(&me, "serve")).as_deref(),
        Some("site.socket")
    );
    // Installed, not listening.
    assert_eq!(unit("inactive", exec_start(&me, "serve")), None);
    // Another program whose command line holds this binary's name.
    let name = me.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        unit(
            "active",
            exec_start(Path::new("/usr/bin/env"), &format!("{name} serve"))
        ),
        None
    );
    // Another file of the same name (a copy elsewhere): not this binary.
    let dir = std::env::temp_dir().join(format!("holders-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let elsewhere = dir.join(&name);
    std::fs::copy(&me, &elsewhere).unwrap();
    assert_eq!(unit("active", exec_start(&elsewhere, "serve")), None);
    std::fs::remove_dir_all(&dir).unwrap();
    // The unit listens on that port, over UDP only: not the TCP port's.
    let mut udp = unit_on(8443, "active", exec_start(&me, "serve"));
    udp.properties[1].2 = "127.0.0.1:8443 (Datagram)\n".into();
    assert_eq!(socket_unit_for_site(addr, Transport::Tcp, &udp), None);
    assert_eq!(
        socket_unit_for_site(addr, Transport::Udp, &udp).as_deref(),
        Some("site.socket")
    );
    // Another port.
    let other: SocketAddr = "127.0.0.1:9443".parse().unwrap();
    assert_eq!(
        socket_unit_for_site(
            other,
            Transport::Tcp,
            &unit_on(8443, "active", exec_start(&me, "serve"))
        ),
        None
    );
}

/// A listening socket no process holds a descriptor of: sent over a Unix
/// socket and not yet received (as one in another user's process is, to
/// a user who may not look there). Kept while the pair is.
fn unseen_listener(
    addr: &str,
) -> (
    std::os::unix::net::UnixDatagram,
    std::os::unix::net::UnixDatagram,
) {
    use std::os::fd::AsRawFd;
    let listener = std::net::TcpListener::bind(addr).unwrap();
    let (tx, rx) = std::os::unix::net::UnixDatagram::pair().unwrap();
    let fd = listener.as_raw_fd();
    // SAFETY: a sendmsg(2) of one byte and one descriptor, with buffers
    // that live across the call.
    unsafe {
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let space = libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) as usize;
        let mut control = vec![0u8; space];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as _;
        std::ptr::copy_nonoverlapping(&fd, libc::CMSG_DATA(cmsg).cast(), 1);
        assert_eq!(libc::sendmsg(tx.as_raw_fd(), &msg, 0), 1);
    }
    drop(listener);
    (tx, rx)
}

#[test]
fn a_socket_whose_holder_cannot_be_seen_leaves_the_answer_unseen() {
    // This process is the site's binary on its default database, and
    // holds one socket on the port; nobody visible holds the other.
    let mine = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = mine.local_addr().unwrap().port();
    let all: SocketAddr = format!("0.0.0.0:{port}").parse().unwrap();
    let no_units = FakeUnits {
        sockets: String::new(),
        properties: Vec::new(),
    };
    let own = database_of(std::process::id()).unwrap().url;
    assert_eq!(
        judge(all, Transport::Tcp, &own, &no_units),
        Held::ThisSite(vec![std::process::id()])
    );
    let _in_flight = unseen_listener(&format!("127.0.0.2:{port}"));
    assert_eq!(socket_inodes(all, Transport::Tcp).len(), 2);
    assert_eq!(judge(all, Transport::Tcp, &own, &no_units), Held::Unseen);
    drop(mine);
    assert_eq!(judge(all, Transport::Tcp, &own, &no_units), Held::Unseen);
}

#[test]
fn a_copy_or_a_publish_of_the_binary_is_the_sites_whoever_owns_it() {
    use std::os::unix::fs::chown;
    let me = std::env::current_exe().unwrap();
    let name = file_name(&me).unwrap();
    let dir = std::env::temp_dir().join(format!("holders-{}", uuid::Uuid::new_v4()));
    let (copies, published) = (dir.join("copies"), dir.join("published"));
    std::fs::create_dir_all(&copies).unwrap();
    std::fs::create_dir_all(&published).unwrap();
    let nobody = |path: &Path| chown(path, Some(65534), Some(65534)).unwrap();
    // A copy under another name, a user's.
    let copy = copies.join("site-copy");
    std::fs::copy(&me, &copy).unwrap();
    nobody(&copy);
    assert!(is_site_file(&me, &copy, Some("site-copy")));
    // The same engine with another site packed in, installed by a user at
    // the binary's name (a publish): the running one's.
    let exe = std::fs::read(&me).unwrap();
    let packed = |engine: [u8; 32]| {
        let payload = crate::payload::format::encode(&engine, &[("x".into(), b"y".to_vec())]);
        crate::payload::elf::replace(&exe, &payload).unwrap()
    };
    let publish = published.join(&name);
    std::fs::write(&publish, packed(crate::payload::engine_hash())).unwrap();
    nobody(&publish);
    assert!(is_site_file(&me, &publish, Some(&name)));
    // Not under another name, nor another engine's, nor another program.
    assert!(!is_site_file(&me, &publish, Some("other")));
    std::fs::write(&publish, packed([7; 32])).unwrap();
    assert!(!is_site_file(&me, &publish, Some(&name)));
    assert!(!is_site_file(&me, Path::new("/bin/sh"), Some("sh")));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A copy of the binary run by another user, given the site's settings,
/// is not the site's server: only a process of root, of this check's
/// user, or of the owner of the database or of the binary is.
#[test]
fn another_users_process_is_never_the_sites_server() {
    let mut other = std::process::Command::new("setpriv")
        .args([
            "--reuid",
            "65534",
            "--regid",
            "65534",
            "--clear-groups",
            "sleep",
            "30",
        ])
        .spawn()
        .unwrap();
    let pid = other.id();
    let said = wait_for_uid(pid);
    let theirs = runs_as_the_sites_user(pid, DEFAULT);
    let mine = runs_as_the_sites_user(std::process::id(), DEFAULT);
    let _ = other.kill();
    let _ = other.wait();
    assert_eq!(said, Some(65534));
    assert!(!theirs, "another user's process was vouched for");
    assert!(mine);
}

/// The user `pid` runs as, once setpriv has changed to it.
fn wait_for_uid(pid: u32) -> Option<u32> {
    for _ in 0..100 {
        if let Some(uid) = process_uid(pid).filter(|uid| *uid != 0) {
            return Some(uid);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    None
}
