//! The configured document store as one request reads it. When it fails to answer (its server
//! stopped, its plugin refusing, a login it no longer gets), the read answers as if the store held
//! nothing, the failure is kept for the request's answer (a list's `warnings`, a lookup's 503) and
//! for the explorer (which leaves the store out until its next try), and the store is not asked
//! again in that request. Errors about the request itself (a value the store refuses, a document
//! not found) are passed on as they are.

use std::sync::{Arc, OnceLock};

use agent_env_store::document::{Document, DocumentStore, Filter, Sort, UpdateSpec};
use agent_env_store::error::{StoreError, StoreResult};

use super::records::{Failure, Fault};

/// One request's watch on the configured store: how it failed, if it did.
pub struct Watch {
    failure: OnceLock<Failure>,
    fault: Arc<Fault>,
}

impl Watch {
    /// A watch that also reports a failure to `fault`, the explorer's record since the store opened.
    pub fn new(fault: Arc<Fault>) -> Watch {
        Watch {
            failure: OnceLock::new(),
            fault,
        }
    }

    /// How the store failed in this request.
    pub fn failure(&self) -> Option<Failure> {
        self.failure.get().cloned()
    }

    fn failed(&self) -> bool {
        self.failure.get().is_some()
    }

    fn report(&self, error: &StoreError) {
        let failure = Failure {
            left_out: format!(
                "the configured document store did not answer, so stored tasks and their instances are left out: {error}"
            ),
            unavailable: format!("the configured document store did not answer ({error})"),
        };
        self.fault.report(&failure);
        let _ = self.failure.set(failure);
    }
}

/// Whether `error` says the store could not answer, rather than something about the request.
pub fn fails_to_answer(error: &StoreError) -> bool {
    matches!(
        error,
        StoreError::Io { .. } | StoreError::Internal(_) | StoreError::Config(_)
    )
}

/// The configured store under a request's [`Watch`].
pub struct Watched {
    store: Arc<dyn DocumentStore>,
    watch: Arc<Watch>,
}

impl Watched {
    pub fn new(store: Arc<dyn DocumentStore>, watch: Arc<Watch>) -> Watched {
        Watched { store, watch }
    }

    /// `read`'s answer, or `nothing` when the store failed (now or earlier in the request).
    fn read<T>(&self, nothing: T, read: impl FnOnce() -> StoreResult<T>) -> StoreResult<T> {
        if self.watch.failed() {
            return Ok(nothing);
        }
        match read() {
            Err(e) if fails_to_answer(&e) => {
                self.watch.report(&e);
                Ok(nothing)
            }
            answer => answer,
        }
    }
}

impl DocumentStore for Watched {
    fn find_one(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
    ) -> StoreResult<Option<Document>> {
        self.read(None, || self.store.find_one(collection, filter, sort))
    }

    fn query(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        self.read(Vec::new(), || {
            self.store.query(collection, filter, sort, limit, offset)
        })
    }

    fn count(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        self.read(0, || self.store.count(collection, filter))
    }

    // The explorer writes nothing through its readings; a write goes to the store as it is.

    fn insert(&self, collection: &str, doc: &Document) -> StoreResult<()> {
        self.store.insert(collection, doc)
    }

    fn update(
        &self,
        collection: &str,
        filter: &Filter,
        update: &UpdateSpec,
        upsert: bool,
    ) -> StoreResult<u64> {
        self.store.update(collection, filter, update, upsert)
    }

    fn update_one_and_get(
        &self,
        collection: &str,
        filter: &Filter,
        update: &UpdateSpec,
        return_after: bool,
        upsert: bool,
    ) -> StoreResult<Option<Document>> {
        self.store
            .update_one_and_get(collection, filter, update, return_after, upsert)
    }

    fn replace(
        &self,
        collection: &str,
        filter: &Filter,
        doc: &Document,
        upsert: bool,
    ) -> StoreResult<u64> {
        self.store.replace(collection, filter, doc, upsert)
    }

    fn delete(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        self.store.delete(collection, filter)
    }

    fn ensure_index(&self, collection: &str, fields: &[&str], unique: bool) -> StoreResult<()> {
        self.store.ensure_index(collection, fields, unique)
    }

    fn probe(&self) -> StoreResult<()> {
        self.store.probe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A store that answers every read with `error` and counts how often it is asked.
    struct Failing {
        error: fn() -> StoreError,
        asked: AtomicUsize,
    }

    impl DocumentStore for Failing {
        fn find_one(&self, _: &str, _: &Filter, _: Option<&Sort>) -> StoreResult<Option<Document>> {
            self.asked.fetch_add(1, Ordering::SeqCst);
            Err((self.error)())
        }
        fn query(
            &self,
            _: &str,
            _: &Filter,
            _: Option<&Sort>,
            _: Option<usize>,
            _: usize,
        ) -> StoreResult<Vec<Document>> {
            self.asked.fetch_add(1, Ordering::SeqCst);
            Err((self.error)())
        }
        fn count(&self, _: &str, _: &Filter) -> StoreResult<u64> {
            self.asked.fetch_add(1, Ordering::SeqCst);
            Err((self.error)())
        }
        fn insert(&self, _: &str, _: &Document) -> StoreResult<()> {
            Err((self.error)())
        }
        fn update(&self, _: &str, _: &Filter, _: &UpdateSpec, _: bool) -> StoreResult<u64> {
            Err((self.error)())
        }
        fn update_one_and_get(
            &self,
            _: &str,
            _: &Filter,
            _: &UpdateSpec,
            _: bool,
            _: bool,
        ) -> StoreResult<Option<Document>> {
            Err((self.error)())
        }
        fn replace(&self, _: &str, _: &Filter, _: &Document, _: bool) -> StoreResult<u64> {
            Err((self.error)())
        }
        fn delete(&self, _: &str, _: &Filter) -> StoreResult<u64> {
            Err((self.error)())
        }
        fn ensure_index(&self, _: &str, _: &[&str], _: bool) -> StoreResult<()> {
            Ok(())
        }
    }

    fn watched(error: fn() -> StoreError) -> (Watched, Arc<Failing>, Arc<Watch>) {
        let store = Arc::new(Failing {
            error,
            asked: AtomicUsize::new(0),
        });
        let watch = Arc::new(Watch::new(Arc::default()));
        (Watched::new(store.clone(), watch.clone()), store, watch)
    }

    #[test]
    fn a_store_that_does_not_answer_reads_as_empty_once_per_request() {
        let (watched, store, watch) = watched(|| StoreError::Internal("server gone".into()));
        assert_eq!(watched.count("tasks", &Filter::all()).unwrap(), 0);
        assert!(watched
            .query("tasks", &Filter::all(), None, None, 0)
            .unwrap()
            .is_empty());
        assert_eq!(
            watched.find_one("tasks", &Filter::all(), None).unwrap(),
            None
        );
        assert_eq!(store.asked.load(Ordering::SeqCst), 1, "asked once");
        let failure = watch.failure().expect("the failure is kept");
        assert!(
            failure.left_out.ends_with("left out: server gone"),
            "{failure:?}"
        );
        assert!(failure.unavailable.contains("did not answer (server gone)"));
    }

    #[test]
    fn an_error_about_the_request_is_passed_on() {
        let (watched, _store, watch) = watched(|| StoreError::InvalidValue("bad filter".into()));
        let e = watched.count("tasks", &Filter::all()).unwrap_err();
        assert!(matches!(e, StoreError::InvalidValue(_)));
        assert!(watch.failure().is_none());
        assert!(!fails_to_answer(&StoreError::NotFound("x".into())));
        assert!(fails_to_answer(&StoreError::Io {
            message: "refused".into(),
            raw_os_error: None
        }));
    }
}
