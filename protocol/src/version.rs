//! Protocol versions: one integer, bumped only for changes an existing plugin would notice.

use serde::{Deserialize, Serialize};

/// The protocol version this crate implements.
pub const PROTOCOL_VERSION: u32 = 1;

/// The oldest protocol version this crate still speaks.
pub const MIN_PROTOCOL_VERSION: u32 = 1;

/// Maximum size of one message line (newline excluded), in each direction.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Environment variable that tells a plugin it was started by agent-env.
pub const COOKIE_VAR: &str = "AGENT_ENV_PLUGIN";
/// The cookie's value.
pub const COOKIE_VALUE: &str = "1";
/// Environment variable holding the host's protocol range, `min-max`.
pub const PROTOCOL_VERSIONS_VAR: &str = "AGENT_ENV_PROTOCOL_VERSIONS";
/// Environment variable holding the host's version.
pub const HOST_VERSION_VAR: &str = "AGENT_ENV_HOST_VERSION";
/// Environment variable holding the package name the host started.
pub const PACKAGE_VAR: &str = "AGENT_ENV_PLUGIN_PACKAGE";
/// Environment variable set in command mode: the fds the protocol runs over, `read,write`.
pub const RPC_FDS_VAR: &str = "AGENT_ENV_RPC_FDS";
/// The single argument that asks a plugin to print its manifest and exit.
pub const PRINT_MANIFEST_ARG: &str = "--agent-env-manifest";

/// An inclusive range of protocol versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProtocolRange {
    /// The oldest version.
    pub min: u32,
    /// The newest version.
    pub max: u32,
}

impl ProtocolRange {
    /// The range this crate speaks.
    pub const fn ours() -> Self {
        ProtocolRange {
            min: MIN_PROTOCOL_VERSION,
            max: PROTOCOL_VERSION,
        }
    }

    /// The highest version both ranges contain, if any.
    pub fn negotiate(&self, other: &ProtocolRange) -> Option<u32> {
        let low = self.min.max(other.min);
        let high = self.max.min(other.max);
        (low <= high).then_some(high)
    }

    /// Whether `version` is in the range.
    pub fn contains(&self, version: u32) -> bool {
        self.min <= version && version <= self.max
    }

    /// Parses the `min-max` form of [`PROTOCOL_VERSIONS_VAR`] (a single `n` means `n-n`).
    pub fn parse_env(text: &str) -> Option<Self> {
        let text = text.trim();
        let (min, max) = match text.split_once('-') {
            Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
            None => {
                let v = text.parse().ok()?;
                (v, v)
            }
        };
        (min <= max).then_some(ProtocolRange { min, max })
    }

    /// The `min-max` form of [`PROTOCOL_VERSIONS_VAR`].
    pub fn to_env(&self) -> String {
        format!("{}-{}", self.min, self.max)
    }
}

impl std::fmt::Display for ProtocolRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.min == self.max {
            write!(f, "{}", self.min)
        } else {
            write!(f, "{}-{}", self.min, self.max)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_picks_the_highest_common_version() {
        let host = ProtocolRange { min: 1, max: 3 };
        assert_eq!(host.negotiate(&ProtocolRange { min: 2, max: 5 }), Some(3));
        assert_eq!(host.negotiate(&ProtocolRange { min: 99, max: 99 }), None);
    }

    #[test]
    fn env_form_round_trips() {
        let r = ProtocolRange { min: 1, max: 2 };
        assert_eq!(ProtocolRange::parse_env(&r.to_env()), Some(r));
        assert_eq!(
            ProtocolRange::parse_env("4"),
            Some(ProtocolRange { min: 4, max: 4 })
        );
        assert_eq!(ProtocolRange::parse_env("3-1"), None);
        assert_eq!(ProtocolRange::parse_env("x"), None);
    }
}
