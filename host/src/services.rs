//! What the host answers when a plugin calls it (`host.*`) during one of the host's calls.

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::ProgressParams;
use std::sync::Arc;

use serde_json::Value;

/// Answers the `host.*` requests a plugin sends while a call to it is in flight.
pub trait HostServices: Send + Sync {
    /// Answers one request of `package`, e.g. `host.store.object.put`.
    fn handle(&self, package: &str, method: &str, params: Value) -> Result<Value, RpcError>;

    /// A `$/progress` notification from `package`.
    fn progress(&self, _package: &str, _p: &ProgressParams) {}

    /// A `$/log` notification from `package`: its level (`info` when it named none) and message.
    fn log(&self, _package: &str, _level: &str, _message: &str) {}

    /// One line `package` wrote to its stderr (without the newline), as it arrives. Not called in
    /// command mode, where the plugin's stderr is the terminal's.
    fn stderr_line(&self, _package: &str, _line: &str) {}

    /// Services that may answer for any call of the same caller, for a request that names no call
    /// while several are in flight (a plugin that does not say `call_id`): a run's, whose stores are
    /// the same for all its steps. `None` when only this call's services may answer.
    fn shared(&self) -> Option<Arc<dyn HostServices>> {
        None
    }

    /// The call these services were given for ([`PluginProcess::call_for`]) is going out to the
    /// plugin: it is in flight from now until [`call_ended`](Self::call_ended). Not called for a
    /// call the process refused without sending it (one found unresponsive, one shut down).
    ///
    /// [`PluginProcess::call_for`]: crate::PluginProcess::call_for
    fn call_sent(&self) {}

    /// The call [`call_sent`](Self::call_sent) told of ended: answered, failed, timed out, or cut
    /// short by the end of the process.
    fn call_ended(&self) {}
}

/// Services that answer every request with `method-not-found`.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoServices;

impl HostServices for NoServices {
    fn handle(&self, package: &str, method: &str, _params: Value) -> Result<Value, RpcError> {
        Err(RpcError::new(
            ErrorKind::MethodNotFound,
            format!("agent-env offers no method '{method}' to plugin {package}"),
        ))
    }
}
