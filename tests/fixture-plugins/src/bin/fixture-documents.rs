//! A document store plugin for the host's `drop_collection` tests. Its `DiskDocumentStore` holds each
//! collection in memory and mirrors it to `<root>/<collection>.json` after every write: the file is what
//! the store keeps for a collection, so a test can see, after the plugin has exited, which collections
//! are left and what they hold. Matching, updates and upserts are the store API's own evaluator.
//!
//! Config: `root` (required); `drop`, how it answers `store.document.drop_collection`:
//! - `"own"`: removes the collection and its file, and appends `dropped <collection>` to `<root>/.drops`;
//! - `"refuse"`: appends `refused <collection>` to `<root>/.drops` and answers `not-supported`, so the
//!   host empties the collection one document at a time (the file stays, holding `[]`);
//! - absent: the store API's default, which deletes the documents one by one in the plugin.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use agent_env_plugin_sdk::stores::document::eval;
use agent_env_plugin_sdk::stores::document::first_match::{
    self, post_image, Change, FirstMatchWriter, Images, UpsertDoc,
};
use agent_env_plugin_sdk::{
    Document, DocumentStore, Filter, Plugin, Sort, StoreClass, StoreError, StoreResult, UpdateSpec,
    Value,
};

/// One collection: its documents in insertion order and its unique indexes.
#[derive(Default)]
struct Collection {
    docs: Vec<Document>,
    unique: Vec<Vec<String>>,
}

/// How the store answers `drop_collection`.
#[derive(Clone, Copy, PartialEq)]
enum DropMode {
    Own,
    Refuse,
    Default,
}

struct DiskDocumentStore {
    root: PathBuf,
    drop: DropMode,
    collections: Mutex<HashMap<String, Collection>>,
}

impl DiskDocumentStore {
    fn class() -> StoreClass {
        StoreClass::document("DiskDocumentStore", &["root", "drop"], |config| {
            let root = config
                .get("root")
                .and_then(Value::as_str)
                .ok_or_else(|| StoreError::Config("DiskDocumentStore needs 'root'".into()))?;
            let drop = match config.get("drop").and_then(Value::as_str) {
                Some("own") => DropMode::Own,
                Some("refuse") => DropMode::Refuse,
                None => DropMode::Default,
                Some(other) => {
                    return Err(StoreError::Config(format!(
                        "'drop' is \"own\" or \"refuse\", not {other:?}"
                    )))
                }
            };
            std::fs::create_dir_all(root)
                .map_err(|e| StoreError::io(format!("creating {root}"), &e))?;
            Ok(DiskDocumentStore {
                root: PathBuf::from(root),
                drop,
                collections: Mutex::new(HashMap::new()),
            })
        })
        .required(&["root"])
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Collection>> {
        self.collections.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn file(&self, collection: &str) -> PathBuf {
        self.root.join(format!("{collection}.json"))
    }

    /// Writes the collection's documents to its file.
    fn save(&self, collection: &str, held: &Collection) -> StoreResult<()> {
        let path = self.file(collection);
        let text = serde_json::to_string(&held.docs)
            .map_err(|e| StoreError::Internal(format!("encoding {collection}: {e}")))?;
        std::fs::write(&path, text)
            .map_err(|e| StoreError::io(format!("writing {}", path.display()), &e))
    }

    fn note(&self, line: &str) -> StoreResult<()> {
        let path = self.root.join(".drops");
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| writeln!(f, "{line}"))
            .map_err(|e| StoreError::io(format!("writing {}", path.display()), &e))
    }

    fn matching(&self, collection: &str, filter: &Filter) -> Vec<Document> {
        self.lock()
            .get(collection)
            .map(|c| {
                c.docs
                    .iter()
                    .filter(|d| eval::matches(d, filter))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The values of `fields` in `doc`, for a unique index; `None` when one is absent (not indexed).
fn key_of(doc: &Document, fields: &[String]) -> Option<Vec<Value>> {
    fields
        .iter()
        .map(|f| eval::resolve(doc, f).first().map(|v| (*v).clone()))
        .collect()
}

/// Refuses `doc` when a unique index already holds its key in a document other than `skip`.
fn check_unique(held: &Collection, doc: &Document, skip: Option<usize>) -> StoreResult<()> {
    for fields in &held.unique {
        let Some(key) = key_of(doc, fields) else {
            continue;
        };
        let clash = held.docs.iter().enumerate().any(|(i, other)| {
            Some(i) != skip
                && key_of(other, fields).is_some_and(|k| {
                    k.len() == key.len() && k.iter().zip(&key).all(|(a, b)| eval::json_eq(a, b))
                })
        });
        if clash {
            return Err(StoreError::DuplicateKey(format!(
                "a document with that {} exists",
                fields.join(", ")
            )));
        }
    }
    Ok(())
}

impl FirstMatchWriter for DiskDocumentStore {
    fn change_first(
        &self,
        collection: &str,
        filter: &Filter,
        change: &Change<'_>,
        upsert_doc: Option<UpsertDoc<'_>>,
    ) -> StoreResult<Images> {
        let mut all = self.lock();
        let held = all.entry(collection.to_string()).or_default();
        let found = held.docs.iter().position(|d| eval::matches(d, filter));
        let images = match found {
            Some(i) => {
                let before = held.docs[i].clone();
                let after = post_image(&before, change)?;
                match &after {
                    Some(doc) => {
                        check_unique(held, doc, Some(i))?;
                        held.docs[i] = doc.clone();
                    }
                    None => {
                        held.docs.remove(i);
                    }
                }
                (Some(before), after)
            }
            None => match upsert_doc {
                Some(make) => {
                    let doc = make()?;
                    check_unique(held, &doc, None)?;
                    held.docs.push(doc.clone());
                    (None, Some(doc))
                }
                None => return Ok((None, None)),
            },
        };
        self.save(collection, held)?;
        Ok(images)
    }
}

impl DocumentStore for DiskDocumentStore {
    fn find_one(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
    ) -> StoreResult<Option<Document>> {
        let docs = self.query(collection, filter, sort, Some(1), 0)?;
        Ok(docs.into_iter().next())
    }

    fn query(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        let docs = self.matching(collection, filter);
        Ok(eval::window(docs, sort, eval::query_order, limit, offset))
    }

    fn count(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        Ok(self.matching(collection, filter).len() as u64)
    }

    fn insert(&self, collection: &str, doc: &Document) -> StoreResult<()> {
        let mut all = self.lock();
        let held = all.entry(collection.to_string()).or_default();
        check_unique(held, doc, None)?;
        held.docs.push(doc.clone());
        self.save(collection, held)
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
        let mut all = self.lock();
        let held = all.entry(collection.to_string()).or_default();
        let fields: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        if unique && !held.unique.contains(&fields) {
            held.unique.push(fields);
        }
        self.save(collection, held)
    }

    fn drop_collection(&self, collection: &str) -> StoreResult<()> {
        match self.drop {
            DropMode::Own => {
                self.lock().remove(collection);
                let path = self.file(collection);
                match std::fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(StoreError::io(format!("removing {}", path.display()), &e))
                    }
                }
                self.note(&format!("dropped {collection}"))
            }
            DropMode::Refuse => {
                self.note(&format!("refused {collection}"))?;
                Err(StoreError::unimplemented("drop_collection"))
            }
            DropMode::Default => {
                agent_env_plugin_sdk::stores::document::delete_one_by_one(self, collection)
            }
        }
    }
}

fn main() {
    Plugin::new("agentenv-fixture-documents", "0.1.0")
        .store(DiskDocumentStore::class())
        .serve()
}
