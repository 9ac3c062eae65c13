//! What the commands print, and the times they read: tables for people,
//! JSON for scripts, a visitor's text made safe for a terminal, UTC and
//! RFC 3339 times, `--since`, and an error's causes in one line.

/// An error already told to the user (the command printed its report):
/// the process exits non-zero and says nothing more.
#[derive(Debug)]
pub struct Reported;

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(reported above)")
    }
}

impl std::error::Error for Reported {}

/// An error and its causes in one line, each said once: a cause whose
/// text the line already holds is left out (sqlx repeats a database's
/// message in its own).
pub fn said_once(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// Prints `value` as pretty JSON on standard output.
pub fn print_json(value: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).expect("JSON values serialize")
    );
}

/// Text a visitor sent, safe to print on a terminal: control characters
/// (escape sequences among them) become U+FFFD, line breaks a space.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\n' | '\r' | '\t' => ' ',
            c if c.is_control() => '\u{FFFD}',
            c => c,
        })
        .collect()
}

/// At most `max` characters of `text`, an ellipsis marking a cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// Rows under a header, in columns as wide as their widest cell.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len().saturating_sub(1);
        let mut out = String::new();
        for (i, cell) in cells.into_iter().enumerate() {
            out.push_str(cell);
            if i < last {
                out.extend(std::iter::repeat_n(
                    ' ',
                    widths[i] - cell.chars().count() + 2,
                ));
            }
        }
        out.trim_end().to_owned()
    };
    let mut out = line(header.to_vec());
    for row in rows {
        out.push('\n');
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

/// `--since`: a day (`2026-11-25`, from midnight UTC) or an RFC 3339 time
/// (`2026-11-25T09:30:00Z`); Unix milliseconds.
pub fn parse_since(raw: &str) -> Result<i64, String> {
    use time::format_description::well_known::Rfc3339;
    let day = time::macros::format_description!("[year]-[month]-[day]");
    let at = time::Date::parse(raw, day)
        .map(|d| d.midnight().assume_utc())
        .or_else(|_| time::OffsetDateTime::parse(raw, &Rfc3339))
        .map_err(|_| format!("{raw:?} is not a date: use YYYY-MM-DD (2026-11-25) or an RFC 3339 time (2026-11-25T09:30:00Z)"))?;
    Ok((at.unix_timestamp_nanos() / 1_000_000) as i64)
}

fn datetime(ms: i64) -> time::OffsetDateTime {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
}

/// A stored time for a table: `2026-11-25 09:30:12` (UTC).
pub fn utc(ms: i64) -> String {
    datetime(ms)
        .format(time::macros::format_description!(
            "[year]-[month]-[day] [hour]:[minute]:[second]"
        ))
        .unwrap_or_default()
}

/// A stored time for JSON and CSV: RFC 3339 in UTC, to the millisecond.
pub fn rfc3339(ms: i64) -> String {
    datetime(ms)
        .format(time::macros::format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        ))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_a_day_or_a_time_and_refuses_anything_else() {
        assert_eq!(parse_since("2026-11-25").unwrap(), 1_795_564_800_000);
        assert_eq!(
            parse_since("2026-11-25T09:30:00Z").unwrap(),
            1_795_564_800_000 + 9 * 3_600_000 + 30 * 60_000
        );
        assert_eq!(
            parse_since("2026-11-25T10:30:00+01:00").unwrap(),
            parse_since("2026-11-25T09:30:00Z").unwrap()
        );
        for bad in ["yesterday", "2026-13-01", "25/11/2026", ""] {
            assert!(
                parse_since(bad).unwrap_err().contains("is not a date"),
                "{bad}"
            );
        }
    }

    #[test]
    fn times_print_in_utc_and_round_trip_through_rfc3339() {
        let ms = parse_since("2026-11-25T09:30:12.345Z").unwrap();
        assert_eq!(utc(ms), "2026-11-25 09:30:12");
        assert_eq!(rfc3339(ms), "2026-11-25T09:30:12.345Z");
        assert_eq!(parse_since(&rfc3339(ms)).unwrap(), ms);
    }

    #[test]
    fn what_a_visitor_typed_cannot_drive_the_terminal() {
        assert_eq!(
            printable("Ana\u{1b}[2J\nLopes\u{7}"),
            "Ana\u{FFFD}[2J Lopes\u{FFFD}"
        );
    }

    #[test]
    fn tables_align_columns_by_characters() {
        let t = table(
            &["ID", "NAME"],
            &[
                vec!["1".into(), "Zoë".into()],
                vec!["22".into(), "Ana".into()],
            ],
        );
        assert_eq!(t, "ID  NAME\n1   Zoë\n22  Ana");
        assert_eq!(clip("Riverbend Mutual Credit", 10), "Riverbend…");
    }
}
