//! An age on the command line (`task prune --older-than 30d`): a whole number and a unit.

use std::time::Duration;

/// Why an age could not be read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum AgeError {
    #[error("'{0}' is not an age: give a whole number and a unit, such as 30d (days), 12h (hours), 90m (minutes) or 2w (weeks)")]
    Malformed(String),
    #[error("'{given}' has the unit '{unit}', which is not one of d (days), h (hours), m (minutes), w (weeks)")]
    Unit { given: String, unit: String },
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
    let seconds_per: u64 = match unit {
        "m" => 60,
        "h" => 60 * 60,
        "d" => 24 * 60 * 60,
        "w" => 7 * 24 * 60 * 60,
        _ => {
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
        assert!(matches!(
            parse_age("99999999999999999999w"),
            Err(AgeError::TooLong(_))
        ));
    }
}
