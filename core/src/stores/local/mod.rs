//! The embedded local defaults: they need no server and keep their files under the state root.

pub mod fs_object;
pub mod private_dir;
pub mod registry_images;
pub mod secrets;
pub mod sqlite_docs;

pub use fs_object::LocalFilesystemObjectStore;
pub use registry_images::LocalRegistryImageStore;
pub use secrets::LocalSecretStore;
pub use sqlite_docs::LocalSqliteDocumentStore;
