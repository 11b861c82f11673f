//! An age on the command line (`task prune --older-than 30d`): a whole number and a unit.

use std::time::Duration;

/// Why an age could not be read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum AgeError {
    #[error("'{0}' is not an age: give a whole number and a unit, such as 30d (days), 12h (hours), 90m (minutes) or 2w (weeks)")]
    Malformed(String),
    #[error("'{given}' has the unit '{unit}', which is not one of d (days), h (hours), m (minutes), w (weeks)")]
    Unit { given: String, unit: String },
    #[error("'{given}' is not a whole number of {unit_name}: an age is a whole number and a unit{instead}")]
    NotWhole {
        given: String,
        unit_name: &'static str,
        /// `, such as 90m`: the same age in a smaller unit, when there is one.
        instead: String,
    },
    #[error("'{0}' is too long an age to count back from now")]
    TooLong(String),
}

/// Reads `30d`, `12h`, `90m` or `2w` (spaces around it are ignored).
pub fn parse_age(text: &str) -> Result<Duration, AgeError> {
    let given = text.trim();
    let digits = given.chars().take_while(char::is_ascii_digit).count();
    let (number, unit) = given.split_at(digits);
    if number.is_empty() || unit.is_empty() {
        return Err(AgeError::Malformed(given.to_string()));
    }
    if let Some(not_whole) = fraction(given, number, unit) {
        return Err(not_whole);
    }
    let seconds_per: u64 = match seconds_per(unit) {
        Some(s) => s,
        None => {
            return Err(AgeError::Unit {
                given: given.to_string(),
                unit: unit.to_string(),
            })
        }
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(seconds_per))
        .map(Duration::from_secs)
        .ok_or_else(|| AgeError::TooLong(given.to_string()))
}

/// The units an age is given in, smallest first: each letter, its seconds and its name.
const UNITS: [(&str, u64, &str); 4] = [
    ("m", 60, "minutes"),
    ("h", 60 * 60, "hours"),
    ("d", 24 * 60 * 60, "days"),
    ("w", 7 * 24 * 60 * 60, "weeks"),
];

fn seconds_per(unit: &str) -> Option<u64> {
    UNITS.iter().find(|(u, ..)| *u == unit).map(|(_, s, _)| *s)
}

/// `1.5h` (a whole `number`, then a fraction before the `unit`): why it is not read, with the same
/// age in a smaller unit when it is a whole number of one (`90m`).
fn fraction(given: &str, number: &str, rest: &str) -> Option<AgeError> {
    let after_point = rest.strip_prefix('.').or_else(|| rest.strip_prefix(','))?;
    let digits = after_point.chars().take_while(char::is_ascii_digit).count();
    let (decimals, unit) = after_point.split_at(digits);
    if decimals.is_empty() {
        return None;
    }
    let &(_, per, unit_name) = UNITS.iter().find(|(u, ..)| *u == unit)?;
    let value: f64 = format!("{number}.{decimals}").parse().ok()?;
    let seconds = value * per as f64;
    let instead = UNITS
        .iter()
        .rev()
        .filter(|(_, smaller, _)| *smaller < per)
        .find_map(|(u, smaller, _)| {
            let count = seconds / *smaller as f64;
            (count.fract() == 0.0 && count >= 1.0).then(|| format!(", such as {count}{u}"))
        })
        .unwrap_or_else(|| ", such as 90m rather than 1.5h".to_string());
    Some(AgeError::NotWhole {
        given: given.to_string(),
        unit_name,
        instead,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_unit_counts_its_seconds() {
        assert_eq!(parse_age("90m"), Ok(Duration::from_secs(90 * 60)));
        assert_eq!(parse_age("12h"), Ok(Duration::from_secs(12 * 3600)));
        assert_eq!(parse_age(" 30d "), Ok(Duration::from_secs(30 * 86400)));
        assert_eq!(parse_age("2w"), Ok(Duration::from_secs(14 * 86400)));
        assert_eq!(parse_age("0d"), Ok(Duration::ZERO));
    }

    #[test]
    fn a_wrong_age_says_what_to_give() {
        assert_eq!(parse_age("30"), Err(AgeError::Malformed("30".into())));
        assert_eq!(parse_age("d"), Err(AgeError::Malformed("d".into())));
        assert_eq!(parse_age("-3d"), Err(AgeError::Malformed("-3d".into())));
        let unit = parse_age("30days").unwrap_err();
        assert!(unit.to_string().contains("the unit 'days'"), "{unit}");
        assert_eq!(
            parse_age("1.5h").unwrap_err().to_string(),
            "'1.5h' is not a whole number of hours: an age is a whole number and a unit, such as 90m"
        );
        assert_eq!(
            parse_age("0.5w").unwrap_err().to_string(),
            "'0.5w' is not a whole number of weeks: an age is a whole number and a unit, such as 84h"
        );
        assert_eq!(
            parse_age("1.01m").unwrap_err().to_string(),
            "'1.01m' is not a whole number of minutes: an age is a whole number and a unit, such as 90m rather than 1.5h"
        );
        assert!(matches!(
            parse_age("99999999999999999999w"),
            Err(AgeError::TooLong(_))
        ));
    }
}
