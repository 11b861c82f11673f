//! What the child-process host is told by its caller: its own version (sent to every plugin) and the
//! timeouts of each stage, with their defaults and the `AGENT_ENV_PLUGIN_*_TIMEOUT` overrides.
//!
//! The host never reads the environment itself: [`HostConfig::from_lookup`] takes the variables
//! through a function the caller supplies.

use std::time::Duration;

/// Environment variable overriding [`HostConfig::start_timeout`], in seconds.
pub const START_TIMEOUT_VAR: &str = "AGENT_ENV_PLUGIN_START_TIMEOUT";
/// Environment variable overriding [`HostConfig::handshake_timeout`], in seconds.
pub const HANDSHAKE_TIMEOUT_VAR: &str = "AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT";
/// Environment variable overriding [`HostConfig::call_timeout`], in seconds.
pub const CALL_TIMEOUT_VAR: &str = "AGENT_ENV_PLUGIN_CALL_TIMEOUT";

/// How long the host waits past a task step's own `timeout_seconds` before it gives up on
/// `execute`: time for the plugin to notice its deadline and answer with its own error, never more.
pub const STEP_TIMEOUT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Who the host is and how long it waits for each stage of a plugin's life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostConfig {
    /// The version of the program hosting the plugins, sent in `initialize` and in
    /// `AGENT_ENV_HOST_VERSION` (plugins compare their `requires` against it).
    pub host_version: String,
    /// Until the process runs (the spawn itself).
    pub start_timeout: Duration,
    /// Until the plugin answers `initialize`.
    pub handshake_timeout: Duration,
    /// For each call, unless the caller gives its own.
    pub call_timeout: Duration,
    /// Each wait of the shutdown sequence: after `shutdown` and closing stdin, then after SIGTERM.
    pub grace: Duration,
    /// How long a plugin given up on for failing too often (`crash-loop`) is not started again: a
    /// long-lived host (the explorer) then tries it once more.
    pub crash_loop_pause: Duration,
    /// The pin file of the plugins `plugin add` installed ([`crate::pins`]); a pinned plugin whose
    /// files changed is not started. None: nothing is checked.
    pub pins: Option<std::path::PathBuf>,
    /// The environment children's environments are filtered from ([`crate::env_policy`]): the
    /// invocation's snapshot, with what it chose since (a root option's config file). `None`: this
    /// process's environment.
    pub parent_env: Option<Vec<(std::ffi::OsString, std::ffi::OsString)>>,
}

impl HostConfig {
    /// The default timeouts, for a host at `host_version`.
    pub fn new(host_version: impl Into<String>) -> HostConfig {
        HostConfig {
            host_version: host_version.into(),
            start_timeout: Duration::from_secs(5),
            handshake_timeout: Duration::from_secs(10),
            call_timeout: Duration::from_secs(60),
            grace: Duration::from_secs(2),
            crash_loop_pause: Duration::from_secs(60),
            pins: None,
            parent_env: None,
        }
    }

    /// The defaults for a host at `host_version`, with each `AGENT_ENV_PLUGIN_*_TIMEOUT` variable
    /// that `lookup` finds applied. The caller decides where variables come from (the process
    /// environment, or a map in tests). A variable that is not a number of seconds leaves its
    /// default, as one unset (or set empty) does, and is returned for the caller to warn of: one
    /// wrong timeout must not stop every plugin from starting.
    pub fn from_lookup(
        host_version: impl Into<String>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> (HostConfig, Vec<HostConfigError>) {
        let mut config = HostConfig::new(host_version);
        let mut ignored = Vec::new();
        let fields: [(&'static str, &mut Duration); 3] = [
            (START_TIMEOUT_VAR, &mut config.start_timeout),
            (HANDSHAKE_TIMEOUT_VAR, &mut config.handshake_timeout),
            (CALL_TIMEOUT_VAR, &mut config.call_timeout),
        ];
        for (var, field) in fields {
            let Some(value) = lookup(var).filter(|v| !v.trim().is_empty()) else {
                continue;
            };
            match parse_seconds(&value) {
                Some(seconds) => *field = seconds,
                None => ignored.push(HostConfigError {
                    var,
                    value,
                    default: *field,
                }),
            }
        }
        (config, ignored)
    }
}

/// A timeout variable that does not hold a number of seconds: its default is used instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{var}={value:?} is not a number of seconds above 0 and at most 1e9, so it is ignored and the default, {} s, is used; set it to such a number (e.g. 10 or 0.5), or unset it", default.as_secs_f64())]
pub struct HostConfigError {
    /// The variable's name.
    pub var: &'static str,
    /// Its value, as set.
    pub value: String,
    /// The timeout used instead.
    pub default: Duration,
}

/// The most seconds a timeout may be (about 31 years): more would overflow the clock's arithmetic.
pub const MAX_SECONDS: f64 = 1e9;

/// A positive, finite number of seconds (`10`, `0.5`), as the timeout variables take it.
pub fn parse_seconds(text: &str) -> Option<Duration> {
    let seconds: f64 = text.trim().parse().ok()?;
    if !seconds.is_finite() || seconds <= 0.0 || seconds > MAX_SECONDS {
        return None;
    }
    Some(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_protocol_document() {
        let c = HostConfig::new("1.2.3");
        assert_eq!(c.host_version, "1.2.3");
        assert_eq!(c.start_timeout, Duration::from_secs(5));
        assert_eq!(c.handshake_timeout, Duration::from_secs(10));
        assert_eq!(c.call_timeout, Duration::from_secs(60));
        assert_eq!(c.grace, Duration::from_secs(2));
    }

    #[test]
    fn variables_override_with_fractional_seconds() {
        let (c, ignored) = HostConfig::from_lookup("1.2.3", |v| match v {
            HANDSHAKE_TIMEOUT_VAR => Some("0.5".into()),
            CALL_TIMEOUT_VAR => Some(" 3 ".into()),
            _ => None,
        });
        assert_eq!(ignored, []);
        assert_eq!(c.handshake_timeout, Duration::from_millis(500));
        assert_eq!(c.call_timeout, Duration::from_secs(3));
        assert_eq!(c.start_timeout, Duration::from_secs(5));
    }

    #[test]
    fn a_bad_value_leaves_the_default_and_names_the_variable() {
        for bad in ["ten", "-1", "0", "inf"] {
            let (c, ignored) =
                HostConfig::from_lookup("1.2.3", |v| (v == START_TIMEOUT_VAR).then(|| bad.into()));
            assert_eq!(c.start_timeout, Duration::from_secs(5));
            assert_eq!(ignored.len(), 1, "{bad}");
            assert_eq!(ignored[0].var, START_TIMEOUT_VAR);
            assert_eq!(
                ignored[0].to_string(),
                format!("{START_TIMEOUT_VAR}=\"{bad}\" is not a number of seconds above 0 and at most 1e9, so it is ignored and the default, 5 s, is used; set it to such a number (e.g. 10 or 0.5), or unset it")
            );
        }
    }

    #[test]
    fn an_empty_value_is_as_if_unset() {
        let (c, ignored) =
            HostConfig::from_lookup("1.2.3", |v| (v == CALL_TIMEOUT_VAR).then(|| " ".into()));
        assert_eq!(ignored, []);
        assert_eq!(c.call_timeout, Duration::from_secs(60));
    }
}
