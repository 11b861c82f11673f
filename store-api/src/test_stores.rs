//! Stand-in stores for this crate's unit tests.

use std::sync::Mutex;

use crate::document::{eval, Document, DocumentStore, Filter, Sort, UpdateSpec};
use crate::error::{StoreError, StoreResult};

/// A store that answers only `drop_collection`: it fails for the collections named in `refuse`
/// and records every collection it was asked to drop.
pub(crate) struct Drops {
    refuse: Vec<String>,
    pub(crate) asked: Mutex<Vec<String>>,
}

impl Drops {
    pub(crate) fn refusing(refuse: &[&str]) -> Drops {
        Drops {
            refuse: refuse.iter().map(|c| c.to_string()).collect(),
            asked: Mutex::new(Vec::new()),
        }
    }
}

fn unused<T>() -> StoreResult<T> {
    Err(StoreError::Internal("not used by these tests".into()))
}

impl DocumentStore for Drops {
    fn find_one(&self, _: &str, _: &Filter, _: Option<&Sort>) -> StoreResult<Option<Document>> {
        unused()
    }
    fn query(
        &self,
        _: &str,
        _: &Filter,
        _: Option<&Sort>,
        _: Option<usize>,
        _: usize,
    ) -> StoreResult<Vec<Document>> {
        unused()
    }
    fn count(&self, _: &str, _: &Filter) -> StoreResult<u64> {
        unused()
    }
    fn insert(&self, _: &str, _: &Document) -> StoreResult<()> {
        unused()
    }
    fn update(&self, _: &str, _: &Filter, _: &UpdateSpec, _: bool) -> StoreResult<u64> {
        unused()
    }
    fn update_one_and_get(
        &self,
        _: &str,
        _: &Filter,
        _: &UpdateSpec,
        _: bool,
        _: bool,
    ) -> StoreResult<Option<Document>> {
        unused()
    }
    fn replace(&self, _: &str, _: &Filter, _: &Document, _: bool) -> StoreResult<u64> {
        unused()
    }
    fn delete(&self, _: &str, _: &Filter) -> StoreResult<u64> {
        unused()
    }
    fn ensure_index(&self, _: &str, _: &[&str], _: bool) -> StoreResult<()> {
        unused()
    }
    fn drop_collection(&self, collection: &str) -> StoreResult<()> {
        self.asked.lock().unwrap().push(collection.to_string());
        if self.refuse.iter().any(|c| c == collection) {
            return Err(StoreError::Io {
                message: "the disk went away".into(),
                raw_os_error: None,
            });
        }
        Ok(())
    }
}

/// A store in memory with the calls every store must have and none of the ones the trait gives:
/// `delete_all` is the trait's default. With `lying`, `delete` says it deleted one and deletes
/// nothing. Counts the deletes it was asked for.
pub(crate) struct OnlyDelete {
    docs: Mutex<Vec<Document>>,
    lying: bool,
    pub(crate) deletes: Mutex<u64>,
}

impl OnlyDelete {
    pub(crate) fn holding(docs: &[serde_json::Value], lying: bool) -> OnlyDelete {
        OnlyDelete {
            docs: Mutex::new(docs.iter().filter_map(|d| d.as_object().cloned()).collect()),
            lying,
            deletes: Mutex::new(0),
        }
    }

    /// The documents held, in insertion order.
    pub(crate) fn held(&self) -> Vec<Document> {
        self.docs.lock().unwrap().clone()
    }
}

impl DocumentStore for OnlyDelete {
    fn find_one(&self, _: &str, _: &Filter, _: Option<&Sort>) -> StoreResult<Option<Document>> {
        unused()
    }
    fn query(
        &self,
        _: &str,
        _: &Filter,
        _: Option<&Sort>,
        _: Option<usize>,
        _: usize,
    ) -> StoreResult<Vec<Document>> {
        unused()
    }
    fn count(&self, _: &str, filter: &Filter) -> StoreResult<u64> {
        let docs = self.docs.lock().unwrap();
        Ok(docs.iter().filter(|d| eval::matches(d, filter)).count() as u64)
    }
    fn insert(&self, _: &str, _: &Document) -> StoreResult<()> {
        unused()
    }
    fn update(&self, _: &str, _: &Filter, _: &UpdateSpec, _: bool) -> StoreResult<u64> {
        unused()
    }
    fn update_one_and_get(
        &self,
        _: &str,
        _: &Filter,
        _: &UpdateSpec,
        _: bool,
        _: bool,
    ) -> StoreResult<Option<Document>> {
        unused()
    }
    fn replace(&self, _: &str, _: &Filter, _: &Document, _: bool) -> StoreResult<u64> {
        unused()
    }
    fn delete(&self, _: &str, filter: &Filter) -> StoreResult<u64> {
        *self.deletes.lock().unwrap() += 1;
        if self.lying {
            return Ok(1);
        }
        let mut docs = self.docs.lock().unwrap();
        match docs.iter().position(|d| eval::matches(d, filter)) {
            Some(first) => {
                docs.remove(first);
                Ok(1)
            }
            None => Ok(0),
        }
    }
    fn ensure_index(&self, _: &str, _: &[&str], _: bool) -> StoreResult<()> {
        unused()
    }
}
