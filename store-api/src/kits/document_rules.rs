//! The document kit's cases beyond the original's 37: rules of the contract those leave open (the range and
//! presence predicates, `null` against an absent field, where `query` sorts absent values, an update that
//! must touch one document only, creating parents and counting from zero, a repeated `ensure_index`, and
//! collections kept apart).

use serde_json::{json, Value};

use super::support::{doc, insert_all};
use super::support::{ensure_eq, Ctx};
use crate::document::query::{Filter, Predicate, Sort, UpdateSpec};
use crate::document::DocumentStore;
use crate::error::StoreError;

/// The `id`s of the documents `filter` finds, sorted.
fn ids(store: &dyn DocumentStore, coll: &str, filter: &Filter) -> Result<Vec<String>, String> {
    let mut found: Vec<String> = store
        .query(coll, filter, None, None, 0)
        .ctx("query")?
        .iter()
        .map(|d| {
            d.get("id")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string()
        })
        .collect();
    found.sort();
    Ok(found)
}

fn one(path: &str, predicate: Predicate) -> Filter {
    Filter::default().and(path, predicate)
}

/// `gte` and `lte` include their bound and never match a value of another type (`"2"` is not a number).
pub fn gte_and_lte_are_inclusive_and_typed(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"id": "one", "n": 1}),
            json!({"id": "two", "n": 2}),
            json!({"id": "three", "n": 3}),
            json!({"id": "text", "n": "2"}),
            json!({"id": "none"}),
        ],
    )?;
    ensure_eq(
        ids(store, coll, &one("n", Predicate::Gte(json!(2))))?,
        vec!["three".to_string(), "two".to_string()],
        "ids where n gte 2",
    )?;
    ensure_eq(
        ids(store, coll, &one("n", Predicate::Lte(json!(2))))?,
        vec!["one".to_string(), "two".to_string()],
        "ids where n lte 2",
    )
}

/// `exists(true)` matches a field that is present, even as `null`; `exists(false)` only an absent one.
pub fn exists_matches_presence_even_of_null(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    insert_all(store, coll, &presence_docs())?;
    ensure_eq(
        ids(store, coll, &one("f", Predicate::Exists(true)))?,
        vec!["null".to_string(), "set".to_string()],
        "ids where f exists",
    )?;
    ensure_eq(
        ids(store, coll, &one("f", Predicate::Exists(false)))?,
        vec!["absent".to_string()],
        "ids where f does not exist",
    )
}

/// `eq(null)` matches a field that is `null` and one that is absent, not one with a value.
pub fn eq_null_matches_null_and_absent(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    insert_all(store, coll, &presence_docs())?;
    ensure_eq(
        ids(store, coll, &one("f", Predicate::Eq(Value::Null)))?,
        vec!["absent".to_string(), "null".to_string()],
        "ids where f eq null",
    )
}

fn presence_docs() -> [Value; 3] {
    [
        json!({"id": "set", "f": 1}),
        json!({"id": "null", "f": null}),
        json!({"id": "absent"}),
    ]
}

/// `query` sorts absent and `null` values lowest: first ascending, last descending; later sort keys break
/// ties.
pub fn query_sorts_absent_and_null_lowest(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"id": "a", "rank": 2}),
            json!({"id": "b", "rank": null}),
            json!({"id": "c"}),
            json!({"id": "d", "rank": 1}),
        ],
    )?;
    let order = |descending: bool| -> Result<Vec<String>, String> {
        let sort = Sort::by("rank", descending).then("id", false);
        Ok(store
            .query(coll, &Filter::default(), Some(&sort), None, 0)
            .ctx("query")?
            .iter()
            .map(|d| {
                d.get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string()
            })
            .collect())
    };
    ensure_eq(
        order(false)?,
        ["b", "c", "d", "a"].map(String::from).to_vec(),
        "ids sorted by rank ascending, then id",
    )?;
    ensure_eq(
        order(true)?,
        ["a", "d", "b", "c"].map(String::from).to_vec(),
        "ids sorted by rank descending, then id",
    )
}

/// `update` and `replace` change the first match only, even when several documents match.
pub fn update_and_replace_touch_one_match(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[json!({"id": "twin", "n": 1}), json!({"id": "twin", "n": 2})],
    )?;
    let twins = Filter::eq("id", "twin");
    ensure_eq(
        store
            .update(coll, &twins, &UpdateSpec::new().set("seen", true), false)
            .ctx("update")?,
        1,
        "update of two matches",
    )?;
    ensure_eq(
        store
            .count(coll, &one("seen", Predicate::Exists(true)))
            .ctx("count")?,
        1,
        "documents changed by one update",
    )?;
    ensure_eq(
        store
            .replace(coll, &twins, &doc(json!({"id": "twin", "n": 9})), false)
            .ctx("replace")?,
        1,
        "replace of two matches",
    )?;
    ensure_eq(
        store.count(coll, &Filter::eq("n", 9)).ctx("count")?,
        1,
        "documents replaced by one replace",
    )?;
    ensure_eq(
        store.count(coll, &twins).ctx("count")?,
        2,
        "documents after the update and replace",
    )
}

/// `set` of a dotted path creates the maps on the way; `inc` of an absent field starts from 0.
pub fn set_creates_parents_and_inc_starts_at_zero(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    insert_all(store, coll, &[json!({"id": "a"})])?;
    let update = UpdateSpec::new().set("deep.er.leaf", "x").inc("count", 5);
    ensure_eq(
        store
            .update(coll, &Filter::eq("id", "a"), &update, false)
            .ctx("update")?,
        1,
        "matched",
    )?;
    ensure_eq(
        store
            .find_one(coll, &Filter::eq("id", "a"), None)
            .ctx("find_one")?,
        Some(doc(
            json!({"id": "a", "deep": {"er": {"leaf": "x"}}, "count": 5}),
        )),
        "after set deep.er.leaf and inc count by 5",
    )
}

/// `ensure_index` may be called again for an index that exists (unique or not), and the unique one still
/// holds afterwards.
pub fn ensure_index_twice_is_harmless(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    for round in ["first", "second"] {
        store
            .ensure_index(coll, &["id", "version"], true)
            .ctx(&format!("ensure_index unique ({round} call)"))?;
        store
            .ensure_index(coll, &["tag"], false)
            .ctx(&format!("ensure_index non-unique ({round} call)"))?;
    }
    let first = doc(json!({"id": "a", "version": 1}));
    store.insert(coll, &first).ctx("insert")?;
    match store.insert(coll, &first) {
        Err(StoreError::DuplicateKey(_)) => Ok(()),
        other => Err(format!(
            "a duplicate insert after ensure_index was called twice should fail with duplicate-key, but {}",
            super::support::describe(&other)
        )),
    }
}

/// The two collections `collections_are_separate` writes in, beside its own `coll`.
pub fn collections_beside(coll: &str) -> [String; 2] {
    [format!("{coll}_left"), format!("{coll}_right")]
}

/// Collections are apart: documents and unique indexes of one are not seen in another.
pub fn collections_are_separate(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    let [left, right] = collections_beside(coll);
    store
        .ensure_index(&left, &["id"], true)
        .ctx("ensure_index")?;
    let a = doc(json!({"id": "a", "side": "left"}));
    store.insert(&left, &a).ctx("insert (left)")?;
    ensure_eq(
        store.count(&right, &Filter::default()).ctx("count")?,
        0,
        "documents in the other collection",
    )?;
    store
        .insert(&right, &doc(json!({"id": "a", "side": "right"})))
        .ctx("insert of the same id into the other collection")?;
    ensure_eq(
        store
            .find_one(&left, &Filter::eq("id", "a"), None)
            .ctx("find_one")?,
        Some(a),
        "the first collection's document",
    )
}
