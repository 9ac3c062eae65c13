//! Intro requests: validation, store first, forward to a stand-in Notion
//! (wiremock) exactly once, on SQLite and on PostgreSQL.

use std::collections::HashMap;
use std::time::Duration;

use citizen_site::db::Db;
use citizen_site::intake::notion::NotionClient;
use citizen_site::intake::{forwarder, store, IntroForm, IntroRequest};

const MISSING_REQUIRED: &str =
    "Missing required fields: Please fill in the name and email address.";
use serde_json::{json, Value};
use sqlx::Row;

use crate::api::fake_notion::{FakeNotion, DB_ID};
use crate::api::helpers::{
    element, eventually, fresh_databases, spawn_app, spawn_app_with, tempdir::TempDir, visible_text,
};

fn valid() -> Value {
    json!({
        "name": "Riverbend Mutual Credit", "contactPerson": "Ana Lopes", "email": "ana@riverbend.example",
        "website": "https://riverbend.example", "description": "A mutual credit network of 40 shops.",
        "tags": ["Local currency", "Loyalty"],
    })
}

#[tokio::test]
async fn the_server_validates_every_field_and_names_it() {
    let app = spawn_app().await;
    let url = format!("{}/api/save-to-notion", app.base);
    // The message names the field; `fields` marks each text field to fix
    // with what to do (the form shows it at the field).
    let mark = |field: &str, message: &str| json!([{ "field": field, "message": message }]);
    let cases = [
        (
            json!({ "name": "", "email": "a@b.example" }),
            MISSING_REQUIRED.to_string(),
            mark("name", "Enter your community's name"),
        ),
        (
            json!({ "name": "X", "email": "" }),
            MISSING_REQUIRED.to_string(),
            mark("email", "Enter an email address"),
        ),
        (
            json!({ "name": " ", "email": "" }),
            MISSING_REQUIRED.to_string(),
            json!([
                { "field": "name", "message": "Enter your community's name" },
                { "field": "email", "message": "Enter an email address" },
            ]),
        ),
        (
            json!({ "name": "X", "email": "nope" }),
            "email: not a valid email address".into(),
            mark("email", "Enter an email address like name@example.org"),
        ),
        (
            json!({ "name": "X", "email": "a@b.example", "website": "ftp://x.example" }),
            "website: not a valid http(s) URL".into(),
            mark(
                "website",
                "Enter the website's full address, starting with https:// or http://",
            ),
        ),
        (
            json!({ "name": "X".repeat(201), "email": "a@b.example" }),
            "name: at most 200 characters".into(),
            mark("name", "Use at most 200 characters"),
        ),
    ];
    for (body, message, fields) in cases {
        let res = app.client.post(&url).json(&body).send().await.unwrap();
        assert_eq!(res.status(), 422, "{body}");
        let json: Value = res.json().await.unwrap();
        assert_eq!(
            json,
            json!({ "success": false, "error": message, "fields": fields })
        );
    }
    // A rule no text field breaks marks none.
    let res = app
        .client
        .post(&url)
        .json(&json!({ "name": "X", "email": "a@b.example", "tags": ["Gardening"] }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({ "success": false, "error": "tags: \"Gardening\" is not one of the tag options" })
    );
    let res = app
        .client
        .post(&url)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    assert!(res.json::<Value>().await.unwrap()["error"]
        .as_str()
        .unwrap()
        .starts_with("Invalid JSON"));
    let res = app
        .client
        .post(&url)
        .header("content-type", "text/plain")
        .body("hi")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 415);
    // Nothing bad was stored.
    assert_eq!(store::pending_count(&app.state.db).await.unwrap(), 0);
}

#[tokio::test]
async fn without_notion_keys_requests_are_stored_and_kept_pending() {
    for (kind, fresh) in fresh_databases(TempDir::new().path()).await {
        let app = spawn_app_with(|c| c.database_url = fresh.url.clone()).await;
        let res = app
            .client
            .post(format!("{}/api/save-to-notion", app.base))
            .json(&valid())
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "{kind}");
        assert_eq!(
            res.json::<Value>().await.unwrap(),
            json!({ "success": true })
        );
        assert_eq!(
            store::pending_count(&app.state.db).await.unwrap(),
            1,
            "{kind}"
        );
        // Stored as sent, markup as plain text.
        let (status, page, attempts) = store::status(&app.state.db, &first_id(&app.state.db).await)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (status.as_str(), page, attempts),
            ("pending", None, 0),
            "{kind}"
        );
        app.stop().await;
    }
}

async fn first_id(db: &Db) -> String {
    use sqlx::Row;
    sqlx::query("SELECT id FROM intro_requests")
        .fetch_one(&db.pool)
        .await
        .unwrap()
        .get::<String, _>("id")
}

#[tokio::test]
async fn the_form_works_without_javascript() {
    let app = spawn_app().await;
    let url = format!("{}/api/save-to-notion", app.base);
    let form = "name=Riverbend&contactPerson=Ana&email=ana%40riverbend.example&website=&description=Hi&tags=Loyalty&tags=Events";
    let res = app
        .client
        .post(&url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    assert_eq!(res.headers()["location"], "/contact?submitted=1");
    let (_, html) = app.get_text("/contact?submitted=1").await;
    let text = visible_text(element(&html, "main"));
    assert!(
        text.contains("Request submitted!")
            && text.contains("Thank you for your submission. We'll get back to you soon!"),
        "{text}"
    );
    assert_eq!(store::pending_count(&app.state.db).await.unwrap(), 1);

    // A refused post shows the message and keeps what was typed.
    let form = "name=%3Cb%3EMarkup%3C%2Fb%3E&email=not-an-email&description=Keep+me&tags=Events";
    let res = app
        .client
        .post(&url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
    let html = res.text().await.unwrap();
    let main = element(&html, "main");
    assert!(visible_text(main).contains("email: not a valid email address"));
    assert!(
        main.contains(r#"value="&lt;b&gt;Markup&lt;/b&gt;""#),
        "markup kept as text, escaped"
    );
    assert!(main.contains(">Keep me</textarea>"));
    assert!(
        main.contains(r#"checked="" value="Events""#),
        "ticked tags stay ticked"
    );
    // The field in error is marked, described by its own message and
    // focused as the page loads; the others are not marked.
    let input = |id: &str| {
        let at = main.find(&format!(r#"id="{id}""#)).expect(id);
        let start = main[..at].rfind('<').unwrap();
        &main[start..start + main[start..].find('>').unwrap()]
    };
    let email = input("contact-email");
    assert!(
        email.contains(r#"aria-invalid="true""#)
            && email.contains(r#"aria-describedby="contact-email-error""#)
            && email.contains("autofocus"),
        "{email}"
    );
    let error = &main[main.find(r#"id="contact-email-error""#).unwrap()..];
    assert!(visible_text(&error[..error.find("</p>").unwrap()])
        .contains("Error: Enter an email address like name@example.org"));
    assert!(!input("contact-name").contains("aria-invalid"));
    assert!(
        element(&html, "title").contains("Error: Request an Intro"),
        "the title says so first"
    );
    assert_eq!(store::pending_count(&app.state.db).await.unwrap(), 1);
}

#[tokio::test]
async fn notion_failing_twice_then_succeeding_gives_exactly_one_page() {
    let (notion, server) = FakeNotion::start(2).await;
    let app = spawn_app_with(|c| {
        c.notion_token = Some("secret_test".into());
        c.notion_database_id = Some(DB_ID.into());
        c.notion_api_base = server.uri();
    })
    .await;
    let res = app
        .client
        .post(format!("{}/api/save-to-notion", app.base))
        .json(&valid())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let db = app.state.db.clone();
    assert!(
        eventually(15, || async {
            store::pending_count(&db).await.unwrap() == 0
        })
        .await,
        "forwarded"
    );
    assert_eq!(
        *notion.creates.lock().unwrap(),
        3,
        "two failed tries, then one that worked"
    );
    let pages = notion.pages.lock().unwrap().clone();
    assert_eq!(pages.len(), 1);
    let p = &pages[0]["properties"];
    assert_eq!(pages[0]["parent"]["database_id"], DB_ID);
    assert_eq!(
        p["Name"]["title"][0]["text"]["content"],
        "Riverbend Mutual Credit"
    );
    assert_eq!(p["Email"]["email"], "ana@riverbend.example");
    assert_eq!(p["Website"]["url"], "https://riverbend.example");
    assert_eq!(
        p["Tags"]["multi_select"],
        json!([{ "name": "Loyalty" }, { "name": "Local currency" }])
    );
    app.stop().await;
}

#[tokio::test]
async fn notion_down_throughout_leaves_the_request_pending_and_a_restart_forwards_it() {
    for (kind, fresh) in fresh_databases(TempDir::new().path()).await {
        let url = &fresh.url;
        let (down, down_server) = FakeNotion::start(usize::MAX).await;
        let config = |base: String, url: String| {
            move |c: &mut citizen_site::config::Config| {
                c.database_url = url;
                c.notion_token = Some("secret_test".into());
                c.notion_database_id = Some(DB_ID.into());
                c.notion_api_base = base;
            }
        };
        let app = spawn_app_with(config(down_server.uri(), url.clone())).await;
        let res = app
            .client
            .post(format!("{}/api/save-to-notion", app.base))
            .json(&valid())
            .send()
            .await
            .unwrap();
        assert_eq!(
            res.status(),
            200,
            "{kind}: the visitor is told it worked: it is stored"
        );
        let creates = down.creates.clone();
        assert!(
            eventually(10, || async { *creates.lock().unwrap() >= 3 }).await,
            "{kind}: three tries"
        );
        assert_eq!(
            store::pending_count(&app.state.db).await.unwrap(),
            1,
            "{kind}: still pending, not dropped"
        );
        app.stop().await;

        // Notion is back; a new process on the same database forwards it.
        let (up, up_server) = FakeNotion::start(0).await;
        let db = Db::connect_lazy(url).unwrap();
        // Make the backed-off retry due now instead of in a minute.
        sqlx::query("UPDATE intro_requests SET next_attempt_at = 0")
            .execute(&db.pool)
            .await
            .unwrap();
        let app = spawn_app_with(config(up_server.uri(), url.clone())).await;
        let state_db = app.state.db.clone();
        assert!(
            eventually(10, || async {
                store::pending_count(&state_db).await.unwrap() == 0
            })
            .await,
            "{kind}: forwarded after restart"
        );
        assert_eq!(up.pages.lock().unwrap().len(), 1, "{kind}");
        app.stop().await;
    }
}

#[tokio::test]
async fn two_forwarders_on_one_database_forward_each_request_exactly_once() {
    for (kind, fresh) in fresh_databases(TempDir::new().path()).await {
        let url = &fresh.url;
        let db = Db::connect_lazy(url).unwrap();
        db.migrate().await.unwrap();
        let mut ids = Vec::new();
        for i in 0..40 {
            let form = IntroForm {
                name: format!("Community {i}"),
                email: format!("c{i}@example.org"),
                ..Default::default()
            };
            let req = IntroRequest::parse(form, &[]).unwrap();
            ids.push(store::insert(&db, &req).await.unwrap());
        }
        let (notion, server) = FakeNotion::start(0).await;
        let client = NotionClient::new(&server.uri(), "secret_test", DB_ID);
        let (a, ta) = forwarder::spawn(
            Db::connect_lazy(url).unwrap(),
            client.clone(),
            "worker-a".into(),
            forwarder::LEASE,
            Default::default(),
        );
        let (b, tb) = forwarder::spawn(
            Db::connect_lazy(url).unwrap(),
            client,
            "worker-b".into(),
            forwarder::LEASE,
            Default::default(),
        );
        assert!(
            eventually(30, || async {
                store::pending_count(&db).await.unwrap() == 0
            })
            .await,
            "{kind}: all forwarded"
        );
        a.stop();
        b.stop();
        let _ = tokio::join!(ta, tb);
        let mut created = notion.request_ids();
        created.sort();
        ids.sort();
        assert_eq!(created, ids, "{kind}: every request once, none twice");
        let counts: HashMap<String, usize> = created.iter().fold(HashMap::new(), |mut m, id| {
            *m.entry(id.clone()).or_default() += 1;
            m
        });
        assert!(counts.values().all(|n| *n == 1));
        let _ = Duration::ZERO;
    }
}

#[tokio::test]
async fn stored_tags_that_cannot_be_read_are_logged_counted_and_the_request_still_goes_to_notion() {
    let dir = TempDir::new();
    let url = format!("sqlite://{}", dir.path().join("tags.db").display());
    let db = Db::connect_lazy(&url).unwrap();
    db.migrate().await.unwrap();
    let form = IntroForm {
        name: "Canal Makers".into(),
        email: "jo@canal.example".into(),
        ..Default::default()
    };
    let id = store::insert(&db, &IntroRequest::parse(form, &[]).unwrap())
        .await
        .unwrap();
    sqlx::query("UPDATE intro_requests SET tags = '[\"Loyalty\",' WHERE id = $1")
        .bind(&id)
        .execute(&db.pool)
        .await
        .unwrap();

    let (notion, server) = FakeNotion::start(0).await;
    let counted = prometheus_client::metrics::counter::Counter::<u64>::default();
    let (handle, task) = forwarder::spawn(
        db.clone(),
        NotionClient::new(&server.uri(), "secret_test", DB_ID),
        "w".into(),
        forwarder::LEASE,
        counted.clone(),
    );
    assert!(
        eventually(10, || async {
            store::pending_count(&db).await.unwrap() == 0
        })
        .await,
        "forwarded all the same"
    );
    handle.stop();
    let _ = task.await;
    let pages = notion.pages.lock().unwrap().clone();
    assert_eq!(
        pages[0]["properties"]["Name"]["title"][0]["text"]["content"],
        "Canal Makers"
    );
    assert_eq!(pages[0]["properties"]["Tags"]["multi_select"], json!([]));
    assert_eq!(counted.get(), 1);
    let kept: String = sqlx::query("SELECT tags FROM intro_requests WHERE id = $1")
        .bind(&id)
        .fetch_one(&db.pool)
        .await
        .unwrap()
        .get("tags");
    assert_eq!(kept, "[\"Loyalty\",", "the row keeps what was stored");
}
