//! Store classes a plugin provides (`[provides.stores]`): the wire-level operations of
//! `docs/protocol.md` §4.4, one trait per store kind. Every method has a default that answers
//! `not-supported`, so a store implements what it offers.

use std::path::Path;

use agent_env_protocol::methods::{StoreInfo, WireObjectMetadata};
use serde_json::{Map, Value};

use crate::error::StoreError;

/// An object store (`[stores.object]`). URLs are the store's own.
pub trait ObjectStore: Send + Sync + 'static {
    /// Stores `data` under `key`; `already-exists` if it exists and `allow_overwrite` is false.
    fn put(
        &self,
        key: &str,
        data: &[u8],
        content_type: Option<&str>,
        allow_overwrite: bool,
    ) -> Result<String, StoreError>;

    /// The bytes at `url`; `not-found` if none, `foreign-url` if the URL is not this store's.
    fn get(&self, url: &str) -> Result<Vec<u8>, StoreError>;

    /// Stores the file at `path` under `key` (read it by path; it may be large). Write-once like
    /// `put`: `already-exists` if `key` exists. The default reads the file and calls `put`.
    fn put_file(
        &self,
        key: &str,
        path: &Path,
        content_type: Option<&str>,
    ) -> Result<String, StoreError> {
        let data =
            std::fs::read(path).map_err(|e| StoreError::io(&e, &path.display().to_string()))?;
        self.put(key, &data, content_type, false)
    }

    fn put_file_at(
        &self,
        _url: &str,
        _path: &Path,
        _content_type: Option<&str>,
    ) -> Result<String, StoreError> {
        Err(StoreError::not_supported("put_file_at"))
    }

    /// The bytes under `key`.
    fn read(&self, key: &str) -> Result<Vec<u8>, StoreError> {
        self.get(&self.object_url(key)?)
    }

    /// Writes the object at `url` to the file at `path`, creating its parent folders.
    fn download_to_file(&self, url: &str, path: &Path) -> Result<(), StoreError> {
        let data = self.get(url)?;
        let io = |e: std::io::Error, at: &Path| StoreError::io(&e, &at.display().to_string());
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| io(e, parent))?;
        }
        std::fs::write(path, data).map_err(|e| io(e, path))
    }

    fn get_object_metadata(&self, _key: &str) -> Result<Option<WireObjectMetadata>, StoreError> {
        Err(StoreError::not_supported("get_object_metadata"))
    }

    fn get_object_metadata_at(&self, _url: &str) -> Result<Option<WireObjectMetadata>, StoreError> {
        Err(StoreError::not_supported("get_object_metadata_at"))
    }

    fn list(&self, _prefix: &str) -> Result<Vec<String>, StoreError> {
        Err(StoreError::not_supported("list"))
    }

    fn list_at(&self, _url_prefix: &str) -> Result<Vec<String>, StoreError> {
        Err(StoreError::not_supported("list_at"))
    }

    /// The URL an object under `key` has (whether or not it exists).
    fn object_url(&self, _key: &str) -> Result<String, StoreError> {
        Err(StoreError::not_supported("object_url"))
    }

    fn get_object_key(&self, _url: &str) -> Result<String, StoreError> {
        Err(StoreError::not_supported("get_object_key"))
    }

    fn exists(&self, key: &str) -> Result<bool, StoreError> {
        match self.read(key) {
            Ok(_) => Ok(true),
            Err(e) if e.kind == agent_env_protocol::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn owns(&self, _url: &str) -> Result<bool, StoreError> {
        Err(StoreError::not_supported("owns"))
    }
}

/// A document store (`[stores.document]`); filters, sorts and updates in the wire form of
/// `docs/protocol.md` ("Documents").
pub trait DocumentStore: Send + Sync + 'static {
    fn find_one(
        &self,
        _collection: &str,
        _filter: &Value,
        _sort: &Value,
    ) -> Result<Option<Map<String, Value>>, StoreError> {
        Err(StoreError::not_supported("find_one"))
    }

    fn query(
        &self,
        _collection: &str,
        _filter: &Value,
        _sort: &Value,
        _limit: Option<u64>,
        _offset: u64,
    ) -> Result<Vec<Map<String, Value>>, StoreError> {
        Err(StoreError::not_supported("query"))
    }

    fn count(&self, _collection: &str, _filter: &Value) -> Result<u64, StoreError> {
        Err(StoreError::not_supported("count"))
    }

    fn insert(&self, _collection: &str, _doc: Map<String, Value>) -> Result<(), StoreError> {
        Err(StoreError::not_supported("insert"))
    }

    fn update(
        &self,
        _collection: &str,
        _filter: &Value,
        _update: &Value,
        _upsert: bool,
    ) -> Result<u64, StoreError> {
        Err(StoreError::not_supported("update"))
    }

    fn update_one_and_get(
        &self,
        _collection: &str,
        _filter: &Value,
        _update: &Value,
        _return_after: bool,
        _upsert: bool,
    ) -> Result<Option<Map<String, Value>>, StoreError> {
        Err(StoreError::not_supported("update_one_and_get"))
    }

    fn replace(
        &self,
        _collection: &str,
        _filter: &Value,
        _doc: Map<String, Value>,
        _upsert: bool,
    ) -> Result<u64, StoreError> {
        Err(StoreError::not_supported("replace"))
    }

    fn delete(&self, _collection: &str, _filter: &Value) -> Result<u64, StoreError> {
        Err(StoreError::not_supported("delete"))
    }

    fn ensure_index(
        &self,
        _collection: &str,
        _fields: &[String],
        _unique: bool,
    ) -> Result<(), StoreError> {
        Err(StoreError::not_supported("ensure_index"))
    }
}

/// An image store (`[stores.image]`): where container images are pushed.
pub trait ImageStore: Send + Sync + 'static {
    fn image_ref(&self, repository: &str, tag: &str) -> Result<String, StoreError>;

    fn ensure_repository(&self, _repository: &str) -> Result<(), StoreError> {
        Ok(())
    }

    fn owns(&self, _image_ref: &str) -> Result<bool, StoreError> {
        Err(StoreError::not_supported("owns"))
    }

    /// `{registry, username, password}` or `None`.
    fn auth(&self, _image_ref: &str) -> Result<Option<Value>, StoreError> {
        Ok(None)
    }
}

/// A secret store (`[stores.secret]`).
pub trait SecretStore: Send + Sync + 'static {
    /// The secret's value; `None` when there is none (an empty string is a value).
    fn get(&self, name: &str) -> Result<Option<String>, StoreError>;
}

/// An opened store of any kind.
pub enum OpenedStore {
    Object(Box<dyn ObjectStore>),
    Document(Box<dyn DocumentStore>),
    Image(Box<dyn ImageStore>),
    Secret(Box<dyn SecretStore>),
}

type Opener = Box<dyn Fn(&Map<String, Value>) -> Result<OpenedStore, StoreError> + Send + Sync>;

/// A store class the plugin can build: its name, kind, the config keys it takes, and its factory.
pub struct StoreClass {
    pub(crate) info: StoreInfo,
    pub(crate) open: Opener,
}

impl StoreClass {
    fn new(class: &str, kind: &str, config_keys: &[&str], open: Opener) -> Self {
        StoreClass {
            info: StoreInfo {
                class: class.into(),
                kind: kind.into(),
                config_keys: config_keys.iter().map(|k| k.to_string()).collect(),
                required_keys: Vec::new(),
            },
            open,
        }
    }

    /// An object store class; `open` gets the checked config table.
    pub fn object<S: ObjectStore>(
        class: &str,
        config_keys: &[&str],
        open: impl Fn(&Map<String, Value>) -> Result<S, StoreError> + Send + Sync + 'static,
    ) -> Self {
        let opener: Opener = Box::new(move |c| Ok(OpenedStore::Object(Box::new(open(c)?))));
        StoreClass::new(class, "object", config_keys, opener)
    }

    pub fn document<S: DocumentStore>(
        class: &str,
        config_keys: &[&str],
        open: impl Fn(&Map<String, Value>) -> Result<S, StoreError> + Send + Sync + 'static,
    ) -> Self {
        let opener: Opener = Box::new(move |c| Ok(OpenedStore::Document(Box::new(open(c)?))));
        StoreClass::new(class, "document", config_keys, opener)
    }

    pub fn image<S: ImageStore>(
        class: &str,
        config_keys: &[&str],
        open: impl Fn(&Map<String, Value>) -> Result<S, StoreError> + Send + Sync + 'static,
    ) -> Self {
        let opener: Opener = Box::new(move |c| Ok(OpenedStore::Image(Box::new(open(c)?))));
        StoreClass::new(class, "image", config_keys, opener)
    }

    pub fn secret<S: SecretStore>(
        class: &str,
        config_keys: &[&str],
        open: impl Fn(&Map<String, Value>) -> Result<S, StoreError> + Send + Sync + 'static,
    ) -> Self {
        let opener: Opener = Box::new(move |c| Ok(OpenedStore::Secret(Box::new(open(c)?))));
        StoreClass::new(class, "secret", config_keys, opener)
    }

    /// Keys that must be present (a subset of the config keys).
    pub fn required(mut self, keys: &[&str]) -> Self {
        self.info.required_keys = keys.iter().map(|k| k.to_string()).collect();
        self
    }

    /// Checks `config` against the keys this class takes, then opens the store.
    pub(crate) fn open_checked(
        &self,
        package: &str,
        config: &Map<String, Value>,
    ) -> Result<OpenedStore, StoreError> {
        let class = &self.info.class;
        let takes = self.info.config_keys.join(", ");
        let mut unknown: Vec<&String> = config
            .keys()
            .filter(|k| !self.info.config_keys.contains(k))
            .collect();
        unknown.sort();
        if let Some(key) = unknown.first() {
            let takes = if takes.is_empty() {
                "it takes no keys".to_string()
            } else {
                format!("it takes {takes}")
            };
            return Err(StoreError::config(format!(
                "The config table for '{package}:{class}' has unknown key '{key}'; {takes}"
            )));
        }
        if let Some(missing) = self
            .info
            .required_keys
            .iter()
            .find(|k| !config.contains_key(*k))
        {
            return Err(StoreError::config(format!(
                "The config table for '{package}:{class}' lacks the required key '{missing}'; it takes {takes}"
            )));
        }
        (self.open)(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Nothing;
    impl SecretStore for Nothing {
        fn get(&self, _name: &str) -> Result<Option<String>, StoreError> {
            Ok(None)
        }
    }

    struct PutGetOnly;
    impl ObjectStore for PutGetOnly {
        fn put(&self, _: &str, _: &[u8], _: Option<&str>, _: bool) -> Result<String, StoreError> {
            Ok("x://k".into())
        }
        fn get(&self, _url: &str) -> Result<Vec<u8>, StoreError> {
            Ok(Vec::new())
        }
    }

    #[test]
    fn an_operation_a_store_does_not_implement_answers_not_supported() {
        let store = OpenedStore::Object(Box::new(PutGetOnly));
        let params = config(json!({"url_prefix": "x://"}));
        let Err(e) = crate::store_ops::call(&store, "list_at", &params) else {
            panic!("a default list_at answered")
        };
        assert_eq!(e.kind(), Some(agent_env_protocol::ErrorKind::NotSupported));
    }

    fn class() -> StoreClass {
        StoreClass::secret("Vault", &["root", "bucket"], |_| Ok(Nothing)).required(&["root"])
    }

    fn config(v: serde_json::Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn unknown_and_missing_keys_are_config_errors_in_the_original_wording() {
        let Err(e) =
            class().open_checked("agentenv-x", &config(json!({"root": "/r", "compress": 1})))
        else {
            panic!("an unknown key was accepted")
        };
        assert_eq!(e.kind, agent_env_protocol::ErrorKind::ConfigError);
        assert_eq!(
            e.message,
            "The config table for 'agentenv-x:Vault' has unknown key 'compress'; it takes root, bucket"
        );
        let Err(e) = class().open_checked("agentenv-x", &config(json!({"bucket": "b"}))) else {
            panic!("a missing required key was accepted")
        };
        assert!(
            e.message.contains("lacks the required key 'root'"),
            "{}",
            e.message
        );
        assert!(class()
            .open_checked("agentenv-x", &config(json!({"root": "/r"})))
            .is_ok());
    }
}
