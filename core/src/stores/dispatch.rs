//! `HostStoreDispatcher`: answers a plugin's `host.store.<kind>.<op>` requests (docs/protocol.md §5)
//! against the [`StoreSet`] it was given (the configured stores, or a bundle run's @local object and
//! document stores beside the configured secret and image stores), each built on first use. `host.store.document.drop_collection`
//! is not offered: a plugin may delete documents but not drop a collection of the user's store.

use std::sync::Arc;

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::{split_store_method, HOST_STORE_PREFIX};
use serde_json::Value;

use super::store_set::StoreSet;
use agent_env_store::serve;
use agent_env_store::StoreKind;

/// Routes store requests to the stores of the set it was given.
pub struct HostStoreDispatcher {
    stores: Arc<StoreSet>,
}

impl HostStoreDispatcher {
    pub fn new(stores: Arc<StoreSet>) -> Self {
        HostStoreDispatcher { stores }
    }

    /// Whether `method` is one this dispatcher answers (`host.store.*`).
    pub fn handles(method: &str) -> bool {
        method.starts_with(HOST_STORE_PREFIX)
    }

    /// What the stores have to warn the user about since last asked (a local registry that does not
    /// answer, say): the dispatcher never prints, so whoever runs the plugin shows these.
    pub fn take_warnings(&self) -> Vec<String> {
        self.stores.take_warnings()
    }

    /// Answers `host.store.<kind>.<op>` (also accepted without the `host.` prefix).
    pub fn dispatch(&self, method: &str, params: &Value) -> Result<Value, RpcError> {
        let unprefixed = method.strip_prefix("host.").unwrap_or(method);
        let Some((kind_name, op)) = split_store_method(unprefixed) else {
            return Err(RpcError::new(
                ErrorKind::MethodNotFound,
                format!("{method} is not a host store method (host.store.<kind>.<op>)"),
            ));
        };
        let Some(kind) = StoreKind::parse(kind_name) else {
            return Err(RpcError::new(
                ErrorKind::MethodNotFound,
                format!(
                    "{method}: '{kind_name}' is not a store kind (object, document, image, secret)"
                ),
            ));
        };
        if kind == StoreKind::Document && op == "drop_collection" {
            return Err(RpcError::new(
                ErrorKind::MethodNotFound,
                format!("{method}: a plugin cannot drop a collection of the configured document store (delete its documents instead)"),
            ));
        }
        let answer = serve::any(&self.stores.get(kind)?, method, op, params)?;
        // A secret handed to a plugin is one it may repeat: it is masked from now on.
        if kind == StoreKind::Secret {
            if let Some(value) = answer.get("value").and_then(Value::as_str) {
                crate::redaction::remember(value);
            }
        }
        Ok(answer)
    }
}

impl agent_env_host::HostServices for HostStoreDispatcher {
    /// Answers `host.store.*`; any other `host.*` method is not this dispatcher's.
    fn handle(&self, package: &str, method: &str, params: Value) -> Result<Value, RpcError> {
        if !Self::handles(method) {
            return Err(RpcError::new(
                ErrorKind::MethodNotFound,
                format!("agent-env offers no method '{method}' to plugin {package}"),
            ));
        }
        self.dispatch(method, &params)
    }
}
