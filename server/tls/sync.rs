//! Each process's memory of the shared state, kept current from the
//! database every [`SYNC_EVERY`]: the ticket keys, the
//! challenge answers, the certificate (the newest issued wins, offered back
//! when this process holds a newer one), and this member's own row (what
//! it serves, from ACME or the operator's files). A member under ACME
//! writes its row every round (an order waits for the answers it says it
//! holds); one serving its own files every [`FILE_MEMBER_EVERY`], or at
//! once when another certificate is in service (a reload of the files).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::identity::{
    at_ms, issued_later, stored, unix_ms, Identity, Offer, FILE_MEMBER_EVERY, SYNC_EVERY,
};
use super::store::{self, unhex, StoredCert};
use super::tickets;
use crate::edge::acme::{self, AcmeSettings};
use crate::edge::certs::{rfc3339, ServedCert};

/// When a member serving its own files last wrote its row, and the serial
/// it served then.
#[derive(Debug, Default)]
struct FileRow(Option<(Instant, Option<String>)>);

impl FileRow {
    /// Whether the row is due at `now`, serving `serial`: never written,
    /// written [`FILE_MEMBER_EVERY`] ago, or another certificate is in
    /// service since.
    fn due(&self, now: Instant, serial: Option<&str>) -> bool {
        match &self.0 {
            None => true,
            Some((at, written)) => {
                now.duration_since(*at) >= FILE_MEMBER_EVERY || written.as_deref() != serial
            }
        }
    }

    fn written(&mut self, at: Instant, serial: Option<String>) {
        self.0 = Some((at, serial));
    }
}

impl Identity {
    /// Reads the shared state every [`SYNC_EVERY`] until the process ends.
    pub(super) async fn sync(self: Arc<Self>, acme: Option<AcmeSettings>) {
        let mut seen = tickets::Seen::new();
        let mut failing = false;
        // The ticket keys change once a period and are stored a period
        // ahead: read less often than the challenges (a few statements a
        // second would show in a handshake's share of the process's work).
        let ticket_every = self.schedule.read_every();
        let mut tickets_read: Option<Instant> = None;
        let mut file_row = FileRow::default();
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
                    tickets_read = Some(Instant::now());
                }
                match &acme {
                    Some(settings) => {
                        if !account_taken_over {
                            self.take_over_account(settings).await?;
                            account_taken_over = true;
                        }
                        let held = self.sync_challenges().await?;
                        self.sync_certificate(settings).await?;
                        self.say_member(held, store::Source::Acme).await?;
                    }
                    None => {
                        // Nothing here changes from one second to the next
                        // but a reload of the files: written less often.
                        let serial = self.certs.current().map(|s| s.info.serial.clone());
                        let now = Instant::now();
                        if file_row.due(now, serial.as_deref()) {
                            self.say_member(Vec::new(), store::Source::File).await?;
                            file_row.written(now, serial);
                        }
                    }
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
    /// local copy goes there through [`Identity::sync_certificate`]). A
    /// file that is not an account is logged and left out.
    pub(super) async fn take_over_account(
        &self,
        settings: &AcmeSettings,
    ) -> Result<(), sqlx::Error> {
        let file = settings.account_file();
        let Ok(credentials) = std::fs::read_to_string(&file) else {
            return Ok(());
        };
        if let Err(e) = serde_json::from_str::<instant_acme::AccountCredentials>(&credentials) {
            tracing::warn!(file = %file.display(), error = %e, "HTTPS: the ACME account kept by an older version cannot be read; it is not taken over (the robot makes a new account)");
            return Ok(());
        }
        if store::account(&self.db, &settings.directory)
            .await?
            .is_none()
        {
            store::put_account(&self.db, &settings.directory, &credentials).await?;
            tracing::info!(file = %file.display(), "HTTPS: the ACME account kept by an older version is in the database now");
        }
        Ok(())
    }

    /// Puts the stored challenge answers in service; returns the keys of
    /// those this process answers now ([`store::Challenge::key`]).
    pub(super) async fn sync_challenges(&self) -> Result<Vec<String>, sqlx::Error> {
        let mut http = HashMap::new();
        let mut alpn = Vec::new();
        let mut held = Vec::new();
        for c in store::challenges(&self.db).await? {
            match c.kind.as_str() {
                "http-01" => {
                    held.push(c.key());
                    http.insert(c.name, c.answer);
                }
                _ => match unhex(&c.answer) {
                    Some(digest) => {
                        held.push(c.key());
                        alpn.push((c.name, digest));
                    }
                    None => {
                        tracing::warn!(domain = %c.name, "HTTPS: a stored TLS-ALPN-01 answer is not hex; not answered")
                    }
                },
            }
        }
        self.certs.replace_challenges(http, alpn);
        Ok(held)
    }

    /// Forgets the answers an order of this process's put in service, now
    /// it is over: these only, so a holder resumed after its lease passed
    /// on leaves the next holder's (read from the database meanwhile).
    pub(super) fn forget_answers(&self, answers: &[store::Challenge]) {
        for c in answers {
            match c.kind.as_str() {
                "http-01" => self.certs.forget_http_challenge(&c.name, &c.answer),
                _ => {
                    if let Some(digest) = unhex(&c.answer) {
                        self.certs.forget_alpn_challenge(&c.name, &digest)
                    }
                }
            }
        }
    }

    /// Records this member as seen: what it serves (what its handshakes
    /// get, whether ACME or the operator's files put it in service, a
    /// reload of the files included), the answers it holds, its own
    /// trouble.
    pub(super) async fn say_member(
        &self,
        held: Vec<String>,
        source: store::Source,
    ) -> Result<(), sqlx::Error> {
        let served = self.certs.current();
        let trouble = self.trouble();
        store::put_member(
            &self.db,
            &store::Member {
                member: self.member.clone(),
                serial: served.as_ref().map(|s| s.info.serial.clone()),
                not_after: served.as_ref().map(|s| unix_ms(s.info.not_after)),
                names: served.as_ref().map(|s| s.info.names.clone()),
                source,
                challenges: held,
                failures: trouble.as_ref().map_or(0, |t| t.0 as i64),
                last_error: trouble.map(|t| t.1),
            },
        )
        .await
    }

    /// Puts the database's certificate in service if it was issued later
    /// than the one served (and can be used); stores the one served if it
    /// was issued later than the database's, or the database's cannot be
    /// used.
    pub async fn sync_certificate(&self, settings: &AcmeSettings) -> Result<(), sqlx::Error> {
        let (directory, names) = (&settings.directory, settings.names_key());
        let stamp = store::certificate_stamp(&self.db, directory, &names).await?;
        let served = self.served.load_full();
        if let Some((serial, not_before)) = &stamp {
            if served.as_ref().is_some_and(|s| s.serial == *serial) {
                return Ok(());
            }
            // Another certificate than the stored one is served. A retired
            // one (a start on the local copy of one `tls renew` replaced)
            // gives way to the stored one whatever its dates.
            let retired_mine = match served.as_ref() {
                Some(mine) => {
                    store::is_retired(&self.db, store::Retired::Certificate, &mine.serial).await?
                }
                None => false,
            };
            let later = retired_mine
                || served
                    .as_ref()
                    .is_none_or(|s| issued_later((*not_before, serial), (s.not_before, &s.serial)));
            if later {
                if let Some(found) = store::certificate(&self.db, directory, &names).await? {
                    let retired =
                        store::is_retired(&self.db, store::Retired::Certificate, &found.serial)
                            .await?;
                    let now = at_ms(store::clock(&self.db).await?);
                    if let Some(cert) =
                        acme::usable(settings, &found.pem, "the database's certificate", now)
                            .filter(|_| !retired)
                    {
                        tracing::info!(
                            serial = %cert.info.serial,
                            valid_until = %rfc3339(cert.info.not_after),
                            "HTTPS: the certificate in the database is in service"
                        );
                        self.put_in_service(settings, cert, found.pem);
                        return Ok(());
                    }
                }
            }
        }
        if let Some(mine) = served {
            match self.offer(settings, &mine, None).await? {
                Offer::Stored => {
                    tracing::info!(serial = %mine.serial, "HTTPS: the certificate in service was issued later than the database's (or that one cannot be used); stored there")
                }
                Offer::Retired => self.withdraw(settings, &mine.serial),
                Offer::Older | Offer::Fenced => {}
            }
        }
        Ok(())
    }

    /// Offers `mine` to the database: it replaces the stored certificate if
    /// that one was issued earlier or cannot be used here, by
    /// compare-and-swap (with `hold`, only while that lease holds).
    pub async fn offer(
        &self,
        settings: &AcmeSettings,
        mine: &StoredCert,
        hold: Option<&store::Hold>,
    ) -> Result<Offer, sqlx::Error> {
        let (directory, names) = (&settings.directory, settings.names_key());
        if store::is_retired(&self.db, store::Retired::Certificate, &mine.serial).await? {
            return Ok(Offer::Retired);
        }
        // A row changed between the read and the write: judged again.
        for _ in 0..3 {
            let row = store::certificate(&self.db, directory, &names).await?;
            let replacing = match &row {
                None => None,
                Some(r) if r.serial == mine.serial => return Ok(Offer::Stored),
                Some(r) => {
                    let theirs_later =
                        issued_later((r.not_before, &r.serial), (mine.not_before, &mine.serial));
                    // The database's clock, read only when a row issued
                    // later is to be judged.
                    if theirs_later
                        && acme::usable(
                            settings,
                            &r.pem,
                            "the database's certificate",
                            at_ms(store::clock(&self.db).await?),
                        )
                        .is_some()
                        && !store::is_retired(&self.db, store::Retired::Certificate, &r.serial)
                            .await?
                    {
                        return Ok(Offer::Older);
                    }
                    Some(r.serial.as_str())
                }
            };
            if store::put_certificate(&self.db, directory, &names, mine, replacing, hold).await? {
                return Ok(Offer::Stored);
            }
            if let Some(hold) = hold {
                if !store::holds(&self.db, hold).await? {
                    return Ok(Offer::Fenced);
                }
            }
        }
        Ok(Offer::Older)
    }

    /// Takes the retired certificate `serial` out of service, and out of
    /// the local copy: no handshake gets it again (until another comes,
    /// none is served, and the robot orders one).
    pub(super) fn withdraw(&self, settings: &AcmeSettings, serial: &str) {
        tracing::warn!(%serial, "HTTPS: the certificate in service is retired (citizen-site tls renew); it is served no more");
        self.served.store(None);
        self.certs.withdraw();
        let file = settings.cert_file();
        if let Err(e) = std::fs::remove_file(&file) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(error = %e, file = %file.display(), "HTTPS: the local copy of a retired certificate cannot be removed");
            }
        }
    }

    /// Puts `served` in service and keeps it as the local copy.
    pub(super) fn put_in_service(&self, settings: &AcmeSettings, served: ServedCert, pem: String) {
        let file = settings.cert_file();
        if let Err(e) = acme::write_private(&file, pem.as_bytes()) {
            tracing::warn!(error = %e, file = %file.display(), "HTTPS: the local copy of the certificate cannot be written (a start while the database is away would serve none)");
        }
        self.served.store(Some(Arc::new(stored(&served, &pem))));
        self.certs.deploy(served);
    }
}

#[cfg(test)]
pub(in crate::tls) mod tests {
    use super::*;
    use crate::db::Db;
    use crate::edge::acme::{AcmeTiming, Challenge};
    use crate::edge::certs::Certs;
    use crate::edge::tickets::TicketKeys;
    use crate::tls::tickets::TicketSchedule;

    pub(in crate::tls) fn settings(dir: &std::path::Path) -> AcmeSettings {
        AcmeSettings {
            domains: vec!["site.example".into()],
            directory: "https://ca.example/dir".into(),
            contact: vec![],
            directory_ca: None,
            cache_dir: dir.join("acme"),
            challenge: Challenge::TlsAlpn01,
            profile: None,
            timing: AcmeTiming::default(),
        }
    }

    /// A member of a fleet of one, on a SQLite file in a folder of its own.
    pub(in crate::tls) async fn member(what: &str) -> (std::path::PathBuf, Db, Arc<Identity>) {
        let (db, dir) = crate::db::scratch(what).await;
        let schedule = TicketSchedule::every(Duration::from_secs(3600));
        let identity = Identity::new(
            db.clone(),
            Certs::new(),
            TicketKeys::new(schedule.lifetime, schedule.keep()).unwrap(),
            schedule,
            crate::metrics::Metrics::new().acme,
        );
        (dir, db, identity)
    }

    /// A certificate for site.example valid from `from` to `until` days
    /// from now, as the database keeps it.
    pub(in crate::tls) fn issued(from: i64, until: i64) -> StoredCert {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["site.example".to_owned()]).unwrap();
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now + time::Duration::days(from);
        params.not_after = now + time::Duration::days(until);
        let pem = format!(
            "{}{}",
            key.serialize_pem(),
            params.self_signed(&key).unwrap().pem()
        );
        let served = crate::edge::certs::parse(pem.as_bytes(), pem.as_bytes(), ("c", "k")).unwrap();
        stored(&served, &pem)
    }

    #[tokio::test]
    async fn the_certificate_issued_last_wins_though_it_ends_sooner_and_an_unusable_row_is_replaced(
    ) {
        let (dir, db, identity) = member("offer").await;
        let settings = settings(&dir);
        let names = settings.names_key();
        let row = || async {
            store::certificate(&db, &settings.directory, &names)
                .await
                .unwrap()
                .unwrap()
                .serial
        };

        // A 90-day certificate, then a 6-day one issued after it (a shorter
        // profile): the 6-day one is newer.
        let long = issued(-10, 80);
        let short = issued(-1, 5);
        assert_eq!(
            identity.offer(&settings, &long, None).await.unwrap(),
            Offer::Stored
        );
        assert_eq!(
            identity.offer(&settings, &short, None).await.unwrap(),
            Offer::Stored
        );
        assert_eq!(row().await, short.serial);
        assert_eq!(
            identity.offer(&settings, &long, None).await.unwrap(),
            Offer::Older,
            "the one issued before does not come back"
        );
        assert_eq!(row().await, short.serial);

        // A row this server cannot use, however late its dates, is replaced.
        let mut damaged = issued(0, 300);
        damaged.pem = damaged
            .pem
            .replace("CERTIFICATE-----\nMII", "CERTIFICATE-----\nXXX");
        let put = |c: StoredCert, replacing: String| {
            let (db, directory, names) = (db.clone(), settings.directory.clone(), names.clone());
            async move {
                assert!(store::put_certificate(
                    &db,
                    &directory,
                    &names,
                    &c,
                    Some(&replacing),
                    None
                )
                .await
                .unwrap());
            }
        };
        put(damaged, short.serial.clone()).await;
        assert_eq!(
            identity.offer(&settings, &long, None).await.unwrap(),
            Offer::Stored
        );
        assert_eq!(row().await, long.serial);
        // So is an expired one.
        let mut expired = issued(-3, -1);
        expired.not_before += 86_400_000 * 30;
        put(expired, long.serial.clone()).await;
        assert_eq!(
            identity.offer(&settings, &short, None).await.unwrap(),
            Offer::Stored
        );
        assert_eq!(row().await, short.serial);

        // Offered under a lease that is lost: nothing is written.
        let hold = store::take_lease(&db, "order", "me", Duration::ZERO)
            .await
            .unwrap()
            .unwrap();
        let later = issued(0, 6);
        assert_eq!(
            identity
                .offer(&settings, &later, Some(&hold))
                .await
                .unwrap(),
            Offer::Fenced
        );
        assert_eq!(row().await, short.serial);
        db.close().await;
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn a_retired_certificate_gives_way_to_the_stored_one_or_leaves_service() {
        let (dir, db, identity) = member("retired").await;
        let settings = settings(&dir);
        std::fs::create_dir_all(settings.folder()).unwrap();
        let serve = |c: &StoredCert| {
            let served =
                crate::edge::certs::parse(c.pem.as_bytes(), c.pem.as_bytes(), ("c", "k")).unwrap();
            identity.put_in_service(&settings, served, c.pem.clone());
        };
        // A start on the local copy of a certificate `tls renew` replaced
        // by one issued before it (a clock that ran back, say): the stored
        // one is served all the same.
        let (old, new) = (issued(-1, 80), issued(-5, 80));
        serve(&old);
        assert_eq!(
            identity.offer(&settings, &new, None).await.unwrap(),
            Offer::Stored
        );
        store::retire(&db, store::Retired::Certificate, &old.serial)
            .await
            .unwrap();
        identity.sync_certificate(&settings).await.unwrap();
        assert_eq!(identity.certs.current().unwrap().info.serial, new.serial);
        assert_eq!(
            std::fs::read_to_string(settings.cert_file()).unwrap(),
            new.pem,
            "the local copy too"
        );
        // Retired with nothing stored in its place: out of service, local
        // copy gone, never written back.
        store::retire(&db, store::Retired::Certificate, &new.serial)
            .await
            .unwrap();
        sqlx::query("DELETE FROM tls_certificates")
            .execute(&db.pool)
            .await
            .unwrap();
        identity.sync_certificate(&settings).await.unwrap();
        assert!(identity.certs.current().is_none());
        assert!(!settings.cert_file().exists());
        assert_eq!(store::certificates(&db).await.unwrap(), []);
        db.close().await;
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn a_damaged_account_file_of_an_older_version_is_not_taken_over() {
        let (dir, db, identity) = member("account").await;
        let settings = settings(&dir);
        std::fs::create_dir_all(settings.folder()).unwrap();
        std::fs::write(settings.account_file(), "{\"id\": \"cut sho").unwrap();
        identity.take_over_account(&settings).await.unwrap();
        assert_eq!(
            store::account(&db, &settings.directory).await.unwrap(),
            None,
            "left out: the robot makes a new account instead of failing on this one"
        );
        db.close().await;
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_file_members_row_is_written_every_few_seconds_or_at_once_after_a_reload() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut row = FileRow::default();
        assert!(row.due(start, Some("AA")), "never written");
        row.written(start, Some("AA".into()));
        for second in 1..5 {
            assert!(
                !row.due(at(second * 1000), Some("AA")),
                "not every second ({second} s)"
            );
        }
        assert!(row.due(at(5000), Some("AA")), "{FILE_MEMBER_EVERY:?} since");
        assert!(
            FILE_MEMBER_EVERY * 2 <= Duration::from_secs(10),
            "well within ALIVE"
        );
        row.written(at(5000), Some("AA".into()));
        assert!(row.due(at(6000), Some("BB")), "a reload: at once");
        assert!(row.due(at(6000), None), "withdrawn: at once");
    }

    #[test]
    fn issued_later_reads_the_start_then_the_serial_as_a_number() {
        assert!(issued_later((2, "01"), (1, "FF")));
        assert!(issued_later((1, "0100"), (1, "FF")));
        assert!(!issued_later((1, "00FF"), (1, "ff")));
        assert!(issued_later((1, "AB"), (1, "aa")));
    }
}
