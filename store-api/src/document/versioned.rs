//! Versioned entities on a document store: each write of an id gets the next version, guarded by a unique
//! index on `[id, version]`; and `compare_and_swap`, the read-mutate-guarded-write loop.

use std::sync::Arc;

use serde_json::Value;

use super::query::{Document, Filter, Predicate, Sort, UpdateSpec};
use super::DocumentStore;
use crate::error::{StoreError, StoreResult};

/// The collections the core keeps versioned entities in.
pub const ENTITY_COLLECTIONS: [&str; 6] = [
    "a2a_agents",
    "artifacts",
    "envs",
    "evals",
    "task_steps",
    "tasks",
];

/// The document store under a [`VersionedEntityStore`]: shared, or borrowed for a while.
enum Docs<'a> {
    Shared(Arc<dyn DocumentStore>),
    Borrowed(&'a dyn DocumentStore),
}

/// Versioned entities of one collection: documents with an `id` and an integer `version`.
pub struct VersionedEntityStore<'a> {
    docs: Docs<'a>,
    collection: String,
}

impl VersionedEntityStore<'static> {
    /// Opens the collection, making sure of the unique `[id, version]` index and any secondary ones.
    pub fn new(
        docs: Arc<dyn DocumentStore>,
        collection: &str,
        secondary_indexes: &[&[&str]],
    ) -> StoreResult<Self> {
        Self::open(Docs::Shared(docs), collection, secondary_indexes)
    }
}

impl<'a> VersionedEntityStore<'a> {
    /// Like [`VersionedEntityStore::new`], over a borrowed store.
    pub fn borrowed(
        docs: &'a dyn DocumentStore,
        collection: &str,
        secondary_indexes: &[&[&str]],
    ) -> StoreResult<Self> {
        Self::open(Docs::Borrowed(docs), collection, secondary_indexes)
    }

    fn open(docs: Docs<'a>, collection: &str, secondary_indexes: &[&[&str]]) -> StoreResult<Self> {
        let store = VersionedEntityStore {
            docs,
            collection: collection.to_string(),
        };
        store
            .docs()
            .ensure_index(collection, &["id", "version"], true)?;
        for fields in secondary_indexes {
            store.docs().ensure_index(collection, fields, false)?;
        }
        Ok(store)
    }

    fn docs(&self) -> &dyn DocumentStore {
        match &self.docs {
            Docs::Shared(d) => d.as_ref(),
            Docs::Borrowed(d) => *d,
        }
    }

    /// The collection the entities live in.
    pub fn collection(&self) -> &str {
        &self.collection
    }

    /// The entity at `version`, or its latest version when `None`.
    pub fn get(&self, id: &str, version: Option<i64>) -> StoreResult<Option<Document>> {
        match version {
            None => self.docs().latest_version(&self.collection, id),
            Some(v) => self.docs().find_one(
                &self.collection,
                &Filter::eq("id", id).and("version", Predicate::Eq(Value::from(v))),
                None,
            ),
        }
    }

    fn current_version(&self, id: &str) -> StoreResult<i64> {
        Ok(self
            .docs()
            .latest_version(&self.collection, id)?
            .and_then(|d| d.get("version").and_then(Value::as_i64))
            .unwrap_or(0))
    }

    /// The version the next write of `id` gets: latest + 1, or 1.
    pub fn next_version(&self, id: &str) -> StoreResult<i64> {
        self.docs().check_id(id)?;
        Ok(self.current_version(id)? + 1)
    }

    /// Writes `entity` as the next version of its id (or as the version it names, which must be the next)
    /// and returns that version. Races for a version are retried up to `max_retries` times.
    pub fn put(&self, entity: &Document, max_retries: u32) -> StoreResult<i64> {
        let id = match entity.get("id") {
            Some(Value::String(id)) => id.clone(),
            other => {
                return Err(StoreError::InvalidValue(format!(
                    "an entity in '{}' needs a string id, got {}",
                    self.collection,
                    other.map_or("None".to_string(), Value::to_string)
                )))
            }
        };
        self.docs().check_id(&id)?;
        if let Some(v) = entity.get("version").and_then(Value::as_i64) {
            self.insert_next(entity, v)?;
            return Ok(v);
        }
        for attempt in 0..max_retries.max(1) {
            let version = self.current_version(&id)? + 1;
            let mut doc = entity.clone();
            doc.insert("version".into(), Value::from(version));
            match self.docs().insert(&self.collection, &doc) {
                Ok(()) => return Ok(version),
                // Another writer took that version: wait a little (longer each time, and not in step
                // with the others) before reading the next one.
                Err(StoreError::DuplicateKey(_)) => std::thread::sleep(backoff(attempt)),
                Err(e) => return Err(e),
            }
        }
        Err(StoreError::ConcurrentModification(format!(
            "Could not assign a version for id='{id}' after {max_retries} retries"
        )))
    }

    /// Inserts `doc` as exactly `version`, which must be the id's next one.
    pub fn insert_next(&self, doc: &Document, version: i64) -> StoreResult<()> {
        let id = doc
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.docs().check_id(&id)?;
        let current = self.current_version(&id)?;
        if version != current + 1 {
            return Err(StoreError::ConcurrentModification(format!(
                "'{id}' in '{}' is at version {current}, so its next version is {}, not {version}",
                self.collection,
                current + 1
            )));
        }
        let mut doc = doc.clone();
        doc.insert("version".into(), Value::from(version));
        match self.docs().insert(&self.collection, &doc) {
            Err(StoreError::DuplicateKey(_)) => Err(StoreError::ConcurrentModification(format!(
                "another write took version {version} of '{id}' in '{}' first",
                self.collection
            ))),
            other => other,
        }
    }

    /// The latest version of each entity matching `filter`.
    pub fn query(
        &self,
        filter: &Filter,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        self.docs().latest_per_id(
            &self.collection,
            filter,
            "id",
            "version",
            sort,
            limit,
            offset,
        )
    }

    /// How many stored versions match `filter`.
    pub fn count(&self, filter: &Filter) -> StoreResult<u64> {
        self.docs().count(&self.collection, filter)
    }

    /// How many distinct entities match `filter`.
    pub fn count_entities(&self, filter: &Filter) -> StoreResult<u64> {
        self.docs().count_distinct(&self.collection, filter, "id")
    }
}

/// Reads the document at `key`, asks `mutate` for an update (or `None` to give up), and writes it guarded
/// on the counter it read, adding 1 to the counter; retries on a lost race. Returns whether it wrote.
/// When no document matches `key` the write upserts one.
pub fn compare_and_swap(
    docs: &dyn DocumentStore,
    collection: &str,
    key: &Filter,
    mut mutate: impl FnMut(Option<&Document>) -> Option<UpdateSpec>,
    counter_field: &str,
    max_attempts: u32,
) -> StoreResult<bool> {
    for _ in 0..max_attempts {
        let current = docs.find_one(collection, key, None)?;
        let Some(update) = mutate(current.as_ref()) else {
            return Ok(false);
        };
        let counter = current.as_ref().and_then(|d| d.get(counter_field)).cloned();
        let guard = match &counter {
            Some(v) => key.clone().and(counter_field, Predicate::Eq(v.clone())),
            None => key.clone().and(counter_field, Predicate::Exists(false)),
        };
        let update = update.inc(counter_field, 1);
        match docs.update(collection, &guard, &update, current.is_none()) {
            Ok(1) => return Ok(true),
            Ok(_) | Err(StoreError::DuplicateKey(_)) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(StoreError::ConcurrentModification(format!(
        "compare_and_swap: did not converge after {max_attempts} attempts on '{collection}'"
    )))
}

/// How long to wait after losing the race for a version `attempt` times over: 5 ms doubling to at most
/// 320 ms, plus up to as much again at random, so racing writers spread out instead of colliding again.
fn backoff(attempt: u32) -> std::time::Duration {
    let base = 5u64 << attempt.min(6);
    let mut noise = [0u8; 2];
    let _ = getrandom::getrandom(&mut noise);
    let jitter = u64::from(u16::from_le_bytes(noise)) % (base + 1);
    std::time::Duration::from_millis(base + jitter)
}
