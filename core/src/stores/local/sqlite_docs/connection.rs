//! The SQLite side of the local document store: opening lazily (WAL, 5 s busy timeout), naming tables and
//! indexes, reading candidate rows, and mapping SQLite errors to store errors.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{params_from_iter, Connection, ErrorCode, OptionalExtension};
use serde_json::Value;

use agent_env_store::document::eval;
use agent_env_store::document::query::{Document, Filter, Predicate};
use agent_env_store::error::{StoreError, StoreResult};

use super::kept_order::{KeptOrder, Stamp};
use super::keys_query::KeysQuery;

/// How long a write waits for another process's write lock.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Keeps the write-ahead log file (emptied on close) when the last connection closes, so
/// that the next process neither creates it again nor syncs the folder for the new file: a CLI
/// process opens the store once per invocation. The checkpoint on close still runs, so no process
/// ever has a log to recover. Best effort: the store works the same without it.
fn keep_write_ahead_log(conn: &Connection) {
    let mut keep: std::os::raw::c_int = 1;
    // SAFETY: the handle is this open connection's; SQLITE_FCNTL_PERSIST_WAL reads and writes one
    // int through the pointer, which lives across the call; "main" is a NUL-terminated name.
    unsafe {
        rusqlite::ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            rusqlite::ffi::SQLITE_FCNTL_PERSIST_WAL,
            (&mut keep as *mut std::os::raw::c_int).cast(),
        );
    }
}

/// Prepared statements kept per connection.
const STATEMENT_CACHE: usize = 64;

/// One open database and what this connection has learnt about it.
pub struct Db {
    pub conn: Connection,
    /// Tables known to exist: a positive answer is kept until this connection drops the table
    /// ([`Db::drop_table`]); a table dropped by another process is not noticed (dropping is meant
    /// for a collection no one else is using).
    tables: HashSet<String>,
    /// Indexes this connection has created or found by name, so that the DDL runs once per process
    /// rather than once per call; forgotten with their table.
    ensured_indexes: HashSet<String>,
    /// Sort indexes this connection could not create (a read-only or busy database): not tried again.
    refused_indexes: HashSet<String>,
    /// Per table, the leading top-level fields of its indexes (those this process ensured and those
    /// it found): an equality on one narrows the scan in SQL.
    leading_fields: HashMap<String, HashSet<String>>,
    /// The order of the last sorted listing read (its rows' ids), while the database holds still.
    pub kept: KeptOrder,
}

/// What [`Db::sort_keys_query`] finds.
pub enum SortKeys {
    /// The collection has no table yet: it holds nothing.
    NoTable,
    /// SQL does not decide the filter: the documents must be read whole.
    Undecided,
    /// The statement that reads the keys.
    Query(KeysQuery),
}

/// What [`Db::narrowing`] makes of a filter.
struct Narrowing {
    /// ` WHERE …` with numbered parameters, or empty.
    where_sql: String,
    /// The parameters, in order.
    args: Vec<rusqlite::types::Value>,
    /// Whether the rows SQL selects are exactly the filter's matches.
    decides: bool,
}

impl Db {
    /// Opens (creating) the database file, switches it to WAL (retrying while another process holds
    /// it, up to 5 s) and sets the busy timeout.
    pub fn open(path: &Path) -> StoreResult<Db> {
        let conn = Connection::open(path).map_err(|e| sqlite_error(path, &e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| sqlite_error(path, &e))?;
        let started = Instant::now();
        loop {
            let mode: Result<String, _> =
                conn.query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0));
            match mode {
                Ok(_) => break,
                Err(e) if is_busy(&e) && started.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(sqlite_error(path, &e)),
            }
        }
        // In WAL mode NORMAL never corrupts the database; a power cut may lose the last commits, which is
        // the usual trade for not syncing on every commit (FULL made each insert wait for the disk).
        conn.execute_batch("PRAGMA synchronous=NORMAL")
            .map_err(|e| sqlite_error(path, &e))?;
        // With the log kept (below), a limit makes the last connection's close empty it: the next
        // process then has no frames to read back. 4 MiB is about the automatic checkpoint's size.
        conn.execute_batch("PRAGMA journal_size_limit=4194304")
            .map_err(|e| sqlite_error(path, &e))?;
        keep_write_ahead_log(&conn);
        // Each collection has a handful of statements; a run touches a few collections.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Ok(Db {
            conn,
            ensured_indexes: HashSet::new(),
            refused_indexes: HashSet::new(),
            tables: HashSet::new(),
            leading_fields: HashMap::new(),
            kept: KeptOrder::default(),
        })
    }

    /// Runs one statement (no rows), prepared once per connection.
    pub fn run(&self, sql: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize> {
        self.conn.prepare_cached(sql)?.execute(params)
    }

    /// Whether the collection's table exists (asking SQLite until it does).
    pub fn has_table(&mut self, path: &Path, table: &str) -> StoreResult<bool> {
        if self.tables.contains(table) {
            return Ok(true);
        }
        let found: Option<i64> = self
            .conn
            .query_row(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| sqlite_error(path, &e))?;
        if found.is_some() {
            self.tables.insert(table.to_string());
            self.learn_indexes(path, table)?;
        }
        Ok(found.is_some())
    }

    /// Records the leading fields of the indexes the table already has (created by an earlier
    /// process), so that a process which only reads still narrows its scans in SQL.
    fn learn_indexes(&mut self, path: &Path, table: &str) -> StoreResult<()> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?1 AND sql IS NOT NULL",
            )
            .map_err(|e| sqlite_error(path, &e))?;
        let sqls: Vec<String> = stmt
            .query_map([table], |row| row.get(0))
            .map_err(|e| sqlite_error(path, &e))?
            .collect::<Result<_, _>>()
            .map_err(|e| sqlite_error(path, &e))?;
        for sql in sqls {
            if let Some(field) = leading_field_of(&sql) {
                self.leading_fields
                    .entry(table.to_string())
                    .or_default()
                    .insert(field);
            }
        }
        Ok(())
    }

    /// Creates the collection's table if needed.
    pub fn ensure_table(&mut self, path: &Path, table: &str) -> StoreResult<()> {
        if self.tables.contains(table) {
            return Ok(());
        }
        self.conn
            .execute_batch(&format!(
                "CREATE TABLE IF NOT EXISTS \"{table}\" (doc TEXT NOT NULL)"
            ))
            .map_err(|e| sqlite_error(path, &e))?;
        self.tables.insert(table.to_string());
        self.learn_indexes(path, table)
    }

    /// Drops the collection's table, its indexes with it (none when it does not exist), and forgets
    /// what this connection knew of them, so that the next write creates the table again and the next
    /// `ensure_index` the index.
    pub fn drop_table(&mut self, path: &Path, collection: &str) -> StoreResult<()> {
        let table = table_name(collection);
        self.conn
            .execute_batch(&format!("DROP TABLE IF EXISTS \"{table}\""))
            .map_err(|e| sqlite_error(path, &e))?;
        self.forget(&table);
        Ok(())
    }

    /// Forgets `table`, its leading fields, and the indexes named after it. An index name is
    /// `<table>_<fields>_<kind>`, so the names of a table whose name starts with this one's
    /// (`docs_a_b` beside `docs_a`) match too: those are only made again, idempotently, on their next use.
    fn forget(&mut self, table: &str) {
        let prefix = format!("{table}_");
        self.tables.remove(table);
        self.leading_fields.remove(table);
        // Dropping a table is not among the changes a stamp counts.
        self.kept.forget();
        self.ensured_indexes
            .retain(|name| !name.starts_with(&prefix));
        self.refused_indexes
            .retain(|name| !name.starts_with(&prefix));
        // Statements prepared on the dropped table are of no more use.
        self.conn.flush_prepared_statement_cache();
    }

    /// Creates an expression index on `fields` (unique or not), idempotently.
    pub fn ensure_index(
        &mut self,
        path: &Path,
        collection: &str,
        fields: &[&str],
        unique: bool,
    ) -> StoreResult<()> {
        let table = table_name(collection);
        self.ensure_table(path, &table)?;
        let name = format!(
            "{table}_{}_{}",
            sanitize(&fields.join("_")),
            if unique { "unique" } else { "index" }
        );
        if self.ensured_indexes.contains(&name) {
            return Ok(());
        }
        let exprs = fields
            .iter()
            .map(|f| json_extract(f))
            .collect::<StoreResult<Vec<_>>>()?;
        self.create_index(&name, &table, &exprs, unique)
            .map_err(|e| index_error(path, collection, fields, &e))?;
        if let Some(first) = fields.first().filter(|f| !f.contains('.')) {
            self.leading_fields
                .entry(table)
                .or_default()
                .insert(first.to_string());
        }
        Ok(())
    }

    /// How many documents match `filter`, counted in SQL without parsing one, when SQL decides it
    /// ([`Db::narrowing`]); `None` when it does not.
    pub fn count_decided(
        &mut self,
        path: &Path,
        collection: &str,
        filter: &Filter,
    ) -> StoreResult<Option<u64>> {
        let table = table_name(collection);
        if !self.has_table(path, &table)? {
            return Ok(Some(0));
        }
        let Narrowing {
            where_sql,
            args,
            decides,
        } = self.narrowing(&table, filter)?;
        if !decides {
            return Ok(None);
        }
        self.conn
            .prepare_cached(&format!("SELECT count(*) FROM \"{table}\"{where_sql}"))
            .and_then(|mut stmt| stmt.query_row(params_from_iter(args), |row| row.get::<_, i64>(0)))
            .map(|n| Some(n.max(0) as u64))
            .map_err(|e| sqlite_error(path, &e))
    }

    /// How many documents the collection holds (0 when it was never written).
    pub fn count_all(&mut self, path: &Path, collection: &str) -> StoreResult<u64> {
        let table = table_name(collection);
        if !self.has_table(path, &table)? {
            return Ok(0);
        }
        self.conn
            .query_row(&format!("SELECT count(*) FROM \"{table}\""), [], |row| {
                row.get::<_, i64>(0)
            })
            .map(|n| n.max(0) as u64)
            .map_err(|e| sqlite_error(path, &e))
    }

    /// The sort keys of the rows that match `filter` ([`Db::read_sort_keys`]); `None` when SQL does
    /// not decide `filter`.
    #[cfg(test)]
    pub fn sort_keys(
        &mut self,
        path: &Path,
        collection: &str,
        fields: &[&str],
        filter: &Filter,
    ) -> StoreResult<Option<Vec<(i64, Document)>>> {
        match self.sort_keys_query(path, collection, fields, filter)? {
            SortKeys::NoTable => Ok(Some(Vec::new())),
            SortKeys::Undecided => Ok(None),
            SortKeys::Query(query) => self.read_sort_keys(path, &query, fields).map(Some),
        }
    }

    /// The statement that reads the sort keys of the rows that match `filter`
    /// ([`Db::read_sort_keys`]), or why there is none.
    pub fn sort_keys_query(
        &mut self,
        path: &Path,
        collection: &str,
        fields: &[&str],
        filter: &Filter,
    ) -> StoreResult<SortKeys> {
        let table = table_name(collection);
        if !self.has_table(path, &table)? {
            return Ok(SortKeys::NoTable);
        }
        let Narrowing {
            where_sql,
            args,
            decides,
        } = self.narrowing(&table, filter)?;
        if !decides {
            return Ok(SortKeys::Undecided);
        }
        let sql = self.sort_keys_sql(&table, fields, &where_sql)?;
        Ok(SortKeys::Query(KeysQuery { sql, args }))
    }

    /// Runs a [`Db::sort_keys_query`] statement: every matching row's top-level `fields`, in no
    /// particular order, as (rowid, a document of just those fields): what a sort needs, read
    /// without parsing whole documents in Rust (`json_type` beside the value keeps JSON's types: a
    /// boolean stays a boolean). Without a filter they come from a covering index of those
    /// expressions ([`Db::ensure_sort_index`]), so no document is parsed at all; with one SQL
    /// decides ([`Db::narrowing`], such as a task's instances by an indexed `task_id`), SQLite
    /// finds the rows by its index and parses only theirs, in C.
    pub fn read_sort_keys(
        &mut self,
        path: &Path,
        query: &KeysQuery,
        fields: &[&str],
    ) -> StoreResult<Vec<(i64, Document)>> {
        let mut stmt = self
            .conn
            .prepare_cached(&query.sql)
            .map_err(|e| sqlite_error(path, &e))?;
        let rows = stmt
            .query_map(params_from_iter(&query.args), |row| {
                let rowid = row.get::<_, i64>(0)?;
                let mut keys = Vec::with_capacity(fields.len());
                for i in 0..fields.len() {
                    let kind: Option<String> = row.get(1 + 2 * i)?;
                    let value: rusqlite::types::Value = row.get(2 + 2 * i)?;
                    keys.push((kind, value));
                }
                Ok((rowid, keys))
            })
            .map_err(|e| sqlite_error(path, &e))?;
        let mut out = Vec::new();
        for row in rows {
            let (rowid, keys) = row.map_err(|e| sqlite_error(path, &e))?;
            let mut doc = Document::new();
            for (field, (kind, value)) in fields.iter().zip(keys) {
                if let Some(value) = json_value(kind.as_deref(), value) {
                    doc.insert(field.to_string(), value);
                }
            }
            out.push((rowid, doc));
        }
        Ok(out)
    }

    /// What the database is now, as far as a kept order cares ([`Stamp`]).
    pub fn stamp(&self, path: &Path) -> StoreResult<Stamp> {
        let data_version = self
            .conn
            .prepare_cached("PRAGMA data_version")
            .and_then(|mut stmt| stmt.query_row([], |row| row.get::<_, i64>(0)))
            .map_err(|e| sqlite_error(path, &e))?;
        Ok(Stamp {
            data_version,
            own_changes: self.conn.total_changes(),
        })
    }

    /// The statement [`Db::read_sort_keys`] runs: each field's JSON type and value, for every row
    /// `where_sql` (` WHERE …`, or empty for all) selects.
    fn sort_keys_sql(
        &mut self,
        table: &str,
        fields: &[&str],
        where_sql: &str,
    ) -> StoreResult<String> {
        let mut columns = Vec::new();
        for field in fields {
            columns.push(json_type(field)?);
            columns.push(sql_value(field)?);
        }
        // SQLite's planner would scan the table and parse every document: the index is named. A
        // narrowed read is left to the planner, which finds its rows by the filter's index.
        let source = match where_sql.is_empty() {
            true => match self.ensure_sort_index(table, fields, &columns) {
                Some(index) => format!("\"{table}\" INDEXED BY \"{index}\""),
                None => format!("\"{table}\""),
            },
            false => format!("\"{table}\""),
        };
        Ok(format!(
            "SELECT rowid, {} FROM {source}{where_sql}",
            columns.join(", ")
        ))
    }

    /// Makes, once per process and sort, an index of exactly the expressions [`Db::read_sort_keys`]
    /// selects, and names it: SQLite then reads them from the index (a few dozen bytes a row)
    /// instead of parsing every document, which made a page of 50,000 task instances take 0.7 s.
    /// Each later write to the collection keeps the index up to date. Best effort: a database this
    /// process cannot write, or one that stays busy, is read without it (`None`), and the attempt
    /// is not repeated.
    fn ensure_sort_index(
        &mut self,
        table: &str,
        fields: &[&str],
        columns: &[String],
    ) -> Option<String> {
        let name = format!("{table}_sortkeys_{}", sanitize(&fields.join("_")));
        if self.ensured_indexes.contains(&name) {
            return Some(name);
        }
        if self.refused_indexes.contains(&name) {
            return None;
        }
        if self.create_index(&name, table, columns, false).is_err() {
            self.refused_indexes.insert(name);
            return None;
        }
        Some(name)
    }

    /// Creates the index `name` on `table` over `exprs` unless it exists, and remembers it as ensured.
    fn create_index(
        &mut self,
        name: &str,
        table: &str,
        exprs: &[String],
        unique: bool,
    ) -> rusqlite::Result<()> {
        let sql = format!(
            "CREATE {}INDEX IF NOT EXISTS \"{name}\" ON \"{table}\" ({})",
            if unique { "UNIQUE " } else { "" },
            exprs.join(", ")
        );
        self.conn.execute_batch(&sql)?;
        self.ensured_indexes.insert(name.to_string());
        Ok(())
    }

    /// The documents at `rowids`, in that order; a rowid no row has any more is skipped.
    pub fn by_rowids(
        &mut self,
        path: &Path,
        collection: &str,
        rowids: &[i64],
    ) -> StoreResult<Vec<Document>> {
        let table = table_name(collection);
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT doc FROM \"{table}\" WHERE rowid = ?1"))
            .map_err(|e| sqlite_error(path, &e))?;
        let mut out = Vec::with_capacity(rowids.len());
        for rowid in rowids {
            // A row another process deleted since its key was read is left out: the page is one
            // short, as if the delete had come first.
            let Some(text) = stmt
                .query_row([rowid], |row| row.get::<_, String>(0))
                .optional()
                .map_err(|e| sqlite_error(path, &e))?
            else {
                continue;
            };
            out.push(serde_json::from_str(&text).map_err(|e| {
                StoreError::Internal(format!(
                    "{}: a document in '{collection}' is not a JSON object: {e}",
                    path.display()
                ))
            })?);
        }
        Ok(out)
    }

    /// The SQL condition that narrows a scan of `table` for `filter`: an equality on each of the
    /// table's leading index fields the filter sets to a string or a number, or a membership in a
    /// list of strings (`In`, such as the instances of a few tasks). It decides the filter whole
    /// (no document need be parsed to check it) when every condition of the filter is one such
    /// equality or membership of strings that no object or array can equal in SQL: `json_extract`
    /// gives an object or array as its JSON text, and a number for `true`, `false` or `1.0`,
    /// none of which a document equality of a string matches.
    fn narrowing(&self, table: &str, filter: &Filter) -> StoreResult<Narrowing> {
        let mut clauses = Vec::new();
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        let mut decides = true;
        let leading = self.leading_fields.get(table);
        let plain = |s: &str| !s.starts_with(['{', '[']);
        for (field, predicates) in &filter.conditions {
            let indexed = leading.is_some_and(|fields| fields.contains(field));
            if !indexed {
                decides = false;
                continue;
            }
            let scalar = predicates.iter().find_map(|p| match p {
                Predicate::Eq(Value::String(s)) => Some(rusqlite::types::Value::Text(s.clone())),
                Predicate::Eq(Value::Number(n)) => Some(match n.as_i64() {
                    Some(i) => rusqlite::types::Value::Integer(i),
                    None => rusqlite::types::Value::Real(n.as_f64().unwrap_or(f64::NAN)),
                }),
                _ => None,
            });
            if let Some(value) = scalar {
                clauses.push(format!("{} = ?{}", json_extract(field)?, args.len() + 1));
                args.push(value);
                decides &= matches!(
                    predicates.as_slice(),
                    [Predicate::Eq(Value::String(s))] if plain(s)
                );
                continue;
            }
            // A list of plain strings only: SQL's `IN` of anything else could miss a match.
            let strings: Option<Vec<&str>> = match predicates.as_slice() {
                [Predicate::In(values)] if !values.is_empty() => values
                    .iter()
                    .map(|v| v.as_str().filter(|s| plain(s)))
                    .collect(),
                _ => None,
            };
            match strings {
                Some(strings) => {
                    let marks: Vec<String> = (0..strings.len())
                        .map(|i| format!("?{}", args.len() + 1 + i))
                        .collect();
                    clauses.push(format!(
                        "{} IN ({})",
                        json_extract(field)?,
                        marks.join(", ")
                    ));
                    args.extend(
                        strings
                            .into_iter()
                            .map(|s| rusqlite::types::Value::Text(s.to_string())),
                    );
                }
                None => decides = false,
            }
        }
        let where_sql = if clauses.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", clauses.join(" AND "))
        };
        Ok(Narrowing {
            where_sql,
            args,
            decides,
        })
    }

    /// The rowid of the first row (in insertion order) that matches `filter`, read without parsing a
    /// document, when SQL decides the filter whole (see [`Db::narrowing`]): `Some(None)` when no row
    /// matches, `None` when the filter needs [`Db::matching`] instead.
    pub fn first_rowid_decided(
        &mut self,
        path: &Path,
        collection: &str,
        filter: &Filter,
    ) -> StoreResult<Option<Option<i64>>> {
        let table = table_name(collection);
        if !self.has_table(path, &table)? {
            return Ok(None);
        }
        let Narrowing {
            where_sql,
            args,
            decides,
        } = self.narrowing(&table, filter)?;
        if !decides {
            return Ok(None);
        }
        let sql = format!("SELECT rowid FROM \"{table}\"{where_sql} ORDER BY rowid LIMIT 1");
        self.conn
            .prepare_cached(&sql)
            .and_then(|mut stmt| {
                stmt.query_row(params_from_iter(args), |row| row.get::<_, i64>(0))
                    .optional()
            })
            .map(Some)
            .map_err(|e| sqlite_error(path, &e))
    }

    /// The rowids of the rows of a collection that match `filter`, in insertion order: selected by
    /// SQL alone when it decides the filter whole (see [`Db::narrowing`]), no document read; else
    /// those [`Db::matching`] finds.
    pub fn matching_rowids(
        &mut self,
        path: &Path,
        collection: &str,
        filter: &Filter,
    ) -> StoreResult<Vec<i64>> {
        let table = table_name(collection);
        if !self.has_table(path, &table)? {
            return Ok(Vec::new());
        }
        let Narrowing {
            where_sql,
            args,
            decides,
        } = self.narrowing(&table, filter)?;
        if !decides {
            let found = self.matching(path, collection, filter)?;
            return Ok(found.into_iter().map(|(rowid, _)| rowid).collect());
        }
        let sql = format!("SELECT rowid FROM \"{table}\"{where_sql} ORDER BY rowid");
        let mut stmt = self
            .conn
            .prepare_cached(&sql)
            .map_err(|e| sqlite_error(path, &e))?;
        let rowids = stmt
            .query_map(params_from_iter(args), |row| row.get::<_, i64>(0))
            .map_err(|e| sqlite_error(path, &e))?
            .collect::<Result<Vec<i64>, _>>()
            .map_err(|e| sqlite_error(path, &e));
        rowids
    }

    /// Deletes the rows `rowids` of a collection; how many of them there were.
    pub fn delete_rowids(
        &mut self,
        path: &Path,
        collection: &str,
        rowids: &[i64],
    ) -> StoreResult<u64> {
        if rowids.is_empty() {
            return Ok(0);
        }
        let table = table_name(collection);
        let mut stmt = self
            .conn
            .prepare_cached(&format!("DELETE FROM \"{table}\" WHERE rowid = ?1"))
            .map_err(|e| sqlite_error(path, &e))?;
        let mut deleted = 0;
        for rowid in rowids {
            deleted += stmt.execute([rowid]).map_err(|e| sqlite_error(path, &e))? as u64;
        }
        Ok(deleted)
    }

    /// The rows of a collection that match `filter`, in insertion order, as (rowid, document).
    pub fn matching(
        &mut self,
        path: &Path,
        collection: &str,
        filter: &Filter,
    ) -> StoreResult<Vec<(i64, Document)>> {
        let table = table_name(collection);
        if !self.has_table(path, &table)? {
            return Ok(Vec::new());
        }
        let Narrowing {
            where_sql, args, ..
        } = self.narrowing(&table, filter)?;
        let sql = format!("SELECT rowid, doc FROM \"{table}\"{where_sql} ORDER BY rowid");
        let mut stmt = self
            .conn
            .prepare_cached(&sql)
            .map_err(|e| sqlite_error(path, &e))?;
        let rows = stmt
            .query_map(params_from_iter(args), |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(|e| sqlite_error(path, &e))?;
        let mut out = Vec::new();
        for row in rows {
            let (rowid, text) = row.map_err(|e| sqlite_error(path, &e))?;
            let doc: Document = serde_json::from_str(&text).map_err(|e| {
                StoreError::Internal(format!(
                    "{}: a document in '{collection}' is not a JSON object: {e}",
                    path.display()
                ))
            })?;
            if eval::matches(&doc, filter) {
                out.push((rowid, doc));
            }
        }
        Ok(out)
    }
}

/// A value `json_type` and `json_extract` read, as JSON: `None` when the field is absent.
fn json_value(kind: Option<&str>, value: rusqlite::types::Value) -> Option<Value> {
    use rusqlite::types::Value as Sql;
    Some(match (kind?, value) {
        ("null", _) => Value::Null,
        ("true", _) => Value::Bool(true),
        ("false", _) => Value::Bool(false),
        ("integer", Sql::Integer(i)) => Value::from(i),
        ("real", Sql::Real(f)) => {
            serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
        }
        ("text", Sql::Text(t)) => Value::String(t),
        // Objects and arrays come back as their JSON text.
        (_, Sql::Text(t)) => serde_json::from_str(&t).ok()?,
        (_, Sql::Integer(i)) => Value::from(i),
        (_, Sql::Real(f)) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        _ => Value::Null,
    })
}

/// `docs_<collection>` with every non-word character as `_`.
pub fn table_name(collection: &str) -> String {
    format!("docs_{}", sanitize(collection))
}

fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `json_extract(doc, '$."a"."b"')` for the dotted path `a.b`.
pub fn json_extract(field: &str) -> StoreResult<String> {
    Ok(format!("json_extract(doc, '{}')", json_path(field)?))
}

/// `doc ->> '$."a"."b"'`: the value [`json_extract`] reads, without the JSON subtype it gives an
/// object or array. An index can answer for this expression; not for `json_extract`, whose subtype
/// an index does not keep, so SQLite parses the document again whatever the index holds.
fn sql_value(field: &str) -> StoreResult<String> {
    Ok(format!("doc ->> '{}'", json_path(field)?))
}

/// `json_type(doc, '$."a"."b"')`: the JSON type of the value [`json_extract`] reads.
pub fn json_type(field: &str) -> StoreResult<String> {
    Ok(format!("json_type(doc, '{}')", json_path(field)?))
}

/// The SQLite JSON path of a dotted field: `a.b` is `$."a"."b"`.
fn json_path(field: &str) -> StoreResult<String> {
    if field.contains(['"', '\'']) || field.is_empty() {
        return Err(StoreError::InvalidValue(format!(
            "'{field}' cannot be an indexed field: it is empty or contains a quote"
        )));
    }
    let path: Vec<String> = field.split('.').map(|s| format!("\"{s}\"")).collect();
    Ok(format!("$.{}", path.join(".")))
}

/// The top-level field an index's first column extracts, from the index's `CREATE INDEX` text as
/// [`json_extract`] writes it (`… ON "t" (json_extract(doc, '$."id"'), …)`); none for a nested path or
/// another expression.
fn leading_field_of(sql: &str) -> Option<String> {
    let columns = &sql[sql.find(" (")? + 2..];
    let path = columns.strip_prefix("json_extract(doc, '$.")?;
    let path = &path[..path.find("')")?];
    let field = path.strip_prefix('"')?.strip_suffix('"')?;
    (!field.contains('"')).then(|| field.to_string())
}

/// The document's JSON text.
pub fn encode(doc: &Document) -> StoreResult<String> {
    serde_json::to_string(doc)
        .map_err(|e| StoreError::InvalidValue(format!("a document could not be encoded: {e}")))
}

fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked)
    )
}

/// A store error for a SQLite failure: a unique violation is a duplicate key, a lock held past the busy
/// timeout says so, anything else is an I/O error naming the file.
pub fn sqlite_error(path: &Path, err: &rusqlite::Error) -> StoreError {
    if is_busy(err) {
        return StoreError::Io {
            message: format!(
                "{} is locked: another process has held its write lock for over {}s; run again once it is done (or stop it)",
                path.display(),
                BUSY_TIMEOUT.as_secs()
            ),
            raw_os_error: None,
        };
    }
    if err.sqlite_error_code() == Some(ErrorCode::ConstraintViolation) {
        return StoreError::DuplicateKey(format!("duplicate key: {err}"));
    }
    if err.sqlite_error_code() == Some(ErrorCode::CannotOpen) {
        if let Some(too_long) = super::path_length::too_long(path) {
            return too_long;
        }
    }
    let shown = path.display();
    let message = match err.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => format!(
            "{shown} is not a SQLite database or is damaged ({err}), so the local document store cannot read it; \
             move it aside (mv {shown} {shown}.damaged) and run again to start an empty store, or put back a copy you trust"
        ),
        Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => format!(
            "{shown}: {err}; this user must be able to read and write the file and its folder \
             (or point XDG_STATE_HOME, or the store's path in the config, at a writable place)"
        ),
        Some(ErrorCode::DiskFull) => {
            format!("{shown}: the disk is full ({err}); free some space and run again")
        }
        _ => format!("{shown}: {err}"),
    };
    StoreError::Io {
        message,
        raw_os_error: None,
    }
}

/// Like [`sqlite_error`], naming the collection and fields of a unique index the documents violate.
pub fn index_error(
    path: &Path,
    collection: &str,
    fields: &[&str],
    err: &rusqlite::Error,
) -> StoreError {
    match sqlite_error(path, err) {
        StoreError::DuplicateKey(_) => StoreError::DuplicateKey(format!(
            "a document in '{collection}' has the same {} as another, which the unique index on [{}] refuses",
            fields.join(", "),
            fields.join(", ")
        )),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::{leading_field_of, Db};
    use serde_json::{json, Value};

    #[test]
    fn rows_deleted_since_their_keys_were_read_are_left_out_of_a_page() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("docs.db");
        let mut db = Db::open(&path).unwrap();
        db.ensure_table(&path, "docs_t").unwrap();
        for n in 1..=3 {
            db.run(
                "INSERT INTO docs_t (doc) VALUES (?1)",
                [format!(r#"{{"n": {n}}}"#)],
            )
            .unwrap();
        }
        db.run("DELETE FROM docs_t WHERE rowid = 2", []).unwrap();
        let page = db.by_rowids(&path, "t", &[1, 2, 3]).unwrap();
        let ns: Vec<&Value> = page.iter().map(|doc| &doc["n"]).collect();
        assert_eq!(ns, [&json!(1), &json!(3)]);
    }

    #[test]
    fn sort_keys_are_read_from_their_index_without_parsing_a_document() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("docs.db");
        let mut db = Db::open(&path).unwrap();
        db.ensure_table(&path, "docs_t").unwrap();
        db.run(
            "INSERT INTO docs_t (doc) VALUES (?1)",
            [r#"{"at": "2026-12-05", "n": 2, "ok": true, "o": {"x": 1}}"#],
        )
        .unwrap();
        let sql = db.sort_keys_sql("docs_t", &["at", "n", "o"], "").unwrap();
        assert!(sql.contains("INDEXED BY"), "{sql}");
        // The program reads columns of the index; a JSON function would mean each row's document
        // is parsed (as it is when a value's expression carries JSON's subtype, as json_extract's).
        let opcodes: Vec<String> = {
            let mut explain = db.conn.prepare(&format!("EXPLAIN {sql}")).unwrap();
            let rows = explain.query_map([], |row| row.get(1)).unwrap();
            rows.map(Result::unwrap).collect()
        };
        assert!(!opcodes.iter().any(|op| op.contains("Func")), "{opcodes:?}");
        let keys = db
            .sort_keys(&path, "t", &["at", "n", "ok", "o"], &Default::default())
            .unwrap()
            .unwrap();
        assert_eq!(
            Value::Object(keys[0].1.clone()),
            json!({"at": "2026-12-05", "n": 2, "ok": true, "o": {"x": 1}})
        );
    }

    #[test]
    fn the_leading_field_is_read_back_from_the_index_text() {
        let sql = r#"CREATE UNIQUE INDEX "tasks_id_version_unique" ON "tasks" (json_extract(doc, '$."id"'), json_extract(doc, '$."version"'))"#;
        assert_eq!(leading_field_of(sql).as_deref(), Some("id"));
        let nested = r#"CREATE INDEX "t_a_b_index" ON "t" (json_extract(doc, '$."a"."b"'))"#;
        assert_eq!(leading_field_of(nested), None);
        assert_eq!(leading_field_of(r#"CREATE INDEX "x" ON "t" (rowid)"#), None);
    }
}
