//! The SQL side: table and index names, creating them race-free, and the rows a filter may match.
//!
//! Each collection is a table `docs_<collection>` with a `bigserial` id (insertion order) and a `jsonb`
//! document, plus a GIN index that serves containment. A filter's string equalities on top-level fields
//! narrow the scan in SQL (`doc @> {"f": v}` or, as Mongo matches arrays, `doc @> {"f": [v]}`); every
//! candidate is then matched in Rust by the store API's evaluator, so the semantics are exactly the
//! SQLite store's.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

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
        "CREATE INDEX IF NOT EXISTS {} ON {} USING gin (doc jsonb_path_ops)",
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

/// The rows of `table` that match `filter`, in insertion order, as (id, document).
pub fn matching<C: Queries>(
    client: &C,
    shown: &str,
    table: &Table,
    collection: &str,
    filter: &Filter,
) -> StoreResult<Vec<(i64, Document)>> {
    let mut clauses = Vec::new();
    let mut params: Vec<Value> = Vec::new();
    for (field, predicates) in &filter.conditions {
        if field.contains('.') {
            continue;
        }
        for predicate in predicates {
            if let Predicate::Eq(Value::String(s)) = predicate {
                clauses.push(format!(
                    "(doc @> ${} OR doc @> ${})",
                    params.len() + 1,
                    params.len() + 2
                ));
                params.push(json!({ field.as_str(): s }));
                params.push(json!({ field.as_str(): [s] }));
            }
        }
    }
    let where_sql = if clauses.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", clauses.join(" AND "))
    };
    let sql = format!(
        "SELECT id, doc FROM {}{where_sql} ORDER BY id",
        table.qualified
    );
    let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
        .iter()
        .map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync))
        .collect();
    let rows = client.query(&sql, &refs).map_err(|e| pg_error(shown, &e))?;
    let mut out = Vec::new();
    for row in rows {
        let id: i64 = row.get(0);
        let doc = match row.get::<_, Value>(1) {
            Value::Object(map) => map,
            other => {
                return Err(StoreError::Internal(format!(
                    "{shown}: a document in '{collection}' is not a JSON object: {other}"
                )))
            }
        };
        if eval::matches(&doc, filter) {
            out.push((id, doc));
        }
    }
    Ok(out)
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
