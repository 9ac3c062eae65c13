//! The fleet's coordination in the database, on SQLite and PostgreSQL: the
//! order lease by the database's clock with a generation, the writes an
//! order makes fenced by it, challenge rows that belong to their order,
//! certificates replaced by compare-and-swap, the shared back-off and the
//! members' rows. (`tests/fleet.rs` makes the same faults happen to real
//! processes.)

use std::time::Duration;

use citizen_site::db::Db;
use citizen_site::tls::store::{self, Challenge, Member, Source, StoredCert};

use crate::api::helpers::{fresh_databases, tempdir::TempDir};

const LONG: Duration = Duration::from_secs(60);

async fn migrated(url: &str) -> Db {
    let db = Db::connect_lazy(url).unwrap();
    db.migrate().await.unwrap();
    db
}

fn answer(name: &str, answer: &str, generation: i64) -> Challenge {
    Challenge {
        kind: "tls-alpn-01".into(),
        name: name.into(),
        answer: answer.into(),
        generation,
    }
}

fn cert(serial: &str) -> StoredCert {
    StoredCert {
        pem: format!("pem {serial}"),
        serial: serial.into(),
        not_before: 1,
        not_after: 2,
    }
}

#[tokio::test]
async fn a_lease_taken_over_fences_off_every_write_of_the_order_before_it() {
    for (kind, fresh) in fresh_databases(TempDir::new().path()).await {
        let db = migrated(&fresh.url).await;
        // a holds; b cannot take it; a renews.
        let a = store::take_lease(&db, "order", "a", LONG)
            .await
            .unwrap()
            .expect("free");
        assert!(
            store::take_lease(&db, "order", "b", LONG)
                .await
                .unwrap()
                .is_none(),
            "{kind}: held by a"
        );
        assert!(store::renew_lease(&db, &a, LONG).await.unwrap(), "{kind}");
        assert!(
            store::take_lease(&db, "order", "a", LONG)
                .await
                .unwrap()
                .is_none(),
            "{kind}: not even a takes a held lease again"
        );
        let challenge = answer("a.example", "aa", a.generation);
        assert!(store::put_challenge(&db, &challenge, LONG, &a)
            .await
            .unwrap());

        // a's lease runs out (a TTL of nothing, by the database's clock) and
        // b takes it with a new generation.
        assert!(store::renew_lease(&db, &a, Duration::ZERO).await.unwrap());
        let b = store::take_lease(&db, "order", "b", LONG)
            .await
            .unwrap()
            .expect("a's expired");
        assert!(b.generation > a.generation, "{kind}: {b:?} after {a:?}");
        assert!(!store::holds(&db, &a).await.unwrap(), "{kind}");
        assert!(store::holds(&db, &b).await.unwrap(), "{kind}");
        assert!(
            !store::renew_lease(&db, &a, LONG).await.unwrap(),
            "{kind}: a's renewal says it is lost"
        );

        // b's answer for the same name replaces a's; a can write nothing
        // over it, and a's clean-up drops nothing of b's.
        let b_answer = answer("a.example", "bb", b.generation);
        assert!(store::put_challenge(&db, &b_answer, LONG, &b)
            .await
            .unwrap());
        let late = answer("a.example", "a-late", a.generation);
        assert!(
            !store::put_challenge(&db, &late, LONG, &a).await.unwrap(),
            "{kind}: a's answer is fenced off"
        );
        store::drop_challenges(&db, a.generation).await.unwrap();
        assert_eq!(
            store::challenges(&db).await.unwrap(),
            std::slice::from_ref(&b_answer),
            "{kind}"
        );
        assert!(
            !store::put_certificate(&db, "d", "a.example", &cert("0A"), None, Some(&a))
                .await
                .unwrap(),
            "{kind}: a's certificate is fenced off"
        );
        assert!(
            !store::set_backoff(&db, "d", "a.example", (LONG, LONG), Some(("a", "why")), &a)
                .await
                .unwrap(),
            "{kind}: so is a's back-off"
        );
        assert_eq!(
            store::backoff(&db, "d", "a.example").await.unwrap(),
            store::Backoff::default()
        );
        assert!(
            store::put_certificate(&db, "d", "a.example", &cert("0B"), None, Some(&b))
                .await
                .unwrap(),
            "{kind}"
        );
        store::drop_challenges(&db, b.generation).await.unwrap();
        assert!(store::challenges(&db).await.unwrap().is_empty(), "{kind}");

        // Given up, the lease goes to the next with a new generation still.
        store::release_lease(&db, &b).await.unwrap();
        let c = store::take_lease(&db, "order", "c", LONG)
            .await
            .unwrap()
            .expect("released");
        assert!(c.generation > b.generation, "{kind}");
        db.close().await;
    }
}

#[tokio::test]
async fn a_certificate_row_is_replaced_only_where_its_serial_is_the_one_judged() {
    for (kind, fresh) in fresh_databases(TempDir::new().path()).await {
        let db = migrated(&fresh.url).await;
        let put = |c: StoredCert, replacing: Option<&'static str>| {
            let db = db.clone();
            async move {
                store::put_certificate(&db, "d", "a.example", &c, replacing, None)
                    .await
                    .unwrap()
            }
        };
        assert!(put(cert("01"), None).await, "{kind}: the first");
        assert!(
            !put(cert("02"), None).await,
            "{kind}: no blind insert over a row"
        );
        assert!(
            !put(cert("02"), Some("09")).await,
            "{kind}: the row changed since it was judged"
        );
        assert!(put(cert("02"), Some("01")).await, "{kind}");
        assert_eq!(
            store::certificate(&db, "d", "a.example").await.unwrap(),
            Some(cert("02"))
        );
        assert_eq!(
            store::certificate_stamp(&db, "d", "a.example")
                .await
                .unwrap(),
            Some(("02".into(), 1))
        );
        db.close().await;
    }
}

#[tokio::test]
async fn the_fleets_back_off_and_members_go_by_the_databases_clock() {
    for (kind, fresh) in fresh_databases(TempDir::new().path()).await {
        let db = migrated(&fresh.url).await;
        let now = store::clock(&db).await.unwrap();
        let mine = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        assert!(
            (now - mine).abs() < 5_000,
            "{kind}: the database's clock is Unix milliseconds: {now} vs {mine}"
        );
        let hold = store::take_lease(&db, "order", "m1", LONG)
            .await
            .unwrap()
            .unwrap();
        assert!(store::set_backoff(
            &db,
            "d",
            "n",
            (LONG, Duration::from_secs(5)),
            Some(("m1", "refused")),
            &hold
        )
        .await
        .unwrap());
        // The wait is the CA's (a minute), the step the doubling's own.
        let backoff = store::backoff(&db, "d", "n").await.unwrap();
        assert_eq!(backoff.retry_ms, 5_000, "{kind}");
        assert_eq!(backoff.failed_by.as_deref(), Some("m1"));
        assert!(
            (backoff.next_try_at - now - 60_000).abs() < 5_000,
            "{kind}: {backoff:?} from {now}"
        );
        let member = |name: &str| Member {
            member: name.into(),
            serial: Some("0A".into()),
            not_after: Some(5),
            names: Some(vec!["a.example".into(), "b.example".into()]),
            source: Source::Acme,
            challenges: vec![
                "3:tls-alpn-01:a.example".into(),
                "3:tls-alpn-01:b.example".into(),
            ],
            last_error: None,
            failures: 0,
        };
        // A server serving the operator's own files: listed, never waited
        // for by an order.
        let own_files = Member {
            source: Source::File,
            challenges: Vec::new(),
            ..member("web3")
        };
        store::put_member(&db, &member("web1")).await.unwrap();
        store::put_member(&db, &member("web2")).await.unwrap();
        store::put_member(&db, &own_files).await.unwrap();
        let seen = store::members(&db, Duration::from_secs(10)).await.unwrap();
        assert_eq!(
            seen,
            [member("web1"), member("web2"), own_files.clone()],
            "{kind}"
        );
        let ordering = store::acme_members(&db, Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(ordering, [member("web1"), member("web2")], "{kind}");
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            store::members(&db, Duration::from_millis(10))
                .await
                .unwrap()
                .is_empty(),
            "{kind}: not seen within 10 ms"
        );
        db.close().await;
    }
}
