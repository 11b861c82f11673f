//! The agent-env store API, shared by the `agent-env` core and the Rust plugin SDK: what a store *is*,
//! not how the built-in ones keep their data.
//!
//! - [`ObjectStore`], [`DocumentStore`], [`ImageStore`], [`SecretStore`]: object-safe, `Send + Sync`
//!   traits, with the value types they take and return (the document query algebra lives in [`document`]).
//! - [`StoreError`]: one error type whose kind survives the JSON-RPC pipe ([`error`]).
//! - [`wire`] and [`serve`]: the store methods of `docs/protocol.md` §4.4, read and answered against a store
//!   of this process; [`remote`]: stores in another process, reached through a [`StoreTransport`].
//! - [`SettingsProblems`]: every problem of one store's config table, kept so all of them are named at once;
//!   [`similar`]: the likeness of two words, for the "did you mean" of a misspelled setting.
//! - [`kits`]: the conformance kits, run in-process against any store; they return a report and never print.
//!
//! Tests: each module's own unit tests here; the serve/remote round trip across a real pipe, and the kits
//! against the built-in, hosted and plugin stores, are black-box tests of the `agent-env` crate
//! (`core/tests/it/store_kits.rs`, `store_dispatch.rs` and the other `store_*.rs`).
//!
//! It depends on the protocol crate only: the local SQLite and filesystem stores live in the core.

#![warn(missing_docs)]

pub mod any;
pub mod document;
pub mod error;
pub mod grant;
pub mod image;
pub mod kind;
pub mod kits;
pub mod object;
pub mod object_key;
pub mod remote;
pub mod secret;
pub mod serve;
pub mod settings;
pub mod similar;
#[cfg(test)]
mod test_stores;
pub mod whole_file;
pub mod wire;

pub use any::AnyStore;
pub use document::versioned::{compare_and_swap, VersionedEntityStore};
pub use document::{Document, DocumentStore, Filter, Predicate, Sort, SortKey, UpdateSpec};
pub use error::{StoreError, StoreResult};
pub use grant::{HttpGetGrant, HttpPostPolicyGrant, HttpPutGrant, UploadPolicy};
pub use image::{ImageStore, RegistryAuth};
pub use kind::StoreKind;
pub use object::{ObjectMetadata, ObjectReader, ObjectStore, DEFAULT_CONTENT_TYPE};
pub use remote::{
    PluginDocumentStore, PluginImageStore, PluginObjectStore, PluginSecretStore, StoreTransport,
};
pub use secret::SecretStore;
pub use settings::SettingsProblems;
