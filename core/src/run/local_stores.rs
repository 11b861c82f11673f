//! The @local namespace's stores a bundle run writes to: `<state root>/document_store/local.db` (which
//! holds only @local ids) and the per-user local object store `<state root>/object_store`. This module is
//! the one place that picks them, as a run's [`RunStores`].
//!
//! Nothing touches disk until the first write; reads of a store that was never written find nothing, so
//! `--dry-run` leaves no trace. The database is opened once, on first use, and shared by every task.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::run_stores::RunStores;
use crate::stores::local::{LocalFilesystemObjectStore, LocalSqliteDocumentStore};

/// `<state root>/document_store/local.db`.
pub fn local_db_path(state_root: &Path) -> PathBuf {
    crate::paths::local_documents_db(state_root)
}

/// `<state root>/object_store`.
pub fn local_object_root(state_root: &Path) -> PathBuf {
    crate::paths::local_objects_root(state_root)
}

/// Opens (lazily) the @local document and object stores under `state_root`.
pub fn open(state_root: &Path) -> RunStores {
    RunStores {
        documents: Arc::new(LocalSqliteDocumentStore::local_namespace(local_db_path(
            state_root,
        ))),
        objects: Arc::new(LocalFilesystemObjectStore::new(local_object_root(
            state_root,
        ))),
    }
}
