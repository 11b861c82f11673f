//! A document store for the tests of the task commands: it answers from a SQLite store and keeps
//! which reads of the instances it was asked for, so a test can tell how a command reads them.

use std::path::PathBuf;
use std::sync::Mutex;

use crate::run::recorder::INSTANCES;
use crate::stores::local::LocalSqliteDocumentStore;
use crate::stores::{Document, DocumentStore, Filter, Sort};

/// Each read of the instances: its filter, its limit, and how many documents it gave.
pub(super) type Read = (Filter, Option<usize>, usize);

/// A store that says which windows it was asked for, and answers from the one it wraps.
pub(super) struct Watched {
    inner: LocalSqliteDocumentStore,
    asked: Mutex<Vec<Read>>,
}

impl Watched {
    pub(super) fn new(path: PathBuf) -> Watched {
        Watched {
            inner: LocalSqliteDocumentStore::new(path),
            asked: Mutex::default(),
        }
    }

    /// The reads of the instances so far, in order.
    pub(super) fn asked(&self) -> Vec<Read> {
        self.asked.lock().unwrap().clone()
    }

    /// How many instance documents the reads so far gave.
    pub(super) fn documents_read(&self) -> usize {
        self.asked().iter().map(|(_, _, n)| n).sum()
    }
}

impl DocumentStore for Watched {
    fn find_one(
        &self,
        c: &str,
        f: &Filter,
        s: Option<&Sort>,
    ) -> crate::stores::StoreResult<Option<Document>> {
        self.inner.find_one(c, f, s)
    }
    fn query(
        &self,
        c: &str,
        f: &Filter,
        s: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> crate::stores::StoreResult<Vec<Document>> {
        let answer = self.inner.query(c, f, s, limit, offset)?;
        if c == INSTANCES {
            self.asked
                .lock()
                .unwrap()
                .push((f.clone(), limit, answer.len()));
        }
        Ok(answer)
    }
    fn count(&self, c: &str, f: &Filter) -> crate::stores::StoreResult<u64> {
        self.inner.count(c, f)
    }
    fn insert(&self, c: &str, d: &Document) -> crate::stores::StoreResult<()> {
        self.inner.insert(c, d)
    }
    fn update(
        &self,
        c: &str,
        f: &Filter,
        u: &crate::stores::document::UpdateSpec,
        up: bool,
    ) -> crate::stores::StoreResult<u64> {
        self.inner.update(c, f, u, up)
    }
    fn update_one_and_get(
        &self,
        c: &str,
        f: &Filter,
        u: &crate::stores::document::UpdateSpec,
        after: bool,
        up: bool,
    ) -> crate::stores::StoreResult<Option<Document>> {
        self.inner.update_one_and_get(c, f, u, after, up)
    }
    fn replace(
        &self,
        c: &str,
        f: &Filter,
        d: &Document,
        up: bool,
    ) -> crate::stores::StoreResult<u64> {
        self.inner.replace(c, f, d, up)
    }
    fn delete(&self, c: &str, f: &Filter) -> crate::stores::StoreResult<u64> {
        self.inner.delete(c, f)
    }
    fn ensure_index(
        &self,
        c: &str,
        fields: &[&str],
        unique: bool,
    ) -> crate::stores::StoreResult<()> {
        self.inner.ensure_index(c, fields, unique)
    }
    fn probe(&self) -> crate::stores::StoreResult<()> {
        self.inner.probe()
    }
}
