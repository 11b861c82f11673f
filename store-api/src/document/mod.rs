//! The document store: collections of JSON documents, queried with a small backend-neutral algebra.

pub mod eval;
pub mod first_match;
pub mod ids;
pub mod query;
pub mod versioned;

use std::collections::HashSet;

use serde_json::Value;

pub use query::{Document, Filter, Predicate, Sort, SortKey, UpdateSpec};

use crate::error::StoreResult;

/// Collections of JSON documents. Backend ids (Mongo's `_id`) never appear in returned documents.
pub trait DocumentStore: Send + Sync {
    /// The first document matching `filter`, in `sort` order when given.
    fn find_one(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
    ) -> StoreResult<Option<Document>>;

    /// Matching documents: sorted, then `offset` skipped, then `limit` kept (0 or none = all).
    fn query(
        &self,
        collection: &str,
        filter: &Filter,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>>;

    /// How many documents match.
    fn count(&self, collection: &str, filter: &Filter) -> StoreResult<u64>;

    /// Inserts one document; [`StoreError::DuplicateKey`](crate::StoreError::DuplicateKey) on a unique
    /// index violation.
    fn insert(&self, collection: &str, doc: &Document) -> StoreResult<()>;

    /// Updates the first match; 1 when it matched, 0 on a miss. With `upsert`, a miss inserts the document
    /// synthesized from the filter's equalities and the update (which a unique index may refuse).
    fn update(
        &self,
        collection: &str,
        filter: &Filter,
        update: &UpdateSpec,
        upsert: bool,
    ) -> StoreResult<u64>;

    /// Updates the first match and returns its post-image (or pre-image when `!return_after`); `None` on a
    /// miss, and for an upsert with `!return_after`.
    fn update_one_and_get(
        &self,
        collection: &str,
        filter: &Filter,
        update: &UpdateSpec,
        return_after: bool,
        upsert: bool,
    ) -> StoreResult<Option<Document>>;

    /// Replaces the first match wholesale; 1 or 0. With `upsert`, a miss inserts `doc`.
    fn replace(
        &self,
        collection: &str,
        filter: &Filter,
        doc: &Document,
        upsert: bool,
    ) -> StoreResult<u64>;

    /// Deletes the first match; 1 or 0.
    fn delete(&self, collection: &str, filter: &Filter) -> StoreResult<u64>;

    /// Deletes every document matching `filter`; how many went. A document that starts to match
    /// while it runs may stay.
    ///
    /// The default deletes the matches one by one ([`delete_matches_one_by_one`]: with
    /// [`DocumentStore::delete`], at most as many times as [`DocumentStore::count`] said plus one, so
    /// a store that reports deletes it does not make cannot keep it looping); it may fail part way,
    /// having deleted some. A store that can delete many at once overrides it: the local SQLite
    /// store and PostgreSQL each delete them all in one transaction, or none. A plugin's store is
    /// asked one document at a time (`store.document.delete`): the protocol has no call that
    /// deletes many.
    fn delete_all(&self, collection: &str, filter: &Filter) -> StoreResult<u64> {
        delete_matches_one_by_one(self, collection, filter)
    }

    /// Makes sure an index on `fields` exists (idempotent); a unique one is enforced by inserts and upserts.
    fn ensure_index(&self, collection: &str, fields: &[&str], unique: bool) -> StoreResult<()>;

    /// Removes the collection: its documents and its indexes, so that nothing of it stays in the store;
    /// a collection that does not exist is no error. Meant for a collection no one else is using (the
    /// conformance kit's own): a writer in another process at the same time may fail or write again.
    ///
    /// The default deletes the documents one by one ([`delete_one_by_one`]: with [`DocumentStore::delete`],
    /// at most as many times as [`DocumentStore::count`] said plus one, so a store that reports deletes it
    /// does not make cannot keep it looping), leaving whatever the store keeps for an empty collection; a
    /// store that can remove a collection whole overrides it. A plugin's store is asked over the wire
    /// (`store.document.drop_collection`) and falls back to this when the plugin cannot.
    fn drop_collection(&self, collection: &str) -> StoreResult<()> {
        delete_one_by_one(self, collection)
    }

    /// Checks that the store can serve requests now (a hosted store reaches its server and is let in):
    /// what `agent-env config check` runs before any work. Stores on this machine have nothing to check.
    fn probe(&self) -> StoreResult<()> {
        Ok(())
    }

    /// Refuses an id this store cannot hold (the reserved `@` prefix; see [`ids::check_id`]).
    fn check_id(&self, id: &str) -> StoreResult<()> {
        ids::check_id(id)
    }

    /// The first document of each distinct id, in request order; missing ids are left out.
    fn find_many_by_id(
        &self,
        collection: &str,
        id_field: &str,
        ids: &[Value],
    ) -> StoreResult<Vec<Document>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let filter = Filter::default().and(id_field, Predicate::In(ids.to_vec()));
        let docs = self.query(collection, &filter, None, None, 0)?;
        let mut seen: Vec<&Value> = Vec::new();
        let mut out = Vec::new();
        for id in ids {
            if seen.iter().any(|s| eval::json_eq(s, id)) {
                continue;
            }
            seen.push(id);
            let first = docs
                .iter()
                .find(|d| d.get(id_field).is_some_and(|v| eval::json_eq(v, id)));
            if let Some(doc) = first {
                out.push(doc.clone());
            }
        }
        Ok(out)
    }

    /// The newest version of each id among the documents matching `filter`, then sorted (absent values
    /// last in both directions), offset and limited.
    #[allow(clippy::too_many_arguments)]
    fn latest_per_id(
        &self,
        collection: &str,
        filter: &Filter,
        id_field: &str,
        version_field: &str,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        let (window, _total) = self.latest_per_id_page(
            collection,
            filter,
            id_field,
            version_field,
            sort,
            limit,
            offset,
        )?;
        Ok(window)
    }

    /// One window of [`DocumentStore::latest_per_id`] and the number of distinct ids in all.
    #[allow(clippy::too_many_arguments)]
    fn latest_per_id_page(
        &self,
        collection: &str,
        filter: &Filter,
        id_field: &str,
        version_field: &str,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<(Vec<Document>, u64)> {
        let latest = reduce_to_latest(
            self.query(collection, filter, None, None, 0)?,
            id_field,
            version_field,
        );
        let total = latest.len() as u64;
        Ok((
            eval::window(latest, sort, eval::latest_order, limit, offset),
            total,
        ))
    }

    /// How many distinct values `id_field` takes among the matching documents.
    fn count_distinct(
        &self,
        collection: &str,
        filter: &Filter,
        id_field: &str,
    ) -> StoreResult<u64> {
        let docs = self.query(collection, filter, None, None, 0)?;
        let ids: HashSet<String> = docs
            .iter()
            .filter_map(|d| d.get(id_field).map(Value::to_string))
            .collect();
        Ok(ids.len() as u64)
    }

    /// The highest `version` of `id`.
    fn latest_version(&self, collection: &str, id: &str) -> StoreResult<Option<Document>> {
        self.find_one(
            collection,
            &Filter::eq("id", id),
            Some(&Sort::by("version", true)),
        )
    }
}

/// Empties `collection` with [`DocumentStore::delete`], one document at a time, at most as many times as
/// [`DocumentStore::count`] said plus one: what [`DocumentStore::drop_collection`] does by default, and
/// what a store that asks another process to drop a collection falls back to when that process cannot.
pub fn delete_one_by_one<S: DocumentStore + ?Sized>(
    store: &S,
    collection: &str,
) -> StoreResult<()> {
    delete_matches_one_by_one(store, collection, &Filter::default())?;
    Ok(())
}

/// Deletes the documents of `collection` that match `filter` with [`DocumentStore::delete`], one at
/// a time until it deletes none, at most as many times as [`DocumentStore::count`] said plus one;
/// the sum of what the deletes reported. What [`DocumentStore::delete_all`] does by default.
pub fn delete_matches_one_by_one<S: DocumentStore + ?Sized>(
    store: &S,
    collection: &str,
    filter: &Filter,
) -> StoreResult<u64> {
    let held = store.count(collection, filter)?;
    let mut deleted = 0;
    for _ in 0..=held {
        match store.delete(collection, filter)? {
            0 => break,
            n => deleted += n,
        }
    }
    Ok(deleted)
}

/// The highest-versioned document per id, in order of each id's first appearance. Documents without the id
/// field are skipped; a missing version ranks lowest; of equal versions the first wins.
pub fn reduce_to_latest(docs: Vec<Document>, id_field: &str, version_field: &str) -> Vec<Document> {
    let mut out: Vec<Document> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for doc in docs {
        let Some(id) = doc
            .get(id_field)
            .filter(|v| !v.is_null())
            .map(Value::to_string)
        else {
            continue;
        };
        match index.get(&id) {
            None => {
                index.insert(id, out.len());
                out.push(doc);
            }
            Some(&i) => {
                if version_rank(&doc, version_field, &out[i]) == std::cmp::Ordering::Greater {
                    out[i] = doc;
                }
            }
        }
    }
    out
}

fn version_rank(a: &Document, field: &str, b: &Document) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (
        a.get(field).filter(|v| !v.is_null()),
        b.get(field).filter(|v| !v.is_null()),
    ) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => eval::compare(x, y).unwrap_or(Ordering::Equal),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::test_stores::OnlyDelete;

    fn ids(docs: &[Document]) -> Vec<String> {
        docs.iter().map(|d| d["id"].to_string()).collect()
    }

    /// A store with `delete` alone deletes every match with the trait's default, one at a time,
    /// says exactly how many went, and keeps every document that does not match.
    #[test]
    fn delete_all_by_default_deletes_every_match_and_keeps_the_rest() {
        let store = OnlyDelete::holding(
            &[
                json!({"id": "a", "status": "completed"}),
                json!({"id": "b", "status": "failed"}),
                json!({"id": "a", "status": "completed"}),
                json!({"id": "c", "status": "completed"}),
                json!({"id": "b", "status": "running"}),
            ],
            false,
        );
        let filter = Filter::default()
            .and("id", Predicate::In(vec![json!("a"), json!("b")]))
            .and("status", Predicate::Ne(json!("running")));
        assert_eq!(store.delete_all("c", &filter).unwrap(), 3);
        assert_eq!(ids(&store.held()), [r#""c""#, r#""b""#]);
        assert_eq!(
            *store.deletes.lock().unwrap(),
            4,
            "three hits and the miss that ends it"
        );
        assert_eq!(store.delete_all("c", &filter).unwrap(), 0);
        assert_eq!(store.held().len(), 2);
    }

    /// A store whose `delete` says it deleted one and deletes nothing is asked at most as many
    /// times as its count said plus one: the default never loops for ever.
    #[test]
    fn delete_all_by_default_stops_when_a_store_reports_deletes_it_does_not_make() {
        let store = OnlyDelete::holding(&[json!({"id": "a"}), json!({"id": "a"})], true);
        let reported = store.delete_all("c", &Filter::eq("id", "a")).unwrap();
        assert_eq!(reported, 3);
        assert_eq!(*store.deletes.lock().unwrap(), 3);
        assert_eq!(store.held().len(), 2);
    }
}
