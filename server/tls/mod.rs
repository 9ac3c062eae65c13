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

mod identity;
pub mod renewal;
pub mod robot;
pub mod store;
mod sync;
pub mod tickets;

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::edge::acme::{self, AcmeSettings};
use crate::edge::acme_http::AcmeHttp;
use crate::edge::certs::rfc3339;
use identity::stored;
pub use identity::{issued_later, Identity, Offer, FILE_MEMBER_EVERY, SYNC_EVERY};
pub use tickets::TICKET_SYNC_EVERY;

impl Identity {
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
