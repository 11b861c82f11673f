//! `PluginSecretStore`: a secret store in another process.

use std::sync::Arc;

use serde_json::json;

use super::transport::{Direction, StoreTransport};
use crate::error::StoreResult;
use crate::secret::SecretStore;
use crate::wire::answer_field;

/// A secret store reached through a [`StoreTransport`].
pub struct PluginSecretStore {
    transport: Arc<dyn StoreTransport>,
    direction: Direction,
}

impl PluginSecretStore {
    /// A plugin's store, called as `store.secret.<op>`.
    pub fn new(transport: Arc<dyn StoreTransport>) -> Self {
        Self::with_direction(transport, Direction::ToPlugin)
    }

    /// A store on either side.
    pub fn with_direction(transport: Arc<dyn StoreTransport>, direction: Direction) -> Self {
        PluginSecretStore {
            transport,
            direction,
        }
    }
}

impl SecretStore for PluginSecretStore {
    fn get(&self, name: &str) -> StoreResult<Option<String>> {
        let method = self.direction.method("secret", "get");
        let answer = self.transport.call(&method, json!({ "name": name }))?;
        answer_field(&method, &answer, "value")
    }
}
