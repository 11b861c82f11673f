//! Putting a sorted listing's rows in order by their keys, and keeping that order while the
//! database holds still: a merged window of several stores (the explorer's instance list) asks
//! one listing for single rows at a dozen or more offsets, and reading and sorting every key for
//! each of them made a deep page of 20,000 instances take seconds. Only the rows' ids are kept
//! (8 bytes a row), for the last listing read, never a document.
//!
//! A first page is cheap without the whole order (the rows past the window's end are only set
//! apart, not sorted), so a listing's first read keeps its whole order only when its window
//! reaches past the middle; the second read of the same listing in the same state sorts all and
//! keeps it.

use agent_env_store::document::eval;
use agent_env_store::document::query::{Document, Sort};

use super::keys_query::KeysQuery;

/// What the database was when keys were read: another connection's commit changes SQLite's
/// `data_version`, and this connection's own writes its count of changed rows. Dropping a table
/// is neither; the connection forgets its kept order then ([`KeptOrder::forget`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub data_version: i64,
    pub own_changes: u64,
}

/// The last sorted listing read by a connection, and its whole order when that was kept.
#[derive(Default)]
pub struct KeptOrder {
    last: Option<Last>,
    /// How many times keys were put in order (read and sorted), for tests to count.
    #[cfg(test)]
    orderings: u64,
}

struct Last {
    query: KeysQuery,
    sort: Sort,
    stamp: Stamp,
    /// Every row's id in the listing's order, when it was kept.
    rowids: Option<Vec<i64>>,
}

impl Last {
    fn is(&self, query: &KeysQuery, sort: &Sort, stamp: Stamp) -> bool {
        self.stamp == stamp && self.query == *query && self.sort == *sort
    }
}

impl KeptOrder {
    /// The ids of the rows `offset..offset + limit` of the listing, when its whole order is kept
    /// and the database is as it was then.
    pub fn window(
        &self,
        query: &KeysQuery,
        sort: &Sort,
        stamp: Stamp,
        limit: usize,
        offset: usize,
    ) -> Option<Vec<i64>> {
        let last = self.last.as_ref().filter(|l| l.is(query, sort, stamp))?;
        let rowids = last.rowids.as_ref()?;
        Some(rowids.iter().skip(offset).take(limit).copied().collect())
    }

    /// The ids of the rows `offset..offset + limit` of a listing whose `keys` were just read (as
    /// `Db::read_sort_keys` gives them), ordered as the evaluator orders documents, ties in
    /// insertion order (by rowid). The whole order is kept for the next window
    /// when this one reaches past the middle, or when the same listing was read before in the same
    /// state (`stamp`).
    pub fn order(
        &mut self,
        query: KeysQuery,
        sort: &Sort,
        stamp: Stamp,
        keys: Vec<(i64, Document)>,
        limit: usize,
        offset: usize,
    ) -> Vec<i64> {
        #[cfg(test)]
        {
            self.orderings += 1;
        }
        let end = offset.saturating_add(limit).min(keys.len());
        let read_before = self
            .last
            .as_ref()
            .is_some_and(|l| l.is(&query, sort, stamp));
        let whole = read_before || end > keys.len() / 2;
        // Otherwise only the rows up to the window's end are put in order.
        let (window, rowids) = if whole {
            let all = eval::keyed_window(keys, Some(sort), usize::MAX, 0);
            (
                all.iter().skip(offset).take(limit).copied().collect(),
                Some(all),
            )
        } else {
            (eval::keyed_window(keys, Some(sort), limit, offset), None)
        };
        self.last = Some(Last {
            query,
            sort: sort.clone(),
            stamp,
            rowids,
        });
        window
    }

    /// Forgets the kept order (its table was dropped).
    pub fn forget(&mut self) {
        self.last = None;
    }

    /// How many times keys were put in order.
    #[cfg(test)]
    pub fn orderings(&self) -> u64 {
        self.orderings
    }
}
