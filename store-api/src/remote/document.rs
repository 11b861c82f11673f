//! `PluginDocumentStore`: a document store in another process; filters, sorts and updates cross in their
//! serde form (docs/protocol.md, Documents).
//!
//! `drop_collection` is optional on the wire: a plugin's store is asked with
//! `store.document.drop_collection`, and one that answers `method-not-found` or `not-supported` (a
//! plugin written before the method, or one whose store has no way of its own) has the collection
//! emptied one document at a time instead, and is not asked again. The host's stores offer no `host.store.document.drop_collection`, so a
//! plugin's proxy to them empties a collection one document at a time without asking.
//!
//! `delete_all` is the store API's default: a count, then one `delete` a document, as the protocol
//! has no call that deletes many.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::transport::{Direction, StoreTransport};
use crate::document::query::{Document, Filter, Sort, UpdateSpec};
use crate::document::{delete_one_by_one, DocumentStore};
use crate::error::{StoreError, StoreResult};
use crate::wire::answer_field;

/// A document store reached through a [`StoreTransport`].
pub struct PluginDocumentStore {
    transport: Arc<dyn StoreTransport>,
    direction: Direction,
    /// Whether the other side answered that it cannot drop a collection; it is not asked again.
    no_drop: AtomicBool,
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
            no_drop: AtomicBool::new(direction == Direction::ToHost),
        }
    }

    /// Whether the plugin answered `store.document.drop_collection` with `method-not-found` or
    /// `not-supported`, so that the collections it was asked to drop were emptied one document at a
    /// time instead (and any it keeps for an empty collection remain). False until a drop is asked
    /// for, and for a store reached from a plugin ([`Direction::ToHost`]), which is never asked.
    pub fn refused_drop_collection(&self) -> bool {
        self.direction == Direction::ToPlugin && self.no_drop.load(Ordering::Relaxed)
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

    fn drop_collection(&self, collection: &str) -> StoreResult<()> {
        if !self.no_drop.load(Ordering::Relaxed) {
            match self.call("drop_collection", collection, json!({})) {
                Ok(_) => return Ok(()),
                Err(StoreError::NotSupported(_)) => self.no_drop.store(true, Ordering::Relaxed),
                Err(other) => return Err(other),
            }
        }
        delete_one_by_one(self, collection)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use agent_env_protocol::codes::ErrorKind;
    use agent_env_protocol::message::RpcError;

    use super::*;

    /// A plugin's store as the host sees it: answers `count` and `delete` from `held` documents, and
    /// `drop_collection` with `drop` (`None`: it does not know the method); records every method.
    struct Fake {
        held: Mutex<u64>,
        drop: Option<Value>,
        sent: Mutex<Vec<(String, Value)>>,
    }

    impl Fake {
        fn new(held: u64, drop: Option<Value>) -> Arc<Fake> {
            Arc::new(Fake {
                held: Mutex::new(held),
                drop,
                sent: Mutex::new(Vec::new()),
            })
        }

        fn methods(&self) -> Vec<String> {
            let sent = self.sent.lock().unwrap();
            sent.iter().map(|(m, _)| m.clone()).collect()
        }
    }

    impl StoreTransport for Fake {
        fn call(&self, method: &str, params: Value) -> StoreResult<Value> {
            self.sent.lock().unwrap().push((method.to_string(), params));
            let mut held = self.held.lock().unwrap();
            match method.rsplit('.').next().unwrap() {
                "count" => Ok(json!({ "count": *held })),
                "delete" => {
                    let deleted = u64::from(*held > 0);
                    *held -= deleted;
                    Ok(json!({ "deleted": deleted }))
                }
                "drop_collection" => match &self.drop {
                    Some(answer) => {
                        *held = 0;
                        Ok(answer.clone())
                    }
                    None => Err(StoreError::from(RpcError::new(
                        ErrorKind::MethodNotFound,
                        format!("no method '{method}'"),
                    ))),
                },
                other => panic!("unexpected {other}"),
            }
        }
    }

    #[test]
    fn a_plugin_that_drops_collections_is_asked_to_and_nothing_is_deleted_one_by_one() {
        let fake = Fake::new(3, Some(Value::Null));
        let store = PluginDocumentStore::new(fake.clone());
        store.drop_collection("kit_a").unwrap();
        store.drop_collection("kit_b").unwrap();
        assert_eq!(
            fake.methods(),
            [
                "store.document.drop_collection",
                "store.document.drop_collection"
            ]
        );
        let sent = fake.sent.lock().unwrap();
        assert_eq!(sent[0].1, json!({"collection": "kit_a"}));
    }

    #[test]
    fn a_plugin_without_drop_collection_has_the_collection_emptied_and_is_asked_once() {
        let fake = Fake::new(2, None);
        let store = PluginDocumentStore::new(fake.clone());
        store.drop_collection("kit_a").unwrap();
        assert_eq!(*fake.held.lock().unwrap(), 0, "the documents are deleted");
        *fake.held.lock().unwrap() = 1;
        store.drop_collection("kit_b").unwrap();
        assert_eq!(*fake.held.lock().unwrap(), 0);
        assert_eq!(
            fake.methods(),
            [
                "store.document.drop_collection",
                "store.document.count",
                "store.document.delete",
                "store.document.delete",
                "store.document.delete",
                "store.document.count",
                "store.document.delete",
                "store.document.delete",
            ]
        );
    }

    #[test]
    fn a_store_says_whether_the_plugin_refused_to_drop_a_collection() {
        let refusing = PluginDocumentStore::new(Fake::new(1, None));
        assert!(!refusing.refused_drop_collection(), "not asked yet");
        refusing.drop_collection("kit_a").unwrap();
        assert!(refusing.refused_drop_collection());
        let dropping = PluginDocumentStore::new(Fake::new(1, Some(Value::Null)));
        dropping.drop_collection("kit_a").unwrap();
        assert!(!dropping.refused_drop_collection());
        let failing = PluginDocumentStore::new(Arc::new(Crashed));
        assert!(failing.drop_collection("kit_a").is_err());
        assert!(!failing.refused_drop_collection(), "a crash is no answer");
        let to_host = PluginDocumentStore::with_direction(Fake::new(1, None), Direction::ToHost);
        to_host.drop_collection("mine").unwrap();
        assert!(
            !to_host.refused_drop_collection(),
            "the host is never asked"
        );
    }

    /// A plugin that crashed: every call fails with an internal error.
    struct Crashed;

    impl StoreTransport for Crashed {
        fn call(&self, _method: &str, _params: Value) -> StoreResult<Value> {
            Err(StoreError::Internal("the plugin crashed".into()))
        }
    }

    #[test]
    fn a_plugin_store_that_answers_not_supported_is_emptied_too() {
        struct NotSupported(Fake);
        impl StoreTransport for NotSupported {
            fn call(&self, method: &str, params: Value) -> StoreResult<Value> {
                if method.ends_with(".drop_collection") {
                    return Err(StoreError::unimplemented("drop_collection"));
                }
                self.0.call(method, params)
            }
        }
        let transport = Arc::new(NotSupported(Fake {
            held: Mutex::new(1),
            drop: None,
            sent: Mutex::new(Vec::new()),
        }));
        let store = PluginDocumentStore::new(transport.clone());
        store.drop_collection("kit_a").unwrap();
        assert_eq!(*transport.0.held.lock().unwrap(), 0);
    }

    #[test]
    fn another_failure_of_drop_collection_is_the_callers() {
        struct Refuses;
        impl StoreTransport for Refuses {
            fn call(&self, _method: &str, _params: Value) -> StoreResult<Value> {
                Err(StoreError::Internal("the plugin crashed".into()))
            }
        }
        let store = PluginDocumentStore::new(Arc::new(Refuses));
        let err = store.drop_collection("kit_a").unwrap_err();
        assert_eq!(err.to_string(), "the plugin crashed");
    }

    /// `delete_all` asks a plugin's store with the calls the protocol has (a count, then one
    /// `delete` a document until one deletes none), passing the filter each time.
    #[test]
    fn delete_all_asks_a_plugin_store_to_delete_one_document_at_a_time() {
        let fake = Fake::new(2, None);
        let store = PluginDocumentStore::new(fake.clone());
        let filter = Filter::eq("task_id", "t");
        assert_eq!(store.delete_all("instances", &filter).unwrap(), 2);
        assert_eq!(
            fake.methods(),
            [
                "store.document.count",
                "store.document.delete",
                "store.document.delete",
                "store.document.delete",
            ]
        );
        let sent = fake.sent.lock().unwrap();
        assert!(sent.iter().all(|(_, params)| params["filter"]
            == serde_json::to_value(&filter).unwrap()
            && params["collection"] == "instances"));
    }

    #[test]
    fn a_plugin_reaching_the_hosts_store_empties_a_collection_without_asking_to_drop_it() {
        let fake = Fake::new(1, Some(Value::Null));
        let store = PluginDocumentStore::with_direction(fake.clone(), Direction::ToHost);
        store.drop_collection("mine").unwrap();
        assert_eq!(
            fake.methods(),
            [
                "host.store.document.count",
                "host.store.document.delete",
                "host.store.document.delete"
            ]
        );
    }
}
