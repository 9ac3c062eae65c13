//! When a post goes live. Its front matter's `date` is a day (its start in
//! UTC) or a date and time with its offset (RFC 3339); a post dated after
//! now is scheduled, and every reader of the blog sees it only from then on
//! (server/content/blog/mod.rs). `pack` says what it scheduled and when
//! ([`crate::content::schedule_of`]); the server wakes at each post's time
//! (`app::background::publish_scheduled`).

use time::OffsetDateTime;

/// A post whose time has not come: what `pack` says it scheduled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upcoming {
    pub id: String,
    /// Its `date`, as the front matter gives it.
    pub date: String,
    /// Seconds until it is published.
    pub in_secs: i64,
}

impl std::fmt::Display for Upcoming {
    /// `scheduled /blog/ID for 2026-12-01T09:00:00+01:00: in 2 d 15 h`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let utc = if self.date.len() == 10 {
            " (its start in UTC)"
        } else {
            ""
        };
        write!(
            f,
            "scheduled /blog/{} for {}{utc}: in {}",
            self.id,
            self.date,
            duration_words(self.in_secs)
        )
    }
}

/// `2 d 15 h`, `3 h 5 min`, `40 s`: a wait as a person reads it.
fn duration_words(secs: i64) -> String {
    let (d, h, m, s) = (secs / 86_400, secs / 3_600 % 24, secs / 60 % 60, secs % 60);
    match () {
        _ if d > 0 => format!("{d} d {h} h"),
        _ if h > 0 => format!("{h} h {m} min"),
        _ if m > 0 => format!("{m} min {s} s"),
        _ => format!("{s} s"),
    }
}

/// Now, in Unix seconds: what a post's time is compared with.
pub fn now_secs() -> i64 {
    OffsetDateTime::now_utc().unix_timestamp()
}

/// A front matter date: a day (`YYYY-MM-DD`, meaning its start in UTC) or a
/// date and time with its offset (RFC 3339), as the instant it names and the
/// form `date` keeps (the day as written, or the RFC 3339 text with `T` and
/// `Z` in capitals); or why it is neither.
pub fn parse_date(text: &str) -> Result<(OffsetDateTime, String), String> {
    use time::format_description::well_known::Rfc3339;
    let day = time::macros::format_description!("[year]-[month]-[day]");
    // Shaped as a day (`2026-02-30` is said to be no real day).
    let b = text.as_bytes();
    if b.len() == 10 && b[4] == b'-' && b[7] == b'-' {
        return time::Date::parse(text, &day)
            .map(|d| (d.midnight().assume_utc(), text.to_owned()))
            .map_err(|e| format!("is not a day (YYYY-MM-DD): {e}"));
    }
    if let Ok(at) = OffsetDateTime::parse(text, &Rfc3339) {
        let written = at.format(&Rfc3339).map_err(|e| e.to_string())?;
        return Ok((at, written));
    }
    let local = time::macros::format_description!(
        "[year]-[month]-[day][first [T][t][ ]][hour]:[minute][optional [:[second]]]"
    );
    if time::PrimitiveDateTime::parse(text, &local).is_ok() {
        return Err(format!(
            "has no offset: say which time zone its time is in, as in {}:00+01:00 (or Z for UTC)",
            text.get(..16).unwrap_or(text).replacen([' ', 't'], "T", 1)
        ));
    }
    Err("is neither a day (2026-12-01) nor a date and time with its offset (2026-12-01T09:00:00+01:00, Z for UTC)".into())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{dated, POST};
    use super::*;
    use crate::assets::Manifest;
    use crate::content::blog::{Blog, Drafts};

    #[test]
    fn a_date_is_a_day_or_a_date_and_time_with_its_offset() {
        let blog = dated(&[
            ("day", "2024-05-01"),
            // 08:00 UTC: after the day's start, before 08:30 UTC.
            ("paris", "2024-05-01T09:00:00+01:00"),
            ("utc", "2024-05-01t08:30:00z"),
            ("new-york", "2024-04-30T23:00:00-05:00"),
        ])
        .unwrap();
        let listed: Vec<(String, String)> =
            blog.list().into_iter().map(|p| (p.id, p.date)).collect();
        assert_eq!(
            listed,
            [
                ("utc", "2024-05-01T08:30:00Z"),
                ("paris", "2024-05-01T09:00:00+01:00"),
                ("new-york", "2024-04-30T23:00:00-05:00"),
                ("day", "2024-05-01"),
            ]
            .map(|(i, d)| (i.to_owned(), d.to_owned())),
            "newest first by the instant each names (New York's 23:00 is 04:00 UTC)"
        );
    }

    #[test]
    fn a_date_that_is_neither_form_is_refused_at_its_line() {
        let refused = |date: &str| {
            let e = dated(&[("a", date)]).unwrap_err();
            assert_eq!((e.line, e.column), (Some(4), Some(1)), "{e}");
            e.to_string()
        };
        let e = refused("2026-12-01T09:00:00");
        assert_eq!(e, "content/blog/a.md:4:1: date \"2026-12-01T09:00:00\" has no offset: say which time zone its time is in, as in 2026-12-01T09:00:00+01:00 (or Z for UTC)");
        assert!(refused("2026-12-01 09:00").contains("has no offset"));
        assert!(refused("2026-02-30").contains("date \"2026-02-30\" is not a day (YYYY-MM-DD): "));
        for bad in [
            "01/12/2026",
            "2026-12-01T25:00:00Z",
            "2026-12-01T09:00+01:00",
            "2026-12-01T09:00:00 CET",
            "tomorrow",
            "",
        ] {
            let e = refused(bad);
            assert!(
                e.ends_with("is neither a day (2026-12-01) nor a date and time with its offset (2026-12-01T09:00:00+01:00, Z for UTC)"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn updated_takes_the_same_forms_and_is_never_before_the_date() {
        let with = |date: &str, updated: &str| {
            let text = POST
                .replace("2024-05-01", date)
                .replace("author = ", &format!("updated = {updated:?}\nauthor = "));
            Blog::parse(&[("a.md", text)], &Manifest::embedded(), Drafts::Show)
                .map(|b| b.list()[0].updated.clone())
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            with("2024-05-01T09:00:00+02:00", "2024-05-02T10:00:00Z").unwrap(),
            "2024-05-02T10:00:00Z"
        );
        // A day alone is compared as a day: revised that day is not before.
        assert_eq!(
            with("2024-05-01T09:00:00+02:00", "2024-05-01").unwrap(),
            "2024-05-01"
        );
        assert_eq!(
            with("2024-05-01T09:00:00+02:00", "2024-05-01T06:59:59Z").unwrap_err(),
            "content/blog/a.md:5:1: updated \"2024-05-01T06:59:59Z\" is before the post's date \"2024-05-01T09:00:00+02:00\""
        );
        assert!(with("2024-05-01", "2024-05-01T09:00")
            .unwrap_err()
            .starts_with("content/blog/a.md:5:1: updated \"2024-05-01T09:00\" has no offset"));
    }

    #[test]
    fn a_post_dated_after_now_is_in_no_list_until_its_time() {
        let blog = dated(&[
            ("out", "2024-05-01"),
            ("monday", "2999-01-04T09:00:00+01:00"),
        ])
        .unwrap();
        let ids: Vec<&str> = blog.ids().collect();
        assert_eq!(ids, ["out"]);
        assert_eq!(blog.list().len(), 1);
        assert!(blog.get("monday").is_none() && blog.get("out").is_some());
        let other = POST
            .replace("id = \"a\"", "id = \"b\"")
            .replace("Updates", "Events")
            .replace("2024-05-01", "2999-01-01");
        let files = [("a.md", POST.to_owned()), ("b.md", other)];
        let blog = Blog::parse(&files, &Manifest::embedded(), Drafts::Hide).unwrap();
        assert!(blog.has_type("Updates") && !blog.has_type("Events"));
    }

    #[test]
    fn a_blog_says_how_many_posts_are_out_and_what_comes_next() {
        let blog = dated(&[
            ("out", "2024-05-01"),
            ("monday", "2999-01-04T09:00:00+01:00"),
            ("sunday", "2999-01-03"),
        ])
        .unwrap();
        let now = now_secs();
        assert_eq!(blog.published_at(now), 1);
        let monday = OffsetDateTime::parse(
            "2999-01-04T08:00:00Z",
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap()
        .unix_timestamp();
        assert_eq!(
            (blog.published_at(monday - 1), blog.published_at(monday)),
            (2, 3),
            "published at its second, not before"
        );
        // 28 min 59 s before Sunday starts in UTC, 32 h before Monday's 08:00 UTC.
        let upcoming = blog.upcoming(monday - 32 * 3_600 - 1_739);
        assert_eq!(
            upcoming.iter().map(|u| u.to_string()).collect::<Vec<_>>(),
            [
                "scheduled /blog/sunday for 2999-01-03 (its start in UTC): in 28 min 59 s",
                "scheduled /blog/monday for 2999-01-04T09:00:00+01:00: in 1 d 8 h",
            ]
        );
        assert!(blog.upcoming(monday).is_empty());
        assert_eq!(duration_words(3 * 3_600 + 5 * 60), "3 h 5 min");
    }
}
