//! The site's files on the machine are its user's alone, whatever the umask
//! the server is started under (issue 67, friction 10): the database holds
//! the session-ticket keys, the ACME account key and the intro requests.
//! Run by hand under a shell's umask 022, the data folder is 0700 and every
//! file in it 0600, a backup too; a folder or file other users could reach
//! is tightened at the next start, which says so in its log; one the
//! server's user cannot change (another user owns it) is named by `check`
//! and by the start's log. A folder that also holds files that are not the
//! site's (the operator's own folder, named by `DATABASE_URL`) is left as
//! it is, and the site's files in it are still made private.

use std::fs::File;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use super::{run, site, site_database, without_the_shells_settings, Server, BIN};
use crate::support::{free_port, needs, wait, Dir};

/// `cmd` under a shell's usual umask (022): what it makes is readable by
/// every user unless it says otherwise. Its output goes to `log`.
fn under_umask_022(mut cmd: Command, log: &Path) -> Command {
    let out = File::create(log).unwrap();
    cmd.stdout(out.try_clone().unwrap()).stderr(out);
    // SAFETY: umask(2) is async-signal-safe, and nothing else runs in the
    // child between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        });
    }
    cmd
}

/// `path`'s permission bits, as ls -l's octal: "0700".
fn mode(path: &Path) -> String {
    let m = std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .mode();
    format!("{:04o}", m & 0o7777)
}

fn set_mode(path: &Path, m: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(m)).unwrap();
}

/// Each file of `dir` (not below it) with its mode, by name.
fn files_with_modes(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                mode(&e.path()),
            )
        })
        .collect();
    out.sort();
    out
}

/// The running server's files, SQLite's write-ahead log and shared memory
/// among them, each its user's alone.
fn assert_private(data: &Path, db: &str) {
    assert_eq!(mode(data), "0700", "{}", data.display());
    let files = files_with_modes(data);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    for suffix in ["", "-wal", "-shm", ".lock"] {
        let name = format!("{db}{suffix}");
        assert!(names.contains(&name.as_str()), "{name} in {files:?}");
    }
    for (name, m) in &files {
        assert_eq!(m, "0600", "{} of {files:?}", data.join(name).display());
    }
}

#[test]
fn under_umask_022_the_data_folder_is_0700_and_every_file_in_it_0600_a_backup_too() {
    let dir = Dir::new("cli-umask");
    let log = dir.0.join("server.log");
    let server = Server::spawn(under_umask_022(site(&dir.0), &log));
    // Written through SQLite's log, as visitors write.
    server.post("Riverbend", false);
    let data = dir.0.join("data");
    assert_private(&data, "citizen-site.db");

    let mut backup = under_umask_022(site(&dir.0), &dir.0.join("backup.log"));
    backup.args(["backup", "bk.db"]);
    let (code, out, err) = run(&mut backup);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        mode(&dir.0.join("bk.db")),
        "0600",
        "the backup holds the same secrets"
    );

    server.stop();
    assert_eq!(mode(&data), "0700");
    for (name, m) in files_with_modes(&data) {
        assert_eq!(m, "0600", "{name} after the stop");
    }
}

#[test]
fn what_other_users_could_reach_is_tightened_at_the_next_start_which_says_so() {
    let dir = Dir::new("cli-tighten");
    site_database(&dir.0, &["Riverbend"], false);
    // As a start under umask 022 left them before this version, or by hand.
    let data = dir.0.join("data");
    set_mode(&data, 0o755);
    set_mode(&data.join("citizen-site.db"), 0o666);
    set_mode(&data.join("citizen-site.db.lock"), 0o644);

    // `check` says what the start will do, and passes.
    let addr = format!("127.0.0.1:{}", free_port());
    let (code, out, err) = run(site(&dir.0).arg("check").env("ADDR", &addr));
    assert_eq!(code, 0, "{out}{err}");
    for words in [
        "note: data is readable by other users (mode 0755): the server makes it 0700 (its owner's alone) at its start",
        "note: data/citizen-site.db is readable and writable by other users (mode 0666): the server makes it 0600",
        "note: data/citizen-site.db.lock is readable by other users (mode 0644): the server makes it 0600",
    ] {
        assert!(out.contains(words), "{words:?} not in {out}");
    }
    assert_eq!(mode(&data), "0755", "check changes nothing");

    let log = dir.0.join("server.log");
    let server = Server::spawn(under_umask_022(site(&dir.0), &log));
    assert_private(&data, "citizen-site.db");
    let said = std::fs::read_to_string(&log).unwrap();
    for words in [
        "data was readable by other users (mode 0755): now 0700, its owner's alone",
        "data/citizen-site.db was readable and writable by other users (mode 0666): now 0600, its owner's alone",
        "data/citizen-site.db.lock was readable by other users (mode 0644): now 0600, its owner's alone",
    ] {
        assert!(said.contains(words), "{words:?} not in {said}");
    }
    server.stop();

    // A folder of the operator's own, which holds more than the site's
    // files: left as it is, said once; the site's files in it are private.
    let shared = dir.0.join("shared");
    std::fs::create_dir(&shared).unwrap();
    set_mode(&shared, 0o755);
    std::fs::write(shared.join("notes.txt"), "the operator's").unwrap();
    set_mode(&shared.join("notes.txt"), 0o644);
    let log = dir.0.join("shared.log");
    let mut c = site(&dir.0);
    c.env("DATABASE_URL", "sqlite://shared/site.db");
    let server = Server::spawn(under_umask_022(c, &log));
    assert_eq!(mode(&shared), "0755");
    assert_eq!(mode(&shared.join("notes.txt")), "0644");
    for name in ["site.db", "site.db-wal", "site.db-shm", "site.db.lock"] {
        assert_eq!(mode(&shared.join(name)), "0600", "{name}");
    }
    let said = std::fs::read_to_string(&log).unwrap();
    let words = "shared is readable by other users (mode 0755) but holds files that are not the site's (notes.txt): it is left as it is";
    assert!(said.contains(words), "{words:?} not in {said}");
    server.stop();
}

/// A folder an administrator made for the site and let its group write
/// (root's, mode 0775): the server's user (`nobody`, in that group) makes
/// its database there but cannot change the folder's mode. The start says
/// so in its log and `check` names it as a warning, without failing.
#[test]
fn a_folder_the_servers_user_cannot_tighten_is_named_by_check_and_the_start() {
    needs("setpriv", "util-linux");
    // SAFETY: getuid(2) has no preconditions.
    assert_eq!(
        unsafe { libc::getuid() },
        0,
        "a folder another user owns needs root to make"
    );
    let dir = Dir::new("cli-not-owner");
    let bin = dir.0.join("citizen-site");
    std::fs::copy(BIN, &bin).unwrap();
    set_mode(&dir.0, 0o755);
    let data = dir.0.join("data");
    std::fs::create_dir(&data).unwrap();
    std::os::unix::fs::chown(&data, Some(0), Some(65534)).unwrap();
    set_mode(&data, 0o775);
    let as_nobody = || {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin);
        without_the_shells_settings(c, &dir.0)
    };
    // The user is named as the system names it ("nobody (uid 65534)").
    let said_of_data = |text: &str| {
        text.contains("data is readable and writable by other users (mode 0775), and ")
            && text.contains(
                "(uid 65534) cannot change that (its owner is root (uid 0)): run chmod 700 data as its owner",
            )
    };

    let log = dir.0.join("server.log");
    let server = Server::spawn(under_umask_022(as_nobody(), &log));
    assert_eq!(mode(&data), "0775", "not the server's to change");
    for name in [
        "citizen-site.db",
        "citizen-site.db-wal",
        "citizen-site.db-shm",
        "citizen-site.db.lock",
    ] {
        assert_eq!(mode(&data.join(name)), "0600", "{name}");
    }
    let said = std::fs::read_to_string(&log).unwrap();
    let line = said
        .lines()
        .find(|l| said_of_data(l))
        .unwrap_or_else(|| panic!("the folder is not named in {said}"));
    assert!(line.contains("WARN"), "{line}");

    let addr = format!("127.0.0.1:{}", free_port());
    let (code, out, err) = run(as_nobody().arg("check").env("ADDR", &addr));
    assert_eq!(code, 0, "a warning, not a problem: {out}{err}");
    let line = out.lines().find(|l| said_of_data(l));
    assert!(line.is_some_and(|l| l.starts_with("warning: ")), "{out}");
    let (code, out, err) = run(as_nobody().args(["check", "--json"]).env("ADDR", &addr));
    assert_eq!(code, 0, "{out}{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["ok"], true, "{report}");
    let warnings = report["warnings"].as_array().expect("warnings");
    assert_eq!(warnings.len(), 1, "{report}");
    assert!(said_of_data(warnings[0].as_str().unwrap()), "{report}");
    server.stop();
}

/// A folder every user may write in, as /tmp is (1777: the sticky bit lets
/// each remove only their own files) or without the sticky bit (0777),
/// named by `DATABASE_URL`: never changed, though it holds only the site's
/// files. Made 1700, it would lock every other user out of it. The site's
/// files in it are made private; the 0777 one, where any user may replace
/// them, is a warning.
#[test]
fn a_folder_every_user_may_write_in_is_never_changed_only_the_sites_files_in_it() {
    let dir = Dir::new("cli-sticky");
    let sticky = dir.0.join("sticky");
    let open = dir.0.join("open");
    for (folder, m) in [(&sticky, 0o1777), (&open, 0o777)] {
        std::fs::create_dir(folder).unwrap();
        set_mode(folder, m);
    }
    let addr = format!("127.0.0.1:{}", free_port());
    let check = |url: &str| {
        run(site(&dir.0)
            .arg("check")
            .env("ADDR", &addr)
            .env("DATABASE_URL", url))
    };
    let sticky_said = "sticky is a folder every user may write in (mode 1777, the sticky bit set): it is left as it is";
    let open_said = "open is a folder every user may write in (mode 0777) without the sticky bit: any user may rename or replace the site's files in it";

    let (code, out, err) = check("sqlite://sticky/site.db");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("warning: {sticky_said}")), "{out}");
    assert!(!out.contains("makes it 0700"), "{out}");
    let (code, out, err) = check("sqlite://open/site.db");
    assert_eq!(code, 0, "a warning, not a problem: {out}{err}");
    assert!(out.contains(&format!("warning: {open_said}")), "{out}");

    for (folder, was, said) in [(&sticky, "1777", sticky_said), (&open, "0777", open_said)] {
        let name = folder.file_name().unwrap().to_str().unwrap();
        let log = dir.0.join(format!("{name}.log"));
        let mut c = site(&dir.0);
        c.env("DATABASE_URL", format!("sqlite://{name}/site.db"));
        let server = Server::spawn(under_umask_022(c, &log));
        assert_eq!(mode(folder), was, "{name} left as it is");
        for file in ["site.db", "site.db-wal", "site.db-shm", "site.db.lock"] {
            assert_eq!(mode(&folder.join(file)), "0600", "{name}/{file}");
        }
        server.stop();
        assert_eq!(mode(folder), was, "{name} after the stop");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains(said), "{said:?} not in {text}");
        assert!(!text.contains(&format!("{name} was ")), "{text}");
    }
}

/// A server with HTTPS by ACME on `cache` (the CA at a port nothing answers
/// on: its folder in the cache is `127.0.0.1_9_dir`), its output in `log`,
/// once it says it is ready. Stopped with SIGTERM by the caller.
fn acme_server(dir: &Path, cache: &Path, log: &Path) -> std::process::Child {
    let mut c = under_umask_022(site(dir), log);
    acme_settings(&mut c, cache);
    let child = c.arg("serve").spawn().unwrap();
    let ready = wait(60, || {
        std::fs::read_to_string(log).is_ok_and(|t| t.contains("ready: "))
    });
    assert!(ready, "{}", std::fs::read_to_string(log).unwrap());
    child
}

fn acme_settings(c: &mut Command, cache: &Path) {
    c.env("TLS_DOMAINS", "example.org")
        .env("ACME_EMAIL", "ops@example.org")
        .env("ACME_DIRECTORY", "https://127.0.0.1:9/dir")
        .env("ACME_CACHE_DIR", cache)
        .env("HTTPS_ADDR", format!("127.0.0.1:{}", free_port()))
        .env("HTTP_ADDR", format!("127.0.0.1:{}", free_port()));
}

/// `ACME_CACHE_DIR` may name any folder: one that also holds another tool's
/// files (`other-tool/public.txt`), or a tree as /etc/ssl. Only what the
/// server writes there is made private: its folder for the CA it orders
/// from, and the account and certificate files in it. Everything else is
/// left as it is, the cache folder too, and said so. A file named as the
/// server names its files but owned by another user (a hard link planted
/// there, say) is never changed by root: it is named as a warning.
#[test]
fn in_the_acme_cache_only_what_the_server_writes_there_is_made_private() {
    // SAFETY: getuid(2) has no preconditions.
    assert_eq!(
        unsafe { libc::getuid() },
        0,
        "a file another user owns needs root to make"
    );
    let dir = Dir::new("cli-acme-cache");
    let cache = dir.0.join("cache");
    let other = cache.join("other-tool");
    let ours = cache.join("127.0.0.1_9_dir");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::create_dir_all(&ours).unwrap();
    std::fs::write(other.join("public.txt"), "another tool's").unwrap();
    for name in ["example.org.pem", "account.json", "old.example.org.pem"] {
        std::fs::write(ours.join(name), "not a certificate").unwrap();
        set_mode(&ours.join(name), 0o644);
    }
    std::os::unix::fs::chown(ours.join("old.example.org.pem"), Some(65534), Some(65534)).unwrap();
    for folder in [&cache, &other, &ours] {
        set_mode(folder, 0o755);
    }
    set_mode(&other.join("public.txt"), 0o644);
    let planted =
        "cache/127.0.0.1_9_dir/old.example.org.pem is readable by other users (mode 0644), and ";
    let planted_owner = "its owner is nobody (uid 65534)";

    let mut c = site(&dir.0);
    acme_settings(&mut c, Path::new("cache"));
    let (code, out, err) = run(c.arg("check"));
    assert_eq!(code, 0, "{out}{err}");
    for words in [
        "note: cache is readable by other users (mode 0755) but holds files that are not the site's (other-tool): it is left as it is",
        "note: cache/127.0.0.1_9_dir is readable by other users (mode 0755): the server makes it 0700",
        "note: cache/127.0.0.1_9_dir/account.json is readable by other users (mode 0644): the server makes it 0600",
        "note: cache/127.0.0.1_9_dir/example.org.pem is readable by other users (mode 0644): the server makes it 0600",
    ] {
        assert!(out.contains(words), "{words:?} not in {out}");
    }
    assert!(!out.contains("other-tool is"), "{out}");
    assert!(!out.contains("public.txt"), "{out}");
    let line = out.lines().find(|l| l.contains(planted));
    assert!(
        line.is_some_and(|l| l.starts_with("warning: ") && l.contains(planted_owner)),
        "{out}"
    );

    let log = dir.0.join("server.log");
    let mut server = acme_server(&dir.0, Path::new("cache"), &log);
    // SAFETY: signalling our own child, not yet reaped.
    unsafe { libc::kill(server.id() as libc::pid_t, libc::SIGTERM) };
    server.wait().unwrap();
    assert_eq!(mode(&cache), "0755", "holds another tool's files");
    assert_eq!(mode(&other), "0755", "another tool's");
    assert_eq!(mode(&other.join("public.txt")), "0644", "another tool's");
    assert_eq!(mode(&ours), "0700");
    assert_eq!(mode(&ours.join("example.org.pem")), "0600");
    assert_eq!(mode(&ours.join("account.json")), "0600");
    assert_eq!(
        mode(&ours.join("old.example.org.pem")),
        "0644",
        "another user's"
    );
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(!said.contains("other-tool was"), "{said}");
    assert!(!said.contains("public.txt"), "{said}");
    let line = said.lines().find(|l| l.contains(planted));
    assert!(
        line.is_some_and(|l| l.contains("WARN") && l.contains(planted_owner)),
        "{said}"
    );
}

/// The start makes the database when there is none, as a first start must;
/// a mistyped `DATABASE_URL` then makes a new, empty one. The log says so,
/// naming the path and the setting; a start on the database there says
/// nothing of the kind.
#[test]
fn the_start_says_when_it_makes_a_new_database() {
    let dir = Dir::new("cli-new-database");
    let said = "no database at data2/typo.db: made a new one (DATABASE_URL)";
    for (round, new) in [("first", true), ("second", false)] {
        let log = dir.0.join(format!("{round}.log"));
        let mut c = site(&dir.0);
        c.env("DATABASE_URL", "sqlite://data2/typo.db");
        let server = Server::spawn(under_umask_022(c, &log));
        server.stop();
        let text = std::fs::read_to_string(&log).unwrap();
        match new {
            true => {
                let line = text.lines().find(|l| l.contains(said));
                assert!(
                    line.is_some_and(|l| l.contains("INFO")),
                    "{said:?} not in {text}"
                );
            }
            false => assert!(!text.contains("made a new one"), "{round} start: {text}"),
        }
    }
}

/// What the database's name leads to is changed only if it is a database:
/// a link to another file (or a mistyped `DATABASE_URL` naming one) is
/// left as it is and named, as is a site's file with other names (a hard
/// link, maybe from outside the site's folders). Root runs the start, as
/// it may not refuse a chmod.
#[test]
fn a_link_to_another_file_or_a_hard_link_is_never_changed_and_is_named() {
    let dir = Dir::new("cli-unlike");
    let data = dir.0.join("data");
    std::fs::create_dir(&data).unwrap();
    set_mode(&data, 0o700);
    let elsewhere = dir.0.join("hosts");
    let linked = dir.0.join("other.lock");
    for file in [&elsewhere, &linked] {
        std::fs::write(file, "127.0.0.1 localhost\n").unwrap();
        set_mode(file, 0o644);
    }
    std::os::unix::fs::symlink(&elsewhere, data.join("citizen-site.db")).unwrap();
    std::fs::hard_link(&linked, data.join("citizen-site.db.lock")).unwrap();

    let (code, out, err) = run(site(&dir.0)
        .arg("check")
        .env("ADDR", format!("127.0.0.1:{}", free_port())));
    let _ = code;
    assert!(
        out.contains("warning: data/citizen-site.db is readable by other users (mode 0644), but it holds no SQLite database (a link to")
            && out.contains("is DATABASE_URL right?"),
        "{out}{err}"
    );
    assert!(
        out.contains("warning: data/citizen-site.db.lock is readable by other users (mode 0644), but it has 2 names (hard links)"),
        "{out}{err}"
    );

    let log = dir.0.join("start.log");
    let mut child = under_umask_022(site(&dir.0), &log)
        .arg("serve")
        .env("ADDR", format!("127.0.0.1:{}", free_port()))
        .spawn()
        .unwrap();
    let said = || std::fs::read_to_string(&log).unwrap_or_default();
    let named = wait(30, || said().contains("has 2 names"));
    let _ = child.kill();
    let _ = child.wait();
    let text = said();
    assert!(named, "{text}");
    assert!(text.contains("holds no SQLite database"), "{text}");
    assert_eq!(
        mode(&elsewhere),
        "0644",
        "the linked file was changed: {text}"
    );
    assert_eq!(
        mode(&linked),
        "0644",
        "the hard-linked file was changed: {text}"
    );
}

/// `DATABASE_URL` names the file SQLite opens as the driver reads the URL
/// (percent escapes decoded, dot segments removed), and every part of the
/// site names that same file: the start makes it and keeps it private,
/// `check` and `backup` read it. Here `a/../a/my%20site.db` is
/// `a/my site.db`; no `my%20site.db` is made beside it.
#[test]
fn the_database_url_names_the_file_the_driver_opens_for_every_command() {
    let dir = Dir::new("cli-url-path");
    let a = dir.0.join("a");
    std::fs::create_dir(&a).unwrap();
    set_mode(&a, 0o755);
    let url = format!("sqlite://{}/a/../a/my%20site.db", dir.0.display());
    let log = dir.0.join("server.log");
    let mut c = site(&dir.0);
    c.env("DATABASE_URL", &url);
    let server = Server::spawn(under_umask_022(c, &log));
    server.post("Riverbend", false);
    let files = files_with_modes(&a);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"my site.db"), "{files:?}");
    assert!(
        !names.iter().any(|n| n.contains("%20")),
        "a second database beside the real one: {files:?}"
    );
    for (name, m) in &files {
        assert_eq!(m, "0600", "{name} of {files:?}");
    }

    let (code, out, err) = run(site(&dir.0)
        .args(["check"])
        .env("DATABASE_URL", &url)
        .env("ADDR", format!("127.0.0.1:{}", free_port())));
    let file = format!("(the file {}/a/my site.db), schema ", dir.0.display());
    assert!(
        out.contains(&file) && !out.contains("readable by other users"),
        "check reads another file (exit {code}):\n{out}{err}"
    );
    let mut backup = site(&dir.0);
    backup.env("DATABASE_URL", &url).args(["backup", "bk.db"]);
    let (code, out, err) = run(&mut backup);
    assert_eq!(code, 0, "{out}{err}");
    server.stop();
    let copied = std::fs::read(dir.0.join("bk.db")).unwrap();
    assert!(
        copied
            .windows(b"Riverbend".len())
            .any(|w| w == b"Riverbend"),
        "the backup is not of the database the server wrote"
    );
    let files = files_with_modes(&a);
    assert!(files.iter().all(|(n, _)| !n.contains("%20")), "{files:?}");
}
