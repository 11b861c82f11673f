//! The SQL side: table and index names, creating them race-free, and the rows a filter may match.
//!
//! Each collection is a table `docs_<collection>` with a `bigserial` id (insertion order) and a `jsonb`
//! document, plus a GIN index that serves containment. A filter's string equalities on top-level fields
//! narrow the scan in SQL (the field is `v`, or, as Mongo matches arrays, an array holding `v`), written
//! so that an index made on the field by `ensure_index`, or else the GIN index, serves them; every
//! candidate is then matched in Rust by the store API's evaluator, so the semantics are exactly the
//! SQLite store's. A page of a listing reads its rows' top-level fields first ([`Rows::projections`])
//! and then only its own documents ([`Rows::by_ids`]): see `page`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use agent_env_store::document::eval;
use agent_env_store::document::query::{Document, Filter, Predicate};
use agent_env_store::error::{StoreError, StoreResult};

use crate::blocking::{Connection, Queries};
use crate::errors::pg_error;

/// The advisory lock every schema change takes, so that two processes creating the same table or index
/// at once both succeed.
const DDL_LOCK: i64 = 0x6167_656e_745f_656e; // "agent_en"

/// A collection's table, qualified by the store's schema.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Table {
    /// `"schema"."docs_x"`.
    pub qualified: String,
    /// `docs_x`, for naming indexes.
    pub bare: String,
}

impl Table {
    /// The table of `collection` in `schema`. Names longer than PostgreSQL keeps (63 bytes) are cut and
    /// given a hash of the whole, so two long names never share a table.
    pub fn new(schema: &str, collection: &str) -> Table {
        let mut bare = format!("docs_{}", sanitize(collection));
        if bare.len() > 50 {
            let cut: String = bare.chars().take(36).collect();
            bare = format!("{cut}_{}", short_hash(collection));
        }
        Table {
            qualified: format!("{}.{}", quote(schema), quote(&bare)),
            bare,
        }
    }

    /// The advisory lock key that serializes writers of this table.
    pub fn write_lock(&self) -> i64 {
        let digest = Sha256::digest(self.qualified.as_bytes());
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&digest[..8]);
        i64::from_be_bytes(bytes)
    }
}

/// `"name"`, with quotes doubled.
pub fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn short_hash(text: &str) -> String {
    hex::encode(&Sha256::digest(text.as_bytes())[..6])
}

/// Runs `statements` under the schema-change lock in one transaction.
pub fn run_ddl(client: &mut Connection, shown: &str, statements: &[String]) -> StoreResult<()> {
    let tx = client.transaction().map_err(|e| pg_error(shown, &e))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&DDL_LOCK])
        .map_err(|e| pg_error(shown, &e))?;
    for statement in statements {
        tx.batch_execute(statement)
            .map_err(|e| pg_error(shown, &e))?;
    }
    tx.commit().map_err(|e| pg_error(shown, &e))
}

/// The statements that create a collection's table and its containment index.
///
/// The containment index is written through on each insert and update (`fastupdate = off`) rather than
/// through a pending list: a list that has grown (up to 4 MB, until the next vacuum) is read whole by
/// every search of the index, and the planner, counting it, scanned the whole table instead (a scan
/// that decompresses every document, which it does not count) for a lookup of one instance by its id.
pub fn create_table(schema: &str, table: &Table) -> Vec<String> {
    let mut out = Vec::new();
    if schema != "public" {
        out.push(format!("CREATE SCHEMA IF NOT EXISTS {}", quote(schema)));
    }
    out.push(format!(
        "CREATE TABLE IF NOT EXISTS {} (id bigserial PRIMARY KEY, doc jsonb NOT NULL)",
        table.qualified
    ));
    out.push(format!(
        "CREATE INDEX IF NOT EXISTS {} ON {} USING gin (doc jsonb_path_ops) WITH (fastupdate = off)",
        quote(&format!("{}_doc", table.bare)),
        table.qualified
    ));
    out
}

/// The statement that removes a collection's table, with its indexes (none when it does not exist).
pub fn drop_table(table: &Table) -> String {
    format!("DROP TABLE IF EXISTS {}", table.qualified)
}

/// The name of the index [`create_index`] makes on `fields` of `table`. Index names are per schema,
/// not per table: the hash covers the table as well as the fields, so two collections whose names start
/// alike never share one.
pub fn index_name(table: &Table, fields: &[&str], unique: bool) -> String {
    let kind = if unique { "unique" } else { "index" };
    format!(
        "{}_{}_{kind}",
        table.bare.chars().take(30).collect::<String>(),
        short_hash(&format!(
            "{}\u{1f}{}",
            table.qualified,
            fields.join("\u{1f}")
        ))
    )
}

/// The statement that creates an index on `fields` (unique or not). A JSON `null` and a missing field
/// both index as SQL NULL, which a unique index never counts as a repeat, as in the SQLite store.
pub fn create_index(table: &Table, fields: &[&str], unique: bool) -> StoreResult<String> {
    if fields.is_empty() {
        return Err(StoreError::InvalidValue(
            "an index needs at least one field".into(),
        ));
    }
    let exprs = fields
        .iter()
        .map(|f| field_expr(f))
        .collect::<StoreResult<Vec<_>>>()?;
    let name = index_name(table, fields, unique);
    Ok(format!(
        "CREATE {}INDEX IF NOT EXISTS {} ON {} ({})",
        if unique { "UNIQUE " } else { "" },
        quote(&name),
        table.qualified,
        exprs.join(", ")
    ))
}

/// `(NULLIF(doc #> '{a,b}', 'null'::jsonb))` for the dotted path `a.b`.
fn field_expr(field: &str) -> StoreResult<String> {
    if field.is_empty() || field.contains(['"', '\'', '{', '}', ',', '\\']) {
        return Err(StoreError::InvalidValue(format!(
            "'{field}' cannot be an indexed field: it is empty or contains a quote, brace, comma or backslash"
        )));
    }
    let path: Vec<String> = field.split('.').map(|s| format!("\"{s}\"")).collect();
    Ok(format!(
        "(NULLIF(doc #> '{{{}}}', 'null'::jsonb))",
        path.join(",")
    ))
}

/// What SQL makes of a filter: the conditions it checks itself, and whether those are the whole filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Narrowing {
    /// ` WHERE …` with parameters numbered from `$1`, or empty.
    pub where_sql: String,
    /// The parameters, in order: the documents each containment test looks for.
    pub params: Vec<Value>,
    /// Whether the rows SQL selects are exactly the filter's matches, so no document needs to be
    /// read to check it.
    pub decides: bool,
}

/// The narrowing of `filter`: a string equality (or a membership in a list of strings) on a top-level
/// field selects the documents `doc @> {"f": v} OR doc @> {"f": [v]}` selects (Mongo matches an array
/// holding `v` too), which compares strings byte for byte as the evaluator does, and a string in an
/// array as an element of it, never deeper; [`string_equality`] writes it so that an index serves it.
/// It decides the filter when every condition is one of those.
pub fn narrowing(filter: &Filter) -> Narrowing {
    let mut clauses = Vec::new();
    let mut params: Vec<Value> = Vec::new();
    let mut decides = true;
    for (field, predicates) in &filter.conditions {
        if field.contains('.') {
            decides = false;
            continue;
        }
        for predicate in predicates {
            let wanted: Vec<&String> = match predicate {
                Predicate::Eq(Value::String(s)) => vec![s],
                Predicate::In(list) if list.iter().all(Value::is_string) => {
                    list.iter().filter_map(string).collect()
                }
                _ => {
                    decides = false;
                    continue;
                }
            };
            let mut any = Vec::new();
            for s in wanted {
                any.push(string_equality(field, s, &mut params));
            }
            clauses.push(if any.is_empty() {
                "false".to_string()
            } else {
                format!("({})", any.join(" OR "))
            });
        }
    }
    let where_sql = if clauses.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", clauses.join(" AND "))
    };
    Narrowing {
        where_sql,
        params,
        decides,
    }
}

/// The condition that `field` (top-level) is the string `s` or an array holding it as an element,
/// with its parameters pushed onto `params`: exactly the documents `doc @> {"f": s} OR doc @> {"f": [s]}`
/// selects, written so that the planner finds an index for each half and expects few rows.
///
/// - `(NULLIF(doc #> '{"f"}', 'null'::jsonb)) = s AND doc @> {"f": s}`: the first is the expression of
///   an index [`create_index`] makes on `f`, so a collection given one is read through it (and the
///   planner knows from that index's statistics how many rows hold `s`); the second, which says the
///   same, lets the containment index serve a collection without one.
/// - `jsonb_typeof(doc #> '{"f"}') = 'array' AND doc @> {"f": [s]}`: the array case, through the
///   containment index.
///
/// Each half is two conditions that say the same thing: the planner, which takes them for independent,
/// then expects a handful of rows rather than the 1 % it guesses for a containment test alone. With
/// that guess it scanned the whole table (each document detoasted, as the planner does not count) or
/// walked the primary key for an `ORDER BY id LIMIT 1`, for a lookup of one instance by its id.
///
/// A field that cannot be written in an index expression (it holds a quote, a brace, a comma, a
/// backslash or a NUL) keeps the two containment tests alone.
fn string_equality(field: &str, s: &str, params: &mut Vec<Value>) -> String {
    let n = params.len();
    params.push(json!({ field: s }));
    params.push(json!({ field: [s] }));
    let expr = match field_expr(field) {
        Ok(expr) if !field.contains('\0') => expr,
        _ => return format!("doc @> ${} OR doc @> ${}", n + 1, n + 2),
    };
    params.push(Value::String(s.to_string()));
    format!(
        "{expr} = ${} AND doc @> ${} OR jsonb_typeof(doc #> '{{\"{field}\"}}') = 'array' AND doc @> ${}",
        n + 3,
        n + 1,
        n + 2
    )
}

/// A string value's text.
fn string(value: &Value) -> Option<&String> {
    match value {
        Value::String(s) => Some(s),
        _ => None,
    }
}

type Param<'p> = &'p (dyn ToSql + Sync);

/// The rows of one collection's table, read through a connection or a transaction, counting every
/// whole document read.
pub struct Rows<'a, C> {
    /// What runs the statements.
    pub client: &'a C,
    /// `host:port/database`, for messages.
    pub shown: &'a str,
    /// The collection's table.
    pub table: &'a Table,
    /// The collection, for messages.
    pub collection: &'a str,
    /// Whole documents read, across the store.
    pub documents_read: &'a AtomicU64,
}

impl<C: Queries> Rows<'_, C> {
    fn query(&self, sql: &str, params: &[Param<'_>]) -> StoreResult<Vec<Row>> {
        self.client
            .query(sql, params)
            .map_err(|e| pg_error(self.shown, &e))
    }

    /// `(id, doc)` rows as documents, counted as read.
    fn documents(&self, rows: Vec<Row>) -> StoreResult<Vec<(i64, Document)>> {
        self.documents_read
            .fetch_add(rows.len() as u64, Ordering::Relaxed);
        rows.into_iter()
            .map(|row| {
                let id: i64 = row.get(0);
                match row.get::<_, Value>(1) {
                    Value::Object(map) => Ok((id, map)),
                    other => Err(StoreError::Internal(format!(
                        "{}: a document in '{}' is not a JSON object: {other}",
                        self.shown, self.collection
                    ))),
                }
            })
            .collect()
    }

    /// The rows that match `filter`, in insertion order, as (id, document): those SQL selects, each
    /// checked by the store API's evaluator.
    pub fn matching(&self, filter: &Filter) -> StoreResult<Vec<(i64, Document)>> {
        let narrowing = narrowing(filter);
        let sql = format!(
            "SELECT id, doc FROM {}{} ORDER BY id",
            self.table.qualified, narrowing.where_sql
        );
        let rows = self.query(&sql, &params(&narrowing.params))?;
        let mut docs = self.documents(rows)?;
        docs.retain(|(_, doc)| eval::matches(doc, filter));
        Ok(docs)
    }

    /// The rows `offset..offset + limit`, in insertion order, of those a filter SQL decides selects.
    pub fn in_id_order(
        &self,
        narrowing: &Narrowing,
        limit: usize,
        offset: usize,
    ) -> StoreResult<Vec<(i64, Document)>> {
        let n = narrowing.params.len();
        let sql = format!(
            "SELECT id, doc FROM {}{} ORDER BY id LIMIT ${} OFFSET ${}",
            self.table.qualified,
            narrowing.where_sql,
            n + 1,
            n + 2
        );
        let (limit, offset) = (as_i64(limit), as_i64(offset));
        let mut all = params(&narrowing.params);
        all.push(&limit);
        all.push(&offset);
        let rows = self.query(&sql, &all)?;
        self.documents(rows)
    }

    /// Of every row `narrowing` selects, in no particular order, its id and a document holding only
    /// the top-level `fields` it has (a JSON `null` kept as one): what the evaluator reads to match
    /// and sort by paths starting with those fields, without the rest of the document. With them,
    /// the [`Rows::stamp`] of those rows.
    pub fn projections(
        &self,
        narrowing: &Narrowing,
        fields: &[String],
    ) -> StoreResult<(Vec<(i64, Document)>, String)> {
        let n = narrowing.params.len();
        let columns: String = (0..fields.len())
            .map(|i| format!(", doc -> ${}::text", n + 1 + i))
            .collect();
        let sql = format!(
            "SELECT id, xmin::text{columns} FROM {}{}",
            self.table.qualified, narrowing.where_sql
        );
        let mut all = params(&narrowing.params);
        all.extend(fields.iter().map(|f| f as Param<'_>));
        let rows = self.query(&sql, &all)?;
        let mut versions = Vec::with_capacity(rows.len());
        let keyed = rows
            .into_iter()
            .map(|row| {
                let mut doc = Document::new();
                for (i, field) in fields.iter().enumerate() {
                    if let Some(value) = row.get::<_, Option<Value>>(2 + i) {
                        doc.insert(field.clone(), value);
                    }
                }
                let id = row.get::<_, i64>(0);
                versions.push((id, row.get::<_, String>(1)));
                (id, doc)
            })
            .collect();
        Ok((keyed, stamp_of(versions)))
    }

    /// What the rows `narrowing` selects are now: a digest of each one's id and the transaction that
    /// wrote its version (`xmin`), which an insert, an update and a delete each change, so two equal
    /// stamps mean the same rows with the same contents. Computed by the server, as [`stamp_of`]
    /// computes it from the rows.
    pub fn stamp(&self, narrowing: &Narrowing) -> StoreResult<String> {
        let sql = format!(
            "SELECT encode(sha256(convert_to(coalesce(string_agg(id::text || ':' || xmin::text, ',' ORDER BY id), ''), 'UTF8')), 'hex') FROM {}{}",
            self.table.qualified, narrowing.where_sql
        );
        let rows = self.query(&sql, &params(&narrowing.params))?;
        Ok(rows.first().map_or_else(String::new, |row| row.get(0)))
    }

    /// The documents of the rows `ids`, in that order (a row deleted meanwhile is left out).
    pub fn by_ids(&self, ids: &[i64]) -> StoreResult<Vec<Document>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT id, doc FROM {} WHERE id = ANY($1)",
            self.table.qualified
        );
        let wanted = ids.to_vec();
        let rows = self.query(&sql, &[&wanted])?;
        let mut found: HashMap<i64, Document> = self.documents(rows)?.into_iter().collect();
        Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
    }

    /// How many rows `narrowing` selects.
    pub fn count(&self, narrowing: &Narrowing) -> StoreResult<u64> {
        let sql = format!(
            "SELECT count(*) FROM {}{}",
            self.table.qualified, narrowing.where_sql
        );
        let rows = self.query(&sql, &params(&narrowing.params))?;
        let n: i64 = rows.first().map_or(0, |row| row.get(0));
        Ok(n.max(0) as u64)
    }
}

/// [`Rows::stamp`] of rows read with their ids and versions (`xmin` as text).
pub fn stamp_of(mut versions: Vec<(i64, String)>) -> String {
    versions.sort_unstable();
    let text: Vec<String> = versions
        .into_iter()
        .map(|(id, xmin)| format!("{id}:{xmin}"))
        .collect();
    hex::encode(Sha256::digest(text.join(",").as_bytes()))
}

fn params(values: &[Value]) -> Vec<Param<'_>> {
    values.iter().map(|p| p as Param<'_>).collect()
}

fn as_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_and_bounded() {
        let t = Table::new("public", "tasks");
        assert_eq!(t.qualified, "\"public\".\"docs_tasks\"");
        let long = Table::new("public", &"x".repeat(100));
        assert!(long.bare.len() <= 50, "{}", long.bare);
        assert_ne!(long, Table::new("public", &"x".repeat(101)));
        assert_eq!(quote("a\"b"), "\"a\"\"b\"");
    }

    /// The containment index has no pending list, which every search of it reads whole.
    #[test]
    fn the_containment_index_is_written_through() {
        let statements = create_table("s", &Table::new("s", "c"));
        assert!(
            statements[2].ends_with("USING gin (doc jsonb_path_ops) WITH (fastupdate = off)"),
            "{statements:?}"
        );
    }

    /// A string equality on a top-level field is written with the expression of the index
    /// `ensure_index` makes on that field (so a lookup of one instance by its id reads it through that
    /// index), and still with the containment tests the GIN index serves, the array case included.
    #[test]
    fn an_equality_is_written_with_the_expression_of_the_fields_index() {
        let one = narrowing(&Filter::eq("instance_id", "team/t-1"));
        let index = create_index(&Table::new("s", "c"), &["instance_id"], true).unwrap();
        let expr = "(NULLIF(doc #> '{\"instance_id\"}', 'null'::jsonb))";
        assert!(index.ends_with(&format!("({expr})")), "{index}");
        assert_eq!(
            one.where_sql,
            format!(" WHERE ({expr} = $3 AND doc @> $1 OR jsonb_typeof(doc #> '{{\"instance_id\"}}') = 'array' AND doc @> $2)")
        );
        assert_eq!(
            one.params,
            [
                json!({"instance_id": "team/t-1"}),
                json!({"instance_id": ["team/t-1"]}),
                json!("team/t-1")
            ]
        );
        assert!(one.decides);

        let listed = narrowing(
            &Filter::default().and("status", Predicate::In(vec![json!("a"), json!("b")])),
        );
        assert_eq!(listed.params.len(), 6);
        assert!(
            listed.where_sql.contains("= $3 AND doc @> $1 OR"),
            "{}",
            listed.where_sql
        );
        assert!(
            listed.where_sql.contains("= $6 AND doc @> $4 OR"),
            "{}",
            listed.where_sql
        );
        assert!(listed.decides);

        let quoted = narrowing(&Filter::eq("it's", "v"));
        assert_eq!(quoted.where_sql, " WHERE (doc @> $1 OR doc @> $2)");
        assert_eq!(quoted.params.len(), 2);
        assert!(quoted.decides);
    }

    #[test]
    fn index_expressions_follow_dotted_paths() {
        let t = Table::new("s", "c");
        let sql = create_index(&t, &["id", "meta.version"], true).unwrap();
        assert!(
            sql.starts_with("CREATE UNIQUE INDEX IF NOT EXISTS"),
            "{sql}"
        );
        assert!(sql.contains("(NULLIF(doc #> '{\"id\"}', 'null'::jsonb)), (NULLIF(doc #> '{\"meta\",\"version\"}', 'null'::jsonb))"), "{sql}");
        assert!(create_index(&t, &["a'b"], false).is_err());
        let long = |c: &str| Table::new("s", &format!("{}{c}", "k".repeat(40)));
        assert_ne!(
            create_index(&long("a"), &["id"], true)
                .unwrap()
                .split(" ON ")
                .next(),
            create_index(&long("b"), &["id"], true)
                .unwrap()
                .split(" ON ")
                .next(),
            "two collections named alike share an index name"
        );
    }
}
