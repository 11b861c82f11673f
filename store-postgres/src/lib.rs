//! `PostgresDocumentStore`: agent-env's document store in a PostgreSQL database, chosen with
//! `[stores.document] impl = "PostgresDocumentStore"` and a `dsn`, so that a team shares tasks and
//! results. It answers queries exactly as the local SQLite store does: the candidates a filter's string
//! equalities select in SQL are matched, sorted and windowed by the store API's own evaluator. A page
//! of a listing reads the sort fields of every candidate and the documents of the page alone.
//!
//! - `dsn`: the setting, parsed once and shown without its password;
//! - `access`: what `config check` asks beyond a login: whether the user may create the tables;
//! - `pool`: a few connections reused across calls, made and used through `blocking`, which runs them
//!   all on one async runtime (the explorer's when there is one) and starts nothing until the store is
//!   used;
//! - `sql`: tables, indexes and the matching scan;
//! - `page`: a window of a sorted listing, reading the sort fields of every match and the documents of
//!   the window alone;
//! - `errors`: PostgreSQL's errors as store errors that say what to do.
//!
//! Every read-modify-write (update, replace, delete, a delete of every match, upsert) and every insert
//! runs in one transaction holding an advisory lock on its collection, so writers in any number of
//! processes never lose an update and an upsert never inserts twice. Tables and indexes are created on
//! first use under a lock of their own, so two processes creating the same collection both succeed.

#![warn(missing_docs)]

mod access;
mod blocking;
mod dsn;
mod errors;
mod page;
mod pool;
mod sql;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use agent_env_store::document::eval;
use agent_env_store::document::first_match::{
    self, post_image, Change, FirstMatchWriter, Images, UpsertDoc,
};
use agent_env_store::document::ids;
use agent_env_store::document::query::{Document, Filter, Sort, UpdateSpec};
use agent_env_store::document::DocumentStore;
use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::SettingsProblems;

pub use crate::blocking::share_runtime;
use crate::blocking::{CallError, Connection, Transaction};
use crate::dsn::Dsn;
use crate::errors::{is_unique_violation, pg_error};
use crate::pool::Pool;
use crate::sql::{Rows, Table};

/// The class name, as `[stores.document] impl` names it.
pub const CLASS: &str = "PostgresDocumentStore";
/// The keys its config table takes: `dsn` (required) and `schema` (default `public`).
pub const CONFIG_KEYS: [&str; 2] = ["dsn", "schema"];
/// The keys its config table must hold.
pub const REQUIRED_KEYS: [&str; 1] = ["dsn"];
/// The schema its tables go in when the config table sets no `schema`.
pub const DEFAULT_SCHEMA: &str = "public";

/// Where a store of `dsn` and `schema` (default `public`) keeps its documents, as `host:port/database`
/// and the schema: what tells two such stores apart, never with the password. `None` for a dsn that
/// does not parse (the store built from it names the problem).
pub fn place(dsn: &str, schema: Option<&str>) -> Option<(String, String)> {
    let dsn = Dsn::parse(dsn).ok()?;
    Some((dsn.shown, schema.unwrap_or("public").to_string()))
}

/// Documents in one PostgreSQL database.
pub struct PostgresDocumentStore {
    pool: Pool,
    schema: String,
    /// Tables known to exist: a positive answer is kept until this store drops the collection.
    tables: Mutex<HashSet<String>>,
    /// Indexes this store made sure of, by table (forgotten with a table it drops): `ensure_index` is
    /// called on every run of a task, and each check is a transaction on the server.
    indexes: Mutex<HashMap<String, HashSet<String>>>,
    /// Whole documents read from the server, for [`PostgresDocumentStore::documents_read`].
    documents_read: AtomicU64,
    /// The last sorted listing's order, while its rows stay as they were.
    kept: Mutex<page::KeptOrder>,
}

impl std::fmt::Debug for PostgresDocumentStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(CLASS)
            .field("server", &self.pool.shown())
            .field("schema", &self.schema)
            .finish()
    }
}

impl PostgresDocumentStore {
    /// A store for the database `dsn` names, its tables in `schema` (default `public`). The DSN is
    /// parsed now; nothing connects until the first call. Both settings are checked, so the error names
    /// every problem, each as `PostgresDocumentStore: <key> …`.
    pub fn new(dsn: &str, schema: Option<&str>) -> Result<PostgresDocumentStore, SettingsProblems> {
        PostgresDocumentStore::new_read_from(dsn, schema, None)
    }

    /// As [`PostgresDocumentStore::new`], for a dsn the config file names by a reference that read it
    /// from `dsn_read_from` (`the environment variable TEAM_PG_DSN`, `the secret team-pg-dsn`): what a
    /// dsn that does not parse, a refused login or a server that cannot be reached tells the user to
    /// fix names that place, never the value.
    pub fn new_read_from(
        dsn: &str,
        schema: Option<&str>,
        dsn_read_from: Option<&str>,
    ) -> Result<PostgresDocumentStore, SettingsProblems> {
        let mut problems = SettingsProblems::new();
        let dsn = problems.keep(Dsn::parse_read_from(dsn, dsn_read_from));
        let schema = schema.unwrap_or(DEFAULT_SCHEMA).to_string();
        if schema.is_empty() {
            problems.push(format!(
                "{CLASS}: schema must name a schema, got an empty string"
            ));
        }
        match dsn {
            Some(dsn) if problems.is_empty() => Ok(PostgresDocumentStore {
                pool: match dsn_read_from {
                    Some(from) => Pool::new(dsn).dsn_read_from(from.to_string()),
                    None => Pool::new(dsn),
                },
                schema,
                tables: Mutex::new(HashSet::new()),
                indexes: Mutex::new(HashMap::new()),
                documents_read: AtomicU64::new(0),
                kept: Mutex::new(page::KeptOrder::default()),
            }),
            _ => Err(problems),
        }
    }

    /// The store, saying in what a refused login (or a missing database) tells the user to fix that
    /// the dsn was read from `from` (`the environment variable TEAM_PG_DSN`, `the secret team-pg-dsn`),
    /// where the config file names it by a reference: the place to fix it, never its value.
    pub fn dsn_read_from(self, from: impl Into<String>) -> PostgresDocumentStore {
        PostgresDocumentStore {
            pool: self.pool.dsn_read_from(from.into()),
            ..self
        }
    }

    /// Connects and asks the server, read-only, whether the dsn's user may create the store's tables in
    /// its schema (or create the schema, when it does not exist yet): what `agent-env config check` runs
    /// before any work. A user who may not is a [`StoreError::Config`] naming the user, the schema and the
    /// grant to ask for.
    pub fn check_connection(&self) -> StoreResult<()> {
        let client = self.pool.get()?;
        let found = access::privileges(&client, self.pool.shown(), &self.schema)?;
        match access::problem(&found, self.pool.shown(), &self.schema) {
            Some(problem) => Err(problem),
            None => Ok(()),
        }
    }

    /// How many whole documents this store has read from the server so far (a query's sort fields
    /// alone are not counted): what shows that a page of a listing reads its own documents only.
    pub fn documents_read(&self) -> u64 {
        self.documents_read.load(Ordering::Relaxed)
    }

    /// How many times this store has read a listing's sort keys and put them in order; the next page
    /// of a listing whose rows have not changed is read without.
    pub fn listings_ordered(&self) -> u64 {
        self.kept.lock().map_or(0, |k| k.orderings())
    }

    /// The rows of `table` read through `client`.
    fn rows<'a, C>(&'a self, client: &'a C, table: &'a Table, collection: &'a str) -> Rows<'a, C> {
        Rows {
            client,
            shown: self.pool.shown(),
            table,
            collection,
            documents_read: &self.documents_read,
        }
    }

    fn table(&self, collection: &str) -> Table {
        Table::new(&self.schema, collection)
    }

    fn known(&self, table: &Table) -> bool {
        self.tables
            .lock()
            .map(|t| t.contains(&table.qualified))
            .unwrap_or(false)
    }

    fn remember(&self, table: &Table) {
        if let Ok(mut tables) = self.tables.lock() {
            tables.insert(table.qualified.clone());
        }
    }

    /// Forgets what this store knew of a table it dropped: that it existed, and its indexes.
    fn forget(&self, table: &Table) {
        if let Ok(mut tables) = self.tables.lock() {
            tables.remove(&table.qualified);
        }
        if let Ok(mut indexes) = self.indexes.lock() {
            indexes.remove(&table.qualified);
        }
        if let Ok(mut kept) = self.kept.lock() {
            kept.forget(&table.qualified);
        }
    }

    /// Whether the collection's table exists (asking the server until it does).
    fn exists(&self, client: &Connection, table: &Table) -> StoreResult<bool> {
        if self.known(table) {
            return Ok(true);
        }
        let row = client
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table.qualified])
            .map_err(|e| pg_error(self.pool.shown(), &e))?;
        let found: bool = row.get(0);
        if found {
            self.remember(table);
        }
        Ok(found)
    }

    /// Creates the collection's table (and its containment index) unless it exists. Asked first, as
    /// creating "if not exists" still needs to own the table: a second user of a shared database,
    /// granted the right to write it, was refused ("must be owner of table").
    fn ensure_table(&self, client: &mut Connection, table: &Table) -> StoreResult<()> {
        if self.exists(client, table)? {
            return Ok(());
        }
        sql::run_ddl(
            client,
            self.pool.shown(),
            &sql::create_table(&self.schema, table),
        )?;
        self.remember(table);
        Ok(())
    }

    fn read_matching(&self, collection: &str, filter: &Filter) -> StoreResult<Vec<Document>> {
        let table = self.table(collection);
        let client = self.pool.get()?;
        if !self.exists(&client, &table)? {
            return Ok(Vec::new());
        }
        Ok(self
            .rows(&*client, &table, collection)
            .matching(filter)?
            .into_iter()
            .map(|(_, doc)| doc)
            .collect())
    }

    /// The documents `offset..offset + limit` (`limit` above 0) of those that match `filter` in
    /// `sort`'s order ([`page::window`]), read in one snapshot when it takes two statements.
    fn read_window(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
        limit: usize,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        let shown = self.pool.shown();
        let table = self.table(collection);
        let mut client = self.pool.get()?;
        if !self.exists(&client, &table)? {
            return Ok(Vec::new());
        }
        if page::in_one_statement(filter, sort) {
            let rows = self.rows(&*client, &table, collection);
            return page::window(&rows, &self.kept, filter, sort, limit, offset);
        }
        let tx = client.snapshot().map_err(|e| pg_error(shown, &e))?;
        let page = page::window(
            &self.rows(&tx, &table, collection),
            &self.kept,
            filter,
            sort,
            limit,
            offset,
        )?;
        tx.commit().map_err(|e| pg_error(shown, &e))?;
        Ok(page)
    }

    /// Runs `f` in a transaction holding the collection's write lock, creating its table first.
    fn write<T>(
        &self,
        collection: &str,
        f: impl FnOnce(&Transaction<'_>, &Table) -> StoreResult<T>,
    ) -> StoreResult<T> {
        let shown = self.pool.shown();
        let table = self.table(collection);
        let mut client = self.pool.get()?;
        self.ensure_table(&mut client, &table)?;
        let tx = client.transaction().map_err(|e| pg_error(shown, &e))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&table.write_lock()])
            .map_err(|e| pg_error(shown, &e))?;
        let out = f(&tx, &table)?;
        tx.commit().map_err(|e| pg_error(shown, &e))?;
        Ok(out)
    }

    fn duplicate(&self, collection: &str, err: &CallError) -> StoreError {
        if is_unique_violation(err) {
            let detail = match err {
                CallError::Postgres(e) => e.as_db_error().map(|d| d.message().to_string()),
                CallError::TimedOut(_) => None,
            }
            .unwrap_or_default();
            return StoreError::DuplicateKey(format!(
                "a document in '{collection}' repeats the fields of a unique index ({detail})"
            ));
        }
        pg_error(self.pool.shown(), err)
    }

    fn insert_row(
        &self,
        tx: &Transaction<'_>,
        table: &Table,
        collection: &str,
        doc: &Document,
    ) -> StoreResult<()> {
        let value = serde_json::Value::Object(doc.clone());
        tx.execute(
            &format!("INSERT INTO {} (doc) VALUES ($1)", table.qualified),
            &[&value],
        )
        .map_err(|e| self.duplicate(collection, &e))?;
        Ok(())
    }
}

/// The ids of the rows that match `filter`, read without a whole document: those the narrowing
/// selects when it decides the filter, else those whose top-level fields the filter's paths start
/// with match it (as `count` decides).
fn matching_ids<C: blocking::Queries>(
    rows: &Rows<'_, C>,
    filter: &Filter,
) -> StoreResult<Vec<i64>> {
    let narrowing = sql::narrowing(filter);
    let fields = match narrowing.decides {
        true => Vec::new(),
        false => {
            let paths: Vec<&str> = filter.conditions.keys().map(String::as_str).collect();
            page::top_level_fields(&paths)
        }
    };
    let (keyed, _) = rows.projections(&narrowing, &fields)?;
    Ok(keyed
        .into_iter()
        .filter(|(_, doc)| narrowing.decides || eval::matches(doc, filter))
        .map(|(id, _)| id)
        .collect())
}

impl FirstMatchWriter for PostgresDocumentStore {
    /// In one transaction holding the collection's write lock.
    fn change_first(
        &self,
        collection: &str,
        filter: &Filter,
        change: &Change<'_>,
        upsert_doc: Option<UpsertDoc<'_>>,
    ) -> StoreResult<Images> {
        self.write(collection, |tx, table| {
            let first = self
                .rows(tx, table, collection)
                .matching(filter)?
                .into_iter()
                .next();
            let Some((id, before)) = first else {
                return match upsert_doc {
                    Some(make) => {
                        let doc = make()?;
                        self.insert_row(tx, table, collection, &doc)?;
                        Ok((None, Some(doc)))
                    }
                    None => Ok((None, None)),
                };
            };
            let after = post_image(&before, change)?;
            match &after {
                Some(doc) => {
                    let value = serde_json::Value::Object(doc.clone());
                    tx.execute(
                        &format!("UPDATE {} SET doc = $1 WHERE id = $2", table.qualified),
                        &[&value, &id],
                    )
                    .map_err(|e| self.duplicate(collection, &e))?;
                }
                None => {
                    tx.execute(
                        &format!("DELETE FROM {} WHERE id = $1", table.qualified),
                        &[&id],
                    )
                    .map_err(|e| self.duplicate(collection, &e))?;
                }
            }
            Ok((Some(before), after))
        })
    }
}

impl DocumentStore for PostgresDocumentStore {
    fn find_one(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
    ) -> StoreResult<Option<Document>> {
        // The first in `query`'s order (of equals, the first inserted) is `eval::first`'s.
        Ok(self
            .read_window(collection, filter, sort, 1, 0)?
            .into_iter()
            .next())
    }

    fn query(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        match limit {
            Some(limit) if limit > 0 => self.read_window(collection, filter, sort, limit, offset),
            _ => {
                let docs = self.read_matching(collection, filter)?;
                Ok(eval::window(docs, sort, eval::query_order, limit, offset))
            }
        }
    }

    fn count(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        let table = self.table(collection);
        let client = self.pool.get()?;
        if !self.exists(&client, &table)? {
            return Ok(0);
        }
        page::count(&self.rows(&*client, &table, collection), filter)
    }

    fn insert(&self, collection: &str, doc: &Document) -> StoreResult<()> {
        self.write(collection, |tx, table| {
            self.insert_row(tx, table, collection, doc)
        })
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

    /// In one transaction holding the collection's write lock, as every write: the rows the
    /// filter's narrowing selects ([`sql::narrowing`]), kept when the evaluator matches their
    /// fields the filter names (all of them, when SQL decides the filter; no whole document is
    /// read either way), then deleted by id in one statement. All go or, on a failure, none.
    fn delete_all(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        self.write(collection, |tx, table| {
            let ids = matching_ids(&self.rows(tx, table, collection), filter)?;
            if ids.is_empty() {
                return Ok(0);
            }
            tx.execute(
                &format!("DELETE FROM {} WHERE id = ANY($1)", table.qualified),
                &[&ids],
            )
            .map_err(|e| pg_error(self.pool.shown(), &e))
        })
    }

    fn ensure_index(&self, collection: &str, fields: &[&str], unique: bool) -> StoreResult<()> {
        let table = self.table(collection);
        let statement = sql::create_index(&table, fields, unique)?;
        if self.indexes.lock().is_ok_and(|indexes| {
            indexes
                .get(&table.qualified)
                .is_some_and(|made| made.contains(&statement))
        }) {
            return Ok(());
        }
        let mut client = self.pool.get()?;
        self.ensure_table(&mut client, &table)?;
        // One that exists (made by another user of the database, say) is not made again: that would
        // need to own the table.
        let name = sql::index_name(&table, fields, unique);
        let made = client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = $2)",
                &[&self.schema, &name],
            )
            .map_err(|e| pg_error(self.pool.shown(), &e))?
            .get::<_, bool>(0);
        if !made {
            sql::run_ddl(&mut client, self.pool.shown(), std::slice::from_ref(&statement)).map_err(|e| match e {
            StoreError::DuplicateKey(_) => StoreError::DuplicateKey(format!(
                "a document in '{collection}' has the same {} as another, which the unique index on [{}] refuses",
                fields.join(", "),
                fields.join(", ")
            )),
            other => other,
        })?;
        }
        if let Ok(mut indexes) = self.indexes.lock() {
            indexes
                .entry(table.qualified.clone())
                .or_default()
                .insert(statement);
        }
        Ok(())
    }

    /// Drops the collection's table (its indexes go with it), under the schema-change lock.
    fn drop_collection(&self, collection: &str) -> StoreResult<()> {
        let table = self.table(collection);
        let mut client = self.pool.get()?;
        sql::run_ddl(&mut client, self.pool.shown(), &[sql::drop_table(&table)])?;
        self.forget(&table);
        Ok(())
    }

    fn probe(&self) -> StoreResult<()> {
        self.check_connection()
    }

    fn check_id(&self, id: &str) -> StoreResult<()> {
        ids::check_id(id)?;
        ids::check_not_encoded_local(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_is_its_server_database_and_schema_without_the_password() {
        let (server, schema) = place("postgres://u:hunter2@db.example:6543/team", None).unwrap();
        assert_eq!(
            (server.as_str(), schema.as_str()),
            ("db.example:6543/team", "public")
        );
        let keyed = place(
            "host=db.example port=6543 dbname=team password=hunter2",
            Some("s"),
        );
        assert_eq!(keyed, Some(("db.example:6543/team".into(), "s".into())));
        assert_eq!(place("mysql://nowhere", None), None);
    }

    #[test]
    fn a_bad_dsn_and_an_empty_schema_are_named_in_one_error() {
        let problems = |dsn: &str, schema: Option<&str>| -> Vec<String> {
            PostgresDocumentStore::new(dsn, schema)
                .err()
                .map(|e| e.iter().map(String::from).collect())
                .unwrap_or_default()
        };
        let dsn_alone = problems("mysql://nowhere", None);
        assert_eq!(dsn_alone.len(), 1, "{dsn_alone:?}");
        assert!(
            dsn_alone[0].starts_with("PostgresDocumentStore: dsn does not parse"),
            "{dsn_alone:?}"
        );
        let schema_alone = "PostgresDocumentStore: schema must name a schema, got an empty string";
        assert_eq!(
            problems("mysql://nowhere", Some("")),
            [dsn_alone[0].as_str(), schema_alone]
        );
        assert_eq!(
            problems("postgresql://u@127.0.0.1/db", Some("")),
            [schema_alone]
        );
        let both = PostgresDocumentStore::new("mysql://nowhere", Some(""))
            .err()
            .map(|e| StoreError::from(e).to_string());
        assert_eq!(both, Some(format!("{}; {schema_alone}", dsn_alone[0])));
    }
}
