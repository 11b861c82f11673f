//! [`StoreSet`]: one store per kind, each built on first use by a builder the caller gives (the
//! configuration's, held by a session, or a run's @local stores) and then reused for the set's life.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_env_store::document::DocumentStore;
use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::image::ImageStore;
use agent_env_store::object::ObjectStore;
use agent_env_store::secret::SecretStore;
use agent_env_store::AnyStore;
use agent_env_store::StoreKind;

type Builder = dyn Fn(StoreKind) -> StoreResult<AnyStore> + Send + Sync;

/// The configured stores of one process: each built on first use and then reused.
pub struct StoreSet {
    builder: Box<Builder>,
    built: Mutex<HashMap<StoreKind, AnyStore>>,
}

impl StoreSet {
    /// Stores made by `builder` (called at most once per kind that builds).
    pub fn new(
        builder: impl Fn(StoreKind) -> StoreResult<AnyStore> + Send + Sync + 'static,
    ) -> Self {
        StoreSet {
            builder: Box::new(builder),
            built: Mutex::new(HashMap::new()),
        }
    }

    /// The store of a kind, building it on first use.
    pub fn get(&self, kind: StoreKind) -> StoreResult<AnyStore> {
        let mut built = self
            .built
            .lock()
            .map_err(|_| {
                StoreError::Internal(format!(
                    "the {kind} store cannot be built: another store's build in this process failed with a panic, a bug in agent-env; run the command again, and report it if it happens again"
                ))
            })?;
        if let Some(store) = built.get(&kind) {
            return Ok(store.clone());
        }
        let store = (self.builder)(kind)?;
        if store.kind() != kind {
            return Err(wrong_kind(kind, store.kind()));
        }
        built.insert(kind, store.clone());
        Ok(store)
    }

    /// The warnings of every store built so far, since they were last taken (see
    /// [`AnyStore::take_warnings`]), for the caller to show.
    pub fn take_warnings(&self) -> Vec<String> {
        match self.built.lock() {
            Ok(built) => built.values().flat_map(AnyStore::take_warnings).collect(),
            Err(_) => Vec::new(),
        }
    }

    pub fn object(&self) -> StoreResult<Arc<dyn ObjectStore>> {
        match self.get(StoreKind::Object)? {
            AnyStore::Object(s) => Ok(s),
            other => Err(wrong_kind(StoreKind::Object, other.kind())),
        }
    }

    pub fn document(&self) -> StoreResult<Arc<dyn DocumentStore>> {
        match self.get(StoreKind::Document)? {
            AnyStore::Document(s) => Ok(s),
            other => Err(wrong_kind(StoreKind::Document, other.kind())),
        }
    }

    pub fn image(&self) -> StoreResult<Arc<dyn ImageStore>> {
        match self.get(StoreKind::Image)? {
            AnyStore::Image(s) => Ok(s),
            other => Err(wrong_kind(StoreKind::Image, other.kind())),
        }
    }

    pub fn secret(&self) -> StoreResult<Arc<dyn SecretStore>> {
        match self.get(StoreKind::Secret)? {
            AnyStore::Secret(s) => Ok(s),
            other => Err(wrong_kind(StoreKind::Secret, other.kind())),
        }
    }
}

/// A wrong-kind answer from a builder, which a correct builder never gives.
fn wrong_kind(wanted: StoreKind, got: StoreKind) -> StoreError {
    StoreError::Internal(format!("asked for the {wanted} store, built a {got} store"))
}
