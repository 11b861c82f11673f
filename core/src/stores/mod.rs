//! The stores this binary builds and wires up: the embedded local defaults that need no server, building a
//! store from its `[stores.<kind>]` selection, plugin stores reached over the pipe, and answering a plugin's
//! `host.store.*` calls.
//!
//! The store API itself (the four traits, [`StoreError`], the document query algebra, wire encoding,
//! serving, remote stores and the conformance kits) lives in the `agent_env_store` crate, shared with the
//! Rust plugin SDK; it is re-exported here so `crate::stores::…` names every store item.

pub mod caller_limit;
pub mod config_table;
pub mod dispatch;
pub mod from_spec;
pub mod hosted;
pub mod local;
pub mod original_hosted;
pub mod plugin_stores;
pub mod store_output;
pub mod store_set;

pub use agent_env_store::{document, error, image, kits, object, remote, secret, serve, wire};

pub use agent_env_store::{
    compare_and_swap, Document, DocumentStore, Filter, ImageStore, ObjectMetadata, ObjectReader,
    ObjectStore, PluginDocumentStore, PluginImageStore, PluginObjectStore, PluginSecretStore,
    Predicate, RegistryAuth, SecretStore, SettingsProblems, Sort, SortKey, StoreError, StoreKind,
    StoreResult, StoreTransport, UpdateSpec, VersionedEntityStore, DEFAULT_CONTENT_TYPE,
};
pub use dispatch::HostStoreDispatcher;
pub use from_spec::{
    build_store, classify, local_builtin, try_build_store, AnyStore, BuildFailure,
    PluginStoreFactory, StoreSpec, Target,
};
pub use local::{
    LocalFilesystemObjectStore, LocalRegistryImageStore, LocalSecretStore, LocalSqliteDocumentStore,
};
pub use store_set::StoreSet;
