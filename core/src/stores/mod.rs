//! The four store kinds (object, document, image, secret): their interfaces, the embedded local defaults
//! that need no server, plugin stores reached over the pipe, and the conformance kits.
//!
//! - [`ObjectStore`], [`DocumentStore`], [`ImageStore`], [`SecretStore`]: object-safe, `Send + Sync` traits.
//! - [`StoreError`]: one error type whose kind survives the JSON-RPC pipe.

pub mod config_table;
pub mod dispatch;
pub mod document;
pub mod error;
pub mod from_spec;
pub mod image;
pub mod kits;
pub mod local;
pub mod object;
pub mod plugin_stores;
pub mod remote;
pub mod secret;
pub mod serve;
pub mod store_set;
pub mod wire;

pub use dispatch::HostStoreDispatcher;
pub use document::versioned::{compare_and_swap, VersionedEntityStore};
pub use document::{Document, DocumentStore, Filter, Predicate, Sort, SortKey, UpdateSpec};
pub use error::{StoreError, StoreResult};
pub use from_spec::{build_store, AnyStore, PluginStoreFactory, StoreSpec};
pub use image::{ImageStore, RegistryAuth};
pub use local::{
    LocalFilesystemObjectStore, LocalRegistryImageStore, LocalSecretStore, LocalSqliteDocumentStore,
};
pub use object::{ObjectMetadata, ObjectReader, ObjectStore, DEFAULT_CONTENT_TYPE};
pub use remote::{
    PluginDocumentStore, PluginImageStore, PluginObjectStore, PluginSecretStore, StoreTransport,
};
pub use secret::SecretStore;
pub use store_set::StoreSet;

/// The four store kinds, as `[stores.<kind>]` and `agent-env store check KIND` spell them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreKind {
    Object,
    Document,
    Image,
    Secret,
}

impl StoreKind {
    pub const ALL: [StoreKind; 4] = [
        StoreKind::Object,
        StoreKind::Document,
        StoreKind::Image,
        StoreKind::Secret,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::Object => "object",
            StoreKind::Document => "document",
            StoreKind::Image => "image",
            StoreKind::Secret => "secret",
        }
    }

    pub fn parse(name: &str) -> Option<StoreKind> {
        StoreKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// `AGENT_ENV_<KIND>_STORE`.
    pub fn env_var(self) -> String {
        format!("AGENT_ENV_{}_STORE", self.as_str().to_uppercase())
    }
}

impl std::fmt::Display for StoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
