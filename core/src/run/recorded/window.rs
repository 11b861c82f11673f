//! One window of several stores' answers merged in one order, read without fetching what comes
//! before it. Each store gives only its share of the window: how many of the skipped documents are
//! the first store's is found by comparing single documents (a binary search, as two sorted lists'
//! `k`-th element is found), so a deep page reads about as much as the first does, and holds no
//! more than the window. The local SQLite store keeps a listing's order between these single
//! looks while its database holds still, so the search sorts each such store's keys once or twice,
//! not once a look.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::stores::document::eval;
use crate::stores::error::StoreResult;
use crate::stores::{Document, DocumentStore, Filter, Sort};

/// What is read: a collection's documents that match a filter, in one order.
pub(super) struct Listing<'a> {
    pub collection: &'a str,
    pub filter: &'a Filter,
    pub sort: &'a Sort,
}

impl Listing<'_> {
    /// `limit` (> 0) documents from `offset` of what `sources` hold, merged in order; of equal
    /// ones, the earlier store's come first.
    pub fn window(
        &self,
        sources: &[Arc<dyn DocumentStore>],
        limit: usize,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        let (first, rest) = match sources {
            [] => return Ok(Vec::new()),
            [only] => return self.of(only.as_ref(), limit, offset),
            [first, rest @ ..] => (first.as_ref(), rest),
        };
        let from_first = self.taken_from_first(first, rest, offset)?;
        let mut merged = self.of(first, limit, from_first)?;
        merged.extend(self.window(rest, limit, offset - from_first)?);
        // A stable sort keeps the first store's ahead of equal ones from the rest.
        Ok(eval::window(
            merged,
            Some(self.sort),
            eval::query_order,
            Some(limit),
            0,
        ))
    }

    /// `limit` documents of one store from `offset`.
    fn of(
        &self,
        store: &dyn DocumentStore,
        limit: usize,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        store.query(
            self.collection,
            self.filter,
            Some(self.sort),
            Some(limit),
            offset,
        )
    }

    /// How many of the merged first `k` documents are `first`'s (the rest are `rest`'s): the
    /// smallest `i` for which `first`'s document at `i` is not among them. Quick looks settle the
    /// common cases (the rest holding nothing, or one side wholly before the other) before the
    /// binary search.
    fn taken_from_first(
        &self,
        first: &dyn DocumentStore,
        rest: &[Arc<dyn DocumentStore>],
        k: usize,
    ) -> StoreResult<usize> {
        if k == 0 {
            return Ok(0);
        }
        if self.window(rest, 1, 0)?.is_empty() {
            return Ok(k);
        }
        let among = |i: usize| self.first_is_among(first, rest, k, i);
        if among(k - 1)? {
            return Ok(k);
        }
        if !among(0)? {
            return Ok(0);
        }
        // `among` holds at `lo - 1` and not at `hi`: the answer is in `lo..=hi`.
        let (mut lo, mut hi) = (1, k - 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if among(mid)? {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// Whether `first`'s document at `i` (`i < k`) is among the merged first `k`, with `rest`
    /// giving the other `k - i`: it is there, and it comes before (or ties) the last of those.
    fn first_is_among(
        &self,
        first: &dyn DocumentStore,
        rest: &[Arc<dyn DocumentStore>],
        k: usize,
        i: usize,
    ) -> StoreResult<bool> {
        let Some(mine) = self.of(first, 1, i)?.pop() else {
            return Ok(false);
        };
        Ok(match self.window(rest, 1, k - i - 1)?.pop() {
            None => true,
            Some(theirs) => eval::query_order(&mine, &theirs, self.sort) != Ordering::Greater,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stores::local::LocalSqliteDocumentStore;
    use agent_env_test_support::{CountedQueries, Forwarding};
    use std::sync::atomic::{AtomicUsize, Ordering as Atomic};

    fn store(
        dir: &std::path::Path,
        name: &str,
        ns: impl Iterator<Item = i64>,
        handed_out: &Arc<AtomicUsize>,
    ) -> Arc<dyn DocumentStore> {
        let inner = LocalSqliteDocumentStore::new(dir.join(name));
        for n in ns {
            let doc = serde_json::json!({"n": n, "from": name});
            let serde_json::Value::Object(doc) = doc else {
                unreachable!()
            };
            inner.insert("c", &doc).expect("inserted");
        }
        Arc::new(Forwarding::new(
            Arc::new(inner),
            CountedQueries(handed_out.clone()),
        ))
    }

    /// What the window should be: everything read, merged, then windowed.
    fn whole(
        listing: &Listing<'_>,
        sources: &[Arc<dyn DocumentStore>],
        limit: usize,
        offset: usize,
    ) -> Vec<Document> {
        let mut all = Vec::new();
        for s in sources {
            all.extend(
                s.query(
                    listing.collection,
                    listing.filter,
                    Some(listing.sort),
                    None,
                    0,
                )
                .expect("read"),
            );
        }
        eval::window(
            all,
            Some(listing.sort),
            eval::query_order,
            Some(limit),
            offset,
        )
    }

    /// Every window of two interleaved stores (ties between them included: the first store's
    /// first) is what merging everything gives, empty stores and windows past the end too.
    #[test]
    fn every_window_is_the_merge_of_everything() {
        let tmp = tempfile::tempdir().expect("temp");
        let counted = Arc::new(AtomicUsize::new(0));
        let a = store(tmp.path(), "a.db", (0..40).map(|n| n * 3), &counted);
        let b = store(tmp.path(), "b.db", (0..30).map(|n| n * 2), &counted);
        let empty = store(tmp.path(), "e.db", std::iter::empty(), &counted);
        let filter = Filter::all();
        for sort in [Sort::by("n", true), Sort::by("n", false)] {
            let listing = Listing {
                collection: "c",
                filter: &filter,
                sort: &sort,
            };
            for sources in [
                vec![a.clone(), b.clone()],
                vec![b.clone(), a.clone()],
                vec![a.clone(), empty.clone()],
                vec![empty.clone(), b.clone()],
                vec![a.clone(), b.clone(), empty.clone()],
            ] {
                for limit in [1, 3, 7] {
                    for offset in (0..75).step_by(4) {
                        assert_eq!(
                            listing.window(&sources, limit, offset).expect("window"),
                            whole(&listing, &sources, limit, offset),
                            "limit {limit} offset {offset}"
                        );
                    }
                }
            }
        }
    }

    /// A deep window reads its own documents and a few single ones, not those it skips.
    #[test]
    fn a_deep_window_reads_no_document_it_skips() {
        let tmp = tempfile::tempdir().expect("temp");
        let counted = Arc::new(AtomicUsize::new(0));
        let a = store(tmp.path(), "a.db", (0..1500).map(|n| n * 2), &counted);
        let b = store(tmp.path(), "b.db", (0..1500).map(|n| n * 2 + 1), &counted);
        let filter = Filter::all();
        let sort = Sort::by("n", true);
        let listing = Listing {
            collection: "c",
            filter: &filter,
            sort: &sort,
        };
        counted.store(0, Atomic::SeqCst);
        let page = listing.window(&[a, b], 10, 2900).expect("window");
        let ns: Vec<i64> = page.iter().filter_map(|d| d["n"].as_i64()).collect();
        assert_eq!(ns, (90..100).rev().collect::<Vec<i64>>());
        let read = counted.load(Atomic::SeqCst);
        // Each store's share of the window, and two documents per step of the search (log2 2900 < 12).
        assert!(read <= 2 * 10 + 2 * 2 * 14, "{read} documents read");
    }

    /// The single documents a deep window's search asks each store for do not each read and sort
    /// all of its keys: a SQLite store orders a listing at most twice (once for its first look,
    /// once whole), and a page of the same listing after it orders nothing again.
    #[test]
    fn a_deep_window_orders_each_stores_keys_at_most_twice() {
        let tmp = tempfile::tempdir().expect("temp");
        let fill = |name: &str, ns: &mut dyn Iterator<Item = i64>| {
            let store = Arc::new(LocalSqliteDocumentStore::new(tmp.path().join(name)));
            for n in ns {
                let serde_json::Value::Object(doc) = serde_json::json!({"n": n}) else {
                    unreachable!()
                };
                store.insert("c", &doc).expect("inserted");
            }
            store
        };
        let a = fill("a.db", &mut (0..1500).map(|n| n * 2));
        let b = fill("b.db", &mut (0..1500).map(|n| n * 2 + 1));
        let filter = Filter::all();
        let sort = Sort::by("n", true);
        let listing = Listing {
            collection: "c",
            filter: &filter,
            sort: &sort,
        };
        let sources: [Arc<dyn DocumentStore>; 2] = [a.clone(), b.clone()];
        for (offset, first) in [(2000, 999), (2010, 989)] {
            let page = listing.window(&sources, 10, offset).expect("window");
            let ns: Vec<i64> = page.iter().filter_map(|d| d["n"].as_i64()).collect();
            assert_eq!(ns, (first - 9..=first).rev().collect::<Vec<i64>>());
            let orderings = (a.key_orderings(), b.key_orderings());
            assert!(orderings.0 <= 2 && orderings.1 <= 2, "{orderings:?}");
        }
    }
}
