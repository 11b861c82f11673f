//! `LocalSqliteDocumentStore`: one SQLite file (default `<state root>/document_store/documents.db`),
//! a table `docs_<collection>` per collection with one JSON `doc` column, expression indexes on
//! `json_extract`, and the query semantics of `docs/protocol.md` (Documents) evaluated in Rust.
//!
//! One connection per store, behind a mutex; WAL (synchronous=NORMAL) and a 5 s busy timeout; every read-modify-write runs in a
//! `BEGIN IMMEDIATE` transaction, so writers in several threads and several processes never lose an
//! update. Nothing touches disk until the first write: a read of a database that does not exist yet is
//! empty.

mod connection;
pub mod emptied;
mod kept_order;
mod keys_query;
mod path_length;
mod unreachable;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use self::connection::{encode, sqlite_error, table_name, Db, SortKeys};
use super::private_dir::{check_makeable, create_private_file, ensure_private_dir};
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
use agent_env_store::SettingsProblems;

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
    /// The indexes asked for while the database did not exist yet: made with it, on the first
    /// write, so a read of a store not made yet creates nothing (see [`DocumentStore::ensure_index`]).
    pending_indexes: Mutex<Vec<PendingIndex>>,
    /// What the store has to warn of since last asked ([`LocalSqliteDocumentStore::take_warnings`]).
    warnings: Mutex<Vec<String>>,
}

/// An index asked for before the database was made: its collection, fields and uniqueness.
type PendingIndex = (String, Vec<String>, bool);

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
            pending_indexes: Mutex::new(Vec::new()),
            warnings: Mutex::new(Vec::new()),
        }
    }

    /// `<state root>/document_store/documents.db` in `env`.
    pub fn default_path(env: &Environment) -> PathBuf {
        crate::paths::default_documents_db(&crate::paths::Paths::noted(env).state_root())
    }

    /// Builds the store from its config table (`path`); `~` and the default path are `env`'s. The error
    /// names every problem: unknown keys and a `path` that is not a string alike.
    pub fn from_config(
        impl_name: &str,
        table: &ConfigTable,
        env: &Environment,
    ) -> Result<Self, SettingsProblems> {
        let mut problems = config_table::key_problems(impl_name, table, &CONFIG_KEYS, &[]);
        let path = problems
            .keep(config_table::opt_path(impl_name, table, "path"))
            .flatten()
            .map(|p| config_table::expand_home(&p, env))
            .unwrap_or_else(|| Self::default_path(env));
        let local = crate::paths::local_documents_db(&crate::paths::Paths::noted(env).state_root());
        if same_file(&path, &local) {
            problems.push(format!(
                "The config table for '{impl_name}' sets path to {}, which is kept for @local documents (the ones bundle runs write); point [stores.document] somewhere else",
                path.display()
            ));
        }
        problems.into_result(Self::new(path))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the store has to warn the user of since last asked, oldest first: an existing database
    /// file of 0 bytes, without a log left, it wrote to ([`emptied`]). Reads of such a file find nothing and leave it as it
    /// is; whoever reads through the store says [`emptied::warning`] itself.
    pub fn take_warnings(&self) -> Vec<String> {
        match self.warnings.lock() {
            Ok(mut warnings) => std::mem::take(&mut *warnings),
            Err(_) => Vec::new(),
        }
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
            // A database that is not there holds nothing yet; one that may not be looked for (a
            // folder this user may not enter) is an error, not an empty store.
            let exists = self
                .path
                .try_exists()
                .map_err(|e| unreachable::looking_failed(&self.path, &e))?;
            // A path longer than SQLite opens can never hold a record: said, even to a read.
            if !exists {
                if let Some(too_long) = path_length::too_long(&self.path) {
                    return Err(too_long);
                }
            }
            if !create && !exists {
                return Ok(None);
            }
            // A file of 0 bytes holds nothing, and opening it would write an empty database over
            // the sign that its records were lost, and throw away the log that may still hold
            // them: a read leaves it as it is; a write is refused while a log is left, else says so.
            if exists && emptied::is_emptied(&self.path) {
                if !create {
                    return Ok(None);
                }
                if let Some(refused) = emptied::refusal(&self.path) {
                    return Err(refused);
                }
                if let Ok(mut warnings) = self.warnings.lock() {
                    warnings.push(emptied::warning(&self.path));
                }
            }
            if let Some(parent) = self.path.parent() {
                ensure_private_dir(parent)?;
            }
            if !exists {
                // Made here before SQLite opens it, so that it (and its -wal and -shm, which SQLite
                // gives the database's mode) is the user's alone whatever the umask.
                create_private_file(&self.path).map_err(|e| StoreError::Io {
                    message: format!(
                        "{}: {e}; this user must be able to write in its folder (or point XDG_STATE_HOME, or the store's path in the config, at a writable place)",
                        self.path.display()
                    ),
                    raw_os_error: e.raw_os_error(),
                })?;
            }
            *guard = Some(Db::open(&self.path)?);
        }
        match guard.as_mut() {
            Some(db) => {
                if create {
                    self.make_pending_indexes(db)?;
                }
                f(db, &self.path).map(Some)
            }
            None => Ok(None),
        }
    }

    /// Makes the indexes asked for before the database existed, once it is written to.
    fn make_pending_indexes(&self, db: &mut Db) -> StoreResult<()> {
        let pending = match self.pending_indexes.lock() {
            Ok(mut pending) => std::mem::take(&mut *pending),
            Err(_) => return Ok(()),
        };
        for (collection, fields, unique) in pending {
            let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
            db.ensure_index(&self.path, &collection, &fields, unique)?;
        }
        Ok(())
    }

    /// A page of a collection sorted by top-level fields, unfiltered or by a filter SQL decides
    /// (an equality or membership on an indexed field), parsing only the page's documents: the
    /// sort keys are read first, ordered as the evaluator orders them (ties in insertion order,
    /// that is by rowid, as the whole-document path), and only the rows in the window are read
    /// whole. The order is kept while the database holds still ([`kept_order`]), so the next page
    /// of the same listing reads no key. `None` when the query is not of that shape.
    fn page_by_keys(
        &self,
        collection: &str,
        filter: &Filter,
        sort: &Sort,
        limit: usize,
        offset: usize,
    ) -> StoreResult<Option<Vec<Document>>> {
        let top_level = sort
            .keys
            .iter()
            .all(|k| !k.field.is_empty() && !k.field.contains(['.', '"', '\'']));
        if limit == 0 || sort.keys.is_empty() || !top_level {
            return Ok(None);
        }
        let fields: Vec<&str> = sort.keys.iter().map(|k| k.field.as_str()).collect();
        let page = self.with_db(false, |db, path| {
            let query = match db.sort_keys_query(path, collection, &fields, filter)? {
                SortKeys::NoTable => return Ok(Some(Vec::new())),
                SortKeys::Undecided => return Ok(None),
                SortKeys::Query(query) => query,
            };
            let stamp = db.stamp(path)?;
            let rowids = match db.kept.window(&query, sort, stamp, limit, offset) {
                Some(rowids) => rowids,
                None => {
                    let keys = db.read_sort_keys(path, &query, &fields)?;
                    db.kept.order(query, sort, stamp, keys, limit, offset)
                }
            };
            db.by_rowids(path, collection, &rowids).map(Some)
        })?;
        // A database not made yet holds nothing.
        Ok(page.unwrap_or(Some(Vec::new())))
    }

    /// How many times this store has read and ordered a listing's sort keys.
    #[cfg(test)]
    pub(crate) fn key_orderings(&self) -> u64 {
        match self.lock() {
            Ok(guard) => guard.as_ref().map_or(0, |db| db.kept.orderings()),
            Err(_) => 0,
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
        let outcome = self.in_transaction(collection, |db, path, table| {
            change_in_transaction(db, path, collection, table, filter, change, upsert_doc)
        })?;
        Ok(outcome.unwrap_or((None, None)))
    }
}

impl LocalSqliteDocumentStore {
    /// Runs `f` on the collection's table (made if needed) in one immediate transaction, committed
    /// when `f` succeeds and rolled back when it fails.
    fn in_transaction<T>(
        &self,
        collection: &str,
        f: impl FnOnce(&mut Db, &Path, &str) -> StoreResult<T>,
    ) -> StoreResult<Option<T>> {
        self.with_db(true, |db, path| {
            let table = table_name(collection);
            db.ensure_table(path, &table)?;
            immediately(db, path, |db, path| f(db, path, &table))
        })
    }
}

/// Runs `f` in one immediate transaction, committed when `f` succeeds and rolled back when it
/// fails. `BEGIN IMMEDIATE` takes the write lock before the read, so a match cannot go stale.
fn immediately<T>(
    db: &mut Db,
    path: &Path,
    f: impl FnOnce(&mut Db, &Path) -> StoreResult<T>,
) -> StoreResult<T> {
    db.run("BEGIN IMMEDIATE", [])
        .map_err(|e| sqlite_error(path, &e))?;
    let result = f(db, path);
    let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
    let ended = db.run(end, []).map_err(|e| sqlite_error(path, &e));
    let outcome = result?;
    ended?;
    Ok(outcome)
}

/// [`DocumentStore::replace`] in a transaction: when SQL decides the filter (an equality on an
/// indexed field, such as a task instance's id), the first match is found by its rowid alone and
/// its document is neither read nor parsed; otherwise as [`first_match::replace`].
fn replace_in_transaction(
    db: &mut Db,
    path: &Path,
    collection: &str,
    table: &str,
    filter: &Filter,
    doc: &Document,
    upsert: bool,
) -> StoreResult<u64> {
    let dup = |e: &rusqlite::Error| duplicate_in(path, collection, e);
    match db.first_rowid_decided(path, collection, filter)? {
        Some(Some(rowid)) => {
            db.run(
                &format!("UPDATE \"{table}\" SET doc = ?1 WHERE rowid = ?2"),
                rusqlite::params![encode(doc)?, rowid],
            )
            .map_err(|e| dup(&e))?;
            Ok(1)
        }
        Some(None) if upsert => {
            db.run(
                &format!("INSERT INTO \"{table}\" (doc) VALUES (?1)"),
                [encode(doc)?],
            )
            .map_err(|e| dup(&e))?;
            Ok(1)
        }
        Some(None) => Ok(0),
        None => {
            let make = || Ok(doc.clone());
            let (_, after) = change_in_transaction(
                db,
                path,
                collection,
                table,
                filter,
                &Change::Replace(doc),
                upsert.then_some(&make as UpsertDoc<'_>),
            )?;
            Ok(u64::from(after.is_some()))
        }
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
                    .run(
                        &format!("UPDATE \"{table}\" SET doc = ?1 WHERE rowid = ?2"),
                        rusqlite::params![encode(doc)?, rowid],
                    )
                    .map_err(|e| dup(&e))?,
                None => db
                    .run(
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
                db.run(
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
    /// The database file is a file (or can be made: its folder is, or can be made, a writable folder).
    fn probe(&self) -> StoreResult<()> {
        if self.path.is_dir() {
            return Err(StoreError::Config(format!(
                "The document store's database {} is a folder; point the store's path at a file",
                self.path.display()
            )));
        }
        match self.path.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => check_makeable(folder),
            _ => Ok(()),
        }
    }

    fn find_one(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
    ) -> StoreResult<Option<Document>> {
        let docs = self.read_matching(collection, filter)?;
        Ok(eval::first(docs, sort))
    }

    fn query(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        if let (Some(sort), Some(limit)) = (sort, limit) {
            if let Some(page) = self.page_by_keys(collection, filter, sort, limit, offset)? {
                return Ok(page);
            }
        }
        let docs = self.read_matching(collection, filter)?;
        Ok(eval::window(docs, sort, eval::query_order, limit, offset))
    }

    fn count(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        // Counting everything, or what an indexed equality selects, needs no document parsed.
        if filter.conditions.is_empty() {
            return Ok(self
                .with_db(false, |db, path| db.count_all(path, collection))?
                .unwrap_or(0));
        }
        let decided = self.with_db(false, |db, path| db.count_decided(path, collection, filter))?;
        match decided {
            None => return Ok(0),
            Some(Some(n)) => return Ok(n),
            Some(None) => {}
        }
        Ok(self.read_matching(collection, filter)?.len() as u64)
    }

    fn insert(&self, collection: &str, doc: &Document) -> StoreResult<()> {
        let text = encode(doc)?;
        self.with_db(true, |db, path| {
            let table = table_name(collection);
            db.ensure_table(path, &table)?;
            db.run(
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
        let replaced = self.in_transaction(collection, |db, path, table| {
            replace_in_transaction(db, path, collection, table, filter, doc, upsert)
        })?;
        Ok(replaced.unwrap_or(0))
    }

    fn delete(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        first_match::delete(self, collection, filter)
    }

    /// In one immediate transaction: the matches found as every read finds them (an equality or
    /// membership on an indexed field narrowed in SQL, such as a few hundred task instances by
    /// their ids, and no document read when SQL decides the filter whole), then deleted by rowid.
    /// All go or, on a failure, none. A database or collection not made yet is not created.
    fn delete_all(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        let deleted = self.with_db(false, |db, path| {
            if !db.has_table(path, &table_name(collection))? {
                return Ok(0);
            }
            immediately(db, path, |db, path| {
                let rowids = db.matching_rowids(path, collection, filter)?;
                db.delete_rowids(path, collection, &rowids)
            })
        })?;
        Ok(deleted.unwrap_or(0))
    }

    /// On a database not made yet, the index is made with it, by the first write: a read of a store
    /// that does not exist (on a read-only disk, say) creates nothing and finds nothing.
    fn ensure_index(&self, collection: &str, fields: &[&str], unique: bool) -> StoreResult<()> {
        let made = self.with_db(false, |db, path| {
            db.ensure_index(path, collection, fields, unique)
        })?;
        if made.is_none() {
            if let Ok(mut pending) = self.pending_indexes.lock() {
                pending.push((
                    collection.to_string(),
                    fields.iter().map(|f| f.to_string()).collect(),
                    unique,
                ));
            }
        }
        Ok(())
    }

    /// Drops the collection's table with its indexes (`DROP TABLE IF EXISTS`), rather than leaving an
    /// empty table as deleting its documents one by one would. A database that does not exist yet is
    /// not created.
    fn drop_collection(&self, collection: &str) -> StoreResult<()> {
        self.with_db(false, |db, path| db.drop_table(path, collection))?;
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

/// Whether `a` and `b` name one file (either may not exist yet): their folders resolved, the names
/// compared.
fn same_file(a: &Path, b: &Path) -> bool {
    // Different names are different files: no folder is resolved (the common case, on every
    // build of the configured store).
    if a.file_name() != b.file_name() {
        return false;
    }
    let resolved = |p: &Path| -> Option<std::path::PathBuf> {
        let absolute = std::path::absolute(p).ok()?;
        let folder = absolute.parent()?;
        let folder = folder
            .canonicalize()
            .unwrap_or_else(|_| folder.to_path_buf());
        Some(folder.join(absolute.file_name()?))
    };
    match (resolved(a), resolved(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_env_store::document::query::Predicate;
    use serde_json::{json, Value};

    fn doc(v: Value) -> Document {
        match v {
            Value::Object(m) => m,
            _ => Document::new(),
        }
    }

    /// The last connection's close leaves the write-ahead log in place and empty: the next process
    /// neither creates it again nor has frames to read back, and the data is in the database.
    #[test]
    fn closing_keeps_an_empty_log_and_the_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.db");
        {
            let store = LocalSqliteDocumentStore::new(&path);
            for i in 0..50 {
                store.insert("c", &doc(json!({"id": i}))).unwrap();
            }
        }
        let log = std::fs::metadata(dir.path().join("d.db-wal")).expect("the log is kept");
        assert_eq!(log.len(), 0);
        let again = LocalSqliteDocumentStore::new(&path);
        assert_eq!(again.count("c", &Filter::default()).unwrap(), 50);
    }

    /// Whether the database holds a table named `name`, asked of SQLite itself.
    fn table_exists(store: &LocalSqliteDocumentStore, name: &str) -> bool {
        let found = store
            .with_db(false, |db, _| {
                Ok(db
                    .conn
                    .query_row(
                        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                        [name],
                        |row| row.get::<_, i64>(0),
                    )
                    .unwrap())
            })
            .unwrap();
        found == Some(1)
    }

    /// Dropping removes the table itself (not only its documents) and what the connection knew of
    /// it: the collection reads empty, takes writes again, and its unique index, ensured again, holds.
    /// A collection whose name starts with the dropped one's keeps its documents and its index.
    #[test]
    fn a_dropped_collection_is_gone_and_can_be_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalSqliteDocumentStore::new(dir.path().join("d.db"));
        let a = doc(json!({"id": "a", "version": 1}));
        for collection in ["c", "c_more"] {
            store
                .ensure_index(collection, &["id", "version"], true)
                .unwrap();
            store.insert(collection, &a).unwrap();
        }
        // A sorted page makes the connection remember a sort index of the table as well.
        store
            .query(
                "c",
                &Filter::default(),
                Some(&Sort::by("id", false)),
                Some(1),
                0,
            )
            .unwrap();

        store.drop_collection("c").unwrap();
        assert!(!table_exists(&store, "docs_c"));
        assert_eq!(store.count("c", &Filter::default()).unwrap(), 0);
        assert_eq!(
            store.find_one("c", &Filter::eq("id", "a"), None).unwrap(),
            None
        );
        assert_eq!(
            store
                .query(
                    "c",
                    &Filter::default(),
                    Some(&Sort::by("id", false)),
                    Some(1),
                    0
                )
                .unwrap(),
            Vec::<Document>::new()
        );

        store.ensure_index("c", &["id", "version"], true).unwrap();
        store.insert("c", &a).unwrap();
        assert!(matches!(
            store.insert("c", &a),
            Err(StoreError::DuplicateKey(_))
        ));
        assert_eq!(store.count("c", &Filter::default()).unwrap(), 1);
        // The sort index named in the query is made again, not assumed.
        let page = store
            .query(
                "c",
                &Filter::default(),
                Some(&Sort::by("id", false)),
                Some(1),
                0,
            )
            .unwrap();
        assert_eq!(page, vec![a.clone()]);
        assert_eq!(store.count("c_more", &Filter::default()).unwrap(), 1);
        store
            .ensure_index("c_more", &["id", "version"], true)
            .unwrap();
        assert!(matches!(
            store.insert("c_more", &a),
            Err(StoreError::DuplicateKey(_))
        ));
    }

    /// Dropping a collection that was never written, in a database that does not exist yet, is no
    /// error and creates nothing.
    #[test]
    fn dropping_what_does_not_exist_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("never.db");
        let store = LocalSqliteDocumentStore::new(&path);
        store.drop_collection("c").unwrap();
        assert!(!path.exists());
        store.insert("other", &doc(json!({"id": 1}))).unwrap();
        store.drop_collection("c").unwrap();
        assert_eq!(store.count("other", &Filter::default()).unwrap(), 1);
    }

    /// A replace whose filter SQL decides (found by rowid, the old document unread) leaves the
    /// collection as the generic first-match replace does, and answers the same: first match in
    /// insertion order, upsert or not, and values SQL would confuse with a string (an object's or
    /// an array's JSON text, `true` for 1) left to the document check.
    #[test]
    fn a_replace_decided_in_sql_does_what_the_first_match_replace_does() {
        let dir = tempfile::tempdir().unwrap();
        let stored = [
            json!({"n": 0, "k": "a"}),
            json!({"n": 1, "k": "a"}),
            json!({"n": 2, "k": {"a": 1}}),
            json!({"n": 3, "k": ["a"]}),
            json!({"n": 4, "k": "[x]"}),
            json!({"n": 5, "k": true}),
            json!({"n": 6, "k": 1}),
            json!({"n": 7}),
            json!({"n": 8, "k": ["[x]"]}),
        ];
        let fill = |name: &str| {
            let store = LocalSqliteDocumentStore::new(dir.path().join(name));
            store.ensure_index("c", &["k"], false).unwrap();
            for d in &stored {
                store.insert("c", &doc(d.clone())).unwrap();
            }
            store
        };
        let filters = [
            Filter::eq("k", "a"),
            Filter::eq("k", r#"{"a":1}"#),
            Filter::eq("k", "[x]"),
            Filter::eq("k", 1),
            Filter::eq("k", "missing"),
            Filter::eq("k", "a").and("n", Predicate::Eq(json!(1))),
            Filter::default(),
        ];
        let probe = fill("probe.db");
        let decided = |f: &Filter| {
            probe
                .with_db(false, |db, path| db.first_rowid_decided(path, "c", f))
                .unwrap()
                .flatten()
        };
        assert_eq!(decided(&filters[0]), Some(Some(1)));
        assert_eq!(decided(&filters[4]), Some(None));
        assert_eq!(decided(&filters[1]), None);
        assert_eq!(decided(&filters[3]), None);
        for (i, filter) in filters.iter().enumerate() {
            for upsert in [false, true] {
                let fast = fill(&format!("fast-{i}-{upsert}.db"));
                let generic = fill(&format!("generic-{i}-{upsert}.db"));
                let new = doc(json!({"n": 100, "k": "new"}));
                let answered = fast.replace("c", filter, &new, upsert).unwrap();
                let expected = first_match::replace(&generic, "c", filter, &new, upsert).unwrap();
                assert_eq!(answered, expected, "{filter:?} upsert {upsert}");
                assert_eq!(
                    fast.read_matching("c", &Filter::default()).unwrap(),
                    generic.read_matching("c", &Filter::default()).unwrap(),
                    "{filter:?} upsert {upsert}"
                );
            }
        }
    }

    /// Deleting every match in one transaction leaves the collection as deleting them one by one
    /// does and says exactly how many went, whether SQL decides the filter (a membership on an
    /// indexed field), narrows it (with a condition only a document answers), or leaves it all to
    /// the documents; values SQL would confuse with a string stay, as they match nothing.
    #[test]
    fn delete_all_deletes_what_deleting_one_by_one_does() {
        let dir = tempfile::tempdir().unwrap();
        let stored = [
            json!({"id": "a", "status": "completed"}),
            json!({"id": "b", "status": "running"}),
            json!({"id": "a", "status": "failed"}),
            json!({"id": "c", "status": "completed"}),
            json!({"id": ["a"], "status": "completed"}),
            json!({"id": "[\"a\"]", "status": "completed"}),
            json!({"id": "b"}),
            json!({"status": "completed"}),
        ];
        let fill = |name: &str| {
            let store = LocalSqliteDocumentStore::new(dir.path().join(name));
            store.ensure_index("c", &["id"], false).unwrap();
            for d in &stored {
                store.insert("c", &doc(d.clone())).unwrap();
            }
            store
        };
        let members = Predicate::In(vec![json!("a"), json!("b"), json!("none")]);
        let filters = [
            Filter::default().and("id", members.clone()),
            Filter::default()
                .and("id", members)
                .and("status", Predicate::Ne(json!("running"))),
            Filter::eq("status", "completed"),
            Filter::eq("id", "none"),
            Filter::default(),
        ];
        let probe = fill("probe.db");
        let decided = |f: &Filter| {
            probe
                .with_db(false, |db, path| db.count_decided(path, "c", f))
                .unwrap()
                .flatten()
                .is_some()
        };
        assert!(decided(&filters[0]) && !decided(&filters[1]) && !decided(&filters[2]));
        for (i, filter) in filters.iter().enumerate() {
            let fast = fill(&format!("fast-{i}.db"));
            let generic = fill(&format!("generic-{i}.db"));
            let expected = generic.count("c", filter).unwrap();
            let deleted = fast.delete_all("c", filter).unwrap();
            assert_eq!(deleted, expected, "{filter:?}");
            assert_eq!(
                agent_env_store::document::delete_matches_one_by_one(&generic, "c", filter)
                    .unwrap(),
                expected,
                "{filter:?}"
            );
            assert_eq!(
                fast.read_matching("c", &Filter::default()).unwrap(),
                generic.read_matching("c", &Filter::default()).unwrap(),
                "{filter:?}"
            );
            assert_eq!(fast.count("c", filter).unwrap(), 0, "{filter:?}");
            assert_eq!(fast.delete_all("c", filter).unwrap(), 0, "{filter:?}");
        }
    }

    /// Deleting from a database or a collection that was never written deletes nothing and
    /// creates nothing.
    #[test]
    fn delete_all_of_what_does_not_exist_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("never.db");
        let store = LocalSqliteDocumentStore::new(&path);
        assert_eq!(store.delete_all("c", &Filter::default()).unwrap(), 0);
        assert!(!path.exists());
        store.insert("other", &doc(json!({"id": 1}))).unwrap();
        assert_eq!(store.delete_all("c", &Filter::default()).unwrap(), 0);
        assert!(!table_exists(&store, "docs_c"));
        assert_eq!(store.count("other", &Filter::default()).unwrap(), 1);
    }

    /// The keys-first page is the page the whole-document path gives, for values of every JSON type
    /// (and absent ones), both directions, several keys, and windows that cut through ties.
    #[test]
    fn a_page_read_by_its_keys_is_the_page_the_whole_documents_give() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalSqliteDocumentStore::new(dir.path().join("d.db"));
        let values = [
            json!(3),
            json!(1.5),
            json!("b"),
            json!("a"),
            json!(true),
            json!(false),
            json!(null),
            json!({"x": 1}),
            json!([2, 1]),
            json!(-7),
            json!("2026-12-04T06:00:00Z"),
        ];
        let mut n = 0;
        for (i, a) in values.iter().enumerate() {
            for b in [json!(1), json!("z"), Value::Null] {
                let mut d = doc(json!({"id": format!("d{n}"), "pad": "x".repeat(100)}));
                if i % 4 != 3 {
                    d.insert("a".into(), a.clone());
                }
                if !b.is_null() {
                    d.insert("b".into(), b);
                }
                store.insert("c", &d).unwrap();
                n += 1;
            }
        }
        for sort in [
            Sort::by("a", false),
            Sort::by("a", true),
            Sort::by("a", true).then("b", false),
            Sort::by("b", false).then("a", true).then("id", false),
        ] {
            for (limit, offset) in [(5, 0), (7, 3), (100, 0), (4, 30)] {
                let fast = store
                    .query("c", &Filter::default(), Some(&sort), Some(limit), offset)
                    .unwrap();
                let whole = eval::window(
                    store.read_matching("c", &Filter::default()).unwrap(),
                    Some(&sort),
                    eval::query_order,
                    Some(limit),
                    offset,
                );
                assert_eq!(fast, whole, "{sort:?} limit {limit} offset {offset}");
            }
        }
    }

    /// A sorted page of the documents an indexed equality or membership selects is read by its
    /// keys too (SQL decides the filter), and is the page the whole documents give; a filter SQL
    /// cannot decide is still answered whole.
    #[test]
    fn a_filtered_page_read_by_its_keys_is_the_page_the_whole_documents_give() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalSqliteDocumentStore::new(dir.path().join("d.db"));
        store.ensure_index("c", &["task"], false).unwrap();
        for n in 0..60 {
            let task = ["a", "b", "c"][n % 3];
            store
                .insert("c", &doc(json!({"task": task, "at": (n * 7) % 60, "n": n})))
                .unwrap();
        }
        store
            .insert("c", &doc(json!({"task": ["a"], "at": 99, "n": 99})))
            .unwrap();
        let sort = Sort::by("at", true);
        let filters = [
            Filter::eq("task", "a"),
            Filter::default().and("task", Predicate::In(vec![json!("a"), json!("c")])),
            Filter::eq("task", "a").and("n", Predicate::Gte(json!(10))),
            Filter::eq("task", "none"),
        ];
        let decided = |f: &Filter| {
            store
                .with_db(false, |db, path| {
                    db.sort_keys(path, "c", &["at"], f).map(|k| k.is_some())
                })
                .unwrap()
                .unwrap()
        };
        assert!(decided(&filters[0]) && decided(&filters[1]) && decided(&filters[3]));
        assert!(!decided(&filters[2]));
        for filter in &filters {
            let all = store.read_matching("c", filter).unwrap();
            assert_eq!(
                store.count("c", filter).unwrap(),
                all.len() as u64,
                "{filter:?}"
            );
        }
        for filter in &filters {
            for (limit, offset) in [(3, 0), (5, 4), (100, 0)] {
                let fast = store
                    .query("c", filter, Some(&sort), Some(limit), offset)
                    .unwrap();
                let whole = eval::window(
                    store
                        .read_matching("c", filter)
                        .unwrap()
                        .into_iter()
                        .filter(|d| d["task"].is_string())
                        .collect(),
                    Some(&sort),
                    eval::query_order,
                    Some(limit),
                    offset,
                );
                assert_eq!(fast, whole, "{filter:?} limit {limit} offset {offset}");
            }
        }
    }

    /// A listing's order, kept between its pages, is used while nothing changes (no key is read
    /// again) and read again after any change: this store's insert, update or drop, and another
    /// connection's insert; every page is the page the whole documents give.
    #[test]
    fn a_kept_order_is_read_again_once_the_collection_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.db");
        let store = LocalSqliteDocumentStore::new(&path);
        for n in 0..20 {
            store
                .insert("c", &doc(json!({"n": n % 7, "i": n})))
                .unwrap();
        }
        let sort = Sort::by("n", false);
        let page = |limit: usize, offset: usize| {
            let fast = store
                .query("c", &Filter::default(), Some(&sort), Some(limit), offset)
                .unwrap();
            let whole = eval::window(
                store.read_matching("c", &Filter::default()).unwrap(),
                Some(&sort),
                eval::query_order,
                Some(limit),
                offset,
            );
            assert_eq!(fast, whole, "limit {limit} offset {offset}");
            fast
        };
        // Deep enough to keep the whole order at once; then other windows read no key.
        page(3, 15);
        let ordered = store.key_orderings();
        for (limit, offset) in [(3, 0), (5, 7), (1, 19), (4, 30)] {
            page(limit, offset);
        }
        assert_eq!(store.key_orderings(), ordered);

        store.insert("c", &doc(json!({"n": -1, "i": 20}))).unwrap();
        assert_eq!(page(1, 0)[0]["n"], json!(-1));
        page(3, 15);

        let other = LocalSqliteDocumentStore::new(&path);
        other.insert("c", &doc(json!({"n": -2, "i": 21}))).unwrap();
        assert_eq!(page(1, 0)[0]["n"], json!(-2));
        page(3, 15);

        let raised = store
            .update(
                "c",
                &Filter::eq("i", 21),
                &UpdateSpec::default().set("n", 100),
                false,
            )
            .unwrap();
        assert_eq!(raised, 1);
        assert_eq!(page(1, 21)[0]["n"], json!(100));
        page(3, 15);

        other.delete("c", &Filter::eq("i", 20)).unwrap();
        assert_eq!(page(1, 0)[0]["n"], json!(0));
        page(3, 15);

        // Dropping a table and making it again changes no row.
        store.drop_collection("c").unwrap();
        store.ensure_index("c", &["i"], false).unwrap();
        assert_eq!(page(3, 15), Vec::<Document>::new());
        store.insert("c", &doc(json!({"n": 5, "i": 0}))).unwrap();
        assert_eq!(page(3, 0).len(), 1);
    }
}
