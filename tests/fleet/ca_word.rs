//! The CA's word, through the stand-in of `stand_in.rs`: a profile the
//! directory does not list orders nothing and says why; one it lists is
//! ordered; the renewal time is a point of the CA's window, chosen once for
//! the fleet; a window moved to the past renews the fleet within the
//! `Retry-After` it gave, with an order that names the certificate it
//! replaces (and, refused as already replaced, one that does not); a
//! refusal as rate-limited holds the fleet's next order back for the
//! `Retry-After` the CA gave.

use super::faults::{one_certificate, orders, pg_fleet, psql};
use super::stand_in::AriCa;
use super::*;

#[test]
fn the_ca_decides_when_the_fleet_renews_and_which_profile_it_gets() {
    needs("pebble", "pebble");
    // Certificates of an hour: by the lifetime rule, none is renewed in
    // this test's time; only the CA's window can make it so.
    let (db, mut fleet, _dns, pebble) = pg_fleet("fleet-ari", "127.0.0.1", Some(3600));
    let ca = AriCa::start(&pebble);
    fleet.set("ACME_DIRECTORY", &ca.directory());
    fleet.set("ACME_ARI_MIN_POLL_SECS", "1");

    // A profile the directory does not list: nothing is ordered, and the
    // log names those it lists.
    fleet.start(0, &[("ACME_PROFILE", "nope")]);
    let refused = wait(30, || {
        let log = fleet.server(0).log();
        log.contains("lists no profile \"nope\"")
            && log.contains("classic")
            && log.contains("shortlived")
    });
    assert!(refused, "{}", fleet.logs());
    assert_eq!(orders(&pebble), 0, "nothing ordered");
    assert!(ca.orders().is_empty());
    let pid = fleet.server(0).child.id();
    fleet.servers[0].proc.take().unwrap().stop();
    assert_eq!(
        psql(
            &db.url,
            &format!("SELECT count(*) FROM tls_members WHERE member LIKE '%:{pid}:%'")
        ),
        "0",
        "a server that stops leaves the fleet: no order waits for it"
    );

    // A profile it lists. The members order as soon as they start, and
    // the CA validates through the balancer, which sends connections to
    // a member only after two health checks 2 s apart: a fleet started at
    // once, on a busy machine, had its first order fail there and order
    // again. The CA answers 503 until the balancer routes.
    ca.hold_orders(true);
    for i in 0..2 {
        fleet.start(i, &[("ACME_PROFILE", "shortlived")]);
    }
    let routed = wait(30, || fleet.routes_https());
    assert!(routed, "the balancer routes to no member\n{}", fleet.logs());
    ca.hold_orders(false);
    let first = one_certificate(&fleet, &pebble, &[0, 1], 60);
    let sent = ca.orders();
    assert_eq!(sent.len(), 1, "{sent:?}\n{}", fleet.logs());
    assert_eq!(sent[0]["profile"], "shortlived", "{sent:?}");
    assert!(
        sent[0].get("replaces").is_none(),
        "a first issue replaces nothing"
    );

    // Its window a day from now: the fleet's renewal time is a point in it,
    // logged with where it came from and the CA's explanation.
    let scheduled = wait(20, || {
        psql(
            &db.url,
            "SELECT renew_source FROM tls_orders WHERE renew_serial IS NOT NULL",
        ) == "ari"
    });
    assert!(scheduled, "{}", fleet.logs());
    let logs = fleet.logs();
    assert!(
        logs.contains("the fleet's renewal time is set")
            && logs.contains("source=ari")
            && logs.contains("https://ca.test/why-renew"),
        "{logs}"
    );
    let in_window = psql(
        &db.url,
        "SELECT renew_at BETWEEN window_start AND window_end AND window_start > \
         CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) FROM tls_orders",
    );
    assert_eq!(in_window, "t");
    // The CA's window is a day away, and the certificate lasts an hour:
    // the fleet renews before the certificate ends, not in the window.
    let before_its_end = psql(
        &db.url,
        "SELECT renew_at < CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) + 3600000 \
         FROM tls_orders",
    );
    assert_eq!(before_its_end, "t", "{}", fleet.logs());
    assert!(
        fleet
            .logs()
            .contains("the CA's renewal window runs past the certificate's end"),
        "{}",
        fleet.logs()
    );
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(issued(&pebble), 1, "not renewed before its window");

    // The CA moves the window to the past: the fleet renews within the
    // Retry-After it gave (1 s), the order naming the certificate it
    // replaces; refused as already replaced, it orders again without.
    ca.move_windows(-3600, -60);
    let moved = Instant::now();
    let mut second = None;
    let renewed = wait(30, || {
        let now = fleet.serials(NAMES[0], &pebble.issuing_root());
        second = now[0].clone().filter(|s| *s != first);
        second.is_some() && now[1] == now[0]
    });
    assert!(renewed, "renewed on both:\n{}", fleet.logs());
    println!(
        "renewed {:?} after the CA moved its window",
        moved.elapsed()
    );
    assert_eq!(issued(&pebble), 2, "{}", fleet.logs());
    let sent = ca.orders();
    assert_eq!(sent.len(), 3, "{sent:?}");
    let first_id = ca.asked().first().cloned().unwrap();
    assert_eq!(
        sent[1]["replaces"],
        first_id.as_str(),
        "it names the certificate it replaces"
    );
    assert_eq!(sent[1]["profile"], "shortlived");
    assert!(
        sent[2].get("replaces").is_none(),
        "ordered again without: {sent:?}"
    );
    // The new certificate has its own window, a day away: no third order.
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(issued(&pebble), 2, "{}", fleet.logs());
}

/// A CA that refuses an order as rate-limited, saying when to try again
/// (`Retry-After: 12`), hears no new order from the fleet before then,
/// though the fleet's own first retry (1 s here) is much sooner; the
/// order after is served.
#[test]
fn a_rate_limited_fleet_waits_the_cas_retry_after() {
    needs("pebble", "pebble");
    let (_db, mut fleet, _dns, pebble) = pg_fleet("fleet-retry-after", "127.0.0.1", None);
    let ca = AriCa::start(&pebble);
    fleet.set("ACME_DIRECTORY", &ca.directory());
    fleet.set("ACME_FIRST_RETRY_SECS", "1");
    ca.limit_next_order(12);
    fleet.start(0, &[]);
    fleet.start(1, &[]);
    let refused = wait(30, || {
        fleet
            .logs()
            .contains("the CA refused the order; the servers try again later")
    });
    assert!(refused, "{}", fleet.logs());
    let routed = wait(30, || fleet.routes_https());
    assert!(routed, "the balancer routes to no member\n{}", fleet.logs());
    one_certificate(&fleet, &pebble, &[0, 1], 60);
    let times = ca.order_times();
    assert!(times.len() >= 2, "{}", fleet.logs());
    let waited = times[1] - times[0];
    println!("the next order came {waited:?} after the refusal (Retry-After: 12 s)");
    assert!(
        waited >= Duration::from_secs(12),
        "the next order came {waited:?} after a refusal that asked for 12 s:\n{}",
        fleet.logs()
    );
    assert!(
        waited < Duration::from_secs(30),
        "and not much later: {waited:?}"
    );
    assert!(
        fleet.logs().contains("retry_after=Some(12s)"),
        "the log names the CA's wait: {}",
        fleet.logs()
    );
}
