//! The connection limits: how long a connection may take to send a request's head (the same limit
//! ends a keep-alive connection idle between requests), and how many connections are served at once.
//! Both have defaults meant for everyone; an operator or a test sets them with
//! `AGENT_ENV_EXPLORER_HEADER_TIMEOUT` (seconds, fractions allowed) and
//! `AGENT_ENV_EXPLORER_MAX_CONNECTIONS`, read from the invocation's environment.

use std::time::Duration;

use agent_env::environment::Environment;
use agent_env_host::parse_seconds;

/// Overrides [`ConnectionLimits::header_timeout`], in seconds.
pub const HEADER_TIMEOUT_VAR: &str = "AGENT_ENV_EXPLORER_HEADER_TIMEOUT";
/// Overrides [`ConnectionLimits::max_connections`].
pub const MAX_CONNECTIONS_VAR: &str = "AGENT_ENV_EXPLORER_MAX_CONNECTIONS";

/// Time enough for a slow but real client to send a request's head.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// Far more than a browser opens (six a site, a few more for live streams), well under the usual
/// limit of 1024 open files a process gets, which the stores and plugins share.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// The most connections [`MAX_CONNECTIONS_VAR`] may ask for.
pub const MOST_CONNECTIONS: usize = 1_000_000;

/// How the explorer bounds its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// How long a connection may take to send a whole request head, from when the server starts
    /// reading it: a new connection's first, or the next on a keep-alive connection (so an idle
    /// connection is closed after this long too). A request whose head arrived is never cut by it,
    /// however long its answer streams.
    pub header_timeout: Duration,
    /// How many connections are served at once; more wait to be accepted until one closes.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// A limit variable set to something it cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitsError {
    #[error("{var} is '{value}', which is not a number of seconds greater than 0 and at most 1000000000 (e.g. 30 or 0.5); fix or unset it")]
    Seconds { var: &'static str, value: String },
    #[error("{var} is '{value}', which is not a whole number of connections from 1 to {MOST_CONNECTIONS}; fix or unset it")]
    Connections { var: &'static str, value: String },
}

impl ConnectionLimits {
    /// The defaults, with each variable set in `env` applied.
    pub fn from_env(env: &Environment) -> Result<ConnectionLimits, LimitsError> {
        Self::from_lookup(|name| {
            env.var_os(name)
                .map(|value| value.to_string_lossy().into_owned())
        })
    }

    /// The defaults, with each variable `lookup` finds applied.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<ConnectionLimits, LimitsError> {
        let mut limits = ConnectionLimits::default();
        if let Some(value) = lookup(HEADER_TIMEOUT_VAR) {
            limits.header_timeout = parse_seconds(&value).ok_or(LimitsError::Seconds {
                var: HEADER_TIMEOUT_VAR,
                value,
            })?;
        }
        if let Some(value) = lookup(MAX_CONNECTIONS_VAR) {
            limits.max_connections = value
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=MOST_CONNECTIONS).contains(n))
                .ok_or(LimitsError::Connections {
                    var: MAX_CONNECTIONS_VAR,
                    value,
                })?;
        }
        Ok(limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> Result<ConnectionLimits, LimitsError> {
        ConnectionLimits::from_lookup(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn unset_variables_leave_the_defaults() {
        assert_eq!(read(&[]).unwrap(), ConnectionLimits::default());
        assert_eq!(
            ConnectionLimits::default(),
            ConnectionLimits {
                header_timeout: Duration::from_secs(30),
                max_connections: 256,
            }
        );
    }

    #[test]
    fn each_variable_sets_its_limit() {
        let limits = read(&[(HEADER_TIMEOUT_VAR, " 0.5 "), (MAX_CONNECTIONS_VAR, "4")]).unwrap();
        assert_eq!(limits.header_timeout, Duration::from_millis(500));
        assert_eq!(limits.max_connections, 4);
    }

    #[test]
    fn a_timeout_that_is_not_positive_seconds_is_refused_by_name() {
        for bad in ["0", "-1", "soon", "", "inf", "NaN", "2000000000"] {
            let err = read(&[(HEADER_TIMEOUT_VAR, bad)]).unwrap_err();
            assert_eq!(
                err,
                LimitsError::Seconds {
                    var: HEADER_TIMEOUT_VAR,
                    value: bad.to_string()
                }
            );
            let said = err.to_string();
            assert!(said.contains(HEADER_TIMEOUT_VAR), "{said}");
            assert!(said.contains("fix or unset it"), "{said}");
        }
    }

    #[test]
    fn a_connection_count_outside_its_range_is_refused_by_name() {
        for bad in ["0", "-3", "2.5", "many", "1000001"] {
            let err = read(&[(MAX_CONNECTIONS_VAR, bad)]).unwrap_err();
            assert_eq!(
                err,
                LimitsError::Connections {
                    var: MAX_CONNECTIONS_VAR,
                    value: bad.to_string()
                }
            );
            assert!(err.to_string().contains("from 1 to 1000000"), "{err}");
        }
    }
}
