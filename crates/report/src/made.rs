//! The line of a report that says which flashlab made it, with which command and when.
//!
//! A report is byte-identical for the same inputs, so no clock is read: the date is the one
//! the caller gives, by the reproducible-builds convention `SOURCE_DATE_EPOCH` (whole
//! seconds since 1970-01-01 00:00:00 UTC), and a report without it carries none.

/// Latest time shown: 9999-12-31T23:59:59Z, the last of four-digit years.
const MAX_EPOCH_SECS: u64 = 253_402_300_799;

/// Which command made a report, and when.
#[derive(Debug, Clone, Copy, Default)]
pub struct Made<'a> {
    pub command: Option<&'a str>,
    /// The source commit the build came from, as the JSON's provenance names it.
    pub commit: Option<&'a str>,
    /// UTC, ISO 8601 ([`utc_date_time`]).
    pub date: Option<&'a str>,
}

impl Made<'_> {
    /// `Made by flashlab VERSION[ (commit C)][ on DATE][ with: COMMAND]`.
    pub fn line(&self) -> String {
        let version = match self.commit.filter(|c| !c.is_empty()) {
            Some(c) => format!("{} (commit {c})", env!("CARGO_PKG_VERSION")),
            None => env!("CARGO_PKG_VERSION").to_string(),
        };
        let on = self.date.map(|d| format!(" on {d}")).unwrap_or_default();
        match self.command {
            Some(c) => format!("Made by flashlab {version}{on} with: {c}"),
            None => format!("Made by flashlab {version}{on}."),
        }
    }
}

/// `secs` seconds after 1970-01-01 00:00:00 UTC as ISO 8601 (`2026-11-27T19:12:09Z`);
/// `None` past the last four-digit year.
pub fn utc_date_time(secs: u64) -> Option<String> {
    if secs > MAX_EPOCH_SECS {
        return None;
    }
    let (days, in_day) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    Some(format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        in_day / 3600,
        in_day / 60 % 60,
        in_day % 60
    ))
}

/// Year, month and day of `days` after 1970-01-01 in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`, days counted from 0000-03-01 so a leap day ends
/// its year).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + u64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_iso_8601_and_the_made_line_shows_one_only_when_given() {
        for (secs, date) in [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_767_225_599, "2025-12-31T23:59:59Z"),
            (1_798_744_329, "2026-12-31T19:12:09Z"),
            (253_402_300_799, "9999-12-31T23:59:59Z"),
        ] {
            assert_eq!(utc_date_time(secs).as_deref(), Some(date));
        }
        assert_eq!(utc_date_time(253_402_300_800), None);
        let made = Made {
            command: Some("flashlab run a.fio"),
            commit: Some("4daf390"),
            date: Some("2000-02-29T00:00:00Z"),
        };
        assert!(made
            .line()
            .ends_with(" (commit 4daf390) on 2000-02-29T00:00:00Z with: flashlab run a.fio"));
        assert!(!Made::default().line().contains(" on "));
    }
}
