//! Calling the host (`host.*`) while one of its calls to the plugin is in flight.

use std::path::Path;

use agent_env_protocol::methods::{bytes, host_store_method, HOST_SETTINGS, LOG};
use agent_env_protocol::peer::Peer;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use crate::error::HostCallError;

/// The host, as seen from inside a call. Valid only while the call it was given to runs.
#[derive(Clone)]
pub struct HostHandle {
    peer: Peer,
}

impl HostHandle {
    pub(crate) fn new(peer: Peer) -> Self {
        HostHandle { peer }
    }

    /// Calls any host method and returns its raw result.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, HostCallError> {
        self.peer
            .call(method, params, None)
            .map_err(|e| HostCallError::from_call(method, e))
    }

    fn call_field<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        field: &str,
    ) -> Result<T, HostCallError> {
        let mut result = self.call(method, params)?;
        let value = result
            .get_mut(field)
            .map(Value::take)
            .unwrap_or(Value::Null);
        serde_json::from_value(value).map_err(|e| HostCallError::BadAnswer {
            method: method.into(),
            detail: format!("field '{field}': {e}"),
        })
    }

    /// Calls `host.store.<kind>.<op>` on the store the user configured for `kind`.
    pub fn store(&self, kind: &str, op: &str, params: Value) -> Result<Value, HostCallError> {
        self.call(&host_store_method(kind, op), params)
    }

    /// Puts bytes in the host's object store under `key`; returns the object's URL.
    pub fn object_put(
        &self,
        key: &str,
        data: &[u8],
        content_type: Option<&str>,
        allow_overwrite: bool,
    ) -> Result<String, HostCallError> {
        let params = json!({"key": key, "data": bytes::encode(data),
            "content_type": content_type, "allow_overwrite": allow_overwrite});
        self.call_field(&host_store_method("object", "put"), params, "url")
    }

    /// Gets the bytes of the object at `url` from the host's object store.
    pub fn object_get(&self, url: &str) -> Result<Vec<u8>, HostCallError> {
        let method = host_store_method("object", "get");
        let data: String = self.call_field(&method, json!({ "url": url }), "data")?;
        bytes::decode(&data).map_err(|e| HostCallError::BadAnswer {
            method,
            detail: format!("'data' is not base64: {e}"),
        })
    }

    /// Puts a file in the host's object store by path (the host reads it); returns the URL.
    pub fn object_put_file(
        &self,
        key: &str,
        path: &Path,
        content_type: Option<&str>,
    ) -> Result<String, HostCallError> {
        let params =
            json!({"key": key, "path": path.to_string_lossy(), "content_type": content_type});
        self.call_field(&host_store_method("object", "put_file"), params, "url")
    }

    /// Has the host write the object at `url` to the file at `path`.
    pub fn object_download_to_file(&self, url: &str, path: &Path) -> Result<(), HostCallError> {
        let params = json!({"url": url, "path": path.to_string_lossy()});
        self.store("object", "download_to_file", params).map(|_| ())
    }

    /// Whether an object exists under `key` in the host's object store.
    pub fn object_exists(&self, key: &str) -> Result<bool, HostCallError> {
        self.call_field(
            &host_store_method("object", "exists"),
            json!({ "key": key }),
            "exists",
        )
    }

    /// A secret from the host's secret store; `None` when it has none of that name.
    pub fn secret_get(&self, name: &str) -> Result<Option<String>, HostCallError> {
        self.call_field(
            &host_store_method("secret", "get"),
            json!({ "name": name }),
            "value",
        )
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

    /// Sends a `$/log` line to the host (kept with the plugin's stderr in diagnoses).
    pub fn log(&self, level: &str, message: &str) {
        let _ = self
            .peer
            .notify(LOG, json!({"level": level, "message": message}));
    }
}
