//! Stored intro requests as an operator sees them (`citizen-site intro`):
//! listed, one by id, and a request the honeypot held released to be
//! forwarded. The forwarder's own SQL (claim, settle) is in [`super::store`].

use std::fmt;
use std::str::FromStr;

use sqlx::Row;

use crate::db::{now_ms, Db};

/// Where a stored request stands. The table keeps `pending`, `forwarded`
/// and `spam`; a pending request whose last try failed is `Failed` (it is
/// still retried: a request is never dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Waiting for its first try (or stored only: Notion forwarding is off).
    Pending,
    /// Waiting for its next try after a failed one.
    Failed,
    Forwarded,
    /// Caught by the form's honeypot: kept, never forwarded unless released.
    Spam,
}

impl State {
    pub const ALL: [State; 4] = [State::Pending, State::Failed, State::Forwarded, State::Spam];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Failed => "failed",
            State::Forwarded => "forwarded",
            State::Spam => "spam",
        }
    }

    /// The rows in this state, as a condition on the table's columns.
    fn condition(self) -> &'static str {
        match self {
            State::Pending => "status = 'pending' AND last_error IS NULL",
            State::Failed => "status = 'pending' AND last_error IS NOT NULL",
            State::Forwarded => "status = 'forwarded'",
            State::Spam => "status = 'spam'",
        }
    }

    fn of_row(status: &str, last_error: Option<&str>) -> State {
        match (status, last_error) {
            ("forwarded", _) => State::Forwarded,
            ("spam", _) => State::Spam,
            (_, Some(_)) => State::Failed,
            _ => State::Pending,
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for State {
    type Err = String;

    fn from_str(s: &str) -> Result<State, String> {
        State::ALL
            .into_iter()
            .find(|state| state.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "{s:?} is not a status: use one of {}",
                    State::ALL.map(State::as_str).join(", ")
                )
            })
    }
}

/// One stored request, every column an operator may want. Times are Unix
/// milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub id: String,
    pub received_at: i64,
    pub state: State,
    pub name: String,
    pub contact_person: String,
    pub email: String,
    pub website: String,
    pub description: String,
    /// The stored tags; stored tags that cannot be read come back as their
    /// stored text, one item, so nothing is hidden from the operator.
    pub tags: Vec<String>,
    /// Failed tries so far.
    pub attempts: i64,
    /// When the forwarder tries next (pending and failed requests).
    pub next_attempt_at: Option<i64>,
    pub last_error: Option<String>,
    /// A process forwarding it now, and until when its claim holds.
    pub claimed_by: Option<String>,
    pub claimed_until: Option<i64>,
    pub notion_page_id: Option<String>,
    pub forwarded_at: Option<i64>,
}

impl Record {
    /// Another process holds the request now (it is being forwarded).
    pub fn claimed_at(&self, now: i64) -> Option<&str> {
        self.claimed_by
            .as_deref()
            .filter(|_| self.claimed_until.is_some_and(|t| t >= now))
    }
}

/// Which requests to list.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter {
    pub state: Option<State>,
    /// Stored at or after this time (Unix ms).
    pub since: Option<i64>,
}

const COLUMNS: &str = "id, created_at, status, name, contact_person, email, website, description, tags, attempts, \
                       next_attempt_at, last_error, claimed_by, claimed_until, notion_page_id, forwarded_at";

/// The requests that match, oldest first.
pub async fn list(db: &Db, filter: Filter) -> Result<Vec<Record>, sqlx::Error> {
    let mut conditions = Vec::new();
    if let Some(state) = filter.state {
        conditions.push(state.condition());
    }
    if filter.since.is_some() {
        conditions.push("created_at >= $1");
    }
    let mut sql = format!("SELECT {COLUMNS} FROM intro_requests");
    if !conditions.is_empty() {
        sql = format!("{sql} WHERE {}", conditions.join(" AND "));
    }
    sql.push_str(" ORDER BY created_at, id");
    let mut query = sqlx::query(&sql);
    if let Some(since) = filter.since {
        query = query.bind(since);
    }
    let rows = db.timed(query.fetch_all(&db.pool)).await?;
    rows.iter().map(record).collect()
}

/// The request with this id.
pub async fn get(db: &Db, id: &str) -> Result<Option<Record>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM intro_requests WHERE id = $1");
    let row = db
        .timed(sqlx::query(&sql).bind(id).fetch_optional(&db.pool))
        .await?;
    row.as_ref().map(record).transpose()
}

/// What [`release`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Released {
    /// The request is pending, due now.
    Done,
    NotFound,
    /// It was not held as spam; nothing changed.
    NotHeld(State),
}

/// Sends a request the honeypot held back to pending, due at once: the
/// forwarder (of any process) takes it like a new one.
pub async fn release(db: &Db, id: &str) -> Result<Released, sqlx::Error> {
    let released = db
        .timed(
            sqlx::query(
                "UPDATE intro_requests SET status = 'pending', next_attempt_at = $1, attempts = 0, last_error = NULL, \
                 claimed_by = NULL, claimed_until = NULL WHERE id = $2 AND status = 'spam'",
            )
            .bind(now_ms())
            .bind(id)
            .execute(&db.pool),
        )
        .await?
        .rows_affected();
    if released == 1 {
        return Ok(Released::Done);
    }
    Ok(match get(db, id).await? {
        None => Released::NotFound,
        Some(r) => Released::NotHeld(r.state),
    })
}

fn record(r: &sqlx::any::AnyRow) -> Result<Record, sqlx::Error> {
    let status: String = r.try_get("status")?;
    let last_error: Option<String> = r.try_get("last_error")?;
    let raw_tags: String = r.try_get("tags")?;
    let tags = serde_json::from_str(&raw_tags).unwrap_or_else(|_| vec![raw_tags]);
    let state = State::of_row(&status, last_error.as_deref());
    let waiting = matches!(state, State::Pending | State::Failed);
    Ok(Record {
        id: r.try_get("id")?,
        received_at: r.try_get("created_at")?,
        state,
        name: r.try_get("name")?,
        contact_person: r.try_get("contact_person")?,
        email: r.try_get("email")?,
        website: r.try_get("website")?,
        description: r.try_get("description")?,
        tags,
        attempts: r.try_get("attempts")?,
        next_attempt_at: if waiting {
            r.try_get("next_attempt_at")?
        } else {
            None
        },
        last_error,
        claimed_by: r.try_get("claimed_by")?,
        claimed_until: r.try_get("claimed_until")?,
        notion_page_id: r.try_get("notion_page_id")?,
        forwarded_at: r.try_get("forwarded_at")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_name_parses_back_and_others_are_refused_with_the_list() {
        for state in State::ALL {
            assert_eq!(state.as_str().parse::<State>().unwrap(), state);
        }
        let err = "held".parse::<State>().unwrap_err();
        assert!(err.contains("pending, failed, forwarded, spam"), "{err}");
    }

    #[test]
    fn a_pending_request_with_an_error_is_failed() {
        assert_eq!(State::of_row("pending", None), State::Pending);
        assert_eq!(
            State::of_row("pending", Some("Notion answered 500")),
            State::Failed
        );
        assert_eq!(State::of_row("forwarded", None), State::Forwarded);
        assert_eq!(State::of_row("spam", None), State::Spam);
    }
}
