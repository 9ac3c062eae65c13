use super::*;

/// A migrated SQLite database of its own, with `tls renew`'s request for
/// the certificate OLD stored: the database and the request.
async fn requested() -> (Db, store::Request, std::path::PathBuf) {
    let (db, dir) = crate::db::scratch("renew").await;
    let request = store::request_renewal(&db, "ca", "a.test", Some("OLD"), None, false)
        .await
        .unwrap();
    (db, request, dir)
}

/// The request settled as a server of this version settles it (one
/// statement: no longer pending, its outcome kept), or with no outcome,
/// as an older one cleared it.
async fn settle(db: &Db, outcome_for: Option<i64>) {
    let outcome = outcome_for.map(|_| {
        serde_json::to_string(&store::Outcome {
            retired: true,
            revoked: None,
            said: "retired".into(),
            by: "web1".into(),
        })
        .unwrap()
    });
    sqlx::query("UPDATE tls_orders SET requested_at = NULL, outcome_for = $1, outcome = $2")
        .bind(outcome_for)
        .bind(outcome)
        .execute(&db.pool)
        .await
        .unwrap();
}

/// What `gone` says of `mine` once the new certificate NEW is stored.
async fn gone_with_new(db: &Db, mine: &store::Request) -> anyhow::Result<()> {
    let new = ("NEW".to_owned(), 0);
    gone(db, "ca", "a.test", mine, Some(&new), "OLD").await
}

/// `renew` reads its request's outcome, then asks `gone` when there was
/// none: a server settling the request in between (its new certificate
/// already stored) is the request carried out as asked, not one carried
/// out by an older server keeping no record (a CI run's `tls renew`
/// failed so).
#[tokio::test]
async fn a_request_settled_while_the_command_looked_is_its_own_outcome() {
    let (db, mine, dir) = requested().await;
    gone_with_new(&db, &mine).await.expect("still pending");
    settle(&db, Some(mine.requested_at)).await;
    gone_with_new(&db, &mine)
        .await
        .expect("its own outcome, read in the next round");

    // Cleared with no outcome while the new certificate is stored: an
    // older server carried it out.
    settle(&db, None).await;
    let said = gone_with_new(&db, &mine).await.unwrap_err().to_string();
    assert!(
        said.contains("keeps no record of what became of OLD"),
        "{said}"
    );

    // A later request's outcome: this one was replaced.
    settle(&db, Some(mine.requested_at + 1)).await;
    let said = gone_with_new(&db, &mine).await.unwrap_err().to_string();
    assert!(
        said.contains("replaced this request and was carried out"),
        "{said}"
    );
    db.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
