//! Calling the host (`host.*`) while one of its calls to the plugin is in flight. The host's configured
//! stores are the store API's remote stores ([`agent_env_store::remote`]) over this plugin's connection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::{Id, RpcError};
use agent_env_protocol::methods::{CALL_ID, HOST_SETTINGS, LOG};
use agent_env_protocol::peer::Peer;
use agent_env_store::remote::Direction;
use agent_env_store::{
    PluginDocumentStore, PluginImageStore, PluginObjectStore, PluginSecretStore, StoreError,
    StoreResult, StoreTransport,
};
use serde_json::{json, Map, Value};

use crate::error::HostCallError;
use crate::log_level::{log_line, IntoLogLevel};

/// The host, as seen from inside a call. Valid only while the call it was given to runs: once that
/// call's handler has returned, this handle, its clones and the stores it gave fail every host call
/// at once (the host would refuse them too), so a handle kept past its call cannot write in the name
/// of another.
#[derive(Clone)]
pub struct HostHandle {
    peer: Peer,
    /// The host request this handle works for; every call names it (`call_id`), so a host with several
    /// calls in flight to this plugin answers in the right one's name.
    call: Id,
    ended: CallEnded,
}

/// Whether the call a handle was given for has ended; shared by the handle's clones and stores.
#[derive(Clone, Default)]
struct CallEnded(Arc<AtomicBool>);

impl CallEnded {
    fn mark(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// The error of host `method` called for `call` once it ended, `Ok` while it runs.
    fn check(&self, call: &Id, method: &str) -> Result<(), RpcError> {
        if !self.0.load(Ordering::SeqCst) {
            return Ok(());
        }
        Err(RpcError::new(
            ErrorKind::InvalidRequest,
            format!(
                "{method} was not sent: the call {call} {}; a host handle is valid only while its call runs, so call the host from inside the \
                 handler, not from a thread or value that outlives it",
                crate::error::CALL_ENDED
            ),
        ))
    }
}

/// `params` naming the host request it works for (no params become an object that names it, as the
/// Python and Go SDKs do; params of another shape are sent as they are).
fn naming(call: &Id, params: Value) -> Value {
    let mut map = match params {
        Value::Object(map) => map,
        Value::Null => serde_json::Map::new(),
        other => return other,
    };
    map.insert(
        CALL_ID.into(),
        serde_json::to_value(call).unwrap_or(Value::Null),
    );
    Value::Object(map)
}

impl HostHandle {
    pub(crate) fn new(peer: Peer, call: Id) -> Self {
        HostHandle {
            peer,
            call,
            ended: CallEnded::default(),
        }
    }

    /// The call this handle was given for has ended: from now on it fails every host call.
    pub(crate) fn end(&self) {
        self.ended.mark();
    }

    /// Calls any host method and returns its raw result.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, HostCallError> {
        self.ended
            .check(&self.call, method)
            .map_err(HostCallError::Host)?;
        self.peer
            .call(method, naming(&self.call, params), None)
            .map_err(|e| HostCallError::from_call(method, e))
    }

    /// The object store the user configured, as this plugin reaches it: every operation is one
    /// `host.store.object.<op>` call, and files cross by path (`put_file`, `download_to_file`), so a large
    /// object never travels in JSON. Errors keep the host's kind (a missing object is
    /// [`StoreError::NotFound`](agent_env_store::StoreError::NotFound)).
    pub fn objects(&self) -> PluginObjectStore {
        PluginObjectStore::with_direction(self.transport(), Direction::ToHost)
    }

    /// The document store the user configured (`host.store.document.<op>`).
    pub fn documents(&self) -> PluginDocumentStore {
        PluginDocumentStore::with_direction(self.transport(), Direction::ToHost)
    }

    /// The image store the user configured (`host.store.image.<op>`).
    pub fn images(&self) -> PluginImageStore {
        PluginImageStore::with_direction(self.transport(), Direction::ToHost)
    }

    /// The secret store the user configured (`host.store.secret.<op>`).
    pub fn secrets(&self) -> PluginSecretStore {
        PluginSecretStore::with_direction(self.transport(), Direction::ToHost)
    }

    fn transport(&self) -> Arc<dyn StoreTransport> {
        Arc::new(HostStoreTransport {
            peer: self.peer.clone(),
            call: self.call.clone(),
            ended: self.ended.clone(),
        })
    }

    /// The plugin's `[plugins.<package>]` settings, as the host has them now.
    pub fn settings(&self) -> Result<Map<String, Value>, HostCallError> {
        match self.call(HOST_SETTINGS, json!({}))? {
            Value::Object(map) => Ok(map),
            other => Err(HostCallError::BadAnswer {
                method: HOST_SETTINGS.into(),
                detail: format!("expected an object, got {other}"),
            }),
        }
    }

    /// Sends a `$/log` line to the host: `host.log(LogLevel::Warning, "kept no recording")`. agent-env
    /// keeps it with the plugin's stderr (the run's log, `-v`, diagnoses), as `[warning] kept no
    /// recording`. The level may also be given by name (`"warning"`, see [`IntoLogLevel`]): a name that
    /// is no level sends the line as a warning that names it. Nothing is sent once the connection is
    /// gone; a log line is never worth failing a call for.
    pub fn log(&self, level: impl IntoLogLevel, message: &str) {
        let (level, message) = log_line(level, message);
        let _ = self.peer.notify(
            LOG,
            naming(
                &self.call,
                json!({"level": level.as_str(), "message": message}),
            ),
        );
    }
}

/// Sends a store request to the host over the plugin's connection. An error the host answers keeps its
/// kind; a call the host never answers is an internal error that says so.
struct HostStoreTransport {
    peer: Peer,
    call: Id,
    ended: CallEnded,
}

impl StoreTransport for HostStoreTransport {
    fn call(&self, method: &str, params: Value) -> StoreResult<Value> {
        self.ended.check(&self.call, method)?;
        self.peer
            .call(method, naming(&self.call, params), None)
            .map_err(|e| StoreError::from(HostCallError::from_call(method, e)))
    }
}

#[cfg(test)]
mod naming_tests {
    use super::*;

    #[test]
    fn every_object_or_empty_params_name_the_call() {
        let call = Id::Number(7);
        assert_eq!(
            naming(&call, json!({"k": 1})),
            json!({"k": 1, "call_id": 7})
        );
        assert_eq!(naming(&call, Value::Null), json!({"call_id": 7}));
        assert_eq!(naming(&call, json!([1])), json!([1]));
    }
}
