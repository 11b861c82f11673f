//! Timeouts of the child-process host, with their defaults and environment overrides.

use std::time::Duration;

/// Environment variable overriding [`HostConfig::start_timeout`], in seconds.
pub const START_TIMEOUT_VAR: &str = "AGENT_ENV_PLUGIN_START_TIMEOUT";
/// Environment variable overriding [`HostConfig::handshake_timeout`], in seconds.
pub const HANDSHAKE_TIMEOUT_VAR: &str = "AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT";
/// Environment variable overriding [`HostConfig::call_timeout`], in seconds.
pub const CALL_TIMEOUT_VAR: &str = "AGENT_ENV_PLUGIN_CALL_TIMEOUT";

/// How long the host waits for each stage of a plugin's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostConfig {
    /// Until the process runs (the spawn itself).
    pub start_timeout: Duration,
    /// Until the plugin answers `initialize`.
    pub handshake_timeout: Duration,
    /// For each call, unless the caller gives its own.
    pub call_timeout: Duration,
    /// Each wait of the shutdown sequence: after `shutdown` and closing stdin, then after SIGTERM.
    pub grace: Duration,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            start_timeout: Duration::from_secs(5),
            handshake_timeout: Duration::from_secs(10),
            call_timeout: Duration::from_secs(60),
            grace: Duration::from_secs(2),
        }
    }
}

/// A timeout variable that does not hold a number of seconds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{var} is '{value}', which is not a number of seconds (e.g. 10 or 0.5); fix or unset it")]
pub struct HostConfigError {
    pub var: &'static str,
    pub value: String,
}

impl HostConfig {
    /// The defaults, with each `AGENT_ENV_PLUGIN_*_TIMEOUT` variable that is set applied.
    pub fn from_env() -> Result<HostConfig, HostConfigError> {
        Self::from_lookup(|var| std::env::var(var).ok())
    }

    /// As [`HostConfig::from_env`], reading variables through `lookup` (for tests).
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<HostConfig, HostConfigError> {
        let mut config = HostConfig::default();
        let fields: [(&'static str, &mut Duration); 3] = [
            (START_TIMEOUT_VAR, &mut config.start_timeout),
            (HANDSHAKE_TIMEOUT_VAR, &mut config.handshake_timeout),
            (CALL_TIMEOUT_VAR, &mut config.call_timeout),
        ];
        for (var, field) in fields {
            if let Some(value) = lookup(var) {
                *field = parse_seconds(&value).ok_or(HostConfigError { var, value })?;
            }
        }
        Ok(config)
    }
}

/// Parses a positive, finite number of seconds such as `10` or `0.25`.
fn parse_seconds(text: &str) -> Option<Duration> {
    let seconds: f64 = text.trim().parse().ok()?;
    if !seconds.is_finite() || seconds <= 0.0 || seconds > 1e9 {
        return None;
    }
    Some(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_protocol_document() {
        let c = HostConfig::default();
        assert_eq!(c.start_timeout, Duration::from_secs(5));
        assert_eq!(c.handshake_timeout, Duration::from_secs(10));
        assert_eq!(c.call_timeout, Duration::from_secs(60));
        assert_eq!(c.grace, Duration::from_secs(2));
    }

    #[test]
    fn variables_override_with_fractional_seconds() {
        let c = HostConfig::from_lookup(|v| match v {
            HANDSHAKE_TIMEOUT_VAR => Some("0.5".into()),
            CALL_TIMEOUT_VAR => Some(" 3 ".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(c.handshake_timeout, Duration::from_millis(500));
        assert_eq!(c.call_timeout, Duration::from_secs(3));
        assert_eq!(c.start_timeout, Duration::from_secs(5));
    }

    #[test]
    fn a_bad_value_names_the_variable() {
        for bad in ["ten", "-1", "0", "inf", ""] {
            let err = HostConfig::from_lookup(|v| (v == START_TIMEOUT_VAR).then(|| bad.into()))
                .unwrap_err();
            assert_eq!(err.var, START_TIMEOUT_VAR);
            assert!(err.to_string().contains(START_TIMEOUT_VAR), "{err}");
        }
    }
}
