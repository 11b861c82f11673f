//! The @local namespace's stores a bundle run writes to: `<state root>/document_store/local.db` (which
//! holds only @local ids) and the per-user local object store `<state root>/object_store`. This module is
//! the one place that picks them, as a run's [`RunStores`].
//!
//! Nothing touches disk until the first write; reads of a store that was never written find nothing, so
//! `--dry-run` leaves no trace. The database is opened once, on first use, and shared by every task.
//!
//! A `local.db` a full disk or a bad copy left at 0 bytes reads as empty: [`warnings`] says so before
//! the run starts, for the run to show as its own. With nothing beside it, the run's first write makes
//! a new store there; with its write-ahead log left (the records may be got back from it), the store
//! refuses every write, so the run fails at its first write and both files stay as they are.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::run_stores::RunStores;
use crate::stores::local::sqlite_docs::emptied;
use crate::stores::local::{LocalFilesystemObjectStore, LocalSqliteDocumentStore};

/// `<state root>/document_store/local.db`.
pub fn local_db_path(state_root: &Path) -> PathBuf {
    crate::paths::local_documents_db(state_root)
}

/// `<state root>/object_store`.
pub fn local_object_root(state_root: &Path) -> PathBuf {
    crate::paths::local_objects_root(state_root)
}

/// What a run using the @local stores under `state_root` is to warn of before it starts: a
/// `local.db` emptied to 0 bytes ([`emptied`]), whose records the run does not find (and which its
/// first write makes a new store of, or is refused on when the file's log is left: see the module).
pub fn warnings(state_root: &Path) -> Vec<String> {
    let db = local_db_path(state_root);
    match emptied::is_emptied(&db) {
        true => vec![emptied::warning(&db)],
        false => Vec::new(),
    }
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

/// What the local document store holds of an entity recorded under versions (a bundle's task or
/// artifact): the version asked for, or, when it is missing, the entity's newest version, if any.
pub enum LocalVersion {
    Found(crate::stores::Document),
    Missing { newest: Option<i64> },
}

/// Reads `id` from `collection` of the local document store `documents`, at `version` or its
/// latest; when a version asked for is missing, the newest one is looked up for the reader.
pub fn read_version(
    documents: &dyn crate::stores::DocumentStore,
    collection: &str,
    id: &str,
    version: Option<i64>,
) -> Result<LocalVersion, crate::stores::StoreError> {
    use crate::stores::{Filter, Predicate};
    use serde_json::Value;
    let read = |version: Option<i64>| match version {
        None => documents.latest_version(collection, id),
        Some(v) => documents.find_one(
            collection,
            &Filter::eq("id", id).and("version", Predicate::Eq(Value::from(v))),
            None,
        ),
    };
    if let Some(doc) = read(version)? {
        return Ok(LocalVersion::Found(doc));
    }
    let newest = version
        .and_then(|_| read(None).ok().flatten())
        .and_then(|d| d.get("version").and_then(Value::as_i64));
    Ok(LocalVersion::Missing { newest })
}
