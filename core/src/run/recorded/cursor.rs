//! A place in a sorted list of instances that survives the list changing: right after an item,
//! named by that item's sort key (the sort's last key the instance id, so no two items share a
//! place) and where the item after it stood. A page read right after such a place starts after
//! that item, wherever instances recorded or removed since have moved it, where an offset counted
//! from the first would give some instances twice (after a newer one is recorded) or skip some
//! (after one before the page is removed). `task list` pages each store by it, and the explorer
//! hands it to a client as `next_cursor`.

use std::cmp::Ordering;

use serde_json::Value;

use crate::run::recorder::INSTANCES;
use crate::stores::document::eval;
use crate::stores::error::StoreResult;
use crate::stores::{Document, DocumentStore, Filter, Sort};

/// A place in a list: right after an item.
#[derive(Debug, Clone, PartialEq)]
pub struct Cursor {
    /// The item's value of each of the sort's fields, in the sort's order.
    key: Vec<Value>,
    /// Where the next item stood when the cursor was given: where to look first.
    at: u64,
}

impl Cursor {
    /// The place right after `doc`, in `sort`'s order, the next item standing at `at`.
    pub fn after(doc: &Document, sort: &Sort, at: u64) -> Cursor {
        let key = sort
            .keys
            .iter()
            .map(|k| doc.get(&k.field).cloned().unwrap_or(Value::Null))
            .collect();
        Cursor { key, at }
    }

    /// The place after the item whose sort key is `key`, the next item standing at `at`: a cursor
    /// read back from where it was written ([`Cursor::key`], [`Cursor::at`]).
    pub fn from_parts(key: Vec<Value>, at: u64) -> Cursor {
        Cursor { key, at }
    }

    /// The item's value of each of the sort's fields, in the sort's order.
    pub fn key(&self) -> &[Value] {
        &self.key
    }

    /// Where the next item stood when the cursor was given.
    pub fn at(&self) -> u64 {
        self.at
    }

    /// Whether `doc` comes at or before this place in `sort`'s order.
    pub fn holds(&self, doc: &Document, sort: &Sort) -> bool {
        let place: Document = sort
            .keys
            .iter()
            .zip(&self.key)
            .map(|(k, v)| (k.field.clone(), v.clone()))
            .collect();
        eval::query_order(doc, &place, sort) != Ordering::Greater
    }
}

/// Where the first instance past `cursor` stands now among those `filter` selects (in `sort`'s
/// order), and the `limit` instances from there. Where nothing moved since the page before, one
/// read finds both; else the place is searched for from where it was, as far as it moved.
pub fn page_after(
    docs: &dyn DocumentStore,
    filter: &Filter,
    sort: &Sort,
    cursor: &Cursor,
    limit: u64,
) -> StoreResult<(u64, Vec<Document>)> {
    let read = |limit: u64, offset: u64| {
        docs.query(
            INSTANCES,
            filter,
            Some(sort),
            Some(usize::try_from(limit).unwrap_or(usize::MAX)),
            usize::try_from(offset).unwrap_or(usize::MAX),
        )
    };
    let past = |doc: &Document| !cursor.holds(doc, sort);
    if let Some(before) = cursor.at.checked_sub(1) {
        let mut window = read(limit.saturating_add(1), before)?;
        let unmoved = window.first().is_some_and(|d| !past(d)) && window.get(1).is_none_or(past);
        if unmoved {
            window.remove(0);
            return Ok((cursor.at, window));
        }
    }
    let start = first_where(|p| Ok(read(1, p)?.first().is_none_or(past)), cursor.at)?;
    Ok((start, read(limit, start)?))
}

/// The first position at which `past` holds, given that it holds from there on (past the end
/// too): looked for from `near`, in steps that double, then halved down to one.
fn first_where(past: impl Fn(u64) -> StoreResult<bool>, near: u64) -> StoreResult<u64> {
    // The position is in `lo..=hi`.
    let (mut lo, mut hi);
    if past(near)? {
        (lo, hi) = (0, near);
        let mut step = 1u64;
        while hi > 0 {
            let p = hi.saturating_sub(step);
            if !past(p)? {
                lo = p + 1;
                break;
            }
            hi = p;
            step = step.saturating_mul(2);
        }
    } else {
        lo = near + 1;
        let mut step = 1u64;
        loop {
            let p = lo.saturating_add(step - 1);
            if past(p)? {
                hi = p;
                break;
            }
            lo = p + 1;
            step = step.saturating_mul(2);
        }
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if past(mid)? {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(lo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stores::local::LocalSqliteDocumentStore;
    use serde_json::json;
    use std::cell::Cell;

    fn sort() -> Sort {
        Sort::by("n", true).then("instance_id", false)
    }

    fn instance(n: i64) -> Document {
        let Value::Object(doc) = json!({"n": n, "instance_id": format!("i{n:04}")}) else {
            unreachable!()
        };
        doc
    }

    #[test]
    fn the_first_place_is_found_from_anywhere_near() {
        for len in 0..20u64 {
            for answer in 0..=len {
                for near in 0..25u64 {
                    let asked = Cell::new(0);
                    let found = first_where(
                        |p| {
                            asked.set(asked.get() + 1);
                            Ok(p >= answer)
                        },
                        near,
                    )
                    .unwrap();
                    assert_eq!(found, answer, "len {len} near {near}");
                    assert!(asked.get() <= 12, "{} looks", asked.get());
                }
            }
        }
    }

    /// A cursor read back from its parts is the cursor they were read from.
    #[test]
    fn a_cursor_is_made_again_from_its_parts() {
        let sort = sort();
        let cursor = Cursor::after(&instance(7), &sort, 3);
        assert_eq!(cursor.key(), [json!(7), json!("i0007")]);
        assert_eq!(
            Cursor::from_parts(cursor.key().to_vec(), cursor.at()),
            cursor
        );
    }

    /// A cursor holds its own item and those before it in the sort's order, not those after.
    #[test]
    fn a_cursor_holds_its_item_and_those_before_it() {
        let sort = sort();
        let cursor = Cursor::after(&instance(7), &sort, 3);
        assert!(cursor.holds(&instance(8), &sort));
        assert!(cursor.holds(&instance(7), &sort));
        assert!(!cursor.holds(&instance(6), &sort));
    }

    /// Pages after a cursor start right after it, whatever was added before or after it, or
    /// removed, since.
    #[test]
    fn a_page_after_a_cursor_starts_right_after_its_place() {
        let tmp = tempfile::tempdir().unwrap();
        let store = LocalSqliteDocumentStore::new(tmp.path().join("d.db"));
        for n in (0..40).map(|n| n * 10) {
            store.insert(INSTANCES, &instance(n)).unwrap();
        }
        let sort = sort();
        let filter = Filter::all();
        let ns = |docs: &[Document]| docs.iter().map(|d| d["n"].clone()).collect::<Vec<_>>();
        let first = store
            .query(INSTANCES, &filter, Some(&sort), Some(5), 0)
            .unwrap();
        assert_eq!(
            ns(&first),
            [json!(390), json!(380), json!(370), json!(360), json!(350)]
        );
        let cursor = Cursor::after(&first[4], &sort, 5);
        let (at, page) = page_after(&store, &filter, &sort, &cursor, 3).unwrap();
        assert_eq!(
            (at, ns(&page)),
            (5, vec![json!(340), json!(330), json!(320)])
        );
        // Newer ones recorded, and the cursor's own removed: the page is still the one after it.
        for n in [1000, 1001, 1002, 355, 345] {
            store.insert(INSTANCES, &instance(n)).unwrap();
        }
        store
            .delete(INSTANCES, &Filter::eq("instance_id", "i0350"))
            .unwrap();
        let (at, page) = page_after(&store, &filter, &sort, &cursor, 3).unwrap();
        assert_eq!(
            (at, ns(&page)),
            (8, vec![json!(345), json!(340), json!(330)])
        );
        // The end of the list: nothing after its last.
        let last = Cursor::after(&instance(0), &sort, 45);
        let (_, page) = page_after(&store, &filter, &sort, &last, 3).unwrap();
        assert!(page.is_empty());
    }
}
