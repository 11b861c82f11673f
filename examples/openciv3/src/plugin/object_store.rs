//! The store class `ContentAddressedObjectStore` as the SDK serves it: every `store.object.*` call the
//! host makes lands here and runs on the library store, through the store API's `ObjectStore` trait
//! (the same trait the host's own stores implement, and the one the conformance kit checks).

use std::path::Path;

use agent_env_plugin_sdk::stores::ObjectReader;
use agent_env_plugin_sdk::{ObjectStore, StoreClass, StoreError, StoreResult, WireObjectMetadata};

use crate::cas::{
    CasError, ContentAddressedObjectStore, ObjectMetadata, CONFIG_KEYS, REQUIRED_KEYS,
};

/// The class name under `[provides.stores]`.
pub const STORE_CLASS: &str = "ContentAddressedObjectStore";

/// The store class registered on the plugin.
pub fn store_class(package: &'static str) -> StoreClass {
    StoreClass::object(STORE_CLASS, &CONFIG_KEYS, move |config| {
        let impl_name = format!("{package}:{STORE_CLASS}");
        ContentAddressedObjectStore::from_config(&impl_name, config)
            .map(PipeStore)
            .map_err(store_error)
    })
    .required(&REQUIRED_KEYS)
}

/// The library store behind the store API's object-store trait.
pub struct PipeStore(pub ContentAddressedObjectStore);

/// The library's error as a store error of the same wire kind; a filesystem error keeps its errno, so
/// the host sees the same I/O kind (a download onto a directory stays "is a directory").
fn store_error(err: CasError) -> StoreError {
    match err.io_error().and_then(std::io::Error::raw_os_error) {
        Some(errno) => StoreError::Io {
            message: err.to_string(),
            raw_os_error: Some(errno),
        },
        None => StoreError::from_kind(err.kind(), err.to_string()),
    }
}

fn wire(meta: ObjectMetadata) -> WireObjectMetadata {
    WireObjectMetadata {
        content_type: meta.content_type,
        size: meta.size,
        last_modified: meta.last_modified,
        content_encoding: meta.content_encoding,
        etag: meta.etag,
    }
}

impl ObjectStore for PipeStore {
    fn put(
        &self,
        key: &str,
        data: &[u8],
        content_type: &str,
        allow_overwrite: bool,
    ) -> StoreResult<String> {
        self.0
            .put(key, data, content_type, allow_overwrite)
            .map_err(store_error)
    }

    fn get(&self, url: &str) -> StoreResult<Vec<u8>> {
        self.0.get(url).map_err(store_error)
    }

    fn put_file(&self, key: &str, path: &Path, content_type: &str) -> StoreResult<String> {
        self.0
            .put_file(key, path, content_type)
            .map_err(store_error)
    }

    fn put_file_at(&self, url: &str, path: &Path, content_type: &str) -> StoreResult<String> {
        self.0
            .put_file_at(url, path, content_type)
            .map_err(store_error)
    }

    fn read(&self, key: &str) -> StoreResult<Vec<u8>> {
        self.0.read(key).map_err(store_error)
    }

    fn open(&self, url: &str) -> StoreResult<ObjectReader> {
        let file = self.0.open(url).map_err(store_error)?;
        Ok(Box::new(file))
    }

    fn download_to_file(&self, url: &str, path: &Path) -> StoreResult<()> {
        self.0.download_to_file(url, path).map_err(store_error)
    }

    fn get_object_metadata(&self, key: &str) -> StoreResult<Option<WireObjectMetadata>> {
        Ok(self
            .0
            .get_object_metadata(key)
            .map_err(store_error)?
            .map(wire))
    }

    fn get_object_metadata_at(&self, url: &str) -> StoreResult<Option<WireObjectMetadata>> {
        Ok(self
            .0
            .get_object_metadata_at(url)
            .map_err(store_error)?
            .map(wire))
    }

    fn list(&self, prefix: &str) -> StoreResult<Vec<String>> {
        self.0.list(prefix).map_err(store_error)
    }

    fn list_at(&self, url_prefix: &str) -> StoreResult<Vec<String>> {
        self.0.list_at(url_prefix).map_err(store_error)
    }

    fn object_url(&self, key: &str) -> StoreResult<String> {
        Ok(self.0.object_url(key))
    }

    fn get_object_key(&self, url: &str) -> StoreResult<String> {
        self.0.get_object_key(url).map_err(store_error)
    }

    fn exists(&self, key: &str) -> StoreResult<bool> {
        self.0.exists(key).map_err(store_error)
    }

    fn owns(&self, url: &str) -> StoreResult<bool> {
        Ok(self.0.owns(url))
    }
}
