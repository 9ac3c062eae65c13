//! The policy's own tests: which files are the site's, which folders it
//! changes and which it only names, and what each finding says.

use super::*;
use std::os::unix::fs::PermissionsExt;

#[test]
fn the_sites_files_are_the_database_and_what_is_named_after_it() {
    let name = OsStr::new("site.db");
    for ours in [
        "site.db",
        "site.db-wal",
        "site.db-shm",
        "site.db-journal",
        "site.db.lock",
        "site.db.replaced-20261125T101500Z",
    ] {
        assert!(is_named_after(OsStr::new(ours), name), "{ours}");
    }
    for other in ["site.dbx", "site.d", "notes.txt", "other-site.db"] {
        assert!(!is_named_after(OsStr::new(other), name), "{other}");
    }
}

fn places<'a>(database: Option<&'a Path>, acme_cache: Option<&'a Path>) -> Places<'a> {
    Places {
        database,
        acme_cache,
        acme_folder: "ca.example_dir",
    }
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

fn set_mode(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

fn temp(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("citizen-{what}-{}", uuid::Uuid::new_v4()));
    make_folder(&dir).unwrap();
    dir
}

/// Under systemd's DynamicUser, the state directory is a link to
/// /var/lib/private/...: the folder is read through it (a link's own
/// mode is 0777), and a link inside the ACME cache is never followed
/// out of it, in the cache's folder or in the server's folder in it.
#[test]
fn the_folder_is_read_through_a_link_and_nothing_is_changed_through_one_inside() {
    let dir = temp("private");
    let real = dir.join("private/site");
    make_folder(&real).unwrap();
    set_mode(&dir, 0o755);
    let linked = dir.join("site");
    std::os::unix::fs::symlink(&real, &linked).unwrap();
    let outside = dir.join("outside.pem");
    std::fs::write(&outside, "not the site's").unwrap();
    set_mode(&outside, 0o644);
    std::fs::write(real.join("site.db"), "").unwrap();
    set_mode(&real.join("site.db"), 0o644);
    let cache = real.join("acme");
    make_folder(&cache.join("ca.example_dir")).unwrap();
    std::os::unix::fs::symlink(&outside, cache.join("linked.pem")).unwrap();
    std::os::unix::fs::symlink(&outside, cache.join("ca.example_dir/site.example.pem")).unwrap();

    let found = tighten(places(Some(&linked.join("site.db")), None));
    assert_eq!(
        found,
        [Finding::Tightened {
            path: linked.join("site.db"),
            was: 0o644,
            now: 0o600
        }]
    );
    assert_eq!(mode(&real), 0o700);
    assert_eq!(
        mode(&outside),
        0o644,
        "not followed through the cache's links"
    );
    assert!(tighten(places(Some(&linked.join("site.db")), None)).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A folder every user may write in (sticky as /tmp, or not) is never
/// changed, though it holds nothing but the site's files; the site's
/// files in it are.
#[test]
fn a_folder_every_user_may_write_in_is_left_as_it_is() {
    let dir = temp("private-shared");
    for (name, m, why) in [
        ("sticky", 0o1777, Sharing::Sticky),
        ("shared", 0o1770, Sharing::Sticky),
        ("open", 0o777, Sharing::EveryoneWrites),
    ] {
        let folder = dir.join(name);
        make_folder(&folder).unwrap();
        set_mode(&folder, m);
        let db = folder.join("site.db");
        make_file(&db).unwrap();
        set_mode(&db, 0o644);
        let found = tighten(places(Some(&db), None));
        assert_eq!(
            found,
            [
                Finding::Shared {
                    path: folder.clone(),
                    mode: m,
                    why: why.clone()
                },
                Finding::Tightened {
                    path: db.clone(),
                    was: 0o644,
                    now: 0o600
                }
            ],
            "{name}"
        );
        assert_eq!(mode(&folder), m, "{name}");
        // Every user's to write in: a warning, sticky or not.
        assert_eq!(found[0].is_warning(), m & 0o002 != 0, "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_systems_folders_are_never_the_sites() {
    for system in ["/", "/tmp", "/var/tmp", "/srv", "/home", "/tmp/../var/tmp/"] {
        assert!(is_system_folder(Path::new(system)), "{system}");
    }
    let dir = temp("private-system");
    assert!(!is_system_folder(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// In the ACME cache, the server's folder for its CA and the files it
/// writes there; another tool's folder and files, and the cache's
/// folder that holds them, are left as they are.
#[test]
fn in_the_acme_cache_only_the_servers_own_files_are_changed() {
    let dir = temp("private-acme");
    let cache = dir.join("cache");
    let ours = cache.join("ca.example_dir");
    let other = cache.join("other-tool");
    make_folder(&ours).unwrap();
    make_folder(&other).unwrap();
    for file in [
        ours.join("site.example.pem"),
        ours.join("account.json"),
        ours.join("notes.txt"),
        other.join("public.txt"),
    ] {
        std::fs::write(&file, "").unwrap();
        set_mode(&file, 0o644);
    }
    for folder in [&cache, &ours, &other] {
        set_mode(folder, 0o755);
    }
    let found = tighten(places(None, Some(&cache)));
    let tightened = |p: PathBuf, was| Finding::Tightened {
        path: p,
        was,
        now: was & !OTHERS,
    };
    let shared = |p: &Path, other: &str| Finding::Shared {
        path: p.to_path_buf(),
        mode: 0o755,
        why: Sharing::Holds(other.into()),
    };
    assert_eq!(
        found,
        [
            shared(&cache, "other-tool"),
            shared(&ours, "notes.txt"),
            tightened(ours.join("account.json"), 0o644),
            tightened(ours.join("site.example.pem"), 0o644),
        ]
    );
    for (p, m) in [
        (cache.clone(), 0o755),
        (other.clone(), 0o755),
        (other.join("public.txt"), 0o644),
        (ours.join("notes.txt"), 0o644),
    ] {
        assert_eq!(mode(&p), m, "{}", p.display());
    }
    // Without the other files, the folders are the site's.
    std::fs::remove_dir_all(&other).unwrap();
    std::fs::remove_file(ours.join("notes.txt")).unwrap();
    assert_eq!(
        tighten(places(None, Some(&cache))),
        [
            tightened(cache.clone(), 0o755),
            tightened(ours.clone(), 0o755)
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn each_finding_says_what_other_users_may_do_and_what_happens() {
    let tightened = Finding::Tightened {
        path: "data".into(),
        was: 0o755,
        now: 0o700,
    };
    assert_eq!(
        tightened.to_string(),
        "data was readable by other users (mode 0755): now 0700, its owner's alone"
    );
    let loose = Finding::Loose {
        path: "data/site.db".into(),
        mode: 0o622,
    };
    assert_eq!(loose.to_string(), "data/site.db is writable by other users (mode 0622): the server makes it 0600 (its owner's alone) at its start");
    assert!(!loose.is_warning());
    let kept = Finding::Kept {
        path: "data".into(),
        mode: 0o2775,
        why: "nobody (uid 65534) cannot change that (its owner is root (uid 0))".into(),
    };
    assert!(kept.is_warning());
    assert_eq!(
        kept.to_string(),
        "data is readable and writable by other users (mode 2775), and nobody (uid 65534) cannot change that (its owner is root (uid 0)): run chmod 700 data as its owner"
    );
    let sticky = Finding::Shared {
        path: "/tmp".into(),
        mode: 0o1777,
        why: Sharing::Sticky,
    };
    assert!(sticky.is_warning(), "any user may plant the -wal there");
    assert_eq!(sticky.to_string(), "/tmp is a folder every user may write in (mode 1777, the sticky bit set): it is left as it is; the site's files in it are made their owner's alone");
    let system = Finding::Shared {
        path: "/srv".into(),
        mode: 0o755,
        why: Sharing::System,
    };
    assert_eq!(system.to_string(), "/srv is a system folder, readable by other users (mode 0755): it is left as it is; the site's files in it are made their owner's alone");
}
