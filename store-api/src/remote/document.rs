//! `PluginDocumentStore`: a document store in another process; filters, sorts and updates cross in their
//! serde form (docs/protocol.md, Documents).

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::transport::{Direction, StoreTransport};
use crate::document::query::{Document, Filter, Sort, UpdateSpec};
use crate::document::DocumentStore;
use crate::error::StoreResult;
use crate::wire::answer_field;

/// A document store reached through a [`StoreTransport`].
pub struct PluginDocumentStore {
    transport: Arc<dyn StoreTransport>,
    direction: Direction,
}

impl PluginDocumentStore {
    /// A plugin's store, called as `store.document.<op>`.
    pub fn new(transport: Arc<dyn StoreTransport>) -> Self {
        Self::with_direction(transport, Direction::ToPlugin)
    }

    /// A store on either side.
    pub fn with_direction(transport: Arc<dyn StoreTransport>, direction: Direction) -> Self {
        PluginDocumentStore {
            transport,
            direction,
        }
    }

    fn call(&self, op: &str, collection: &str, mut params: Value) -> StoreResult<(String, Value)> {
        if let Value::Object(map) = &mut params {
            map.insert("collection".into(), Value::from(collection));
        }
        let method = self.direction.method("document", op);
        let answer = self.transport.call(&method, params)?;
        Ok((method, answer))
    }

    fn field<T: DeserializeOwned>(
        &self,
        op: &str,
        collection: &str,
        params: Value,
        field: &str,
    ) -> StoreResult<T> {
        let (method, answer) = self.call(op, collection, params)?;
        answer_field(&method, &answer, field)
    }
}

impl DocumentStore for PluginDocumentStore {
    fn find_one(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
    ) -> StoreResult<Option<Document>> {
        self.field(
            "find_one",
            collection,
            json!({"filter": filter, "sort": sort}),
            "doc",
        )
    }

    fn query(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        let params = json!({"filter": filter, "sort": sort, "limit": limit, "offset": offset});
        self.field("query", collection, params, "docs")
    }

    fn count(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        self.field("count", collection, json!({ "filter": filter }), "count")
    }

    fn insert(&self, collection: &str, doc: &Document) -> StoreResult<()> {
        self.call("insert", collection, json!({ "doc": doc }))?;
        Ok(())
    }

    fn update(
        &self,
        collection: &str,
        filter: &Filter,
        update: &UpdateSpec,
        upsert: bool,
    ) -> StoreResult<u64> {
        let params = json!({"filter": filter, "update": update, "upsert": upsert});
        self.field("update", collection, params, "matched")
    }

    fn update_one_and_get(
        &self,
        collection: &str,
        filter: &Filter,
        update: &UpdateSpec,
        return_after: bool,
        upsert: bool,
    ) -> StoreResult<Option<Document>> {
        let params = json!({"filter": filter, "update": update, "return_after": return_after,
                            "upsert": upsert});
        self.field("update_one_and_get", collection, params, "doc")
    }

    fn replace(
        &self,
        collection: &str,
        filter: &Filter,
        doc: &Document,
        upsert: bool,
    ) -> StoreResult<u64> {
        let params = json!({"filter": filter, "doc": doc, "upsert": upsert});
        self.field("replace", collection, params, "matched")
    }

    fn delete(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        self.field("delete", collection, json!({ "filter": filter }), "deleted")
    }

    fn ensure_index(&self, collection: &str, fields: &[&str], unique: bool) -> StoreResult<()> {
        self.call(
            "ensure_index",
            collection,
            json!({"fields": fields, "unique": unique}),
        )?;
        Ok(())
    }
}
