//! A window of a query (`offset..offset + limit`) that reads only the window's documents: every
//! matching row's sort fields are read first, put in order by the store API's evaluator, and then
//! the window's rows are read whole by id. The answer is exactly `eval::window` over every matching
//! document (ties in insertion order, that is by id), as the evaluator, not the database, orders
//! values: mixed types, missing fields and nulls, and strings as Rust compares them.
//!
//! The evaluator reads a path `a.b.c` from the top-level field `a` alone, so a document holding only
//! the top-level fields a sort's (and an undecided filter's) paths start with sorts and matches as
//! the whole document does.
//!
//! A listing read a page at a time (200 instances, then the next 200) would read every key for each
//! page: the last few sorted listings' whole orders are kept ([`KeptOrder`]), as the ids of their rows,
//! while their rows stay as they were ([`Rows::stamp`]), so the next page of one reads no key.

use std::collections::VecDeque;
use std::sync::Mutex;

use agent_env_store::document::eval;
use agent_env_store::document::query::{Document, Filter, Sort};
use agent_env_store::error::StoreResult;

use crate::blocking::Queries;
use crate::sql::{self, Rows};

/// The documents `offset..offset + limit` (`limit` above 0) of those that match `filter`, ordered by
/// `sort` (by insertion without one), taking the order from `kept` when it holds this listing's.
pub fn window<C: Queries>(
    rows: &Rows<'_, C>,
    kept: &Mutex<KeptOrder>,
    filter: &Filter,
    sort: Option<&Sort>,
    limit: usize,
    offset: usize,
) -> StoreResult<Vec<Document>> {
    let narrowing = sql::narrowing(filter);
    let keys = sort.map_or(&[][..], |s| s.keys.as_slice());
    if keys.is_empty() && narrowing.decides {
        return Ok(rows
            .in_id_order(&narrowing, limit, offset)?
            .into_iter()
            .map(|(_, doc)| doc)
            .collect());
    }
    let mut paths: Vec<&str> = keys.iter().map(|k| k.field.as_str()).collect();
    if !narrowing.decides {
        paths.extend(filter.conditions.keys().map(String::as_str));
    }
    let listing = Listing {
        table: rows.table.qualified.clone(),
        filter: filter.clone(),
        sort: sort.cloned().unwrap_or_default(),
    };
    let seen = lock(kept).stamp_of(&listing);
    if let Some(seen) = seen {
        let stamp = rows.stamp(&narrowing)?;
        if stamp == seen {
            if let Some(ids) = lock(kept).window(&listing, &stamp, limit, offset) {
                return rows.by_ids(&ids);
            }
        }
    }
    let (mut keyed, stamp) = rows.projections(&narrowing, &top_level_fields(&paths))?;
    if !narrowing.decides {
        keyed.retain(|(_, doc)| eval::matches(doc, filter));
    }
    let ids = lock(kept).order(listing, stamp, keyed, limit, offset);
    rows.by_ids(&ids)
}

/// A sorted listing: the same one reads the same rows' same fields in the same order.
#[derive(Debug, Clone, PartialEq)]
struct Listing {
    /// The table, qualified.
    table: String,
    filter: Filter,
    sort: Sort,
}

/// The last few listings a store put in order (a `find_one` with a sort between two pages of a listing
/// is one), each with the [`Rows::stamp`] of its rows then and its whole order when that was kept. Only
/// the rows' ids are kept (8 bytes a row), never a document.
///
/// A first page is cheap without the whole order (the rows past the window's end are only set apart,
/// not sorted), so a listing's first read keeps its whole order only when its window reaches past the
/// middle; the second read of the same listing with its rows unchanged sorts all and keeps it.
#[derive(Debug, Default)]
pub struct KeptOrder {
    /// Most recent first, at most [`KEPT_LISTINGS`].
    last: VecDeque<Last>,
    /// How many times a listing's keys were read and put in order.
    orderings: u64,
}

/// How many listings' orders are kept.
const KEPT_LISTINGS: usize = 4;

#[derive(Debug)]
struct Last {
    listing: Listing,
    stamp: String,
    /// Every row's id in the listing's order, when it was kept.
    ids: Option<Vec<i64>>,
}

impl KeptOrder {
    /// How many times a listing's keys were read and put in order.
    pub fn orderings(&self) -> u64 {
        self.orderings
    }

    /// Forgets the kept order of `table` (a dropped collection).
    pub fn forget(&mut self, table: &str) {
        self.last.retain(|l| l.listing.table != table);
    }

    /// The stamp of `listing`'s rows when it was last read, if it is one of those kept.
    fn stamp_of(&self, listing: &Listing) -> Option<String> {
        self.last
            .iter()
            .find(|l| l.listing == *listing)
            .map(|l| l.stamp.clone())
    }

    /// The ids of the rows `offset..offset + limit` of `listing`, when its whole order is kept and its
    /// rows are as they were then (`stamp`).
    fn window(
        &self,
        listing: &Listing,
        stamp: &str,
        limit: usize,
        offset: usize,
    ) -> Option<Vec<i64>> {
        let last = self
            .last
            .iter()
            .find(|l| l.listing == *listing && l.stamp == stamp)?;
        let ids = last.ids.as_ref()?;
        Some(ids.iter().skip(offset).take(limit).copied().collect())
    }

    /// The ids of the rows `offset..offset + limit` of `listing` whose `keyed` rows were just read,
    /// their rows then being `stamp` ([`eval::keyed_window`]); the whole order is kept for the next window
    /// when this one reaches past the middle, or when the same listing was read before with its rows
    /// the same.
    fn order(
        &mut self,
        listing: Listing,
        stamp: String,
        keyed: Vec<(i64, Document)>,
        limit: usize,
        offset: usize,
    ) -> Vec<i64> {
        self.orderings += 1;
        let read_before = self
            .last
            .iter()
            .any(|l| l.listing == listing && l.stamp == stamp);
        let whole = read_before || offset.saturating_add(limit) > keyed.len() / 2;
        let sort = Some(&listing.sort);
        let (window, ids) = if whole {
            let all = eval::keyed_window(keyed, sort, usize::MAX, 0);
            let window = all.iter().skip(offset).take(limit).copied().collect();
            (window, Some(all))
        } else {
            (eval::keyed_window(keyed, sort, limit, offset), None)
        };
        self.last.retain(|l| l.listing != listing);
        self.last.push_front(Last {
            listing,
            stamp,
            ids,
        });
        self.last.truncate(KEPT_LISTINGS);
        window
    }
}

/// The kept order, usable even after a thread panicked while holding it (it is only ids).
fn lock(kept: &Mutex<KeptOrder>) -> std::sync::MutexGuard<'_, KeptOrder> {
    kept.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether [`window`] reads in one statement (unsorted, and SQL decides the filter), so needs no
/// transaction to read one snapshot.
pub fn in_one_statement(filter: &Filter, sort: Option<&Sort>) -> bool {
    sort.is_none_or(|s| s.keys.is_empty()) && sql::narrowing(filter).decides
}

/// How many documents match `filter`, read without reading one whole: counted in SQL when it
/// decides the filter, else by matching each row's fields the filter's paths start with.
pub fn count<C: Queries>(rows: &Rows<'_, C>, filter: &Filter) -> StoreResult<u64> {
    let narrowing = sql::narrowing(filter);
    if narrowing.decides {
        return rows.count(&narrowing);
    }
    let paths: Vec<&str> = filter.conditions.keys().map(String::as_str).collect();
    let (keyed, _) = rows.projections(&narrowing, &top_level_fields(&paths))?;
    Ok(keyed
        .iter()
        .filter(|(_, doc)| eval::matches(doc, filter))
        .count() as u64)
}

/// The top-level fields `paths` start with, each once.
pub(crate) fn top_level_fields(paths: &[&str]) -> Vec<String> {
    let mut fields: Vec<String> = Vec::new();
    for path in paths {
        let first = path.split('.').next().unwrap_or_default();
        if !fields.iter().any(|f| f == first) {
            fields.push(first.to_string());
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn keyed(values: &[Value]) -> Vec<(i64, Document)> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| (i as i64 + 1, v.as_object().cloned().unwrap_or_default()))
            .collect()
    }

    /// Whatever order the rows come in, a window is `eval::window`'s over the rows in id order.
    #[test]
    fn a_window_of_keys_is_the_evaluators_window() {
        let values = [
            json!({"s": "b"}),
            json!({}),
            json!({"s": null}),
            json!({"s": 3}),
            json!({"s": "a"}),
            json!({"s": "b"}),
            json!({"s": true}),
            json!({"s": [1]}),
            json!({"s": {"x": 1}}),
            json!({"s": 2.5}),
            json!({"s": "é"}),
            json!({"s": "Z"}),
        ];
        let docs = keyed(&values);
        for sort in [Sort::by("s", false), Sort::by("s", true), Sort::default()] {
            for (limit, offset) in [(1, 0), (3, 0), (4, 2), (5, 9), (20, 0), (2, 30)] {
                let expected: Vec<Document> = eval::window(
                    docs.iter().map(|(_, d)| d.clone()).collect(),
                    Some(&sort),
                    eval::query_order,
                    Some(limit),
                    offset,
                );
                let mut shuffled = docs.clone();
                shuffled.reverse();
                shuffled.rotate_left(5);
                let got: Vec<Document> = eval::keyed_window(shuffled, Some(&sort), limit, offset)
                    .into_iter()
                    .map(|id| docs[id as usize - 1].1.clone())
                    .collect();
                assert_eq!(got, expected, "{sort:?} limit {limit} offset {offset}");
            }
        }
        let unsorted: Vec<i64> =
            eval::keyed_window(docs.iter().rev().cloned().collect(), None, 3, 1);
        assert_eq!(unsorted, [2, 3, 4]);
    }

    #[test]
    fn paths_are_read_by_their_top_level_field() {
        assert_eq!(
            top_level_fields(&["started_at_utc", "context.metadata.x", "context", "a.b"]),
            ["started_at_utc", "context", "a"]
        );
    }
}
