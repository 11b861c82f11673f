//! Stores in another process: proxies that turn every operation into one `store.<kind>.<op>` request
//! (or `host.store.<kind>.<op>`, for a plugin calling the host's stores) through a [`StoreTransport`].
//!
//! The `Plugin…Store` names come from their first use, the host reaching a plugin's store
//! ([`Direction::ToPlugin`]); the same proxies, built with [`Direction::ToHost`], are how a plugin reaches
//! the host's configured stores (the Rust SDK's `HostHandle::objects` and friends).

pub mod document;
pub mod image;
pub mod object;
pub mod secret;
pub mod transport;

pub use document::PluginDocumentStore;
pub use image::PluginImageStore;
pub use object::PluginObjectStore;
pub use secret::PluginSecretStore;
pub use transport::{Direction, StoreTransport};
