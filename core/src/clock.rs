//! UTC timestamps as the records and stores spell them, without a date library.

use std::time::{SystemTime, UNIX_EPOCH};

/// A UTC instant split into calendar fields.
struct UtcParts {
    year: i64,
    month: u32,
    day: u32,
    hour: u64,
    minute: u64,
    second: u64,
    micros: u32,
}

/// The calendar fields of `time` in UTC (times before 1970 count as 1970-01-01T00:00:00Z).
fn utc_parts(time: SystemTime) -> UtcParts {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    UtcParts {
        year,
        month,
        day,
        hour: rem / 3600,
        minute: (rem / 60) % 60,
        second: rem % 60,
        micros: since.subsec_micros(),
    }
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm; the inverse of
/// [`civil_from_days`]).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since 1970-01-01 to (year, month, day), Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// RFC 3339 with microseconds, `YYYY-MM-DDTHH:MM:SS.ffffffZ`, for a time at or after 1970.
pub fn rfc3339_utc(time: SystemTime) -> String {
    let p = utc_parts(time);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
        p.year, p.month, p.day, p.hour, p.minute, p.second, p.micros
    )
}

/// `YYYY-MM-DD HH:MM UTC`, as task instances record `created_at_utc`.
pub fn minute_now() -> String {
    let p = utc_parts(SystemTime::now());
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        p.year, p.month, p.day, p.hour, p.minute
    )
}

/// Now in RFC 3339 with microseconds, e.g. `2026-01-02T03:04:05.123456Z`.
pub fn iso_now() -> String {
    rfc3339_utc(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_454), (2026, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn days_from_civil_undoes_civil_from_days() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, i64::from(m), i64::from(d)), days);
        }
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
        let t = UNIX_EPOCH + Duration::new(1_709_210_096, 5_000);
        assert_eq!(rfc3339_utc(t), "2024-02-29T12:34:56.000005Z");
    }
}
