//! `PluginObjectStore`: an object store in another process. Every operation is one request; files
//! cross by path (`put_file`, `put_file_at`, `download_to_file`, and `open`, which downloads to a private
//! temporary file), small bytes as base64.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_env_protocol::methods::bytes;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::transport::{Direction, StoreTransport};
use crate::error::{StoreError, StoreResult};
use crate::object::{ObjectMetadata, ObjectReader, ObjectStore};
use crate::wire::answer_field;

/// An object store reached through a [`StoreTransport`].
pub struct PluginObjectStore {
    transport: Arc<dyn StoreTransport>,
    direction: Direction,
}

impl PluginObjectStore {
    /// A plugin's store, called as `store.object.<op>`.
    pub fn new(transport: Arc<dyn StoreTransport>) -> Self {
        Self::with_direction(transport, Direction::ToPlugin)
    }

    /// A store on either side.
    pub fn with_direction(transport: Arc<dyn StoreTransport>, direction: Direction) -> Self {
        PluginObjectStore {
            transport,
            direction,
        }
    }

    fn call(&self, op: &str, params: Value) -> StoreResult<(String, Value)> {
        let method = self.direction.method("object", op);
        let answer = self.transport.call(&method, params)?;
        Ok((method, answer))
    }

    fn field<T: DeserializeOwned>(&self, op: &str, params: Value, field: &str) -> StoreResult<T> {
        let (method, answer) = self.call(op, params)?;
        answer_field(&method, &answer, field)
    }

    fn data(&self, op: &str, params: Value) -> StoreResult<Vec<u8>> {
        let text: String = self.field(op, params, "data")?;
        bytes::decode(&text).map_err(|e| {
            StoreError::Internal(format!("the answer to object.{op} is not base64: {e}"))
        })
    }
}

/// The receiver opens paths itself, perhaps from another working directory, so they go absolute.
fn absolute(path: &Path) -> StoreResult<String> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| StoreError::io("finding the working directory", &e))?
            .join(path)
    };
    abs.to_str().map(str::to_string).ok_or_else(|| {
        StoreError::InvalidValue(format!(
            "{} is not valid UTF-8, so it cannot cross to a plugin",
            abs.display()
        ))
    })
}

/// A fresh path in the temporary directory for `open` to download to.
fn scratch_path() -> StoreResult<PathBuf> {
    let mut random = [0u8; 8];
    getrandom::getrandom(&mut random)
        .map_err(|e| StoreError::Internal(format!("no randomness for a temporary file: {e}")))?;
    Ok(std::env::temp_dir().join(format!("agent-env-open-{}", hex::encode(random))))
}

impl ObjectStore for PluginObjectStore {
    fn put(
        &self,
        key: &str,
        data: &[u8],
        content_type: &str,
        allow_overwrite: bool,
    ) -> StoreResult<String> {
        let params = json!({"key": key, "data": bytes::encode(data), "content_type": content_type,
                            "allow_overwrite": allow_overwrite});
        self.field("put", params, "url")
    }

    fn put_file(&self, key: &str, file_path: &Path, content_type: &str) -> StoreResult<String> {
        let params =
            json!({"key": key, "path": absolute(file_path)?, "content_type": content_type});
        self.field("put_file", params, "url")
    }

    fn put_file_at(
        &self,
        object_url: &str,
        file_path: &Path,
        content_type: &str,
    ) -> StoreResult<String> {
        let params =
            json!({"url": object_url, "path": absolute(file_path)?, "content_type": content_type});
        self.field("put_file_at", params, "url")
    }

    fn get(&self, object_url: &str) -> StoreResult<Vec<u8>> {
        self.data("get", json!({ "url": object_url }))
    }

    fn get_object_metadata(&self, key: &str) -> StoreResult<Option<ObjectMetadata>> {
        self.field("get_object_metadata", json!({ "key": key }), "metadata")
    }

    fn get_object_metadata_at(&self, object_url: &str) -> StoreResult<Option<ObjectMetadata>> {
        self.field(
            "get_object_metadata_at",
            json!({ "url": object_url }),
            "metadata",
        )
    }

    fn list(&self, prefix: &str) -> StoreResult<Vec<String>> {
        self.field("list", json!({ "prefix": prefix }), "keys")
    }

    fn list_at(&self, url_prefix: &str) -> StoreResult<Vec<String>> {
        self.field("list_at", json!({ "url_prefix": url_prefix }), "urls")
    }

    fn object_url(&self, key: &str) -> StoreResult<String> {
        self.field("object_url", json!({ "key": key }), "url")
    }

    fn get_object_key(&self, object_url: &str) -> StoreResult<String> {
        self.field("get_object_key", json!({ "url": object_url }), "key")
    }

    fn download_to_file(&self, object_url: &str, dest: &Path) -> StoreResult<()> {
        self.call(
            "download_to_file",
            json!({"url": object_url, "path": absolute(dest)?}),
        )?;
        Ok(())
    }

    /// Downloads to a temporary file, opens it and unlinks it at once, so the bytes stream from disk
    /// and nothing is left behind.
    fn open(&self, object_url: &str) -> StoreResult<ObjectReader> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = scratch_path()?;
        // Made here first, private to this user, so the bytes are never readable by others.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| StoreError::io(format!("creating {}", path.display()), &e))?;
        let result = self.download_to_file(object_url, &path).and_then(|()| {
            std::fs::File::open(&path)
                .map_err(|e| StoreError::io(format!("opening {}", path.display()), &e))
        });
        let _ = std::fs::remove_file(&path);
        Ok(Box::new(result?))
    }

    fn exists(&self, key: &str) -> StoreResult<bool> {
        self.field("exists", json!({ "key": key }), "exists")
    }

    fn owns(&self, object_url: &str) -> StoreResult<bool> {
        self.field("owns", json!({ "url": object_url }), "owns")
    }

    fn read(&self, key: &str) -> StoreResult<Vec<u8>> {
        self.data("read", json!({ "key": key }))
    }
}
