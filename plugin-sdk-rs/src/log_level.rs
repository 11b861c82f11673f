//! The levels a `$/log` line may have, as a type: [`crate::HostHandle::log`] takes a [`LogLevel`], so a
//! level the host does not know cannot be written. A level named in text (from a config, or code
//! written before [`LogLevel`]) is read with [`str::parse`] or passed as it is; see [`IntoLogLevel`].

use std::fmt;
use std::str::FromStr;

/// The level of a line sent to the host with [`crate::HostHandle::log`]: the levels `$/log` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogLevel {
    /// Detail for someone chasing a problem (`debug`).
    Debug,
    /// What the plugin is doing (`info`).
    Info,
    /// Something went wrong and the plugin carried on (`warning`).
    Warning,
    /// Something failed (`error`).
    Error,
}

impl LogLevel {
    /// Every level, lowest first.
    pub const ALL: [LogLevel; 4] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Warning,
        LogLevel::Error,
    ];

    /// The level's name on the wire: `debug`, `info`, `warning` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of `$/log`'s levels.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a log level; $/log takes debug, info, warning or error")]
pub struct UnknownLogLevel(pub String);

/// Reads a level's wire name (`"warning"`); any other text is an [`UnknownLogLevel`].
impl FromStr for LogLevel {
    type Err = UnknownLogLevel;

    fn from_str(name: &str) -> Result<LogLevel, UnknownLogLevel> {
        LogLevel::ALL
            .into_iter()
            .find(|level| level.as_str() == name)
            .ok_or_else(|| UnknownLogLevel(name.to_string()))
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::LogLevel {}
    impl Sealed for &str {}
    impl Sealed for String {}
    impl Sealed for &String {}
}

/// What [`crate::HostHandle::log`] takes as its level: a [`LogLevel`], or its name as text, as the
/// SDK took it before [`LogLevel`]. A name that is no level is not dropped nor sent as it is: the
/// line goes as a `warning` that starts by naming the unknown level, so a typo shows where the line
/// does. Prefer [`LogLevel`], which the compiler checks.
pub trait IntoLogLevel: sealed::Sealed {
    /// The level, or the name that is none.
    fn into_log_level(self) -> Result<LogLevel, UnknownLogLevel>;
}

impl IntoLogLevel for LogLevel {
    fn into_log_level(self) -> Result<LogLevel, UnknownLogLevel> {
        Ok(self)
    }
}

impl IntoLogLevel for &str {
    fn into_log_level(self) -> Result<LogLevel, UnknownLogLevel> {
        self.parse()
    }
}

impl IntoLogLevel for String {
    fn into_log_level(self) -> Result<LogLevel, UnknownLogLevel> {
        self.parse()
    }
}

impl IntoLogLevel for &String {
    fn into_log_level(self) -> Result<LogLevel, UnknownLogLevel> {
        self.parse()
    }
}

/// The level and the message a `$/log` line is sent with: `message` at `level`, or, for a level that
/// is none, a warning that names it before the message.
pub(crate) fn log_line(level: impl IntoLogLevel, message: &str) -> (LogLevel, String) {
    match level.into_log_level() {
        Ok(level) => (level, message.to_string()),
        Err(unknown) => (LogLevel::Warning, format!("({unknown}) {message}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_reads_back_from_its_name_and_nothing_else_is_a_level() {
        for level in LogLevel::ALL {
            assert_eq!(level.as_str().parse::<LogLevel>(), Ok(level));
        }
        let typo = "warnign".parse::<LogLevel>().unwrap_err();
        assert_eq!(
            typo.to_string(),
            "'warnign' is not a log level; $/log takes debug, info, warning or error"
        );
        assert!("Warning".parse::<LogLevel>().is_err());
    }

    #[test]
    fn a_named_level_is_sent_as_it_is_and_a_typo_as_a_warning_that_names_it() {
        assert_eq!(
            log_line(LogLevel::Error, "disk full"),
            (LogLevel::Error, "disk full".to_string())
        );
        assert_eq!(
            log_line("info", "copying"),
            (LogLevel::Info, "copying".to_string())
        );
        let from_config = String::from("error");
        assert_eq!(log_line(&from_config, "m").0, LogLevel::Error);
        assert_eq!(log_line(from_config, "m").0, LogLevel::Error);
        assert_eq!(
            log_line("warnign", "slow"),
            (
                LogLevel::Warning,
                "('warnign' is not a log level; $/log takes debug, info, warning or error) slow"
                    .to_string()
            )
        );
    }
}
