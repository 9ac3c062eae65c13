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
//! A newer state always wins: a process that serves a certificate newer
//! than the database's stores it (a certificate obtained while the
//! database was away; a database restored from an older backup), and
//! `citizen-site restore` keeps these tables from the database it replaces
//! ([`store::TABLES`]). A start while the database is unreachable serves
//! the local copy of the last certificate (`edge::acme`) and orders
//! nothing until the database is back.

pub mod robot;
pub mod store;
pub mod tickets;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
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
    served: ArcSwapOption<StoredCert>,
    /// Set once the shared state has been read (the first round of
    /// [`Identity::sync`]): a server says it is ready only after, so the
    /// successor of an upgrade resumes the sessions of its predecessor.
    pub read: crate::live::Flag,
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
        })
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
            acme::create_private_dir(&folder)
                .with_context(|| format!("ACME_CACHE_DIR: cannot create {}", folder.display()))?;
            let http = AcmeHttp::new(settings.directory_ca.as_deref())?;
            if let Some((served, pem)) = acme::load_local(settings) {
                tracing::info!(
                    serial = %served.info.serial,
                    valid_until = %rfc3339(served.info.not_after),
                    renew_from = %rfc3339(served.info.renew_at()),
                    "HTTPS: the stored certificate is in service"
                );
                self.served.store(Some(Arc::new(stored(&served, &pem))));
                self.certs.deploy(served);
            }
            tasks.push(tokio::spawn(robot::run(
                self.clone(),
                settings.clone(),
                http,
            )));
        }
        let me = self.clone();
        tasks.push(tokio::spawn(async move { me.sync(acme).await }));
        Ok(tasks)
    }

    /// Reads the shared state every [`SYNC_EVERY`] until the process ends.
    async fn sync(self: Arc<Self>, acme: Option<AcmeSettings>) {
        let mut seen = tickets::Seen::new();
        let mut failing = false;
        // The ticket keys change once a period and are stored a period
        // ahead: read less often than the challenges (a few statements a
        // second would show in a handshake's share of the process's work).
        let ticket_every = (self.schedule.period / 4).min(TICKET_SYNC_EVERY);
        let mut tickets_read: Option<tokio::time::Instant> = None;
        let mut account_taken_over = false;
        loop {
            if !self.db.is_up() {
                // Down, or not migrated yet: the monitor says when it is back
                // (looked at often until the first round, which a start awaits).
                let wait = if self.read.is_set() {
                    SYNC_EVERY
                } else {
                    Duration::from_millis(50)
                };
                tokio::time::sleep(wait).await;
                continue;
            }
            let round = async {
                if tickets_read.is_none_or(|at| at.elapsed() >= ticket_every) {
                    tickets::sync(&self.db, self.schedule, &self.tickets, &mut seen).await?;
                    tickets_read = Some(tokio::time::Instant::now());
                }
                if let Some(settings) = &acme {
                    if !account_taken_over {
                        self.take_over_account(settings).await?;
                        account_taken_over = true;
                    }
                    self.sync_challenges().await?;
                    self.sync_certificate(settings).await?;
                }
                Ok::<_, sqlx::Error>(())
            }
            .await;
            if round.is_ok() {
                self.read.set();
            }
            match round {
                Ok(()) if failing => {
                    tracing::info!("HTTPS: the shared TLS state is read from the database again");
                    failing = false;
                }
                Err(e) if !failing => {
                    tracing::warn!(error = %e, "HTTPS: the shared TLS state cannot be read from the database; serving what this process holds");
                    failing = true;
                }
                _ => {}
            }
            tokio::time::sleep(SYNC_EVERY).await;
        }
    }

    /// The account an older version kept in `ACME_CACHE_DIR`, stored in
    /// the database if it has none for this directory (the certificate's
    /// local copy goes there through [`Identity::sync_certificate`]).
    async fn take_over_account(&self, settings: &AcmeSettings) -> Result<(), sqlx::Error> {
        let file = settings.account_file();
        let Ok(credentials) = std::fs::read_to_string(&file) else {
            return Ok(());
        };
        if store::account(&self.db, &settings.directory)
            .await?
            .is_none()
        {
            store::put_account(&self.db, &settings.directory, &credentials).await?;
            tracing::info!(file = %file.display(), "HTTPS: the ACME account kept by an older version is in the database now");
        }
        Ok(())
    }

    async fn sync_challenges(&self) -> Result<(), sqlx::Error> {
        let mut http = HashMap::new();
        let mut alpn = Vec::new();
        for c in store::challenges(&self.db).await? {
            match c.kind.as_str() {
                "http-01" => {
                    http.insert(c.name, c.answer);
                }
                _ => match unhex(&c.answer) {
                    Some(digest) => alpn.push((c.name, digest)),
                    None => {
                        tracing::warn!(domain = %c.name, "HTTPS: a stored TLS-ALPN-01 answer is not hex; not answered")
                    }
                },
            }
        }
        self.certs.replace_challenges(http, alpn);
        Ok(())
    }

    /// Puts the database's certificate in service if it lasts longer than
    /// the one served; stores the one served if it lasts longer than the
    /// database's.
    pub async fn sync_certificate(&self, settings: &AcmeSettings) -> Result<(), sqlx::Error> {
        let (directory, names) = (&settings.directory, settings.names_key());
        let stamp = store::certificate_stamp(&self.db, directory, &names).await?;
        let served = self.served.load_full();
        let served_until = served.as_ref().map_or(i64::MIN, |s| s.not_after);
        match stamp {
            Some((_, not_after)) if not_after > served_until => {
                let Some(found) = store::certificate(&self.db, directory, &names).await? else {
                    return Ok(());
                };
                if let Some(cert) = acme::usable(settings, &found.pem, "the database's certificate")
                {
                    tracing::info!(
                        serial = %cert.info.serial,
                        valid_until = %rfc3339(cert.info.not_after),
                        "HTTPS: the certificate in the database is in service"
                    );
                    self.put_in_service(settings, cert, found.pem);
                }
            }
            _ => {
                if let Some(mine) = served.filter(|s| s.not_after > stamp.map_or(i64::MIN, |s| s.1))
                {
                    if store::put_certificate(&self.db, directory, &names, &mine).await? {
                        tracing::info!(serial = %mine.serial, "HTTPS: the certificate in service is newer than the database's; stored there");
                    }
                }
            }
        }
        Ok(())
    }

    /// Puts `served` in service and keeps it as the local copy.
    fn put_in_service(&self, settings: &AcmeSettings, served: ServedCert, pem: String) {
        let file = settings.cert_file();
        if let Err(e) = acme::write_private(&file, pem.as_bytes()) {
            tracing::warn!(error = %e, file = %file.display(), "HTTPS: the local copy of the certificate cannot be written (a start while the database is away would serve none)");
        }
        self.served.store(Some(Arc::new(stored(&served, &pem))));
        self.certs.deploy(served);
    }
}

/// `served` as the database keeps it.
fn stored(served: &ServedCert, pem: &str) -> StoredCert {
    let ms = |t: SystemTime| {
        t.duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    };
    StoredCert {
        pem: pem.to_owned(),
        serial: served.info.serial.clone(),
        not_before: ms(served.info.not_before),
        not_after: ms(served.info.not_after),
    }
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
