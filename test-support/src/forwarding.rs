//! A document store that answers from another one, for the tests that watch or disturb a call or
//! two: counting what a query hands out, failing inserts, keeping which reads were asked.
//!
//! A test writes its [`Hooks`], overriding only the calls it watches (each gets the inner store to
//! forward to, or not), and reads what they kept through the [`Forwarding`] store, which derefs to
//! them:
//!
//! ```ignore
//! #[derive(Default)]
//! struct Counted(AtomicUsize);
//!
//! impl Hooks for Counted {
//!     fn query(&self, inner: &dyn DocumentStore, c: &str, f: &Filter, s: Option<&Sort>,
//!              limit: Option<usize>, offset: usize) -> StoreResult<Vec<Document>> {
//!         let docs = inner.query(c, f, s, limit, offset)?;
//!         self.0.fetch_add(docs.len(), Ordering::SeqCst);
//!         Ok(docs)
//!     }
//! }
//!
//! let store = Arc::new(Forwarding::new(Arc::new(sqlite), Counted::default()));
//! ```

use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use agent_env_store::{Document, DocumentStore, Filter, Sort, StoreResult, UpdateSpec};

/// The calls of a [`Forwarding`] store a test may watch or change: those every document store
/// implements, each given the inner store first, and each forwarding to it unless the test overrides it.
pub trait Hooks: Send + Sync {
    fn find_one(
        &self,
        inner: &dyn DocumentStore,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
    ) -> StoreResult<Option<Document>> {
        inner.find_one(collection, filter, sort)
    }

    fn query(
        &self,
        inner: &dyn DocumentStore,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        inner.query(collection, filter, sort, limit, offset)
    }

    fn count(
        &self,
        inner: &dyn DocumentStore,
        collection: &str,
        filter: &Filter,
    ) -> StoreResult<u64> {
        inner.count(collection, filter)
    }

    fn insert(
        &self,
        inner: &dyn DocumentStore,
        collection: &str,
        doc: &Document,
    ) -> StoreResult<()> {
        inner.insert(collection, doc)
    }

    fn update(
        &self,
        inner: &dyn DocumentStore,
        collection: &str,
        filter: &Filter,
        update: &UpdateSpec,
        upsert: bool,
    ) -> StoreResult<u64> {
        inner.update(collection, filter, update, upsert)
    }

    fn update_one_and_get(
        &self,
        inner: &dyn DocumentStore,
        collection: &str,
        filter: &Filter,
        update: &UpdateSpec,
        return_after: bool,
        upsert: bool,
    ) -> StoreResult<Option<Document>> {
        inner.update_one_and_get(collection, filter, update, return_after, upsert)
    }

    fn replace(
        &self,
        inner: &dyn DocumentStore,
        collection: &str,
        filter: &Filter,
        doc: &Document,
        upsert: bool,
    ) -> StoreResult<u64> {
        inner.replace(collection, filter, doc, upsert)
    }

    fn delete(
        &self,
        inner: &dyn DocumentStore,
        collection: &str,
        filter: &Filter,
    ) -> StoreResult<u64> {
        inner.delete(collection, filter)
    }

    fn ensure_index(
        &self,
        inner: &dyn DocumentStore,
        collection: &str,
        fields: &[&str],
        unique: bool,
    ) -> StoreResult<()> {
        inner.ensure_index(collection, fields, unique)
    }
}

/// A document store that answers each call through its [`Hooks`] from the store it wraps.
///
/// `probe`, `check_id` and `drop_collection` go straight to the inner store. The reads the trait
/// builds on `query` and `find_one` (`find_many_by_id`, `latest_per_id`, `latest_per_id_page`,
/// `count_distinct`, `latest_version`) are left to the trait's defaults, so they read through the
/// hooks: a hook on `query` sees every document a caller is handed.
pub struct Forwarding<H> {
    inner: Arc<dyn DocumentStore>,
    hooks: H,
}

impl<H: Hooks> Forwarding<H> {
    pub fn new(inner: Arc<dyn DocumentStore>, hooks: H) -> Forwarding<H> {
        Forwarding { inner, hooks }
    }

    /// The store answering under the hooks, for a test to look at it past them.
    pub fn inner(&self) -> &dyn DocumentStore {
        self.inner.as_ref()
    }
}

/// The hooks, so a test reads what they kept as `store.inserts`.
impl<H> Deref for Forwarding<H> {
    type Target = H;

    fn deref(&self) -> &H {
        &self.hooks
    }
}

impl<H: Hooks> DocumentStore for Forwarding<H> {
    fn find_one(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
    ) -> StoreResult<Option<Document>> {
        self.hooks.find_one(self.inner(), collection, filter, sort)
    }

    fn query(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        self.hooks
            .query(self.inner(), collection, filter, sort, limit, offset)
    }

    fn count(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        self.hooks.count(self.inner(), collection, filter)
    }

    fn insert(&self, collection: &str, doc: &Document) -> StoreResult<()> {
        self.hooks.insert(self.inner(), collection, doc)
    }

    fn update(
        &self,
        collection: &str,
        filter: &Filter,
        update: &UpdateSpec,
        upsert: bool,
    ) -> StoreResult<u64> {
        self.hooks
            .update(self.inner(), collection, filter, update, upsert)
    }

    fn update_one_and_get(
        &self,
        collection: &str,
        filter: &Filter,
        update: &UpdateSpec,
        return_after: bool,
        upsert: bool,
    ) -> StoreResult<Option<Document>> {
        self.hooks.update_one_and_get(
            self.inner(),
            collection,
            filter,
            update,
            return_after,
            upsert,
        )
    }

    fn replace(
        &self,
        collection: &str,
        filter: &Filter,
        doc: &Document,
        upsert: bool,
    ) -> StoreResult<u64> {
        self.hooks
            .replace(self.inner(), collection, filter, doc, upsert)
    }

    fn delete(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        self.hooks.delete(self.inner(), collection, filter)
    }

    fn ensure_index(&self, collection: &str, fields: &[&str], unique: bool) -> StoreResult<()> {
        self.hooks
            .ensure_index(self.inner(), collection, fields, unique)
    }

    fn drop_collection(&self, collection: &str) -> StoreResult<()> {
        self.inner.drop_collection(collection)
    }

    fn probe(&self) -> StoreResult<()> {
        self.inner.probe()
    }

    fn check_id(&self, id: &str) -> StoreResult<()> {
        self.inner.check_id(id)
    }
}
/// Hooks that count the documents the store's queries hand out, the one thing the tests of paging
/// watch (a deep page must not read what it skips); the count is shared with the test.
pub struct CountedQueries(pub Arc<AtomicUsize>);

impl Hooks for CountedQueries {
    fn query(
        &self,
        inner: &dyn DocumentStore,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        let docs = inner.query(collection, filter, sort, limit, offset)?;
        self.0.fetch_add(docs.len(), Ordering::SeqCst);
        Ok(docs)
    }
}
