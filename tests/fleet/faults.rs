//! A member alive but wrong, made to happen: one that cannot reach the CA,
//! a CA that refuses every order, a wall clock 120 s ahead or behind
//! (Debian's `faketime`, for one process), a holder stopped mid-order
//! (SIGSTOP) for longer than its lease, the database cut off for 40 s
//! mid-order, and a stored certificate that outlasts the one the CA now
//! issues or cannot be used. Each ends with every member serving one
//! certificate, and no more orders at the CA than the case allows.
//!
//! The waits are the test hooks' (`TLS_LEASE_TTL_SECS`,
//! `ACME_FIRST_RETRY_SECS`, `ACME_CHALLENGE_WAIT_SECS`). To make an order
//! last while the test acts, a member row that never holds the answers
//! ([`lagging_member`]) makes the holder wait its whole challenge wait.

use super::*;

/// The fleet's ACME settings against `pebble`, on PostgreSQL `db`.
pub(super) fn acme_fleet(fleet: &mut Fleet, pebble: &Pebble, db: &str) {
    let directory = pebble.directory();
    let ca = pebble.listener_ca.to_str().unwrap().to_owned();
    let names = NAMES.join(",");
    for (k, v) in [
        ("DATABASE_URL", db),
        ("TLS_DOMAINS", names.as_str()),
        ("ACME_DIRECTORY", directory.as_str()),
        ("ACME_DIRECTORY_CA", ca.as_str()),
        ("ACME_CHALLENGE", "tls-alpn-01"),
        ("PROXY_PROTOCOL_FROM", "127.0.0.1"),
        ("RATE_LIMIT_PER_MINUTE", "0"),
    ] {
        fleet.set(k, v);
    }
}

/// Three servers' places behind the balancer, on a PostgreSQL database of
/// their own, with pebble (certificates valid `validity` seconds, or its
/// default) whose validations reach the names at `address`, and the
/// fleet's ACME settings. Dropped in reverse: pebble, the DNS server, the
/// servers, then the database.
pub(super) fn pg_fleet(
    name: &str,
    address: &str,
    validity: Option<u64>,
) -> (PgDb, Fleet, Proc, Pebble) {
    let db = PgDb::new();
    let mut fleet = Fleet::new(name);
    let (dns, dns_port) = dns_server(&fleet.dir.0, address);
    let pebble = Pebble::start_with(
        fleet.balancer_http,
        fleet.balancer_https,
        Some(dns_port),
        validity,
    );
    acme_fleet(&mut fleet, &pebble, &db.url);
    (db, fleet, dns, pebble)
}

/// `statement` run by psql on `url`: its rows, `|`-separated.
pub(super) fn psql(url: &str, statement: &str) -> String {
    needs("psql", "postgresql-client");
    let out = Command::new("psql")
        .args([url, "-tAc", statement])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "psql {statement}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The site's schema in the database at `url`, as a server's start makes it.
pub(super) fn migrated(url: &str) {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let db = citizen_site::db::Db::connect_lazy(url).unwrap();
        db.migrate().await.unwrap();
        db.close().await;
    });
}

/// A member row that says it was seen an hour from now and holds no
/// answer: every order waits its whole challenge wait for it, then goes on.
fn lagging_member(url: &str) {
    migrated(url);
    psql(
        url,
        "INSERT INTO tls_members (member, seen_at, challenges, failures) \
         VALUES ('lagging:0:test', CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) + 3600000, '', 0)",
    );
}

/// How many orders pebble was sent.
pub(super) fn orders(pebble: &Pebble) -> usize {
    pebble.proc.log().matches("POST /order-plz").count()
}

/// The serial the database holds for the fleet's names.
pub(super) fn stored_serial(url: &str) -> String {
    psql(url, "SELECT serial FROM tls_certificates")
}

/// Which servers logged taking the order lease.
pub(super) fn holders(fleet: &Fleet) -> Vec<usize> {
    (0..fleet.servers.len())
        .filter(|i| {
            fleet.servers[*i].proc.is_some()
                && fleet
                    .server(*i)
                    .log()
                    .contains("this server holds the order lease")
        })
        .collect()
}

/// Waits until every server in `which` serves one certificate signed by
/// pebble's root, and returns its serial.
pub(super) fn one_certificate(
    fleet: &Fleet,
    pebble: &Pebble,
    which: &[usize],
    secs: u64,
) -> String {
    let mut seen = Vec::new();
    let ok = wait(secs, || {
        if issued(pebble) == 0 {
            return false;
        }
        let root = pebble.issuing_root();
        seen = fleet.serials(NAMES[0], &root);
        let mine: Vec<&Option<String>> = which.iter().map(|i| &seen[*i]).collect();
        mine.iter().all(|s| s.is_some()) && mine.iter().all(|s| *s == mine[0])
    });
    assert!(
        ok,
        "one certificate on {which:?}: {seen:?}\n{}",
        fleet.logs()
    );
    seen[which[0]].clone().unwrap()
}

/// The environment that moves one process's wall clock by `offset`
/// (`+120s`, `-120s`): libfaketime, with its timers on real time.
fn faked_clock(offset: &str) -> Vec<(&'static str, String)> {
    needs("faketime", "faketime");
    let lib = [
        "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
        "/usr/lib/faketime/libfaketimeMT.so.1",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .expect("libfaketime (apt-get install faketime)");
    vec![
        ("LD_PRELOAD", lib.to_owned()),
        ("FAKETIME", offset.to_owned()),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_owned()),
    ]
}

/// Starts server `i` of `fleet` with its wall clock moved by `offset`
/// (none: on time).
fn start_skewed(fleet: &mut Fleet, i: usize, offset: Option<&str>) {
    let env = offset.map(faked_clock).unwrap_or_default();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    fleet.start(i, &env);
}

/// What the certificate of `pem` (a key, then a chain) says.
fn cert_info(pem: &str) -> citizen_site::edge::certs::CertInfo {
    citizen_site::edge::certs::parse(pem.as_bytes(), pem.as_bytes(), ("c", "k"))
        .unwrap()
        .info
}

/// Stores `pem` (a key, then a chain, for [`NAMES`]) as the certificate of
/// `directory` in the database `url`, as a server that ordered it would.
fn store_certificate(url: &str, directory: &str, pem: &str) -> citizen_site::edge::certs::CertInfo {
    let info = cert_info(pem);
    let ms =
        |t: std::time::SystemTime| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis();
    migrated(url);
    let mut names = NAMES.to_vec();
    names.sort();
    psql(
        url,
        &format!(
            "INSERT INTO tls_certificates (directory, names, pem, serial, not_before, not_after, stored_at) \
             VALUES ('{directory}', '{}', '{pem}', '{}', {}, {}, 0)",
            names.join(","),
            info.serial,
            ms(info.not_before),
            ms(info.not_after)
        ),
    );
    info
}

#[test]
fn a_member_that_cannot_reach_the_ca_starting_first_holds_up_no_other() {
    needs("pebble", "pebble");
    let (_db, mut fleet, _dns, pebble) = pg_fleet("fleet-unreachable", "127.0.0.1", None);
    fleet.set("ACME_FIRST_RETRY_SECS", "2");
    // web1 trusts another CA than pebble's: every try fails before the CA
    // hears of it (its own fault, as a wrong ACME_DIRECTORY_CA is).
    let wrong = fleet.dir.0.join("another-ca.pem");
    std::fs::write(&wrong, support::tls_site::TestCa::new().pem()).unwrap();
    fleet.start(0, &[("ACME_DIRECTORY_CA", wrong.to_str().unwrap())]);
    assert!(
        wait(30, || fleet
            .server(0)
            .log()
            .contains("this server could not reach the CA")),
        "{}",
        fleet.logs()
    );
    let started = Instant::now();
    fleet.start(1, &[]);
    fleet.start(2, &[]);
    let serial = one_certificate(&fleet, &pebble, &[1, 2], 60);
    println!(
        "the healthy servers served a certificate {:?} after they started",
        started.elapsed()
    );
    assert_eq!(issued(&pebble), 1, "{}", fleet.logs());
    assert_eq!(
        orders(&pebble),
        1,
        "the CA saw one order: web1's tries never reached it"
    );

    // web1 serves it too, from the database; it says its own orders fail,
    // and stays ready.
    assert!(wait(10, || fleet.serials(NAMES[0], &pebble.issuing_root())
        [0]
    .as_deref()
        == Some(serial.as_str())));
    let client = tls_client(
        &pebble.issuing_root(),
        &[&rustls::version::TLS13],
        Resumption::disabled(),
    );
    // Ready once its pages are rendered too (on a slow host, after the
    // certificate is served: a CI run read "prerendered":false).
    let readyz_now = || {
        get_via(
            fleet.servers[0].https,
            NAMES[0],
            &client,
            Route::for_visitor("10.0.0.9:1000"),
            "/readyz",
        )
        .1
    };
    let mut readyz = String::new();
    let ready = wait(60, || {
        readyz = readyz_now();
        readyz.starts_with("HTTP/1.1 200")
    });
    assert!(ready, "{readyz}");
    assert!(readyz.contains("\"ready\":true"), "{readyz}");
    let failing = readyz
        .split("\"failing_in_a_row\":")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("{readyz}"));
    assert!(failing >= 1, "{readyz}");
    assert!(readyz.contains("\"failing\":true"), "{readyz}");
    // That orders fail, never the CA's text: that is the log's and `tls status`'s.
    assert!(!readyz.contains("error"), "{readyz}");
    let (_, metrics) = get_via(
        fleet.servers[0].https,
        NAMES[0],
        &client,
        Route::for_visitor("10.0.0.9:1000"),
        "/metrics",
    );
    assert!(
        metrics.contains(&format!("acme_order_failures_in_a_row {failing}"))
            || metrics
                .lines()
                .any(|l| l.starts_with("acme_order_failures_in_a_row ") && !l.ends_with(" 0")),
        "{metrics}"
    );
}

#[test]
fn when_the_ca_refuses_every_order_the_fleet_tries_once_per_back_off_step_each_time_from_another_member(
) {
    needs("pebble", "pebble");
    // The names resolve to an address where nothing listens: every
    // validation fails, an answer of the CA's.
    let (db, mut fleet, _dns, pebble) = pg_fleet("fleet-refused", "127.0.0.2", None);
    fleet.set("ACME_FIRST_RETRY_SECS", "2");
    for i in 0..3 {
        fleet.start(i, &[]);
    }
    assert!(wait(30, || orders(&pebble) > 0), "{}", fleet.logs());
    let first = Instant::now();
    std::thread::sleep(Duration::from_secs(24));
    let elapsed = first.elapsed().as_secs_f64();
    // Steps of 2, 4, 8, 16 s (a step is the back-off after a try; the
    // member that failed last waits one more): the tries their sum allows.
    let mut steps = 0;
    let mut sum = 0.0;
    let mut step = 2.0;
    while sum + step <= elapsed {
        sum += step;
        step *= 2.0;
        steps += 1;
    }
    let tries = orders(&pebble);
    println!(
        "{tries} orders reached the CA in {elapsed:.0} s of refusals ({steps} back-off steps)"
    );
    let logs = fleet.logs();
    assert!(
        (2..=steps + 1).contains(&tries),
        "{tries} orders in {elapsed:.0} s ({steps} steps):\n{logs}"
    );
    assert!(
        logs.contains("the CA refused the order"),
        "failures the CA answered:\n{logs}"
    );
    assert!(
        holders(&fleet).len() >= 2,
        "the next try was another member's:\n{logs}"
    );
    let row = psql(
        &db.url,
        "SELECT retry_ms, failed_by IS NOT NULL FROM tls_orders",
    );
    assert!(row.ends_with("|t"), "the shared back-off: {row}");
}

/// One on-time member, one whose clock is `skew` off; `first` orders
/// while the other joins. The CA issues one certificate.
fn one_order_with_a_skewed_member(name: &str, first_skew: Option<&str>, second_skew: Option<&str>) {
    let (db, mut fleet, _dns, pebble) = pg_fleet(name, "127.0.0.1", None);
    fleet.set("ACME_CHALLENGE_WAIT_SECS", "8");
    // web1 orders, and waits 8 s for a lagging member in the middle of it.
    lagging_member(&db.url);
    start_skewed(&mut fleet, 0, first_skew);
    assert!(
        wait(30, || fleet
            .server(0)
            .log()
            .contains("this server holds the order lease")),
        "{}",
        fleet.logs()
    );
    start_skewed(&mut fleet, 1, second_skew);
    let serial = one_certificate(&fleet, &pebble, &[0, 1], 60);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        issued(&pebble),
        1,
        "one certificate for the fleet:\n{}",
        fleet.logs()
    );
    assert_eq!(
        holders(&fleet),
        [0],
        "web2 never took the lease:\n{}",
        fleet.logs()
    );
    assert_eq!(stored_serial(&db.url), serial);
}

#[test]
fn a_member_whose_clock_runs_two_minutes_ahead_or_behind_never_orders_beside_another() {
    needs("pebble", "pebble");
    // Ahead: it joins while an on-time member orders.
    one_order_with_a_skewed_member("fleet-ahead", None, Some("+120s"));
    // Behind: it orders, and an on-time member joins.
    one_order_with_a_skewed_member("fleet-behind", Some("-120s"), None);
}

/// A member whose clock runs 50 hours ahead, beside an on-time one, with
/// certificates for 72 hours: past the renewal time (48 hours in) by its
/// own clock, not by the database's, which the fleet goes by. It serves
/// the fleet's certificate and orders nothing (by its own clock it would
/// order again and again: each new certificate is as far behind). Its
/// session-ticket keys are the fleet's too: a session from either member
/// resumes on the other (by its own clock, every key of the fleet's had
/// ended two days ago, and it forgot them).
#[test]
fn a_member_days_ahead_orders_nothing_the_fleet_renews_later() {
    needs("pebble", "pebble");
    let (_db, mut fleet, _dns, pebble) = pg_fleet("fleet-days-ahead", "127.0.0.1", Some(72 * 3600));
    fleet.start(0, &[]);
    let serial = one_certificate(&fleet, &pebble, &[0], 60);
    start_skewed(&mut fleet, 1, Some("+50h"));
    assert_eq!(one_certificate(&fleet, &pebble, &[0, 1], 60), serial);
    // Five of its robot's rounds (one every 2 s).
    std::thread::sleep(Duration::from_secs(10));
    assert_eq!(
        issued(&pebble),
        1,
        "the member ahead ordered:\n{}",
        fleet.logs()
    );
    assert_eq!(holders(&fleet), [0], "{}", fleet.logs());
    assert_eq!(
        fleet.serials(NAMES[0], &pebble.issuing_root())[..2],
        [Some(serial.clone()), Some(serial)]
    );
    let root = pebble.issuing_root();
    for (first, then) in [(0, 1), (1, 0)] {
        let visitor = returning(&root, &rustls::version::TLS13);
        let from = format!("192.0.2.{}:1000", 20 + first);
        assert_eq!(fleet.visit(first, &visitor, &from), Full);
        assert_eq!(
            fleet.visit(then, &visitor, &from),
            Resumed,
            "a session from web{} on web{}:\n{}",
            first + 1,
            then + 1,
            fleet.logs()
        );
    }
}

/// Stopped for 12 s (its lease lasts 5) as soon as its answers are
/// stored, then continued.
#[test]
fn a_holder_stopped_longer_than_its_lease_and_continued_spoils_nothing_of_the_next_order() {
    needs("pebble", "pebble");
    let (db, mut fleet, _dns, pebble) = pg_fleet("fleet-stopped", "127.0.0.1", None);
    fleet.set("TLS_LEASE_TTL_SECS", "5");
    fleet.set("ACME_CHALLENGE_WAIT_SECS", "3");
    lagging_member(&db.url);
    for i in 0..3 {
        fleet.start(i, &[]);
    }
    let mut holder = None;
    let found = wait(40, || {
        holder = holders(&fleet).first().copied();
        holder.is_some() && !psql(&db.url, "SELECT name FROM tls_challenges").is_empty()
    });
    assert!(found, "an order stored its answers:\n{}", fleet.logs());
    let holder = holder.unwrap();
    let pid = fleet.server(holder).child.id() as libc::pid_t;
    let generation = psql(&db.url, "SELECT generation FROM tls_leases");
    // SAFETY: kill(2) with a process id and a signal number.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let stopped = Instant::now();
    let others: Vec<usize> = (0..3).filter(|i| *i != holder).collect();
    let serial = one_certificate(&fleet, &pebble, &others, 60);
    println!(
        "the other servers served a certificate {:?} after the holder was stopped (its lease: 5 s)",
        stopped.elapsed()
    );
    std::thread::sleep(Duration::from_secs(12).saturating_sub(stopped.elapsed()));
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let all = one_certificate(&fleet, &pebble, &[0, 1, 2], 30);
    assert_eq!(
        all, serial,
        "every member serves the next holder's certificate"
    );
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(issued(&pebble), 1, "{}", fleet.logs());
    assert_eq!(stored_serial(&db.url), serial, "nothing overwrote it");
    let log = fleet.server(holder).log();
    assert!(log.contains("the order is abandoned"), "{log}");
    assert!(
        psql(&db.url, "SELECT generation FROM tls_leases") != generation,
        "another generation took the lease"
    );
}

/// The database cut off for 40 s (more than a minute in all).
#[test]
fn the_database_cut_off_for_40_s_mid_order_leaves_one_certificate_served_everywhere() {
    needs("pebble", "pebble");
    let (db, mut fleet, _dns, pebble) = pg_fleet("fleet-cut", "127.0.0.1", None);
    let proxy = CutProxy::start(5432);
    let via = format!("postgres://postgres@127.0.0.1:{}/{}", proxy.port, db.name);
    fleet.set("DATABASE_URL", &via);
    fleet.set("TLS_LEASE_TTL_SECS", "6");
    fleet.set("ACME_FIRST_RETRY_SECS", "2");
    fleet.set("ACME_CHALLENGE_WAIT_SECS", "4");
    lagging_member(&db.url);
    for i in 0..3 {
        fleet.start(i, &[]);
    }
    let found = wait(40, || {
        !holders(&fleet).is_empty() && !psql(&db.url, "SELECT name FROM tls_challenges").is_empty()
    });
    assert!(found, "{}", fleet.logs());
    proxy.cut();
    std::thread::sleep(Duration::from_secs(40));
    proxy.restore();
    let back = Instant::now();
    let serial = one_certificate(&fleet, &pebble, &[0, 1, 2], 90);
    println!(
        "every server served one certificate {:?} after the database came back ({} issued)",
        back.elapsed(),
        issued(&pebble)
    );
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(
        stored_serial(&db.url),
        serial,
        "the stored one is the one served"
    );
    let all = fleet.serials(NAMES[0], &pebble.issuing_root());
    assert!(
        all.iter().all(|s| s.as_deref() == Some(serial.as_str())),
        "{all:?}"
    );
    // One certificate, or two when one was issued during the cut and
    // fenced off (docs/deploy.md says so).
    assert!((1..=2).contains(&issued(&pebble)), "{}", fleet.logs());
}

/// A certificate of the fleet's own CA, due for renewal but ending later
/// than any pebble issues (a CA's shorter profile), is replaced with no
/// second order; then a row that cannot be used, with later dates, is
/// replaced by what the members serve.
#[test]
fn a_shorter_certificate_issued_later_replaces_a_longer_one_and_an_unusable_row_is_replaced() {
    needs("pebble", "pebble");
    // Pebble's certificates last an hour.
    let (db, mut fleet, _dns, pebble) = pg_fleet("fleet-shorter", "127.0.0.1", Some(3600));
    // The stored one: from 80 days ago to 20 days from now (due since a
    // third of its life was left).
    let ca = support::tls_site::TestCa::new();
    let (chain, key) = ca.leaf(&NAMES, -80 * 86400, 20 * 86400);
    let pem = format!("{key}\n{chain}");
    let info = store_certificate(&db.url, &pebble.directory(), &pem);
    fleet.start(0, &[]);
    fleet.start(1, &[]);
    let serial = one_certificate(&fleet, &pebble, &[0, 1], 60);
    assert_ne!(serial, info.serial);
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(issued(&pebble), 1, "no second order:\n{}", fleet.logs());
    assert_eq!(stored_serial(&db.url), serial, "the new one is stored");

    // A damaged row, with dates later than anything: replaced.
    psql(
        &db.url,
        "UPDATE tls_certificates SET pem = 'not a certificate', serial = '7FFFFFFF', \
         not_before = 9000000000000, not_after = 9900000000000",
    );
    assert!(
        wait(15, || stored_serial(&db.url) == serial),
        "the served one went back:\n{}",
        fleet.logs()
    );
    assert_eq!(issued(&pebble), 1);
}

/// A member whose clock runs two hours ahead, past the end of the stored
/// certificate (an hour from now, by the database's clock), starts on a
/// local copy of an older one that lasts longer: it serves the stored
/// one, and writes nothing over it (by its own clock the stored one has
/// ended, and its older copy would replace it for the whole fleet).
#[test]
fn a_member_past_the_stored_certificates_end_by_its_own_clock_keeps_it() {
    needs("pebble", "pebble");
    let (db, mut fleet, _dns, pebble) = pg_fleet("fleet-past-end", "127.0.0.1", None);
    let ca = support::tls_site::TestCa::new();
    let pem_of = |from: i64, until: i64| {
        let (chain, key) = ca.leaf(&NAMES, from, until);
        format!("{key}\n{chain}")
    };
    // Stored: from an hour ago to an hour from now. The member's copy:
    // issued an hour before it, ending in ten hours.
    let (stored, older) = (pem_of(-3600, 3600), pem_of(-7200, 36_000));
    let stored_info = store_certificate(&db.url, &pebble.directory(), &stored);
    let older_info = cert_info(&older);
    let mut names = NAMES.to_vec();
    names.sort();
    let names = names.join(",");
    let folder = fleet.servers[0]
        .dir
        .join("acme")
        .join(citizen_site::edge::acme::folder_name(&pebble.directory()));
    {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&folder)
            .unwrap();
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(folder.join(format!("{names}.pem")))
            .unwrap();
        file.write_all(older.as_bytes()).unwrap();
    }
    start_skewed(&mut fleet, 0, Some("+2h"));
    let root = fleet.dir.0.join("test-ca.pem");
    std::fs::write(&root, ca.pem()).unwrap();
    let served = wait(30, || {
        fleet.serials(NAMES[0], &root)[0].as_deref() == Some(stored_info.serial.as_str())
    });
    assert!(
        served,
        "the member serves the stored certificate, not its copy {}:\n{}",
        older_info.serial,
        fleet.logs()
    );
    // Several of its rounds.
    std::thread::sleep(Duration::from_secs(6));
    assert_eq!(
        stored_serial(&db.url),
        stored_info.serial,
        "the stored certificate was replaced by the member's older one:\n{}",
        fleet.logs()
    );
    assert_eq!(issued(&pebble), 0, "{}", fleet.logs());
}
