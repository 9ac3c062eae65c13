//! The team table behind /about, on SQLite and PostgreSQL.

use citizen_site::team::{self, NewMember};

use crate::api::helpers::{
    element, fresh_databases, spawn_app_with, tempdir::TempDir, visible_text,
};

fn member(name: &str, image: Option<&str>) -> NewMember {
    NewMember {
        name: name.into(),
        image_url: image.map(Into::into),
        ..Default::default()
    }
}

#[tokio::test]
async fn team_is_ordered_by_name_with_empty_strings_and_the_image_rule() {
    let dir = TempDir::new();
    for (kind, fresh) in fresh_databases(dir.path()).await {
        let app = spawn_app_with(|c| c.database_url = fresh.url.clone()).await;
        let db = &app.state.db;
        let mut zoe = member("Zoe Park", Some("https://photos.example/zoe.png"));
        zoe.role = Some("Engineering".into());
        zoe.linkedin = Some("https://www.linkedin.com/in/zoe".into());
        team::import(
            db,
            &[
                zoe,
                member("adam Ruiz", Some("🌱")),
                member("Bea Lind", None),
            ],
            true,
        )
        .await
        .unwrap();

        let list = team::list(db).await.unwrap();
        let names: Vec<&str> = list.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            ["adam Ruiz", "Bea Lind", "Zoe Park"],
            "{kind}: by name"
        );
        let bea = &list[1];
        assert_eq!(
            (
                bea.role.as_str(),
                bea.bio.as_str(),
                bea.linkedin.as_str(),
                bea.x_profile.as_str(),
                bea.image_url.as_str()
            ),
            ("", "", "", "", ""),
            "{kind}: missing values are empty strings"
        );

        // Read now rather than at the next refresh (caching.rs checks that bound).
        app.state.refresh_team().await;
        let (status, html) = app.get_text("/about").await;
        assert_eq!(status, 200);
        let main = element(&html, "main");
        let text = visible_text(main);
        let (a, b, z) = (
            text.find("adam Ruiz").unwrap(),
            text.find("Bea Lind").unwrap(),
            text.find("Zoe Park").unwrap(),
        );
        assert!(a < b && b < z, "{kind}: grid in name order");
        // An http image is a photo; anything else is shown as text.
        assert!(
            main.contains(r#"src="https://photos.example/zoe.png""#),
            "{kind}: photo"
        );
        assert!(
            !main.contains(r#"src="🌱""#) && text.contains("🌱"),
            "{kind}: emoji as text"
        );
        assert!(main.contains(r#"href="https://www.linkedin.com/in/zoe""#));

        // Updating by name, then removing.
        team::import(db, &[member("Bea Lind", Some("B"))], false)
            .await
            .unwrap();
        assert_eq!(team::list(db).await.unwrap().len(), 3);
        assert!(team::remove(db, "Bea Lind").await.unwrap());
        assert!(!team::remove(db, "Bea Lind").await.unwrap());
        assert_eq!(team::list(db).await.unwrap().len(), 2);
        app.stop().await;
    }
}

#[tokio::test]
async fn a_database_failure_shows_an_empty_team_and_the_site_keeps_serving() {
    // Nothing listens on port 1: every query fails.
    let app =
        spawn_app_with(|c| c.database_url = "postgres://postgres@127.0.0.1:1/none".into()).await;
    let (status, html) = app.get_text("/about").await;
    assert_eq!(status, 200);
    let text = visible_text(element(&html, "main"));
    assert!(text.contains("Meet Our Team") && !text.contains("Loading team data..."));
    assert!(!text.contains("Amina Diallo"), "no members");
    assert_eq!(app.get_text("/").await.0, 200);
}

#[test]
fn the_team_cli_imports_lists_and_removes() {
    let dir = TempDir::new();
    let file = dir.path().join("team.json");
    std::fs::write(
        &file,
        r#"[{"name": "Zoe"}, {"name": "adam", "role": "Design"}]"#,
    )
    .unwrap();
    let db = format!("sqlite://{}/cli.db", dir.path().display());
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_citizen-site"))
            .args(args)
            .env("DATABASE_URL", &db)
            .env("RUST_BACKTRACE", "0")
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // No database yet: --create makes it, as a team set up before the
    // first start needs.
    let (ok, out, err) = run(&[
        "team",
        "import",
        file.to_str().unwrap(),
        "--replace",
        "--create",
    ]);
    assert!(ok && out.contains("imported 2"), "{out}{err}");
    let (ok, out, _) = run(&["team", "list"]);
    assert!(ok);
    assert!(
        out.find("adam").unwrap() < out.find("Zoe").unwrap(),
        "{out}"
    );
    let (ok, _, _) = run(&["team", "remove", "Zoe"]);
    assert!(ok);
    let (ok, _, err) = run(&["team", "remove", "Zoe"]);
    assert!(!ok && err.contains("no team member named \"Zoe\""), "{err}");
    std::fs::write(&file, r#"[{"name": ""}]"#).unwrap();
    let (ok, _, err) = run(&["team", "import", file.to_str().unwrap()]);
    assert!(!ok && err.contains("has no name"), "{err}");
}

#[tokio::test]
async fn a_fresh_database_shows_no_invented_people_unless_the_sample_is_asked_for() {
    let dir = TempDir::new();
    for (kind, fresh) in fresh_databases(dir.path()).await {
        let start = |sample_team: bool| {
            let url = fresh.url.clone();
            spawn_app_with(move |c| {
                c.database_url = url;
                c.sample_team = sample_team;
            })
        };
        // `serve`'s default: the spec's empty list.
        let app = start(false).await;
        assert!(
            team::list(&app.state.db).await.unwrap().is_empty(),
            "{kind}: serve starts with an empty team"
        );
        let (status, html) = app.get_text("/about").await;
        assert_eq!(status, 200);
        let text = visible_text(element(&html, "main"));
        assert!(
            text.contains("Meet Our Team") && !text.contains("Amina Diallo"),
            "{kind}: {text}"
        );
        app.stop().await;

        // `dev` (or --sample-team) on the same, still empty, database: the sample.
        let app = start(true).await;
        let names: Vec<String> = team::list(&app.state.db)
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.name)
            .collect();
        assert_eq!(
            names,
            [
                "Amina Diallo",
                "Jonas Verbeke",
                "Lea Martens",
                "Tomas Reyes"
            ],
            "{kind}"
        );
        // A real team is never mixed with the sample.
        team::import(&app.state.db, &[member("Rosa Real", None)], true)
            .await
            .unwrap();
        app.stop().await;
        let app = start(true).await;
        let names: Vec<String> = team::list(&app.state.db)
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.name)
            .collect();
        assert_eq!(names, ["Rosa Real"], "{kind}");
        app.stop().await;
    }
}

/// Two servers starting at once on one empty database (a handover, or
/// replicas) add the sample team once between them.
#[tokio::test]
async fn servers_seeding_the_sample_at_once_add_it_once() {
    let dir = TempDir::new();
    for (kind, fresh) in fresh_databases(dir.path()).await {
        // Separate pools, as separate processes have.
        let mut dbs = Vec::new();
        for _ in 0..6 {
            let db = citizen_site::db::Db::connect_lazy(&fresh.url).unwrap();
            db.migrate().await.unwrap();
            dbs.push(db);
        }
        let mut seeding = tokio::task::JoinSet::new();
        for db in &dbs {
            let db = db.clone();
            seeding.spawn(async move { team::seed_sample(&db).await });
        }
        let added: Vec<usize> = seeding
            .join_all()
            .await
            .into_iter()
            .map(|r| r.unwrap_or_else(|e| panic!("{kind}: {e}")))
            .collect();
        let members = team::list(&dbs[0]).await.unwrap();
        assert_eq!(members.len(), 4, "{kind}: {members:?}");
        assert_eq!(
            added.iter().filter(|n| **n > 0).count(),
            1,
            "{kind}: one seeder adds the sample, the others find it: {added:?}"
        );
        for db in dbs {
            db.close().await;
        }
    }
}
