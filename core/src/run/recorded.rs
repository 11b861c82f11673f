//! Where runs are recorded, read as one: a bundle run writes its tasks and instances to the @local
//! store (`local.db`), a stored task's run to the configured document store. [`Recorded`] reads both
//! as a single document store, so `task list` and the explorer see the same runs.

use std::cmp::Ordering;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::session::Session;
use crate::stores::document::eval;
use crate::stores::error::{StoreError, StoreResult};
use crate::stores::{Document, DocumentStore, Filter, Sort};

use super::local_stores;

pub mod cursor;
mod window;

/// The record stores of a session, read together. Reads merge what each store holds (@local ids
/// live only in the @local store, bare ids only in the configured one, so nothing is counted twice);
/// a sorted window is read as each store's share of it (`window`), not everything before it. Writes
/// are refused, as a run writes to the store its ids belong in.
pub struct Recorded {
    sources: Vec<Arc<dyn DocumentStore>>,
    left_out: Option<LeftOut>,
}

/// The configured store, left out of what is read.
struct LeftOut {
    /// The sentence that says so, with the store's error.
    said: String,
    /// The store's error alone.
    error: String,
}

impl Recorded {
    /// The @local store under the session's state root, then the configured document store. A
    /// configured store that cannot be built, or that does not answer (a server that is down), is
    /// left out, so the runs this machine recorded are still read; [`Recorded::left_out`] says why.
    /// It is asked by a read of the instances, not by `probe`, which may also ask for the right to
    /// write: a user who may only read still sees the stored runs.
    pub fn open(session: &Session) -> Recorded {
        let local = local_stores::open(&session.paths().state_root()).documents;
        let configured = session
            .stores()
            .document()
            .map_err(|e| e.to_string())
            .and_then(|store| {
                store
                    .count(super::recorder::INSTANCES, &Filter::all())
                    .map(|_| store)
                    .map_err(|e| e.to_string())
            });
        match configured {
            Ok(configured) => Recorded::of(vec![local, configured]),
            Err(error) => Recorded {
                sources: vec![local],
                left_out: Some(LeftOut {
                    said: format!(
                        "the configured document store can't be read, so stored tasks and their instances are left out: {error}"
                    ),
                    error,
                }),
            },
        }
    }

    /// The given stores, read in this order.
    pub fn of(sources: Vec<Arc<dyn DocumentStore>>) -> Recorded {
        Recorded {
            sources,
            left_out: None,
        }
    }

    /// The stores read, in order: what is deleted from the records is deleted in the store that
    /// holds it.
    pub fn stores(&self) -> &[Arc<dyn DocumentStore>] {
        &self.sources
    }

    /// Why the configured store is not read, when it is not.
    pub fn left_out(&self) -> Option<&str> {
        self.left_out.as_ref().map(|l| l.said.as_str())
    }

    /// The error the configured store answered, when it is not read: for a message that says on
    /// its own what is left out.
    pub fn unread_because(&self) -> Option<&str> {
        self.left_out.as_ref().map(|l| l.error.as_str())
    }

    fn read_only(&self) -> StoreError {
        StoreError::NotSupported(
            "the recorded runs are read here, not written; a run writes to the store its ids belong in"
                .into(),
        )
    }
}

/// Where to find out what is wrong with the configured document store that answered `error`:
/// `agent-env config check`, unless the error names it already.
pub fn config_check_hint(error: &str) -> &'static str {
    if error.contains("config check") {
        ""
    } else {
        "; agent-env config check says what is wrong with it"
    }
}

/// An instance's scores as its run reported them: keyed by the id of the step whose `verifier_id` the
/// score is under (`context.metadata.verifications.<verifier>.score`), in step order. The steps come
/// from the task's recorded version, read once per version; an instance whose task version is gone
/// keeps its scores under the verifier ids.
pub struct InstanceScores<'a> {
    sources: &'a dyn DocumentStore,
    steps: std::cell::RefCell<std::collections::HashMap<TaskVersion, Option<Steps>>>,
}

/// A task's id and version.
type TaskVersion = (String, i64);
/// A task's step documents.
pub type Steps = Vec<Map<String, Value>>;

impl<'a> InstanceScores<'a> {
    pub fn new(sources: &'a dyn DocumentStore) -> Self {
        InstanceScores {
            sources,
            steps: Default::default(),
        }
    }

    /// The instance's scores, keyed by the verifying step's id.
    pub fn of(&self, doc: &Document) -> Map<String, Value> {
        let empty = Map::new();
        let metadata = doc
            .get("context")
            .and_then(|c| c.get("metadata"))
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        self.with_steps(doc, |steps| match steps {
            Some(steps) => super::outcome::step_scores(steps.iter(), metadata)
                .into_iter()
                .map(|(step, score)| (step, json!(score)))
                .collect(),
            None => verifier_scores(metadata),
        })
    }

    /// The steps of the instance's task at its recorded version, in the task's order; `None` when
    /// that version is no longer recorded.
    pub fn steps_of(&self, doc: &Document) -> Option<Steps> {
        self.with_steps(doc, |steps| steps.cloned())
    }

    /// `f` given the steps of the instance's task at its recorded version, read once per version.
    fn with_steps<R>(&self, doc: &Document, f: impl FnOnce(Option<&Steps>) -> R) -> R {
        let key = (
            doc.get("task_id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            doc.get("task_version").and_then(Value::as_i64).unwrap_or(0),
        );
        let mut known = self.steps.borrow_mut();
        let steps = known
            .entry(key)
            .or_insert_with_key(|(id, version)| self.task_steps(id, *version));
        f(steps.as_ref())
    }

    /// The steps of `task_id` at `version`, from whichever source keeps the task.
    fn task_steps(&self, task_id: &str, version: i64) -> Option<Steps> {
        let filter = Filter::of([("id", json!(task_id)), ("version", json!(version))]);
        let task = self
            .sources
            .find_one(super::stored_task::TASKS, &filter, None)
            .ok()??;
        let steps = task.get("steps")?.as_array()?;
        Some(
            steps
                .iter()
                .filter_map(|s| s.as_object().cloned())
                .collect(),
        )
    }
}

/// Each verifier's score, from `verifications`, keyed by the verifier id.
pub fn verifier_scores(metadata: &Map<String, Value>) -> Map<String, Value> {
    metadata
        .get("verifications")
        .and_then(Value::as_object)
        .map(|v| {
            v.iter()
                .filter_map(|(id, row)| Some((id.clone(), row.get("score")?.clone())))
                .collect()
        })
        .unwrap_or_default()
}

/// Merges each store's answer: sorted, then `offset` skipped, then `limit` kept.
fn merge(
    parts: Vec<Vec<Document>>,
    sort: Option<&Sort>,
    limit: Option<usize>,
    offset: usize,
) -> Vec<Document> {
    let all: Vec<Document> = parts.into_iter().flatten().collect();
    eval::window(all, sort, eval::query_order, limit, offset)
}

impl DocumentStore for Recorded {
    fn find_one(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
    ) -> StoreResult<Option<Document>> {
        let mut found = Vec::new();
        for store in &self.sources {
            if let Some(doc) = store.find_one(collection, filter, sort)? {
                if sort.is_none() {
                    return Ok(Some(doc));
                }
                found.push(doc);
            }
        }
        Ok(merge(vec![found], sort, Some(1), 0).into_iter().next())
    }

    fn query(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        // A window in order: each store gives its share of it, not everything before it.
        if let (Some(sort), Some(limit)) = (sort, limit.filter(|n| *n > 0)) {
            let listing = window::Listing {
                collection,
                filter,
                sort,
            };
            return listing.window(&self.sources, limit, offset);
        }
        let mut parts = Vec::new();
        for store in &self.sources {
            parts.push(store.query(collection, filter, sort, None, 0)?);
        }
        Ok(merge(parts, sort, limit, offset))
    }

    fn count(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        let mut total = 0;
        for store in &self.sources {
            total += store.count(collection, filter)?;
        }
        Ok(total)
    }

    fn insert(&self, _: &str, _: &Document) -> StoreResult<()> {
        Err(self.read_only())
    }

    fn update(
        &self,
        _: &str,
        _: &Filter,
        _: &crate::stores::document::UpdateSpec,
        _: bool,
    ) -> StoreResult<u64> {
        Err(self.read_only())
    }

    fn update_one_and_get(
        &self,
        _: &str,
        _: &Filter,
        _: &crate::stores::document::UpdateSpec,
        _: bool,
        _: bool,
    ) -> StoreResult<Option<Document>> {
        Err(self.read_only())
    }

    fn replace(&self, _: &str, _: &Filter, _: &Document, _: bool) -> StoreResult<u64> {
        Err(self.read_only())
    }

    fn delete(&self, _: &str, _: &Filter) -> StoreResult<u64> {
        Err(self.read_only())
    }

    fn ensure_index(&self, _: &str, _: &[&str], _: bool) -> StoreResult<()> {
        Ok(())
    }

    fn probe(&self) -> StoreResult<()> {
        self.sources.iter().try_for_each(|s| s.probe())
    }
}

/// Newest first by `started_at_utc` (to the microsecond), as `task list` shows instances.
pub fn newest_started_first(a: &Document, b: &Document) -> Ordering {
    let started = |d: &Document| {
        d.get("started_at_utc")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    started(b).cmp(&started(a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stores::local::LocalSqliteDocumentStore;
    use serde_json::json;

    fn doc(v: serde_json::Value) -> Document {
        match v {
            serde_json::Value::Object(m) => m,
            _ => Document::new(),
        }
    }

    fn store(
        dir: &std::path::Path,
        name: &str,
        docs: &[serde_json::Value],
    ) -> Arc<dyn DocumentStore> {
        let s = Arc::new(LocalSqliteDocumentStore::new(dir.join(name)));
        for d in docs {
            s.insert("c", &doc(d.clone())).expect("inserted");
        }
        s
    }

    #[test]
    fn reads_merge_both_stores_in_order_and_page_across_them() {
        let tmp = tempfile::tempdir().expect("temp");
        let a = store(tmp.path(), "a.db", &[json!({"n": 1}), json!({"n": 4})]);
        let b = store(tmp.path(), "b.db", &[json!({"n": 2}), json!({"n": 3})]);
        let both = Recorded::of(vec![a, b]);
        let sort = Sort::by("n", true);
        let ns = |docs: Vec<Document>| docs.iter().map(|d| d["n"].clone()).collect::<Vec<_>>();
        let page = both
            .query("c", &Filter::all(), Some(&sort), Some(2), 1)
            .expect("read");
        assert_eq!(ns(page), [json!(3), json!(2)]);
        assert_eq!(both.count("c", &Filter::all()).expect("count"), 4);
        let newest = both
            .find_one("c", &Filter::all(), Some(&sort))
            .expect("one");
        assert_eq!(newest.expect("found")["n"], 4);
        let two = both.find_one("c", &Filter::eq("n", 2), None).expect("one");
        assert_eq!(two.expect("found")["n"], 2);
        assert!(both.insert("c", &Document::new()).is_err());
    }
}
