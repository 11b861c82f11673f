//! The one thing a remote store needs: a way to send a request and get its answer.

use serde_json::Value;

use crate::error::StoreResult;

/// Sends one store request and returns its result. A transport to a plugin store adds the opened
/// store's `handle` to `params`; one to the host's stores sends them as they are. Errors keep their kind
/// (`StoreError::from(RpcError)`).
pub trait StoreTransport: Send + Sync {
    /// Sends `method` with `params` and returns the answer's result.
    fn call(&self, method: &str, params: Value) -> StoreResult<Value>;
}

/// Which side the remote store lives on, and so the method prefix of its operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The host calls a plugin's store: `store.<kind>.<op>`.
    ToPlugin,
    /// A plugin calls the host's configured store: `host.store.<kind>.<op>`.
    ToHost,
}

impl Direction {
    /// The method name of `<kind>.<op>` in this direction.
    pub fn method(self, kind: &str, op: &str) -> String {
        match self {
            Direction::ToPlugin => agent_env_protocol::methods::store_method(kind, op),
            Direction::ToHost => agent_env_protocol::methods::host_store_method(kind, op),
        }
    }
}
