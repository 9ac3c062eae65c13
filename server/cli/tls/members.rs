//! The fleet's members as the `tls` commands show them: which are running,
//! and one member as JSON.

use std::time::Duration;

use serde_json::{json, Value};

use crate::cli::output::rfc3339;
use crate::tls::store::Member;

/// Members seen this recently are running (they read the shared state
/// every second).
pub(super) const ALIVE: Duration = Duration::from_secs(10);
/// Where `m`'s certificate comes from, as its row says: None for a row of
/// a schema that does not keep it (`served_kept` false).
pub(super) fn source(m: &Member, served_kept: bool) -> Option<&'static str> {
    served_kept.then(|| m.source.as_str())
}

pub(super) fn member_json(m: &Member, served_kept: bool) -> Value {
    json!({
        "member": m.member,
        "source": source(m, served_kept),
        "serial": m.serial,
        "names": m.names,
        "not_after": m.not_after.map(rfc3339),
        "failures": m.failures,
        "last_error": m.last_error,
    })
}
