//! One process's view of the fleet's HTTPS identity ([`Identity`]): what it
//! serves, its name in the fleet, its own failed orders and the fleet's
//! renewal schedule as last read; and how the tables keep times and
//! certificates.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwapOption;

use super::store::{self, StoredCert};
use super::tickets::TicketSchedule;
use crate::db::Db;
use crate::edge::certs::{Certs, ServedCert};
use crate::edge::tickets::TicketKeys;
use crate::metrics::AcmeOrders;

/// How often each process reads the challenges and the certificate.
pub const SYNC_EVERY: Duration = Duration::from_secs(1);
/// How often a process serving its own files (`TLS_CERT`) writes its
/// `tls_members` row when what it serves is unchanged: well within the
/// 10 s in which `citizen-site tls` counts a member as running. It writes
/// at once when another certificate is in service (a reload), and a
/// member under ACME writes every [`SYNC_EVERY`].
pub const FILE_MEMBER_EVERY: Duration = Duration::from_secs(5);

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
    pub(super) trouble: Mutex<Option<(u64, String)>>,
    /// The fleet's renewal schedule, as last read (`renewal`).
    pub(super) renewal: Mutex<Option<store::Schedule>>,
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
}

/// `served` as the database keeps it.
pub(super) fn stored(served: &ServedCert, pem: &str) -> StoredCert {
    StoredCert {
        pem: pem.to_owned(),
        serial: served.info.serial.clone(),
        not_before: unix_ms(served.info.not_before),
        not_after: unix_ms(served.info.not_after),
    }
}

/// A time as the tables keep it: Unix milliseconds.
pub(super) fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Unix milliseconds from a table as a time.
pub(super) fn at_ms(ms: i64) -> SystemTime {
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
