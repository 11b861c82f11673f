//! A store of any of the four kinds, behind one value.

use std::sync::Arc;

use crate::document::DocumentStore;
use crate::image::ImageStore;
use crate::kind::StoreKind;
use crate::object::ObjectStore;
use crate::secret::SecretStore;

/// A built or opened store of any kind: what a set of configured stores hands out, and what a plugin
/// keeps behind each `store.open` handle.
#[derive(Clone)]
pub enum AnyStore {
    /// An object store.
    Object(Arc<dyn ObjectStore>),
    /// A document store.
    Document(Arc<dyn DocumentStore>),
    /// An image store.
    Image(Arc<dyn ImageStore>),
    /// A secret store.
    Secret(Arc<dyn SecretStore>),
}

impl AnyStore {
    /// Which kind of store this is.
    pub fn kind(&self) -> StoreKind {
        match self {
            AnyStore::Object(_) => StoreKind::Object,
            AnyStore::Document(_) => StoreKind::Document,
            AnyStore::Image(_) => StoreKind::Image,
            AnyStore::Secret(_) => StoreKind::Secret,
        }
    }

    /// Checks that the store can serve requests now (see [`ObjectStore::probe`]).
    pub fn probe(&self) -> crate::error::StoreResult<()> {
        match self {
            AnyStore::Object(store) => store.probe(),
            AnyStore::Document(store) => store.probe(),
            AnyStore::Image(_) | AnyStore::Secret(_) => Ok(()),
        }
    }

    /// The store's warnings for the user since it was last asked (see [`ImageStore::take_warnings`]).
    pub fn take_warnings(&self) -> Vec<String> {
        match self {
            AnyStore::Image(store) => store.take_warnings(),
            _ => Vec::new(),
        }
    }
}
