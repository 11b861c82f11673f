//! `PluginImageStore`: an image store in another process.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::transport::{Direction, StoreTransport};
use crate::error::StoreResult;
use crate::image::{ImageStore, RegistryAuth};
use crate::wire::answer_field;

/// An image store reached through a [`StoreTransport`].
pub struct PluginImageStore {
    transport: Arc<dyn StoreTransport>,
    direction: Direction,
}

impl PluginImageStore {
    /// A plugin's store, called as `store.image.<op>`.
    pub fn new(transport: Arc<dyn StoreTransport>) -> Self {
        Self::with_direction(transport, Direction::ToPlugin)
    }

    /// A store on either side.
    pub fn with_direction(transport: Arc<dyn StoreTransport>, direction: Direction) -> Self {
        PluginImageStore {
            transport,
            direction,
        }
    }

    fn field<T: DeserializeOwned>(&self, op: &str, params: Value, field: &str) -> StoreResult<T> {
        let method = self.direction.method("image", op);
        let answer = self.transport.call(&method, params)?;
        answer_field(&method, &answer, field)
    }
}

impl ImageStore for PluginImageStore {
    fn image_ref(&self, repository: &str, tag: &str) -> StoreResult<String> {
        self.field(
            "image_ref",
            json!({"repository": repository, "tag": tag}),
            "ref",
        )
    }

    fn ensure_repository(&self, repository: &str) -> StoreResult<()> {
        let method = self.direction.method("image", "ensure_repository");
        self.transport
            .call(&method, json!({ "repository": repository }))?;
        Ok(())
    }

    fn owns(&self, image_ref: &str) -> StoreResult<bool> {
        self.field("owns", json!({ "ref": image_ref }), "owns")
    }

    fn auth(&self, image_ref: &str) -> StoreResult<Option<RegistryAuth>> {
        self.field("auth", json!({ "ref": image_ref }), "auth")
    }
}
