//! What a run wrote to agent-env's local document store (`<state>/document_store/local.db`).

use std::path::Path;

use serde_json::Value;

/// Every document of `collection` in the SQLite database at `db` (none when the collection or the
/// database does not exist yet).
pub fn documents(db: &Path, collection: &str) -> Vec<Value> {
    let conn = rusqlite::Connection::open(db).expect("open local.db");
    let mut stmt = match conn.prepare(&format!("SELECT doc FROM docs_{collection}")) {
        Ok(stmt) => stmt,
        Err(_) => return Vec::new(),
    };
    let rows = stmt
        .query_map([], |row| row.get::<_, String>(0))
        .expect("query")
        .map(|doc| serde_json::from_str(&doc.expect("row")).expect("a JSON document"))
        .collect();
    rows
}
