//! A plugin written with `plugin-sdk-rs` whose object store class `FsObjectStore` is the core's own
//! `LocalFilesystemObjectStore`, so the `plugin_stores` bench compares the same store with and
//! without the pipe. Started by the bench through a plugins dir holding [`MANIFEST`].

use std::path::Path;

use agent_env::stores::{self as core, LocalFilesystemObjectStore, DEFAULT_CONTENT_TYPE};
use agent_env_plugin_sdk::{ObjectStore, Plugin, StoreClass, StoreError, WireObjectMetadata};

/// The package name, as the bench's manifest names it.
const PACKAGE: &str = "agentenv-bench-fs-store";

/// Every call goes straight to the core's store; errors keep their wire kind.
struct FsObjectStore(LocalFilesystemObjectStore);

fn wire(e: core::StoreError) -> StoreError {
    StoreError::new(e.kind(), e.to_string())
}

fn wire_meta(m: core::ObjectMetadata) -> WireObjectMetadata {
    WireObjectMetadata {
        content_type: m.content_type,
        size: m.size,
        last_modified: m.last_modified,
        content_encoding: m.content_encoding,
        etag: m.etag,
    }
}

fn content_type(given: Option<&str>) -> &str {
    given.unwrap_or(DEFAULT_CONTENT_TYPE)
}

impl ObjectStore for FsObjectStore {
    fn put(
        &self,
        key: &str,
        data: &[u8],
        ct: Option<&str>,
        allow_overwrite: bool,
    ) -> Result<String, StoreError> {
        core::ObjectStore::put(&self.0, key, data, content_type(ct), allow_overwrite).map_err(wire)
    }

    fn get(&self, url: &str) -> Result<Vec<u8>, StoreError> {
        core::ObjectStore::get(&self.0, url).map_err(wire)
    }

    fn put_file(&self, key: &str, path: &Path, ct: Option<&str>) -> Result<String, StoreError> {
        core::ObjectStore::put_file(&self.0, key, path, content_type(ct)).map_err(wire)
    }

    fn put_file_at(&self, url: &str, path: &Path, ct: Option<&str>) -> Result<String, StoreError> {
        core::ObjectStore::put_file_at(&self.0, url, path, content_type(ct)).map_err(wire)
    }

    fn read(&self, key: &str) -> Result<Vec<u8>, StoreError> {
        core::ObjectStore::read(&self.0, key).map_err(wire)
    }

    fn download_to_file(&self, url: &str, path: &Path) -> Result<(), StoreError> {
        core::ObjectStore::download_to_file(&self.0, url, path).map_err(wire)
    }

    fn get_object_metadata(&self, key: &str) -> Result<Option<WireObjectMetadata>, StoreError> {
        core::ObjectStore::get_object_metadata(&self.0, key)
            .map(|m| m.map(wire_meta))
            .map_err(wire)
    }

    fn get_object_metadata_at(&self, url: &str) -> Result<Option<WireObjectMetadata>, StoreError> {
        core::ObjectStore::get_object_metadata_at(&self.0, url)
            .map(|m| m.map(wire_meta))
            .map_err(wire)
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        core::ObjectStore::list(&self.0, prefix).map_err(wire)
    }

    fn list_at(&self, url_prefix: &str) -> Result<Vec<String>, StoreError> {
        core::ObjectStore::list_at(&self.0, url_prefix).map_err(wire)
    }

    fn object_url(&self, key: &str) -> Result<String, StoreError> {
        core::ObjectStore::object_url(&self.0, key).map_err(wire)
    }

    fn get_object_key(&self, url: &str) -> Result<String, StoreError> {
        core::ObjectStore::get_object_key(&self.0, url).map_err(wire)
    }

    fn exists(&self, key: &str) -> Result<bool, StoreError> {
        core::ObjectStore::exists(&self.0, key).map_err(wire)
    }

    fn owns(&self, url: &str) -> Result<bool, StoreError> {
        core::ObjectStore::owns(&self.0, url).map_err(wire)
    }
}

fn main() {
    let class = StoreClass::object("FsObjectStore", &["root"], |config| {
        LocalFilesystemObjectStore::from_config(&format!("{PACKAGE}:FsObjectStore"), config)
            .map(FsObjectStore)
            .map_err(wire)
    })
    .required(&["root"]);
    Plugin::new(PACKAGE, env!("CARGO_PKG_VERSION"))
        .store(class)
        .serve()
}
