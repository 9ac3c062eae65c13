//! The site's HTTPS identity, shared by every server through the site's
//! database: the ACME account, the certificate and its key, the answers to
//! pending ACME challenges, and the session-ticket keys.
//!
//! A visitor's handshake reads memory only (`edge::certs`,
//! `edge::tickets`). Each process keeps that memory current from the
//! database every [`SYNC_EVERY`] (the ticket keys every
//! [`TICKET_SYNC_EVERY`]; [`Identity::sync`]): a certificate
//! another server obtained is put in service with no restart, the
//! challenges another server's order stored are answered here too, and the
//! ticket keys rotate on the schedule [`tickets`] describes. One process at
//! a time orders a certificate ([`robot`], under a lease in the database).
//!
//! The newest certificate wins, newest meaning issued last (its
//! `not_before`, then its serial: a CA's shorter profile may well end
//! sooner), among those this server can use (it parses, its key matches,
//! it covers the names, it has not expired; an unusable row is replaced
//! whatever its dates): a process that serves a newer one than the
//! database's stores it (a database restored from an older backup), and
//! `citizen-site restore` keeps these tables from the database it replaces
//! ([`store::TABLES`]). A start while the database is unreachable serves
//! the local copy of the last certificate (`edge::acme`) and orders
//! nothing until the database is back.
//!
//! Each process is a member of the fleet ([`Identity::member`]): it
//! records, by the database's clock, what it serves and where that came
//! from (ACME, or the operator's own files, which a server with `TLS_CERT`
//! reads the rest of this shared state for: the ticket keys), which
//! challenge answers it holds (an order waits for them, from the members
//! under ACME) and whether its own orders fail. A member under ACME writes
//! that every round; one serving its own files every
//! [`FILE_MEMBER_EVERY`], or at once after a reload.

pub mod renewal;
pub mod robot;
pub mod store;
mod sync;
pub mod tickets;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwapOption;
use tokio::task::JoinHandle;

use crate::db::Db;
use crate::edge::acme::{self, AcmeSettings};
use crate::edge::acme_http::AcmeHttp;
use crate::edge::certs::{rfc3339, Certs, ServedCert};
use crate::edge::tickets::TicketKeys;
use crate::metrics::AcmeOrders;
use store::StoredCert;
use tickets::TicketSchedule;

/// How often each process reads the challenges and the certificate.
pub const SYNC_EVERY: Duration = Duration::from_secs(1);
/// How often a process serving its own files (`TLS_CERT`) writes its
/// `tls_members` row when what it serves is unchanged: well within the
/// 10 s in which `citizen-site tls` counts a member as running. It writes
/// at once when another certificate is in service (a reload), and a
/// member under ACME writes every [`SYNC_EVERY`].
pub const FILE_MEMBER_EVERY: Duration = Duration::from_secs(5);
/// How often it reads the session-ticket keys (more often when a period is
/// shorter than four times this, as in tests).
pub const TICKET_SYNC_EVERY: Duration = Duration::from_secs(5);

/// One process's view of the shared identity.
pub struct Identity {
    pub db: Db,
    pub certs: Arc<Certs>,
    pub tickets: Arc<TicketKeys>,
    pub schedule: TicketSchedule,
    /// The robot's orders, counted for `/metrics`.
    pub orders: AcmeOrders,
    /// The certificate this process put in service from ACME, as stored.
    pub(crate) served: ArcSwapOption<StoredCert>,
    /// Set once the shared state has been read (the first round of
    /// [`Identity::sync`]): a server says it is ready only after, so the
    /// successor of an upgrade resumes the sessions of its predecessor.
    pub read: crate::live::Flag,
    /// This process's name in the fleet (`host:pid:random`): the lease's
    /// holder, its `tls_members` row.
    pub member: String,
    /// This member's own failed orders in a row and the last one's error.
    trouble: Mutex<Option<(u64, String)>>,
    /// The fleet's renewal schedule, as last read (`renewal`).
    renewal: Mutex<Option<store::Schedule>>,
}

/// What became of a certificate offered to the database ([`Identity::offer`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// It is the stored one now (or already was).
    Stored,
    /// The database holds a usable certificate issued later.
    Older,
    /// The order lease it was offered under is lost: nothing was written.
    Fenced,
    /// It is retired (`citizen-site tls renew`): never stored again.
    Retired,
}

impl Identity {
    pub fn new(
        db: Db,
        certs: Arc<Certs>,
        tickets: Arc<TicketKeys>,
        schedule: TicketSchedule,
        orders: AcmeOrders,
    ) -> Arc<Identity> {
        Arc::new(Identity {
            db,
            certs,
            tickets,
            schedule,
            orders,
            served: ArcSwapOption::empty(),
            read: crate::live::Flag::default(),
            member: member_name(),
            trouble: Mutex::new(None),
            renewal: Mutex::new(None),
        })
    }

    /// The fleet's renewal schedule, as read from the database.
    pub fn set_schedule(&self, s: store::Schedule) {
        *self.renewal.lock().unwrap_or_else(|p| p.into_inner()) = Some(s);
    }

    /// When the certificate in service is renewed: the fleet's schedule for
    /// it (the CA's window, `renewal`), else the lifetime rule.
    pub fn renew_at(&self) -> Option<SystemTime> {
        let current = self.certs.current()?;
        let schedule = self.renewal.lock().unwrap_or_else(|p| p.into_inner());
        Some(
            match schedule
                .as_ref()
                .filter(|s| s.serial == current.info.serial)
            {
                Some(s) => at_ms(s.renew_at),
                None => current.info.renew_at(),
            },
        )
    }

    /// The schedule's source for the certificate in service: `ari` or
    /// `lifetime`.
    pub fn schedule_source(&self) -> &'static str {
        let current = self.certs.current();
        let schedule = self.renewal.lock().unwrap_or_else(|p| p.into_inner());
        match schedule.as_ref() {
            Some(s) if current.is_some_and(|c| c.info.serial == s.serial) && s.source == "ari" => {
                "ari"
            }
            _ => "lifetime",
        }
    }

    /// This member leaves the fleet (its process stops): its row goes, so
    /// an order under way stops waiting for it to hold its answers.
    pub async fn leave(&self) {
        if let Err(e) = store::forget_member(&self.db, &self.member).await {
            tracing::debug!(error = %e, "this server's member row stays until it is 10 s old");
        }
        // Its tasks are stopped: a lease it holds goes with it, so the
        // next member orders at once rather than after the lease's TTL.
        if let Err(e) = store::release_leases_of(&self.db, &self.member).await {
            tracing::debug!(error = %e, "this server's leases expire by themselves");
        }
    }

    /// An order of this member's failed with `error`.
    pub fn failed(&self, error: &str) {
        let mut trouble = self.trouble.lock().unwrap_or_else(|p| p.into_inner());
        let failures = trouble.as_ref().map_or(0, |t| t.0) + 1;
        *trouble = Some((failures, error.to_owned()));
        self.orders.failing(failures);
    }

    /// An order of this member's succeeded.
    pub fn succeeded(&self) {
        *self.trouble.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.orders.failing(0);
    }

    /// This member's own failed orders in a row, with the last error (None
    /// when its last order succeeded, or it made none).
    pub fn trouble(&self) -> Option<(u64, String)> {
        self.trouble
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// With certificates from ACME: creates the local folder (a problem
    /// stops the start, naming `ACME_CACHE_DIR`), puts the local copy of the
    /// last certificate in service at once, and starts the robot. Then, in
    /// any case, keeps the shared state current. Returns the tasks, to be
    /// stopped with the server.
    pub fn start(
        self: &Arc<Self>,
        acme: Option<AcmeSettings>,
    ) -> anyhow::Result<Vec<JoinHandle<()>>> {
        let mut tasks = Vec::new();
        if let Some(settings) = &acme {
            let folder = settings.folder();
            acme::create_private_dir(&folder).map_err(|e| {
                anyhow::anyhow!(
                    "ACME_CACHE_DIR: cannot make the folder {}: {}",
                    folder.display(),
                    crate::config::io_reason(&e)
                )
            })?;
            let http = AcmeHttp::new(settings.directory_ca.as_deref())?;
            if let Some((served, pem)) = acme::load_local(settings) {
                tracing::info!(
                    serial = %served.info.serial,
                    valid_until = %rfc3339(served.info.not_after),
                    "HTTPS: the stored certificate is in service"
                );
                self.served.store(Some(Arc::new(stored(&served, &pem))));
                self.certs.deploy(served);
            }
            let first = settings.timing.first_retry;
            let (me, s, h) = (self.clone(), settings.clone(), http.clone());
            tasks.push(tokio::spawn(supervised(
                self.clone(),
                "the renewal schedule",
                first,
                move || renewal::run(me.clone(), s.clone(), h.clone()),
            )));
            let (me, s) = (self.clone(), settings.clone());
            tasks.push(tokio::spawn(supervised(
                self.clone(),
                "the certificate robot",
                first,
                move || robot::run(me.clone(), s.clone(), http.clone()),
            )));
        }
        let me = self.clone();
        tasks.push(tokio::spawn(async move { me.sync(acme).await }));
        Ok(tasks)
    }
}

/// Runs the task `make` gives, again after it panics (an answer of a CA no
/// one foresaw, say): the panic is logged, counted as one of this member's
/// failed orders (so `/readyz`, `/metrics` and `tls status` say so), and
/// the task starts again after `wait`, doubling to an hour. A task that
/// ends, or this one aborted (the server stops), ends it: the inner task
/// is aborted with it.
async fn supervised<F, Fut>(identity: Arc<Identity>, what: &'static str, wait: Duration, make: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    /// The inner task, aborted when the supervisor is.
    struct AbortOnDrop(JoinHandle<()>);
    impl Drop for AbortOnDrop {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let mut wait = wait.max(Duration::from_millis(10));
    loop {
        let mut task = AbortOnDrop(tokio::spawn(make()));
        match (&mut task.0).await {
            Err(e) if e.is_panic() => {
                let why = match e.into_panic().downcast::<String>() {
                    Ok(text) => *text,
                    Err(other) => other
                        .downcast::<&'static str>()
                        .map(|t| (*t).to_owned())
                        .unwrap_or_else(|_| "(no message)".into()),
                };
                tracing::error!(%why, retry_in = ?wait, "HTTPS: {what} stopped on a panic; it starts again");
                identity.failed(&format!("{what} stopped on a panic: {why}"));
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(robot::LAST_RETRY);
            }
            _ => return,
        }
    }
}

/// `served` as the database keeps it.
fn stored(served: &ServedCert, pem: &str) -> StoredCert {
    StoredCert {
        pem: pem.to_owned(),
        serial: served.info.serial.clone(),
        not_before: unix_ms(served.info.not_before),
        not_after: unix_ms(served.info.not_after),
    }
}

/// A time as the tables keep it: Unix milliseconds.
fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Unix milliseconds from a table as a time.
fn at_ms(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)
}

/// Whether a certificate (its `not_before` in Unix milliseconds, its serial
/// in hex) was issued later than another: the later start, then the larger
/// serial.
pub fn issued_later(a: (i64, &str), b: (i64, &str)) -> bool {
    let serial = |s: &str| {
        let digits = s.trim_start_matches('0').to_ascii_uppercase();
        (digits.len(), digits)
    };
    (a.0, serial(a.1)) > (b.0, serial(b.1))
}

/// This process's name in the fleet: its host, its pid and a random part
/// (a pid may come back after a restart).
fn member_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".to_owned());
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("{host}:{}:{}", std::process::id(), &random[..8])
}

/// Bytes as lowercase hex, as the database keeps digests and secrets.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// [`hex`]'s text back to bytes, or None when it is not hex.
fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A task that panics (a CA's answer no one foresaw) starts again, and
    /// the member says its orders fail; aborting the supervisor aborts it.
    #[tokio::test]
    async fn a_panicking_robot_starts_again_and_says_so() {
        let (dir, _db, identity) = sync::tests::member("supervised").await;
        let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = runs.clone();
        let supervisor = tokio::spawn(supervised(
            identity.clone(),
            "the certificate robot",
            Duration::from_millis(20),
            move || {
                let counted = counted.clone();
                async move {
                    if counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                        panic!("overflow when adding duration to instant");
                    }
                    std::future::pending::<()>().await;
                }
            },
        ));
        // Waited for, not timed: on a busy machine (tests side by side)
        // the restart 20 ms later came after a fixed 300 ms wait.
        let started_again = async {
            while runs.load(std::sync::atomic::Ordering::SeqCst) < 2 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), started_again)
            .await
            .expect("started again within 30 s");
        assert_eq!(
            runs.load(std::sync::atomic::Ordering::SeqCst),
            2,
            "started again once"
        );
        let (failures, error) = identity.trouble().expect("the panic is a failure");
        assert_eq!(failures, 1);
        assert!(
            error.contains("the certificate robot stopped on a panic: overflow"),
            "{error}"
        );
        supervisor.abort();
        let _ = supervisor.await;
        std::fs::remove_dir_all(dir).unwrap();
    }
}
