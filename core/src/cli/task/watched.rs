//! A document store for the tests of the task commands: it answers from a SQLite store and keeps
//! which reads of the instances it was asked for, so a test can tell how a command reads them.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_env_test_support::{Forwarding, Hooks};

use crate::run::recorder::INSTANCES;
use crate::stores::local::LocalSqliteDocumentStore;
use crate::stores::{Document, DocumentStore, Filter, Sort, StoreResult};

/// Each read of the instances: its filter, its limit, and how many documents it gave.
pub(super) type Read = (Filter, Option<usize>, usize);

/// Which windows of the instances a store was asked for.
pub(super) struct Watched {
    asked: Mutex<Vec<Read>>,
}

impl Watched {
    /// The SQLite store at `path`, its reads of the instances watched.
    pub(super) fn new(path: PathBuf) -> Forwarding<Watched> {
        let inner = LocalSqliteDocumentStore::new(path);
        Forwarding::new(
            Arc::new(inner),
            Watched {
                asked: Mutex::default(),
            },
        )
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

impl Hooks for Watched {
    fn query(
        &self,
        inner: &dyn DocumentStore,
        c: &str,
        f: &Filter,
        s: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        let answer = inner.query(c, f, s, limit, offset)?;
        if c == INSTANCES {
            self.asked
                .lock()
                .unwrap()
                .push((f.clone(), limit, answer.len()));
        }
        Ok(answer)
    }
}
