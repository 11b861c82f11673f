//! The child-process host's settings for this invocation: agent-env's own version and the
//! `AGENT_ENV_PLUGIN_*_TIMEOUT` variables of the process environment. The host crate reads no
//! environment itself; this is where core hands it over.

use agent_env_host::{HostConfig, HostConfigError};

/// [`HostConfig`] for agent-env at [`crate::VERSION`], with the timeout variables that are set in
/// the process environment applied.
pub fn from_env() -> Result<HostConfig, HostConfigError> {
    HostConfig::from_lookup(crate::VERSION, |var| std::env::var(var).ok())
}
