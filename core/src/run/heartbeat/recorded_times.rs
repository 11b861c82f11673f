//! The times a task instance records, read back: the last sign of life they give (with the
//! durations its completed steps record), by which an instance that records no heartbeat is judged, and how long ago a time was, as a person reads it.
//!
//! Instances record their times under keys ending `_utc`, in more than one form: `started_at_utc`
//! in RFC 3339 to the microsecond, `created_at_utc` and `completed_at_utc` to the minute
//! (`2026-01-02 03:04 UTC`), and an older agent-env or another tool may have written RFC 3339 with
//! an offset, or with no zone at all (taken as UTC, as the key says). A value none of these is
//! not a time, and is left out.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::stores::Document;

/// One time an instance records: its key, its text as recorded, and the instant it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RecordedTime {
    pub(super) key: String,
    pub(super) text: String,
    pub(super) at: SystemTime,
}

/// The latest of the times `doc` records at its top level (its keys ending `_utc`), when it
/// records one.
#[cfg(test)]
pub(super) fn latest(doc: &Document) -> Option<RecordedTime> {
    times_in(doc).max_by_key(|t| t.at)
}

/// The times `map` records under its keys ending `_utc`.
fn times_in(map: &Document) -> impl Iterator<Item = RecordedTime> + '_ {
    map.iter()
        .filter(|(key, _)| key.ends_with("_utc"))
        .filter_map(|(key, value)| {
            let text = value.as_str()?;
            Some(RecordedTime {
                key: key.clone(),
                text: text.to_string(),
                at: parse(text)?,
            })
        })
}

/// The step lists of an instance: `completed_steps` records each ended step's
/// `duration_seconds`; either may record times of its own.
const STEP_LISTS: [&str; 2] = ["completed_steps", "running_steps"];

/// The latest sign of life `doc` gives, when it gives one: the latest time it records at its top
/// level, or, when it records its start, a later one its steps' records give: a time they record,
/// or its start plus the durations its completed steps record. An older agent-env records no time
/// after the start: its completed steps record durations only. Their sum over-estimates when steps
/// ran side by side, which only makes the sign later, so an instance is never judged silent sooner
/// than it was.
pub(super) fn last_sign_of_life(doc: &Document) -> Option<LastSignOfLife> {
    let top = times_in(doc)
        .max_by_key(|t| t.at)
        .map(|time| LastSignOfLife {
            at: time.at,
            text: time.text.clone(),
            time,
            from_steps: false,
        });
    let from_steps = recorded(doc, "started_at_utc").and_then(|start| {
        let steps = || {
            STEP_LISTS
                .iter()
                .filter_map(|list| doc.get(*list).and_then(Value::as_array))
                .flatten()
                .filter_map(Value::as_object)
        };
        let in_records = steps()
            .flat_map(times_in)
            .max_by_key(|t| t.at)
            .map(|t| (t.at, t.text));
        let took: f64 = doc
            .get("completed_steps")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|step| step.get("duration_seconds").and_then(Value::as_f64))
            .filter(|s| s.is_finite() && *s > 0.0)
            .sum();
        let through = Duration::try_from_secs_f64(took)
            .ok()
            .filter(|t| !t.is_zero())
            .and_then(|took| start.at.checked_add(took))
            .map(|at| (at, crate::clock::rfc3339_utc(at)));
        let (at, text) = [in_records, through]
            .into_iter()
            .flatten()
            .max_by_key(|(at, _)| *at)?;
        Some(LastSignOfLife {
            at,
            text,
            time: start,
            from_steps: true,
        })
    });
    match (top, from_steps) {
        (Some(top), Some(steps)) => Some(if steps.at > top.at { steps } else { top }),
        (top, steps) => top.or(steps),
    }
}

/// An instance's latest sign of life ([`last_sign_of_life`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LastSignOfLife {
    /// When it was, and that instant as text.
    pub(super) at: SystemTime,
    pub(super) text: String,
    /// The time the instance records at its top level that it was found from (itself, or, when
    /// it comes from the steps' records, the start): unchanged while the instance is as judged.
    pub(super) time: RecordedTime,
    /// Whether it comes from the steps' records.
    pub(super) from_steps: bool,
}

/// The time `doc` records under `key`, when it is one.
pub(super) fn recorded(doc: &Document, key: &str) -> Option<RecordedTime> {
    let text = doc.get(key).and_then(Value::as_str)?;
    Some(RecordedTime {
        key: key.to_string(),
        text: text.to_string(),
        at: parse(text)?,
    })
}

/// `2 days`, `5 hours`, `47 minutes`, `30 seconds`: how long `age` is, in the largest unit of which
/// it holds two or more (rounded down).
pub fn age_words(age: Duration) -> String {
    use crate::words::plural;
    let secs = age.as_secs();
    let (n, one, many) = match secs {
        s if s >= 2 * 86_400 => (s / 86_400, "day", "days"),
        s if s >= 2 * 3_600 => (s / 3_600, "hour", "hours"),
        s if s >= 2 * 60 => (s / 60, "minute", "minutes"),
        s => (s, "second", "seconds"),
    };
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    format!("{n} {}", plural(n, one, many))
}

/// The instant `text` names: `YYYY-MM-DD`, `T` or a space, `HH:MM`, then optionally `:SS` and a
/// fraction, then `Z`, ` UTC`, `+HH:MM`/`-HH:MM`, or nothing (UTC). `None` for anything else, or a
/// time before 1970.
pub(super) fn parse(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    let (date, rest) = (text.get(..10)?, text.get(10..)?);
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let days = days_of(date)?;
    let (clock, offset) = split_zone(rest)?;
    let seconds_of_day = seconds_of(clock)?;
    let seconds = days
        .checked_mul(86_400)?
        .checked_add(seconds_of_day)?
        .checked_sub(offset)?;
    let seconds = u64::try_from(seconds).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(seconds))
}

/// Days since 1970-01-01 of `YYYY-MM-DD`.
fn days_of(date: &str) -> Option<i64> {
    let bytes = date.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    let year: i64 = digits(&date[..4])?;
    let month: i64 = digits(&date[5..7])?;
    let day: i64 = digits(&date[8..10])?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    Some(crate::clock::days_from_civil(year, month, day))
}

/// `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fff…` as whole seconds into the day.
fn seconds_of(clock: &str) -> Option<i64> {
    let whole = clock
        .split_once(['.', ','])
        .map_or(clock, |(whole, fraction)| {
            match !fraction.is_empty() && fraction.bytes().all(|b| b.is_ascii_digit()) {
                true => whole,
                // Not a fraction: left to fail below.
                false => clock,
            }
        });
    let mut parts = whole.split(':');
    let hour: i64 = parts.next().and_then(two_digits)?;
    let minute: i64 = parts.next().and_then(two_digits)?;
    let second: i64 = match parts.next() {
        Some(s) => two_digits(s)?,
        None => 0,
    };
    if parts.next().is_some() || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    Some(hour * 3_600 + minute * 60 + second)
}

/// The clock part of `rest` and its zone's offset east of UTC, in seconds.
fn split_zone(rest: &str) -> Option<(&str, i64)> {
    if let Some(clock) = rest
        .strip_suffix(['Z', 'z'])
        .or_else(|| rest.strip_suffix(" UTC"))
        .or_else(|| rest.strip_suffix("UTC"))
    {
        return Some((clock, 0));
    }
    // `±HH:MM` at the end (a `-` earlier is not one: the clock has none).
    if rest.len() > 6 {
        let (clock, zone) = rest.split_at(rest.len() - 6);
        let sign = match zone.as_bytes()[0] {
            b'+' => 1,
            b'-' => -1,
            _ => return Some((rest, 0)),
        };
        let (hours, minutes) = zone[1..].split_once(':')?;
        let (hours, minutes): (i64, i64) = (two_digits(hours)?, two_digits(minutes)?);
        return Some((clock, sign * (hours * 3_600 + minutes * 60)));
    }
    Some((rest, 0))
}

/// Two decimal digits' number.
fn two_digits(text: &str) -> Option<i64> {
    match text.len() {
        2 => digits(text),
        _ => None,
    }
}

/// The number `text` writes in decimal digits alone (no sign, no spaces).
fn digits(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn the_forms_instances_record_their_times_in_are_read() {
        let t = 1_709_210_096; // 2024-02-29T12:34:56Z
        for text in [
            "2024-02-29T12:34:56.000005Z",
            "2024-02-29T12:34:56Z",
            "2024-02-29 12:34:56",
            "2024-02-29T12:34:56.123456",
            "2024-02-29T12:34:56+00:00",
            "2024-02-29T14:34:56.5+02:00",
            "2024-02-29T10:34:56-02:00",
        ] {
            assert_eq!(parse(text), Some(at(t)), "{text}");
        }
        assert_eq!(parse("2024-02-29 12:34 UTC"), Some(at(t - 56)));
        assert_eq!(parse("1970-01-01T00:00:00Z"), Some(UNIX_EPOCH));
        // What `clock` writes reads back as it was.
        let now = at(1_800_000_123);
        assert_eq!(parse(&crate::clock::rfc3339_utc(now)), Some(now));
        for bad in [
            "",
            "yesterday",
            "2024-13-01T00:00:00Z",
            "2024-02-29T25:00:00Z",
            "2024-02-29",
            "2024-02-29T12:3",
            "1969-12-31T23:59:59Z",
            "2024-02-29T12:34:56.x",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_latest_time_an_instance_records_is_found_whatever_its_form() {
        let doc = match json!({
            "status": "running",
            "created_at_utc": "2024-02-29 12:34 UTC",
            "started_at_utc": "2024-02-29T12:34:56.000000Z",
            "completed_at_utc": null,
            "later_at_utc": "2024-03-01T00:00:00+01:00",
            "note_utc": "not a time",
        }) {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        let found = latest(&doc).expect("a time");
        assert_eq!(found.key, "later_at_utc");
        assert_eq!(found.at, at(1_709_247_600));
        assert_eq!(
            recorded(&doc, "started_at_utc").map(|t| t.at),
            Some(at(1_709_210_096))
        );
        assert_eq!(latest(&Document::new()), None);
    }

    #[test]
    fn an_age_is_said_in_its_largest_unit() {
        let words = |s: u64| age_words(Duration::from_secs(s));
        assert_eq!(words(1), "1 second");
        assert_eq!(words(119), "119 seconds");
        assert_eq!(words(120), "2 minutes");
        assert_eq!(words(2 * 3_600 - 1), "119 minutes");
        assert_eq!(words(25 * 3_600), "25 hours");
        assert_eq!(words(2 * 86_400 + 5), "2 days");
    }
}
