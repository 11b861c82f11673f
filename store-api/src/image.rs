//! The image store: where container images are pushed, and the login material to reach them.

use serde::{Deserialize, Serialize};

use crate::error::StoreResult;

/// Login material for one registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistryAuth {
    /// The registry these credentials are for (`host[:port]`).
    pub registry: String,
    /// The user name to log in with.
    pub username: String,
    /// The password or token to log in with.
    pub password: String,
}

/// A registry of container images. Only [`ImageStore::image_ref`] must be written.
pub trait ImageStore: Send + Sync {
    /// The fully qualified, pullable reference of `repository:tag` in this store.
    fn image_ref(&self, repository: &str, tag: &str) -> StoreResult<String>;

    /// Makes sure `repository` can be pushed to. Idempotent.
    fn ensure_repository(&self, _repository: &str) -> StoreResult<()> {
        Ok(())
    }

    /// Whether `image_ref` lives in this store (so [`ImageStore::auth`] would authorize it).
    fn owns(&self, _image_ref: &str) -> StoreResult<bool> {
        Ok(false)
    }

    /// Freshly minted login material for `image_ref`; `None` for anonymous registries and foreign refs.
    /// The default is an anonymous registry's: always `None`.
    fn auth(&self, _image_ref: &str) -> StoreResult<Option<RegistryAuth>> {
        Ok(None)
    }

    /// What the store has to warn the user about since it was last asked (say, that no registry answers
    /// where it pushes), oldest first. A store never prints; whoever holds it shows these. The default has
    /// none.
    fn take_warnings(&self) -> Vec<String> {
        Vec::new()
    }
}
