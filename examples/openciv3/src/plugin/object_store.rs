//! The store class `ContentAddressedObjectStore` as the SDK serves it: every `store.object.*` call the
//! host makes lands here and runs on the library store.

use std::path::Path;

use agent_env_plugin_sdk::{ObjectStore, StoreClass, StoreError, WireObjectMetadata};

use crate::cas::{
    CasError, ContentAddressedObjectStore, ObjectMetadata, CONFIG_KEYS, DEFAULT_CONTENT_TYPE,
    REQUIRED_KEYS,
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

/// The library store behind the SDK's object-store trait.
pub struct PipeStore(pub ContentAddressedObjectStore);

fn store_error(err: CasError) -> StoreError {
    StoreError::new(err.kind(), err.to_string())
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
        content_type: Option<&str>,
        allow_overwrite: bool,
    ) -> Result<String, StoreError> {
        self.0
            .put(
                key,
                data,
                content_type.unwrap_or(DEFAULT_CONTENT_TYPE),
                allow_overwrite,
            )
            .map_err(store_error)
    }

    fn get(&self, url: &str) -> Result<Vec<u8>, StoreError> {
        self.0.get(url).map_err(store_error)
    }

    fn put_file(
        &self,
        key: &str,
        path: &Path,
        content_type: Option<&str>,
    ) -> Result<String, StoreError> {
        self.0
            .put_file(key, path, content_type.unwrap_or(DEFAULT_CONTENT_TYPE))
            .map_err(store_error)
    }

    fn put_file_at(
        &self,
        url: &str,
        path: &Path,
        content_type: Option<&str>,
    ) -> Result<String, StoreError> {
        self.0
            .put_file_at(url, path, content_type.unwrap_or(DEFAULT_CONTENT_TYPE))
            .map_err(store_error)
    }

    fn read(&self, key: &str) -> Result<Vec<u8>, StoreError> {
        self.0.read(key).map_err(store_error)
    }

    fn download_to_file(&self, url: &str, path: &Path) -> Result<(), StoreError> {
        self.0.download_to_file(url, path).map_err(store_error)
    }

    fn get_object_metadata(&self, key: &str) -> Result<Option<WireObjectMetadata>, StoreError> {
        Ok(self
            .0
            .get_object_metadata(key)
            .map_err(store_error)?
            .map(wire))
    }

    fn get_object_metadata_at(&self, url: &str) -> Result<Option<WireObjectMetadata>, StoreError> {
        Ok(self
            .0
            .get_object_metadata_at(url)
            .map_err(store_error)?
            .map(wire))
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        self.0.list(prefix).map_err(store_error)
    }

    fn list_at(&self, url_prefix: &str) -> Result<Vec<String>, StoreError> {
        self.0.list_at(url_prefix).map_err(store_error)
    }

    fn object_url(&self, key: &str) -> Result<String, StoreError> {
        Ok(self.0.object_url(key))
    }

    fn get_object_key(&self, url: &str) -> Result<String, StoreError> {
        self.0.get_object_key(url).map_err(store_error)
    }

    fn exists(&self, key: &str) -> Result<bool, StoreError> {
        self.0.exists(key).map_err(store_error)
    }

    fn owns(&self, url: &str) -> Result<bool, StoreError> {
        Ok(self.0.owns(url))
    }
}
