//! The embedded local defaults: they need no server and keep their files under the state root.

pub mod flat_yaml;
pub mod fs_object;
pub mod private_dir;
pub mod registry_images;
pub mod secrets;
pub mod sqlite_docs;

/// The key of a built-in store's config that names where it keeps its files (`None` for a class
/// that keeps none): a relative one written in a config file is taken from the project's folder.
pub fn path_key(class: &str) -> Option<&'static str> {
    match class {
        sqlite_docs::CLASS => Some("path"),
        fs_object::CLASS => Some("root"),
        secrets::CLASS => Some("file_path"),
        _ => None,
    }
}

pub use fs_object::LocalFilesystemObjectStore;
pub use registry_images::LocalRegistryImageStore;
pub use secrets::LocalSecretStore;
pub use sqlite_docs::LocalSqliteDocumentStore;
