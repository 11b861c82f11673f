//! The recorded instances a list shows, newest first, read as they are asked for: each store a page
//! at a time, merged with the instances only a journal here keeps. A whole list (`--limit 0`) holds
//! a page of each store at once, never every instance: an instance can be tens of megabytes (its
//! steps, a verifier's rows), and reading them all at once held 480 MB for 20,000 instances.
//!
//! Each store's next page is read right after the place its page before ended (a [`Cursor`]: the
//! last instance's start and id), not at an offset: a run recorded, or an instance removed, by
//! another process while a list is read moves every later instance, and an offset then read some
//! twice or skipped some.

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::run::heartbeat;
use crate::run::recorded::cursor::{self, Cursor};
use crate::run::recorded::newest_started_first;
use crate::run::recorder::INSTANCES;
use crate::stores::error::StoreError;
use crate::stores::{Document, DocumentStore, Filter, Sort};

/// The most instances read from one store at a time: a page's whole documents are held while it
/// is read, and only the fields a list shows ([`listed_fields`]) are kept of each.
pub(super) const PAGE: usize = 200;

/// The instances `keep` keeps, newest first: of the stores (read with the store-side filter
/// `narrowed`, in order), then of the journal's documents. Of two started at the same moment, the
/// one of the earlier source comes first, and of one store the one of the smaller id. After a
/// store's error, nothing more.
pub(super) struct Newest<'a, K> {
    sources: Vec<Source<'a>>,
    narrowed: &'a Filter,
    keep: K,
    failed: bool,
}

/// One store read a page at a time, or the journal's documents.
struct Source<'a> {
    /// `None` for the journal's documents, all in `unread` from the start.
    store: Option<&'a dyn DocumentStore>,
    /// Read and kept, not yet handed out: newest first.
    unread: VecDeque<Document>,
    /// The place right after the last document read, once a page was.
    after: Option<Cursor>,
    /// How many the next read asks for.
    page: usize,
    /// Whether the store has no more.
    ended: bool,
}

impl<'a, K: Fn(&Document) -> bool> Newest<'a, K> {
    /// The instances of `stores` and `journal` that `keep` keeps. `up_to`, when the list stops at so
    /// many, makes a short list read a short page first, then pages twice as large up to [`PAGE`].
    pub(super) fn new<'j>(
        stores: &'a [Arc<dyn DocumentStore>],
        narrowed: &'a Filter,
        keep: K,
        journal: impl IntoIterator<Item = &'j Document>,
        up_to: Option<usize>,
    ) -> Self {
        let page = up_to.map_or(PAGE, |n| n.clamp(1, PAGE));
        let mut sources: Vec<Source<'a>> = stores
            .iter()
            .map(|store| Source {
                store: Some(store.as_ref()),
                unread: VecDeque::new(),
                after: None,
                page,
                ended: false,
            })
            .collect();
        sources.push(Source {
            store: None,
            unread: journal
                .into_iter()
                .filter(|d| keep(d))
                .cloned()
                .map(listed_fields)
                .collect(),
            after: None,
            page,
            ended: true,
        });
        Newest {
            sources,
            narrowed,
            keep,
            failed: false,
        }
    }
}

impl<K: Fn(&Document) -> bool> Iterator for Newest<'_, K> {
    type Item = Result<Document, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let mut newest: Option<usize> = None;
        for i in 0..self.sources.len() {
            if let Err(e) = self.sources[i].fill(self.narrowed, &self.keep) {
                self.failed = true;
                return Some(Err(e));
            }
            let Some(head) = self.sources[i].unread.front() else {
                continue;
            };
            let newer = match newest.and_then(|n| self.sources[n].unread.front()) {
                Some(best) => newest_started_first(head, best) == Ordering::Less,
                None => true,
            };
            if newer {
                newest = Some(i);
            }
        }
        newest.and_then(|i| self.sources[i].unread.pop_front().map(Ok))
    }
}

impl Source<'_> {
    /// Reads pages until one of them holds an instance `keep` keeps, or the store has no more.
    fn fill(
        &mut self,
        narrowed: &Filter,
        keep: &impl Fn(&Document) -> bool,
    ) -> Result<(), StoreError> {
        let Some(store) = self.store else {
            return Ok(());
        };
        let sort = newest_first();
        while self.unread.is_empty() && !self.ended {
            let (start, batch) = match &self.after {
                None => (
                    0,
                    store.query(INSTANCES, narrowed, Some(&sort), Some(self.page), 0)?,
                ),
                Some(after) => cursor::page_after(store, narrowed, &sort, after, self.page as u64)?,
            };
            let read = batch.len();
            if let Some(last) = batch.last() {
                self.after = Some(Cursor::after(last, &sort, start + read as u64));
            }
            self.unread
                .extend(batch.into_iter().filter(|d| keep(d)).map(listed_fields));
            self.ended = read < self.page;
            self.page = self.page.saturating_mul(2).min(PAGE);
        }
        Ok(())
    }
}

/// Newest first, of one store: of two started at the same moment, the one of the smaller id (as
/// the explorer lists them), so each instance has a place of its own a page can end at.
fn newest_first() -> Sort {
    Sort::by("started_at_utc", true).then("instance_id", false)
}

/// Of an instance, the fields a list shows and those its status is told from (its heartbeat, the
/// error a later run marked it with, each verifier's score): the rest, its steps and what its
/// verifiers wrote, is dropped.
pub(super) fn listed_fields(mut doc: Document) -> Document {
    const SHOWN: [&str; 11] = [
        "instance_id",
        "task_id",
        "task_version",
        "status",
        "error",
        "started_at_utc",
        "completed_at_utc",
        "ended_at_utc",
        heartbeat::HEARTBEAT_AT,
        heartbeat::HEARTBEAT_SECONDS,
        heartbeat::RUN_HOST,
    ];
    let metadata = doc
        .remove("context")
        .and_then(|c| c.get("metadata").cloned())
        .and_then(|m| match m {
            Value::Object(m) => Some(m),
            _ => None,
        });
    // A running one that records no heartbeat is judged by its steps' records too (their times
    // and durations): only those are kept of them.
    let judged_by_steps = !doc.contains_key(heartbeat::HEARTBEAT_AT)
        && doc.get("status").and_then(Value::as_str) == Some("running");
    let steps = match judged_by_steps {
        false => Vec::new(),
        true => ["completed_steps", "running_steps"]
            .into_iter()
            .filter_map(|list| Some((list, doc.get(list)?.as_array()?.clone())))
            .collect(),
    };
    doc.retain(|key, _| SHOWN.contains(&key.as_str()));
    for (list, entries) in steps {
        let kept: Vec<Value> = entries
            .iter()
            .filter_map(Value::as_object)
            .map(|step| {
                let times = step
                    .iter()
                    .filter(|(key, _)| key.as_str() == "duration_seconds" || key.ends_with("_utc"));
                Value::Object(times.map(|(k, v)| (k.clone(), v.clone())).collect())
            })
            .collect();
        doc.insert(list.into(), Value::Array(kept));
    }
    if let Some(metadata) = metadata {
        let mut kept = Map::new();
        if let Some(group) = metadata.get("run_group_id") {
            kept.insert("run_group_id".into(), group.clone());
        }
        let scores = crate::run::recorded::verifier_scores(&metadata);
        if !scores.is_empty() {
            let verifications: Map<String, Value> = scores
                .into_iter()
                .map(|(id, score)| (id, json!({ "score": score })))
                .collect();
            kept.insert("verifications".into(), Value::Object(verifications));
        }
        doc.insert("context".into(), json!({ "metadata": kept }));
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::super::watched::Watched;
    use super::*;

    fn instance(id: &str, second: usize) -> Document {
        json!({"instance_id": id, "task_id": "t", "started_at_utc": format!("2026-01-01T00:{:02}:{:02}.000000Z", second / 60, second % 60)})
            .as_object()
            .unwrap()
            .clone()
    }

    fn ids(docs: impl Iterator<Item = Result<Document, StoreError>>) -> Vec<String> {
        docs.map(|d| d.unwrap()["instance_id"].as_str().unwrap().to_string())
            .collect()
    }

    /// A whole list reads a store's next page only once the list has come to it, so it holds a page
    /// of each store at a time, whatever the store holds.
    #[test]
    fn a_page_is_read_only_when_the_list_comes_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Watched::new(dir.path().join("a.db")));
        let total = 2 * PAGE + 7;
        for n in 0..total {
            store
                .insert(INSTANCES, &instance(&format!("i-{n:04}"), n))
                .unwrap();
        }
        let stores: Vec<Arc<dyn DocumentStore>> = vec![store.clone()];
        let all = Filter::all();
        let mut newest = Newest::new(&stores, &all, |_: &Document| true, &[], None);
        assert_eq!(ids(newest.by_ref().take(PAGE)).len(), PAGE);
        assert_eq!(store.asked().len(), 1, "{:?}", store.asked());
        assert_eq!(
            ids(newest.by_ref().take(1)),
            [format!("i-{:04}", total - PAGE - 1)]
        );
        assert_eq!(store.asked().len(), 2);
        assert_eq!(newest.count(), total - PAGE - 1);
        // Each page after the first reads the last of the page before again, to see nothing moved.
        assert_eq!(store.documents_read(), total + 2);
    }

    /// Runs recorded by another process, and instances it removes, while a list is read move the
    /// store's later instances: each page still starts right after the last one listed, so every
    /// instance there from the start is listed once, in order, ties by id.
    #[test]
    fn a_store_changing_between_pages_lists_each_instance_once() {
        use agent_env_test_support::{Forwarding, Hooks};
        use std::sync::Mutex;

        /// After answering each page (a read of more than one), records three runs newer than
        /// any, or removes the two newest of the instances there from the start, in turn.
        struct Churn {
            pages: Mutex<usize>,
            removable: Mutex<Vec<String>>,
        }
        impl Hooks for Churn {
            fn query(
                &self,
                inner: &dyn DocumentStore,
                c: &str,
                f: &Filter,
                s: Option<&Sort>,
                limit: Option<usize>,
                offset: usize,
            ) -> StoreResult<Vec<Document>> {
                let answer = inner.query(c, f, s, limit, offset)?;
                if c == INSTANCES && limit.is_some_and(|l| l > 1) {
                    let mut pages = self.pages.lock().unwrap();
                    *pages += 1;
                    if *pages % 2 == 1 {
                        for k in 0..3 {
                            let id = format!("new-{pages}-{k}");
                            inner.insert(INSTANCES, &instance(&id, 1000 + *pages * 3 + k))?;
                        }
                    } else {
                        for id in self.removable.lock().unwrap().drain(..2) {
                            inner.delete(INSTANCES, &Filter::eq("instance_id", id.as_str()))?;
                        }
                    }
                }
                Ok(answer)
            }
        }

        use crate::stores::local::LocalSqliteDocumentStore;
        use crate::stores::StoreResult;
        let dir = tempfile::tempdir().unwrap();
        let sqlite = LocalSqliteDocumentStore::new(dir.path().join("a.db"));
        // Two of each start, so ties are read across pages too.
        let originals: Vec<(String, usize)> =
            (0..40).map(|n| (format!("i-{n:04}"), n / 2)).collect();
        for (id, second) in &originals {
            sqlite.insert(INSTANCES, &instance(id, *second)).unwrap();
        }
        let mut expected = originals.clone();
        expected.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let expected: Vec<String> = expected.into_iter().map(|(id, _)| id).collect();
        let churn = Churn {
            pages: Mutex::new(0),
            removable: Mutex::new(expected.clone()),
        };
        let store: Arc<dyn DocumentStore> = Arc::new(Forwarding::new(Arc::new(sqlite), churn));
        let stores = vec![store];
        let all = Filter::all();
        let listed = ids(Newest::new(
            &stores,
            &all,
            |_: &Document| true,
            &[],
            Some(2),
        ));
        assert_eq!(listed, expected);
    }

    /// The stores and the journal are merged newest first; of two started at the same moment, the
    /// earlier source's comes first, and `keep` drops the journal's as it drops the stores'.
    #[test]
    fn stores_and_the_journal_are_merged_newest_first() {
        use crate::stores::local::LocalSqliteDocumentStore;
        let dir = tempfile::tempdir().unwrap();
        let a = LocalSqliteDocumentStore::new(dir.path().join("a.db"));
        let b = LocalSqliteDocumentStore::new(dir.path().join("b.db"));
        for (store, id, second) in [(&a, "a1", 1), (&a, "a5", 5), (&b, "b3", 3), (&b, "b5", 5)] {
            store.insert(INSTANCES, &instance(id, second)).unwrap();
        }
        // Newest first, as `Sources` holds them.
        let journal = [instance("skip", 6), instance("j5", 5), instance("j4", 4)];
        let stores: Vec<Arc<dyn DocumentStore>> = vec![Arc::new(a), Arc::new(b)];
        let all = Filter::all();
        let keep = |d: &Document| d["instance_id"] != "skip";
        let merged = Newest::new(&stores, &all, keep, &journal, None);
        assert_eq!(ids(merged), ["a5", "b5", "j5", "j4", "b3", "a1"]);
    }
}
