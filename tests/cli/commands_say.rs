//! What the commands say when an operator's second hour goes wrong (issue
//! 67): a team member updated by the fields given, never emptied by the
//! ones left out; a mistyped database named, never made; a file that is
//! missing or cannot be written named with what to do, never Rust's
//! `(os error 2)`.

use std::path::Path;
use std::process::Command;

use super::{run, site, site_database, snapshot, BIN};
use crate::support::{needs, Dir};

/// `team list --json`'s member named `name`.
fn member(dir: &Path, name: &str) -> serde_json::Value {
    let (code, out, err) = run(site(dir).args(["team", "list", "--json"]));
    assert_eq!(code, 0, "{err}");
    let all: serde_json::Value = serde_json::from_str(&out).unwrap();
    all.as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {out}"))
        .clone()
}

#[test]
fn team_add_changes_only_the_fields_given_and_says_which_changed() {
    let dir = Dir::new("cli-team-update");
    site_database(&dir.0, &[], false);
    let team = |args: &[&str]| run(site(&dir.0).arg("team").args(args));

    let (code, out, err) = team(&[
        "add",
        "--name",
        "Ana",
        "--role",
        "Design",
        "--image-url",
        "🌱",
        "--linkedin",
        "https://www.linkedin.com/in/ana",
    ]);
    assert_eq!((code, out.trim()), (0, "added Ana"), "{err}");

    // Her role changes; her photo and profile stay.
    let (code, out, err) = team(&["add", "--name", "Ana", "--role", "Engineering"]);
    assert_eq!((code, out.trim()), (0, "updated Ana (role)"), "{err}");
    let ana = member(&dir.0, "Ana");
    assert_eq!(ana["role"], "Engineering");
    assert_eq!(ana["image_url"], "🌱");
    assert_eq!(ana["linkedin"], "https://www.linkedin.com/in/ana");

    // The same value again changes nothing, and says so.
    let (code, out, err) = team(&["add", "--name", "Ana", "--role", "Engineering"]);
    assert_eq!((code, out.trim()), (0, "unchanged Ana"), "{err}");

    // Two fields at once, one of them the same as before.
    let (code, out, err) = team(&[
        "add",
        "--name",
        "Ana",
        "--role",
        "Engineering",
        "--bio",
        "Builds the wallet.",
    ]);
    assert_eq!((code, out.trim()), (0, "updated Ana (bio)"), "{err}");

    // Emptied on purpose, by the table's names or the flags' spellings.
    let (code, out, err) = team(&[
        "add",
        "--name",
        "Ana",
        "--clear",
        "image-url",
        "--clear",
        "linkedin",
    ]);
    assert_eq!(
        (code, out.trim()),
        (0, "updated Ana (linkedin, image_url)"),
        "{err}"
    );
    let ana = member(&dir.0, "Ana");
    assert_eq!(ana["image_url"], "");
    assert_eq!(ana["linkedin"], "");
    assert_eq!(ana["role"], "Engineering");
    assert_eq!(ana["bio"], "Builds the wallet.");

    // Bad input changes nothing: an unknown field, a field given and
    // cleared at once.
    let before = snapshot(&dir.0.join("data"));
    let (code, out, err) = team(&["add", "--name", "Ana", "--clear", "photo"]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("photo"), "{err}");
    for field in ["role", "bio", "linkedin", "x_profile", "image_url"] {
        assert!(err.contains(field), "{field} not listed: {err}");
    }
    let (code, out, err) = team(&["add", "--name", "Ana", "--role", "Ops", "--clear", "role"]);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("--role")
            && err.contains("--clear role")
            && err.contains("nothing was changed"),
        "{err}"
    );
    assert_eq!(snapshot(&dir.0.join("data")), before, "nothing changed");
    assert_eq!(member(&dir.0, "Ana")["role"], "Engineering");

    // An import follows the same rule: a field the file leaves out is
    // kept, an empty one ("" or null) is cleared; it says what it did.
    std::fs::write(
        dir.0.join("team.json"),
        r#"[{"name": "Ana", "bio": null, "x_profile": "https://x.com/ana"}, {"name": "Jo", "role": "Operations"}]"#,
    )
    .unwrap();
    let (code, out, err) = team(&["import", "team.json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        "imported 2 member(s): 1 added, 1 updated, 0 unchanged",
        "{err}"
    );
    // The same file again changes nothing, and says so.
    let (code, out, err) = team(&["import", "team.json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        "imported 2 member(s): 0 added, 0 updated, 2 unchanged",
        "{err}"
    );
    let ana = member(&dir.0, "Ana");
    assert_eq!(ana["role"], "Engineering", "kept: the file leaves it out");
    assert_eq!(ana["bio"], "", "cleared: null in the file");
    assert_eq!(ana["x_profile"], "https://x.com/ana");
    assert_eq!(member(&dir.0, "Jo")["role"], "Operations");

    // --replace removes whoever the file leaves out, and says how many.
    std::fs::write(dir.0.join("team.json"), r#"[{"name": "Jo"}]"#).unwrap();
    let (code, out, err) = team(&["import", "team.json", "--replace"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        "imported 1 member(s): 0 added, 0 updated, 1 unchanged; 1 removed",
        "{err}"
    );
    assert_eq!(member(&dir.0, "Jo")["role"], "Operations", "kept");
}

#[test]
fn a_writing_command_on_a_mistyped_database_makes_nothing_and_names_the_path_and_setting() {
    let dir = Dir::new("cli-typo-write");
    std::fs::write(dir.0.join("team.json"), r#"[{"name": "Jo"}]"#).unwrap();
    let before = snapshot(&dir.0);
    let typo = "sqlite://data/citizen-sit.db";
    for command in [
        &["team", "add", "--name", "Ana", "--role", "Engineering"][..],
        &["team", "import", "team.json"],
        &["team", "remove", "Ana"],
        &["intro", "release", "5f0c2a8e-0000-4000-8000-000000000000"],
        &["tls", "rotate-tickets"],
        &["backup", "bk.db"],
    ] {
        let (code, out, err) = run(site(&dir.0).args(command).env("DATABASE_URL", typo));
        assert_eq!(code, 1, "{command:?}: {out}{err}");
        assert!(
            err.contains("no database at data/citizen-sit.db")
                && err.contains("DATABASE_URL")
                && !err.contains("--database-url"),
            "{command:?}: {err}"
        );
        let offers = command[0] == "team" && command[1] != "remove";
        assert_eq!(
            err.contains("--create"),
            offers,
            "{command:?} offers --create where it has it: {err}"
        );
        assert_eq!(snapshot(&dir.0), before, "{command:?} made something");
        assert!(!dir.0.join("data").exists(), "{command:?} made data/");
    }
    // Given on the command line, the setting is named as written.
    let (code, _, err) =
        run(site(&dir.0).args(["team", "--database-url", typo, "add", "--name", "Ana"]));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("no database at data/citizen-sit.db") && err.contains("--database-url"),
        "{err}"
    );
    assert_eq!(snapshot(&dir.0), before);

    // Asked for, it is made, and said so.
    let (code, out, err) = run(site(&dir.0)
        .args(["team", "add", "--create", "--name", "Ana"])
        .env("DATABASE_URL", typo));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.trim(), "added Ana");
    assert!(
        err.contains("made a new database at data/citizen-sit.db"),
        "{err}"
    );
    assert!(dir.0.join("data/citizen-sit.db").is_file());
    // Once there, --create changes nothing more, and says nothing of it.
    let (code, out, err) = run(site(&dir.0)
        .args(["team", "import", "--create", "team.json"])
        .env("DATABASE_URL", typo));
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("made"), "{err}");
}

/// No `(os error N)`, one `error:` line, naming `path`.
fn said_in_words(what: &str, err: &str, path: &str) {
    assert!(!err.contains("os error"), "{what}: {err}");
    assert!(err.contains(path), "{what}: {path} not named: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{what}: one line: {err}");
}

#[test]
fn a_file_that_is_missing_or_cannot_be_written_is_named_with_what_to_do() {
    let dir = Dir::new("cli-files");
    site_database(&dir.0, &["Riverbend"], false);
    let before = snapshot(&dir.0);

    // restore: a backup that is not there.
    let (code, out, err) = run(site(&dir.0).args(["restore", "backups/missing.db"]));
    assert_eq!(code, 1, "{out}");
    said_in_words("restore", &err, "backups/missing.db");
    assert!(
        err.contains("no such file") && err.contains("check the path"),
        "{err}"
    );
    assert!(
        err.contains(&dir.0.display().to_string()),
        "relative to: {err}"
    );
    // Under --json, the same words as JSON.
    let (code, out, _) = run(site(&dir.0).args(["restore", "backups/missing.db", "--json"]));
    assert_eq!(code, 1);
    let said: serde_json::Value = serde_json::from_str(&out).unwrap();
    let error = said["error"].as_str().unwrap();
    said_in_words("restore --json", error, "backups/missing.db");

    // backup: into a folder that is not there.
    let (code, out, err) = run(site(&dir.0).args(["backup", "backups/today.db"]));
    assert_eq!(code, 1, "{out}");
    said_in_words("backup", &err, "backups/today.db");
    assert!(err.contains("mkdir -p backups"), "{err}");
    let (code, out, _) = run(site(&dir.0).args(["backup", "backups/today.db", "--json"]));
    assert_eq!(code, 1);
    let said: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        said["error"].as_str().unwrap().contains("mkdir -p backups"),
        "{out}"
    );

    // team import: a file that is not there, or a folder.
    let (code, out, err) = run(site(&dir.0).args(["team", "import", "team.jsn"]));
    assert_eq!(code, 1, "{out}");
    said_in_words("team import", &err, "team.jsn");
    assert!(
        err.contains("no such file") && err.contains("check the path"),
        "{err}"
    );
    let (code, _, err) = run(site(&dir.0).args(["team", "import", "data"]));
    assert_eq!(code, 1);
    said_in_words("team import of a folder", &err, "data");
    assert!(err.contains("a folder, not a file"), "{err}");

    assert_eq!(snapshot(&dir.0), before, "nothing was written");

    // pack: OUT in a folder that is not there, said before any build (no
    // checkout is needed to hear it).
    let (code, out, err) = run(site(&dir.0).args(["pack", "releases/citizen-site"]));
    assert_eq!(code, 1, "{out}");
    said_in_words("pack", &err, "releases/citizen-site");
    assert!(err.contains("mkdir -p releases"), "{err}");

    // And in a folder this user may not write (as `nobody` when root).
    needs("setpriv", "util-linux");
    use std::os::unix::fs::PermissionsExt;
    let locked = dir.0.join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o777)).unwrap();
    let bin = dir.0.join("citizen-site");
    std::fs::copy(BIN, &bin).unwrap();
    // SAFETY: getuid(2) has no preconditions.
    let root = unsafe { libc::getuid() } == 0;
    let mut c = if root {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin);
        c
    } else {
        std::process::Command::new(&bin)
    };
    let (code, out, err) = run(c
        .current_dir(&dir.0)
        .env("RUST_BACKTRACE", "0")
        .args(["pack", "locked/citizen-site"]));
    assert_eq!(code, 1, "{out}");
    said_in_words("pack as another user", &err, "locked/citizen-site");
    assert!(
        err.contains("not writable by") && err.contains("uid "),
        "{err}"
    );
    assert!(!locked.join("citizen-site").exists());
}

#[test]
fn restore_onto_a_missing_database_is_refused_unless_asked_with_create() {
    let dir = Dir::new("cli-restore-create");
    site_database(&dir.0, &["Riverbend"], false);
    let (code, _, err) = run(site(&dir.0).args(["backup", "good.db"]));
    assert_eq!(code, 0, "{err}");
    let before = snapshot(&dir.0);

    // A mistyped DATABASE_URL: named as written, and nothing is made.
    let typo = "sqlite://new/citizen-sit.db";
    let (code, out, err) = run(site(&dir.0)
        .args(["restore", "good.db"])
        .env("DATABASE_URL", typo));
    assert_eq!(code, 1, "{out}{err}");
    said_in_words("restore onto a typo", &err, "new/citizen-sit.db");
    assert!(
        err.contains("no database at new/citizen-sit.db (is DATABASE_URL right?)")
            && err.contains("--create puts the backup there"),
        "{err}"
    );
    assert!(!dir.0.join("new").exists(), "made the folder");
    assert_eq!(snapshot(&dir.0), before, "nothing was written");

    // The same as JSON under --json, on the command line as written.
    let (code, out, err) =
        run(site(&dir.0).args(["restore", "--database-url", typo, "good.db", "--json"]));
    assert_eq!(code, 1, "{err}");
    let said: serde_json::Value = serde_json::from_str(&out).unwrap();
    let error = said["error"].as_str().unwrap();
    assert!(
        error.contains("(is --database-url right?)") && error.contains("--create"),
        "{error}"
    );
    assert!(!dir.0.join("new").exists(), "made the folder");

    // On a new machine, asked for: the backup is put there.
    let (code, out, err) = run(site(&dir.0)
        .args(["restore", "--create", "good.db"])
        .env("DATABASE_URL", typo));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.starts_with("restored new/citizen-sit.db from good.db: 1 intro request(s)"),
        "{out}"
    );
    let (code, out, err) = run(site(&dir.0)
        .args(["intro", "list", "--json"])
        .env("DATABASE_URL", typo));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Riverbend"), "{out}");
}

#[test]
fn clear_given_twice_for_a_field_clears_it_once() {
    let dir = Dir::new("cli-clear-twice");
    site_database(&dir.0, &[], false);
    let team = |args: &[&str]| run(site(&dir.0).arg("team").args(args));
    let (code, _, err) = team(&["add", "--name", "Ana", "--bio", "Builds the wallet."]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = team(&["add", "--name", "Ana", "--clear", "bio", "--clear", "bio"]);
    assert_eq!((code, out.trim()), (0, "updated Ana (bio)"), "{err}");
    assert_eq!(member(&dir.0, "Ana")["bio"], "");
    // Spelled both ways, still one field.
    let (code, out, err) = team(&[
        "add",
        "--name",
        "Ana",
        "--clear",
        "image-url",
        "--clear",
        "image_url",
    ]);
    assert_eq!((code, out.trim()), (0, "unchanged Ana"), "{err}");
}

#[test]
fn an_import_naming_a_member_twice_or_replacing_the_team_with_nobody_changes_nothing() {
    let dir = Dir::new("cli-import-refused");
    site_database(&dir.0, &[], false);
    let team = |args: &[&str]| run(site(&dir.0).arg("team").args(args));
    let (code, _, err) = team(&["add", "--name", "Ana", "--role", "Design"]);
    assert_eq!(code, 0, "{err}");
    std::fs::write(
        dir.0.join("team.json"),
        r#"[{"name": "Ana", "role": "Engineering"}, {"name": "Jo"}, {"name": "Ana", "role": "Ops"}]"#,
    )
    .unwrap();
    std::fs::write(dir.0.join("nobody.json"), "[]").unwrap();
    let before = snapshot(&dir.0);

    let (code, out, err) = team(&["import", "team.json"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains("team.json")
            && err.contains("members 1 and 3")
            && err.contains("\"Ana\"")
            && err.contains("nothing was changed"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    let (code, out, err) = team(&["import", "nobody.json", "--replace"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains("nobody.json")
            && err.contains("team remove")
            && err.contains("nothing was changed"),
        "{err}"
    );
    assert_eq!(snapshot(&dir.0), before, "nothing was changed");
    assert_eq!(member(&dir.0, "Ana")["role"], "Design");
}

#[test]
fn pack_into_a_folder_that_takes_no_file_is_refused_before_any_build() {
    let dir = Dir::new("cli-pack-pseudo");
    // Not a checkout: a refusal about OUT comes before pack looks for one,
    // let alone builds.
    for out in ["/sys/citizen-site", "/proc/citizen-site"] {
        let (code, stdout, err) = run(site(&dir.0).args(["pack", out]));
        assert_eq!(code, 1, "{out}: {stdout}");
        said_in_words("pack", &err, out);
        assert!(
            err.starts_with(&format!("error: cannot write {out}: ")),
            "{err}"
        );
        assert!(!err.contains("checkout"), "{err}");
    }
}

/// A backup the system refuses to make (/sys takes no new file, /proc has
/// no such folder), or named as a folder, said in the tool's words: the
/// path, why, what to do, and that nothing was written.
#[test]
fn a_backup_the_system_refuses_or_a_folder_named_is_said_in_words() {
    let dir = Dir::new("cli-backup-refused");
    site_database(&dir.0, &["Riverbend"], false);
    let before = snapshot(&dir.0);
    for dest in ["/sys/x.db", "/proc/x.db"] {
        let (code, out, err) = run(site(&dir.0).args(["backup", dest]));
        assert_eq!(code, 1, "{out}");
        said_in_words("backup", &err, dest);
        assert!(err.contains("nothing was written"), "{err}");
    }
    let (code, out, err) = run(site(&dir.0).args(["backup", "data"]));
    assert_eq!(code, 1, "{out}");
    said_in_words("backup into a folder", &err, "data");
    assert!(
        err.contains("data is a folder") && err.contains("citizen-site backup data/"),
        "{err}"
    );
    assert!(!err.contains("never overwrites a file"), "{err}");
    assert_eq!(snapshot(&dir.0), before, "nothing was written");
}

/// Two restores in the same second (the clock frozen by faketime) keep
/// both databases they replaced: the second never overwrites the first
/// one's kept copy, which alone holds what was written before it.
#[test]
fn two_restores_in_one_second_keep_both_databases_they_replaced() {
    needs("faketime", "faketime");
    let dir = Dir::new("cli-restore-twice");
    site_database(&dir.0, &["Riverbend"], false);
    let (code, _, err) = run(site(&dir.0).args(["backup", "good.db"]));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(site(&dir.0).args(["team", "add", "--name", "Zed"]));
    assert_eq!(code, 0, "{err}");
    for round in ["first", "second"] {
        let (code, out, err) = run(Command::new("faketime")
            .arg("2026-11-29 01:00:00")
            .arg(BIN)
            .args(["restore", "good.db"])
            .current_dir(&dir.0)
            .env_remove("DATABASE_URL")
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1"));
        assert_eq!(code, 0, "{round} restore: {out}{err}");
    }
    let kept: Vec<String> = std::fs::read_dir(dir.0.join("data"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("citizen-site.db.replaced-") && !n.contains("-wal"))
        .collect();
    assert_eq!(kept.len(), 2, "two kept copies: {kept:?}");
    let with_zed = kept.iter().filter(|k| {
        let (_, out, _) = run(site(&dir.0)
            .args(["team", "list", "--json"])
            .env("DATABASE_URL", format!("sqlite://data/{k}")));
        out.contains("\"Zed\"")
    });
    assert_eq!(with_zed.count(), 1, "Zed is kept in one of {kept:?}");
}

/// An OUT whose name is near the file system's limit (255 bytes) is not
/// refused for the folder check's own trial file: pack goes on to look
/// for a checkout (this folder is none).
#[test]
fn pack_to_a_long_name_is_not_refused_for_its_trial_file() {
    let dir = Dir::new("cli-pack-long");
    let out = "a".repeat(240);
    let (code, stdout, err) = run(site(&dir.0).args(["pack", &out]));
    assert_eq!(code, 1, "{stdout}");
    assert!(!err.contains("takes no new file"), "{err}");
    assert!(err.contains("checkout"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&dir.0).unwrap().collect();
    assert!(left.is_empty(), "pack left {left:?}");
}
