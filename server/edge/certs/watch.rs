//! The operator's certificate files (`TLS_CERT`, `TLS_KEY`) watched, and a
//! changed pair put in service without a restart.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::pair::PairProblems;
use super::resolver::Certs;
use super::served::{rfc3339, ServedCert};

/// How often the operator's certificate files are checked for a change.
pub const FILE_CHECK_EVERY: Duration = Duration::from_secs(2);

/// Watches the operator's files (`TLS_CERT`, `TLS_KEY`: `paths`) and puts
/// a changed pair in service, as `load` reads it (`config::OwnFiles`); a
/// pair that does not load (one file written, not yet the other) keeps the
/// certificate in service, with a warning naming every problem of the pair
/// as a start would, until the next check. The member's row in the
/// database follows (`tls::Identity` says what `certs` serves).
pub fn watch_files<L>(
    certs: Arc<Certs>,
    paths: [PathBuf; 2],
    load: L,
) -> tokio::task::JoinHandle<()>
where
    L: Fn() -> Result<ServedCert, PairProblems> + Send + Sync + 'static,
{
    fn stamp(paths: &[PathBuf; 2]) -> Vec<Option<(SystemTime, u64)>> {
        paths
            .iter()
            .map(|p| {
                std::fs::metadata(p)
                    .ok()
                    .and_then(|m| Some((m.modified().ok()?, m.len())))
            })
            .collect()
    }
    let load = Arc::new(load);
    tokio::spawn(async move {
        let mut seen = stamp(&paths);
        let mut warned = false;
        loop {
            tokio::time::sleep(FILE_CHECK_EVERY).await;
            let now = stamp(&paths);
            if now == seen {
                continue;
            }
            let load = load.clone();
            match tokio::task::spawn_blocking(move || load()).await {
                Ok(Ok(served)) => {
                    tracing::info!(serial = %served.info.serial, valid_until = %rfc3339(served.info.not_after), "TLS_CERT / TLS_KEY changed: the new certificate is in service");
                    certs.deploy(served);
                    seen = now;
                    warned = false;
                }
                Ok(Err(why)) if !warned => {
                    tracing::warn!(error = %why, "TLS_CERT / TLS_KEY changed but do not load; the previous certificate stays in service");
                    warned = true;
                }
                _ => {}
            }
        }
    })
}
