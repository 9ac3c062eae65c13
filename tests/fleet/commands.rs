//! The commands for the bad day, run word for word from docs/operate.md's
//! blocks against three servers on PostgreSQL: `tls status` lists the
//! three with what each serves; `tls rotate-tickets` leaves no session
//! from before resumable on any server; `tls renew --revoke` has a new
//! certificate served by every running server within 5 s of its issue, the
//! old one served nowhere and revoked, and a server that was down serves
//! the new one, not its local copy of the old, once it has read the
//! database.

use super::faults::{one_certificate, pg_fleet, psql, stored_serial};
use super::*;

/// The guide's block `name`, run by sh with `DATABASE_URL` set, the binary
/// in place of `citizen-site`: its standard output (it must succeed).
fn guide_step(name: &str, database_url: &str) -> String {
    let guide = std::fs::read_to_string(Path::new(ROOT).join("docs/operate.md")).unwrap();
    let block = deploy_step(&guide, name);
    assert!(block.contains("citizen-site tls"), "{block}");
    let script = block.replace("citizen-site ", &format!("{BIN} "));
    let out = Command::new("sh")
        .args(["-c", &script])
        .env("DATABASE_URL", database_url)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name}: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

#[test]
fn the_commands_for_the_bad_day_work_as_the_guide_writes_them() {
    needs("pebble", "pebble");
    let (db, mut fleet, _dns, pebble) = pg_fleet("fleet-commands", "127.0.0.1", None);
    // Keys read every 5 s (a quarter of a minute's period would be more).
    fleet.set("TLS_TICKET_PERIOD_SECS", "60");
    for i in 0..3 {
        fleet.start(i, &[]);
    }
    let old = one_certificate(&fleet, &pebble, &[0, 1, 2], 60);
    let root = pebble.issuing_root();

    // tls status: the three, each with what it serves. Each writes its
    // row once a round (tls::SYNC_EVERY, a second): the rows may lag the
    // handshakes by that, more on a busy machine (a CI run read the three
    // rows before any was written).
    let mut status = String::new();
    let shown = wait(10, || {
        status = guide_step("tls-status", &db.url);
        status.matches(old.as_str()).count() == 4
    });
    assert!(
        status.contains("3 server(s) seen in the last minute"),
        "{status}"
    );
    assert!(shown, "the stored one and each server's:\n{status}");
    assert!(
        status.contains("order lease   free") || status.contains("order lease   held"),
        "{status}"
    );

    // tls rotate-tickets: a session from before resumes on no server.
    let visitors: Vec<_> = (0..3)
        .map(|i| {
            let visitor = returning(&root, &rustls::version::TLS13);
            assert_eq!(
                fleet.visit(0, &visitor, &format!("192.0.2.{}:1000", 30 + i)),
                Full
            );
            visitor
        })
        .collect();
    assert_eq!(
        fleet.visit(1, &visitors[0], "192.0.2.30:1000"),
        Resumed,
        "before the rotation, a ticket resumes on another server"
    );
    let rotated = guide_step("tls-rotate-tickets", &db.url);
    assert!(rotated.starts_with("rotated: "), "{rotated}");
    std::thread::sleep(Duration::from_secs(6));
    for (i, visitor) in visitors.iter().enumerate() {
        assert_eq!(
            fleet.visit(i, visitor, &format!("192.0.2.{}:1000", 30 + i)),
            Full,
            "web{}: a session from before the rotation",
            i + 1
        );
    }

    // tls renew --revoke, with web3 down (its local copy holds the old one).
    let stored_pem = psql(&db.url, "SELECT pem FROM tls_certificates");
    let log = fleet.servers[2].proc.take().unwrap().stop();
    assert!(log.contains("stopped"), "{log}");
    // Until web3's last read is more than 10 s old, it counts as running.
    std::thread::sleep(Duration::from_secs(11));
    let renewed = guide_step("tls-renew", &db.url);
    let new = stored_serial(&db.url);
    assert_ne!(new, old);
    assert!(
        renewed.contains(&format!("renewed: {new} is served by every running server")),
        "{renewed}"
    );
    let after: u64 = renewed
        .split("running server (")
        .nth(1)
        .and_then(|r| r.split(" ms").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{renewed}"));
    println!("the new certificate was served everywhere {after} ms after it was stored");
    assert!(after <= 5000, "{after} ms: {renewed}");
    let serials = fleet.serials(NAMES[0], &root);
    assert_eq!(
        serials[..2],
        [Some(new.clone()), Some(new.clone())],
        "the old one served nowhere"
    );
    // What became of the old one, as the server that carried it out found it.
    assert!(
        renewed.contains(&format!(
            "{old}: {old} is retired; it is revoked with the CA (keyCompromise) (by "
        )),
        "{renewed}"
    );
    assert_eq!(issued(&pebble), 2);
    let logs = fleet.logs();
    assert!(
        logs.contains("the replaced certificate is retired"),
        "{logs}"
    );
    assert!(
        logs.contains("revoked with the CA (keyCompromise)"),
        "{logs}"
    );

    // A request naming a certificate another order already replaced (one
    // made while that order ran, or left by a holder that died after
    // storing the new one): carried out all the same, never just cleared,
    // and what became of it kept for `tls status` to say.
    let leaf = &stored_pem[stored_pem.find("-----BEGIN CERTIFICATE-----").unwrap()..];
    let leaf = &leaf[..leaf.find("-----END CERTIFICATE-----").unwrap() + 25];
    // Made while the order of the one stored now ran: before it was stored.
    let at: i64 = psql(&db.url, "SELECT stored_at - 1 FROM tls_certificates")
        .parse()
        .unwrap();
    psql(
        &db.url,
        &format!(
            "UPDATE tls_orders SET requested_at = {at}, requested_serial = '{old}', requested_cert = '{leaf}', revoke = 1"
        ),
    );
    let mut last = serde_json::Value::Null;
    let carried_out = wait(30, || {
        let out = Command::new(BIN)
            .args(["tls", "status", "--json"])
            .env("DATABASE_URL", &db.url)
            .output()
            .unwrap();
        let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        last = status["certificates"][0]["last_renewal_request"].clone();
        last["requested_at"].as_str().is_some_and(|t| {
            time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339)
                .is_ok_and(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64 == at)
        })
    });
    assert!(carried_out, "the request was not carried out: {last}");
    assert_eq!(last["ok"], true, "{last}");
    assert_eq!(last["retired"], true, "{last}");
    assert_eq!(last["revoked"], true, "{last}");
    let said = last["said"].as_str().unwrap();
    assert!(
        said.starts_with(&format!("{old} is retired; "))
            && (said.contains("revoked already") || said.contains("revoked with the CA")),
        "{said}"
    );

    // web3 again: ready only once it has read the database, and then on
    // the new certificate, never the retired one.
    fleet.start(2, &[]);
    assert!(
        wait(30, || fleet.server(2).log().matches("ready: ").count() >= 2),
        "{}",
        fleet.server(2).log()
    );
    assert_eq!(
        served_serial_via(
            fleet.servers[2].https,
            NAMES[0],
            &root,
            Route::for_visitor("192.0.2.40:1000")
        ),
        Some(new.clone())
    );
    assert_eq!(issued(&pebble), 2, "nothing more ordered");
}
