//! Stores in another process: proxies that turn every operation into one `store.<kind>.<op>` request
//! (or `host.store.<kind>.<op>`, for a plugin calling the host's stores) through a [`StoreTransport`].

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
