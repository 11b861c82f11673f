//! `LocalSqliteDocumentStore`: one SQLite file (default `<state root>/document_store/documents.db`),
//! a table `docs_<collection>` per collection with one JSON `doc` column, expression indexes on
//! `json_extract`, and the §3.1 query semantics evaluated in Rust.
//!
//! One connection per store, behind a mutex; WAL (synchronous=NORMAL) and a 5 s busy timeout; every read-modify-write runs in a
//! `BEGIN IMMEDIATE` transaction, so writers in several threads and several processes never lose an
//! update. Nothing touches disk until the first write: a read of a database that does not exist yet is
//! empty.

mod connection;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use self::connection::{encode, sqlite_error, table_name, Db};
use super::private_dir::ensure_private_dir;
use crate::environment::Environment;
use crate::stores::config_table::{self, ConfigTable};
use agent_env_store::document::eval;
use agent_env_store::document::first_match::{
    self, post_image, Change, FirstMatchWriter, Images, UpsertDoc,
};
use agent_env_store::document::ids;
use agent_env_store::document::query::{Document, Filter, Sort, UpdateSpec};
use agent_env_store::document::DocumentStore;
use agent_env_store::error::{StoreError, StoreResult};

/// The class name, as `[stores.document] impl` names it.
pub const CLASS: &str = "LocalSqliteDocumentStore";
/// The original's full impl path, which the `local` alias expands to.
pub const IMPL: &str = "agent_env.store.document_store:LocalSqliteDocumentStore";
/// The keys its config table takes.
pub const CONFIG_KEYS: [&str; 1] = ["path"];

/// Which ids the store accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdPolicy {
    /// A configured store: no `@…` ids, and no bare id spelled like an encoded @local id.
    Configured,
    /// The @local namespace's store (`local.db`): only @local ids.
    LocalNamespace,
}

/// Documents in one SQLite file.
pub struct LocalSqliteDocumentStore {
    path: PathBuf,
    policy: IdPolicy,
    db: Mutex<Option<Db>>,
}

impl LocalSqliteDocumentStore {
    /// A configured store at `path` (nothing is created yet).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self::with_policy(path.into(), IdPolicy::Configured)
    }

    /// The @local namespace's store at `path` (default `<state root>/document_store/local.db`).
    pub fn local_namespace(path: impl Into<PathBuf>) -> Self {
        Self::with_policy(path.into(), IdPolicy::LocalNamespace)
    }

    fn with_policy(path: PathBuf, policy: IdPolicy) -> Self {
        LocalSqliteDocumentStore {
            path,
            policy,
            db: Mutex::new(None),
        }
    }

    /// `<state root>/document_store/documents.db` in `env`.
    pub fn default_path(env: &Environment) -> PathBuf {
        crate::paths::Paths::new(env)
            .state_root()
            .join("document_store")
            .join("documents.db")
    }

    /// Builds the store from its config table (`path`); `~` and the default path are `env`'s.
    pub fn from_config(
        impl_name: &str,
        table: &ConfigTable,
        env: &Environment,
    ) -> StoreResult<Self> {
        config_table::check_keys(impl_name, table, &CONFIG_KEYS, &[])?;
        let path = match config_table::opt_string(impl_name, table, "path")? {
            Some(p) => config_table::expand_home(&p, env),
            None => Self::default_path(env),
        };
        Ok(Self::new(path))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> StoreResult<MutexGuard<'_, Option<Db>>> {
        self.db.lock().map_err(|_| {
            StoreError::Internal(format!(
                "{}: a thread panicked while using this database",
                self.path.display()
            ))
        })
    }

    /// Runs `f` on the open database, opening (and, when `create`, creating) it first. Without `create`,
    /// a database file that does not exist yet gives `None`.
    fn with_db<T>(
        &self,
        create: bool,
        f: impl FnOnce(&mut Db, &Path) -> StoreResult<T>,
    ) -> StoreResult<Option<T>> {
        let mut guard = self.lock()?;
        if guard.is_none() {
            if !create && !self.path.exists() {
                return Ok(None);
            }
            if let Some(parent) = self.path.parent() {
                ensure_private_dir(parent)?;
            }
            *guard = Some(Db::open(&self.path)?);
        }
        match guard.as_mut() {
            Some(db) => f(db, &self.path).map(Some),
            None => Ok(None),
        }
    }

    fn read_matching(&self, collection: &str, filter: &Filter) -> StoreResult<Vec<Document>> {
        Ok(self
            .with_db(false, |db, path| db.matching(path, collection, filter))?
            .unwrap_or_default()
            .into_iter()
            .map(|(_, doc)| doc)
            .collect())
    }
}

impl FirstMatchWriter for LocalSqliteDocumentStore {
    /// In one immediate transaction (`BEGIN IMMEDIATE`).
    fn change_first(
        &self,
        collection: &str,
        filter: &Filter,
        change: &Change<'_>,
        upsert_doc: Option<UpsertDoc<'_>>,
    ) -> StoreResult<Images> {
        let outcome = self.with_db(true, |db, path| {
            let table = table_name(collection);
            db.ensure_table(path, &table)?;
            // BEGIN IMMEDIATE takes the write lock before the read, so the match cannot go stale.
            db.conn
                .execute_batch("BEGIN IMMEDIATE")
                .map_err(|e| sqlite_error(path, &e))?;
            let result =
                change_in_transaction(db, path, collection, &table, filter, change, upsert_doc);
            let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
            let ended = db
                .conn
                .execute_batch(end)
                .map_err(|e| sqlite_error(path, &e));
            let outcome = result?;
            ended?;
            Ok(outcome)
        })?;
        Ok(outcome.unwrap_or((None, None)))
    }
}

fn change_in_transaction(
    db: &mut Db,
    path: &Path,
    collection: &str,
    table: &str,
    filter: &Filter,
    change: &Change<'_>,
    upsert_doc: Option<UpsertDoc<'_>>,
) -> StoreResult<Images> {
    let first = db.matching(path, collection, filter)?.into_iter().next();
    let dup = |e: &rusqlite::Error| duplicate_in(path, collection, e);
    match first {
        Some((rowid, before)) => {
            let after = post_image(&before, change)?;
            match &after {
                Some(doc) => db
                    .conn
                    .execute(
                        &format!("UPDATE \"{table}\" SET doc = ?1 WHERE rowid = ?2"),
                        rusqlite::params![encode(doc)?, rowid],
                    )
                    .map_err(|e| dup(&e))?,
                None => db
                    .conn
                    .execute(
                        &format!("DELETE FROM \"{table}\" WHERE rowid = ?1"),
                        [rowid],
                    )
                    .map_err(|e| dup(&e))?,
            };
            Ok((Some(before), after))
        }
        None => match upsert_doc {
            Some(make) => {
                let doc = make()?;
                db.conn
                    .execute(
                        &format!("INSERT INTO \"{table}\" (doc) VALUES (?1)"),
                        [encode(&doc)?],
                    )
                    .map_err(|e| dup(&e))?;
                Ok((None, Some(doc)))
            }
            None => Ok((None, None)),
        },
    }
}

fn duplicate_in(path: &Path, collection: &str, err: &rusqlite::Error) -> StoreError {
    match sqlite_error(path, err) {
        StoreError::DuplicateKey(_) => StoreError::DuplicateKey(format!(
            "a document in '{collection}' repeats the fields of a unique index ({err})"
        )),
        other => other,
    }
}

impl DocumentStore for LocalSqliteDocumentStore {
    fn find_one(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
    ) -> StoreResult<Option<Document>> {
        let docs = self.read_matching(collection, filter)?;
        Ok(match sort {
            Some(sort) => docs
                .into_iter()
                .min_by(|a, b| eval::query_order(a, b, sort)),
            None => docs.into_iter().next(),
        })
    }

    fn query(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        let docs = self.read_matching(collection, filter)?;
        Ok(eval::window(docs, sort, eval::query_order, limit, offset))
    }

    fn count(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        // Counting everything needs no document parsed.
        if filter.conditions.is_empty() {
            return Ok(self
                .with_db(false, |db, path| db.count_all(path, collection))?
                .unwrap_or(0));
        }
        Ok(self.read_matching(collection, filter)?.len() as u64)
    }

    fn insert(&self, collection: &str, doc: &Document) -> StoreResult<()> {
        let text = encode(doc)?;
        self.with_db(true, |db, path| {
            let table = table_name(collection);
            db.ensure_table(path, &table)?;
            db.conn
                .execute(
                    &format!("INSERT INTO \"{table}\" (doc) VALUES (?1)"),
                    [&text],
                )
                .map_err(|e| duplicate_in(path, collection, &e))?;
            Ok(())
        })?;
        Ok(())
    }

    fn update(
        &self,
        collection: &str,
        filter: &Filter,
        update: &UpdateSpec,
        upsert: bool,
    ) -> StoreResult<u64> {
        first_match::update(self, collection, filter, update, upsert)
    }

    fn update_one_and_get(
        &self,
        collection: &str,
        filter: &Filter,
        update: &UpdateSpec,
        return_after: bool,
        upsert: bool,
    ) -> StoreResult<Option<Document>> {
        first_match::update_one_and_get(self, collection, filter, update, return_after, upsert)
    }

    fn replace(
        &self,
        collection: &str,
        filter: &Filter,
        doc: &Document,
        upsert: bool,
    ) -> StoreResult<u64> {
        first_match::replace(self, collection, filter, doc, upsert)
    }

    fn delete(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        first_match::delete(self, collection, filter)
    }

    fn ensure_index(&self, collection: &str, fields: &[&str], unique: bool) -> StoreResult<()> {
        self.with_db(true, |db, path| {
            db.ensure_index(path, collection, fields, unique)
        })?;
        Ok(())
    }

    fn check_id(&self, id: &str) -> StoreResult<()> {
        match self.policy {
            IdPolicy::Configured => {
                ids::check_id(id)?;
                ids::check_not_encoded_local(id)
            }
            IdPolicy::LocalNamespace => ids::check_local_namespace_id(id),
        }
    }
}
