//! The document kit: the original's 37 cases, including the 8-thread races, then 8 for the rules they
//! leave open ([`super::document_rules`]). Each case works in its own collection, `<ns>__<case>`, so the
//! kit can run against a store that already holds data, and drops the collections it wrote in when it
//! ends ([`DocumentStore::drop_collection`]), so it leaves none behind.

use std::sync::Barrier;

use serde_json::{json, Value};

use super::document_rules::{
    collections_are_separate, collections_beside, ensure_index_twice_is_harmless,
    eq_null_matches_null_and_absent, exists_matches_presence_even_of_null,
    gte_and_lte_are_inclusive_and_typed, query_sorts_absent_and_null_lowest,
    set_creates_parents_and_inc_starts_at_zero, update_and_replace_touch_one_match,
};
use super::support::{doc, ensure, ensure_eq, expect_kind, insert_all, Ctx};
use super::{Case, Kit};
use crate::document::query::{Document, Filter, Predicate, Sort, UpdateSpec};
use crate::document::versioned::{compare_and_swap, VersionedEntityStore};
use crate::document::DocumentStore;
use crate::error::StoreError;
use agent_env_protocol::codes::ErrorKind;

type DocCase = Case<dyn DocumentStore>;

const RACERS: usize = 8;

macro_rules! cases {
    ($($f:ident),* $(,)?) => {
        vec![$(DocCase {
            name: stringify!($f),
            run: |store, ns| in_own_collection(store, ns, stringify!($f), $f),
        }),*]
    };
}

/// Runs case `name` in its collection `<ns>__<name>`, then drops every collection it wrote in (that
/// one, and the two more `collections_are_separate` uses), so the kit leaves nothing in the store. A
/// collection that could not be dropped fails the case, naming the call and what the kit left behind
/// ([`left_behind`]); a case that failed too says both.
fn in_own_collection(
    store: &dyn DocumentStore,
    ns: &str,
    name: &str,
    case: fn(&dyn DocumentStore, &str) -> Result<(), String>,
) -> Result<(), String> {
    let coll = format!("{ns}__{name}");
    let outcome = case(store, &coll);
    let mut written = vec![coll.clone()];
    if name == "collections_are_separate" {
        written.extend(collections_beside(&coll));
    }
    match (outcome, drop_all(store, &written)) {
        (outcome, Ok(())) => outcome,
        (Ok(()), Err(why)) => Err(left_behind(ns, &why)),
        (Err(failed), Err(why)) => Err(format!("{failed}; then {}", left_behind(ns, &why))),
    }
}

/// Drops each of `collections`, every one tried; the first failure, naming its call.
fn drop_all(store: &dyn DocumentStore, collections: &[String]) -> Result<(), String> {
    let failures: Vec<String> = collections
        .iter()
        .filter_map(|c| {
            store
                .drop_collection(c)
                .ctx(&format!("drop_collection({c:?}), as the kit cleans up"))
                .err()
        })
        .collect();
    match failures.into_iter().next() {
        Some(first) => Err(first),
        None => Ok(()),
    }
}

/// A failed cleanup, `why`, told with what it left and how to remove it: every collection the kit
/// wrote in is named `<ns>__<case>`.
fn left_behind(ns: &str, why: &str) -> String {
    format!(
        "{why}; so what the kit wrote may be left in the store: remove every collection whose name \
         starts with '{ns}__' with the store's own tools"
    )
}

/// The 45 cases: the original's 37 in its order, then the rules they leave open.
pub fn cases() -> Kit<dyn DocumentStore> {
    let cases: Vec<DocCase> = cases![
        insert_find_one_strips_id,
        ensure_index_unique_rejects_duplicate,
        ensure_index_unique_on_other_fields_rejects_duplicate,
        ensure_index_non_unique_allows_duplicate,
        absent_or_null_precondition,
        ne_requires_present_field,
        two_fused_predicates_and,
        find_one_latest_by_sort,
        query_sort_offset_limit,
        query_limit_zero_returns_all,
        count,
        update_ops,
        update_cas_miss_and_hit,
        lte_or_absent_precondition,
        update_one_and_get_before_after_and_miss,
        replace_and_upsert,
        update_upsert_synthesizes_from_filter,
        upsert_colliding_with_a_unique_index_raises_duplicate_key,
        delete,
        eq_and_in_array_containment,
        dotted_array_traversal,
        positional_array_index_filter_and_set,
        versioned_entity_store_roundtrip,
        latest_per_id_reduces_to_newest_version,
        latest_per_id_sort_offset_limit_apply_after_grouping,
        latest_per_id_page_returns_entity_total_and_window,
        find_many_by_id_preserves_first_documents_and_request_order,
        latest_per_id_orders_absent_last_in_both_directions,
        latest_per_id_skips_docs_without_identity,
        latest_per_id_missing_version_sorts_lowest,
        latest_per_id_honours_custom_fields,
        update_one_and_get_upsert_inserts_on_a_miss,
        racing_guarded_updates_have_exactly_one_winner,
        racing_guarded_replaces_have_exactly_one_winner,
        racing_update_one_and_get_returns_only_its_own_write,
        racing_pre_image_updates_have_exactly_one_winner,
        concurrent_compare_and_swap_loses_no_update,
        gte_and_lte_are_inclusive_and_typed,
        exists_matches_presence_even_of_null,
        eq_null_matches_null_and_absent,
        query_sorts_absent_and_null_lowest,
        update_and_replace_touch_one_match,
        set_creates_parents_and_inc_starts_at_zero,
        ensure_index_twice_is_harmless,
        collections_are_separate,
    ];
    Kit {
        name: "document",
        cases,
        skipped: Vec::new(),
    }
}

fn field_values(docs: &[Document], field: &str) -> Vec<Value> {
    docs.iter()
        .map(|d| d.get(field).cloned().unwrap_or(Value::Null))
        .collect()
}

fn expect_duplicate<T: serde::Serialize>(
    result: Result<T, StoreError>,
    what: &str,
) -> Result<(), String> {
    expect_kind(result, ErrorKind::DuplicateKey, what, "")
}

fn by_id(id: &str) -> Filter {
    Filter::eq("id", id)
}

fn insert_find_one_strips_id(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    let original = json!({"id": "a", "version": 1, "payload": {"x": [1, 2], "s": "t"}});
    store.insert(coll, &doc(original.clone())).ctx("insert")?;
    let got = store.find_one(coll, &by_id("a"), None).ctx("find_one")?;
    ensure_eq(
        got,
        Some(doc(original)),
        "find_one of the inserted document (no _id added)",
    )
}

fn ensure_index_unique_rejects_duplicate(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    store
        .ensure_index(coll, &["id", "version"], true)
        .ctx("ensure_index")?;
    store
        .ensure_index(coll, &["id", "version"], true)
        .ctx("ensure_index (again)")?;
    let d = doc(json!({"id": "a", "version": 1}));
    store.insert(coll, &d).ctx("insert")?;
    expect_duplicate(
        store.insert(coll, &d),
        "a second identical insert under a unique index",
    )
}

fn ensure_index_unique_on_other_fields_rejects_duplicate(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    store
        .ensure_index(coll, &["instance_id", "step_id"], true)
        .ctx("ensure_index")?;
    insert_all(
        store,
        coll,
        &[
            json!({"instance_id": "i", "step_id": "s2", "n": 1}),
            json!({"instance_id": "i", "step_id": "s1", "n": 0}),
        ],
    )?;
    expect_duplicate(
        store.insert(
            coll,
            &doc(json!({"instance_id": "i", "step_id": "s2", "extra": true})),
        ),
        "inserting a repeated (instance_id, step_id) pair",
    )?;
    let matched = store
        .update(
            coll,
            &Filter::of([("instance_id", json!("i")), ("step_id", json!("s1"))]),
            &UpdateSpec::new().set("n", 5),
            false,
        )
        .ctx("update")?;
    ensure_eq(matched, 1, "update of another row")?;
    let docs = store
        .query(
            coll,
            &Filter::eq("instance_id", "i"),
            Some(&Sort::by("step_id", false)),
            None,
            0,
        )
        .ctx("query")?;
    ensure_eq(
        docs,
        vec![
            doc(json!({"instance_id": "i", "step_id": "s1", "n": 5})),
            doc(json!({"instance_id": "i", "step_id": "s2", "n": 1})),
        ],
        "query sorted by step_id ascending",
    )
}

fn ensure_index_non_unique_allows_duplicate(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    store
        .ensure_index(coll, &["x"], false)
        .ctx("ensure_index")?;
    insert_all(
        store,
        coll,
        &[json!({"x": 7, "a": 1}), json!({"x": 7, "a": 2})],
    )?;
    ensure_eq(
        store.count(coll, &Filter::eq("x", 7)).ctx("count")?,
        2,
        "count of x == 7",
    )
}

fn absent_or_null_precondition(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    store.insert(coll, &doc(json!({"id": "a"}))).ctx("insert")?;
    let guarded = by_id("a").and("claimed", Predicate::AbsentOrNull);
    let claim = UpdateSpec::new().set("claimed", "w1");
    ensure_eq(
        store.update(coll, &guarded, &claim, false).ctx("update")?,
        1,
        "guarded update of an absent field",
    )?;
    ensure_eq(
        store.update(coll, &guarded, &claim, false).ctx("update")?,
        0,
        "guarded update of a set field",
    )?;
    store
        .update(
            coll,
            &by_id("a"),
            &UpdateSpec::new().set("claimed", Value::Null),
            false,
        )
        .ctx("update")?;
    ensure_eq(
        store.update(coll, &guarded, &claim, false).ctx("update")?,
        1,
        "guarded update of a null field",
    )
}

fn ne_requires_present_field(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"id": 1, "status": "done"}),
            json!({"id": 2, "status": "running"}),
            json!({"id": 3}),
        ],
    )?;
    let docs = store
        .query(
            coll,
            &Filter::default().and("status", Predicate::Ne(json!("done"))),
            None,
            None,
            0,
        )
        .ctx("query")?;
    ensure_eq(
        field_values(&docs, "id"),
        vec![json!(2)],
        "ids where status != done (absent does not match)",
    )
}

fn two_fused_predicates_and(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"id": "a"}),
            json!({"id": "b", "x": 1}),
            json!({"id": "c", "y": 1}),
        ],
    )?;
    let filter = Filter::default()
        .and("x", Predicate::AbsentOrNull)
        .and("y", Predicate::AbsentOrNull);
    let docs = store.query(coll, &filter, None, None, 0).ctx("query")?;
    ensure_eq(
        field_values(&docs, "id"),
        vec![json!("a")],
        "x and y both absent",
    )
}

fn find_one_latest_by_sort(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    for v in [2, 3, 1] {
        store
            .insert(coll, &doc(json!({"id": "a", "version": v})))
            .ctx("insert")?;
    }
    let got = store
        .find_one(coll, &by_id("a"), Some(&Sort::by("version", true)))
        .ctx("find_one")?
        .ok_or("find_one found nothing")?;
    ensure_eq(
        got.get("version").cloned(),
        Some(json!(3)),
        "find_one sorted by version descending",
    )
}

fn five_versions(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    for v in [3, 1, 5, 2, 4] {
        store
            .insert(coll, &doc(json!({"id": "a", "version": v})))
            .ctx("insert")?;
    }
    Ok(())
}

fn query_sort_offset_limit(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    five_versions(store, coll)?;
    let docs = store
        .query(
            coll,
            &by_id("a"),
            Some(&Sort::by("version", false)),
            Some(2),
            1,
        )
        .ctx("query")?;
    ensure_eq(
        field_values(&docs, "version"),
        vec![json!(2), json!(3)],
        "versions ascending, offset 1, limit 2",
    )
}

fn query_limit_zero_returns_all(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    five_versions(store, coll)?;
    let docs = store
        .query(coll, &by_id("a"), None, Some(0), 0)
        .ctx("query")?;
    ensure_eq(docs.len(), 5, "query with limit 0")
}

fn count(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"id": "a"}),
            json!({"id": "a"}),
            json!({"id": "a"}),
            json!({"id": "b"}),
            json!({"id": "b"}),
        ],
    )?;
    ensure_eq(
        store.count(coll, &by_id("a")).ctx("count")?,
        3,
        "count by id",
    )?;
    ensure_eq(
        store.count(coll, &Filter::all()).ctx("count")?,
        5,
        "count of the empty filter",
    )
}

fn update_ops(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    store
        .insert(
            coll,
            &doc(json!({"id": "a", "n": 1, "gone": true, "tags": ["x"], "log": ["p"]})),
        )
        .ctx("insert")?;
    let update = UpdateSpec::new()
        .set("status", "done")
        .unset("gone")
        .inc("n", 2)
        .add_to_set("tags", "x")
        .push("log", "p");
    ensure_eq(
        store
            .update(coll, &by_id("a"), &update, false)
            .ctx("update")?,
        1,
        "matched",
    )?;
    let got = store.find_one(coll, &by_id("a"), None).ctx("find_one")?;
    ensure_eq(
        got,
        Some(doc(
            json!({"id": "a", "n": 3, "status": "done", "tags": ["x"], "log": ["p", "p"]}),
        )),
        "after set/unset/inc/add_to_set (dedupes)/push (does not)",
    )
}

fn update_cas_miss_and_hit(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    store
        .insert(coll, &doc(json!({"id": "a", "rev": 1})))
        .ctx("insert")?;
    let stale = by_id("a").and("rev", Predicate::Eq(json!(2)));
    let miss = store
        .update(coll, &stale, &UpdateSpec::new().set("x", 1), false)
        .ctx("update")?;
    ensure_eq(miss, 0, "update guarded on a stale rev")?;
    ensure_eq(
        store.find_one(coll, &by_id("a"), None).ctx("find_one")?,
        Some(doc(json!({"id": "a", "rev": 1}))),
        "the document after a missed update",
    )?;
    let fresh = by_id("a").and("rev", Predicate::Eq(json!(1)));
    let hit = store
        .update(
            coll,
            &fresh,
            &UpdateSpec::new().set("rev", 2).set("x", 1),
            false,
        )
        .ctx("update")?;
    ensure_eq(hit, 1, "update guarded on the current rev")?;
    ensure_eq(
        store.find_one(coll, &by_id("a"), None).ctx("find_one")?,
        Some(doc(json!({"id": "a", "rev": 2, "x": 1}))),
        "the document after a hit",
    )
}

fn lte_or_absent_precondition(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    store.insert(coll, &doc(json!({"id": "a"}))).ctx("insert")?;
    let guard = |bound: i64| by_id("a").and("lease", Predicate::LteOrAbsent(json!(bound)));
    let set = UpdateSpec::new().set("lease", 200);
    ensure_eq(
        store.update(coll, &guard(100), &set, false).ctx("update")?,
        1,
        "lease absent",
    )?;
    ensure_eq(
        store.update(coll, &guard(100), &set, false).ctx("update")?,
        0,
        "lease 200 > bound 100",
    )?;
    ensure_eq(
        store.update(coll, &guard(300), &set, false).ctx("update")?,
        1,
        "lease 200 <= bound 300",
    )
}

fn update_one_and_get_before_after_and_miss(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    store
        .insert(coll, &doc(json!({"id": "a", "n": 1})))
        .ctx("insert")?;
    let inc = UpdateSpec::new().inc("n", 1);
    let after = store
        .update_one_and_get(coll, &by_id("a"), &inc, true, false)
        .ctx("update_one_and_get")?;
    ensure_eq(after, Some(doc(json!({"id": "a", "n": 2}))), "post-image")?;
    let before = store
        .update_one_and_get(coll, &by_id("a"), &inc, false, false)
        .ctx("update_one_and_get")?;
    ensure_eq(before, Some(doc(json!({"id": "a", "n": 2}))), "pre-image")?;
    let miss = store
        .update_one_and_get(coll, &by_id("nope"), &inc, true, false)
        .ctx("update_one_and_get")?;
    ensure_eq(miss, None, "a miss")?;
    ensure_eq(
        store.find_one(coll, &by_id("a"), None).ctx("find_one")?,
        Some(doc(json!({"id": "a", "n": 3}))),
        "stored after two increments",
    )
}

/// What `replace` and `update` return, said in each failure of an upsert's count: an insert counts,
/// as in the built-in stores. [`compare_and_swap`] relies on it: it reads 0 as a lost race and tries
/// again, so with a store that answers 0 for its insert the change can be applied twice.
const UPSERT_COUNT_RULE: &str = "1 when it matched or, with upsert, inserted; 0 otherwise";

fn replace_and_upsert(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    store
        .insert(coll, &doc(json!({"id": "a", "v": 1})))
        .ctx("insert")?;
    let replaced = store
        .replace(coll, &by_id("a"), &doc(json!({"id": "a", "w": 2})), false)
        .ctx("replace")?;
    ensure_eq(replaced, 1, "replace of a match")?;
    ensure_eq(
        store.find_one(coll, &by_id("a"), None).ctx("find_one")?,
        Some(doc(json!({"id": "a", "w": 2}))),
        "replaced wholesale",
    )?;
    let missed = store
        .replace(coll, &by_id("b"), &doc(json!({"id": "b", "x": 0})), false)
        .ctx("replace")?;
    ensure_eq(
        missed,
        0,
        &format!("replace without upsert of a miss ({UPSERT_COUNT_RULE})"),
    )?;
    ensure_eq(
        store.count(coll, &by_id("b")).ctx("count")?,
        0,
        "documents a replace without upsert inserted",
    )?;
    let upserted = store
        .replace(coll, &by_id("b"), &doc(json!({"id": "b", "x": 1})), true)
        .ctx("replace(upsert)")?;
    ensure_eq(
        upserted,
        1,
        &format!("replace with upsert of a miss, which inserts ({UPSERT_COUNT_RULE})"),
    )?;
    ensure_eq(
        store.find_one(coll, &by_id("b"), None).ctx("find_one")?,
        Some(doc(json!({"id": "b", "x": 1}))),
        "the upserted replacement",
    )
}

fn update_upsert_synthesizes_from_filter(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    let filter = Filter::of([("id", json!("z")), ("kind", json!("k"))]);
    let upserted = store
        .update(coll, &filter, &UpdateSpec::new().set("n", 1), true)
        .ctx("update(upsert)")?;
    ensure_eq(
        upserted,
        1,
        &format!("update with upsert of a miss, which inserts ({UPSERT_COUNT_RULE})"),
    )?;
    ensure_eq(
        store.find_one(coll, &by_id("z"), None).ctx("find_one")?,
        Some(doc(json!({"id": "z", "kind": "k", "n": 1}))),
        "the upserted document (filter equalities + set)",
    )
}

fn upsert_colliding_with_a_unique_index_raises_duplicate_key(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    store
        .ensure_index(coll, &["id", "version"], true)
        .ctx("ensure_index")?;
    let existing = doc(json!({"id": "a", "version": 1, "state": "old"}));
    store.insert(coll, &existing).ctx("insert")?;
    let filter = Filter::of([
        ("id", json!("a")),
        ("version", json!(1)),
        ("state", json!("new")),
    ]);
    let update = UpdateSpec::new().set("note", "x");
    expect_duplicate(
        store.update(coll, &filter, &update, true),
        "update with upsert",
    )?;
    expect_duplicate(
        store.update_one_and_get(coll, &filter, &update, true, true),
        "update_one_and_get with upsert",
    )?;
    expect_duplicate(
        store.replace(
            coll,
            &filter,
            &doc(json!({"id": "a", "version": 1, "state": "new"})),
            true,
        ),
        "replace with upsert",
    )?;
    let all = store
        .query(coll, &Filter::all(), None, None, 0)
        .ctx("query")?;
    ensure_eq(all, vec![existing], "the collection after refused upserts")
}

fn delete(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[json!({"id": "a", "n": 1}), json!({"id": "a", "n": 2})],
    )?;
    ensure_eq(
        store.delete(coll, &by_id("a")).ctx("delete")?,
        1,
        "delete of the first match",
    )?;
    ensure_eq(
        store.count(coll, &by_id("a")).ctx("count")?,
        1,
        "count after one delete",
    )?;
    ensure_eq(
        store.delete(coll, &by_id("a")).ctx("delete")?,
        1,
        "delete of the second",
    )?;
    ensure_eq(
        store.delete(coll, &by_id("a")).ctx("delete")?,
        0,
        "delete of a miss",
    )
}

fn eq_and_in_array_containment(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"id": 1, "tags": ["x", "y"]}),
            json!({"id": 2, "tags": ["z"]}),
        ],
    )?;
    let eq = store
        .query(coll, &Filter::eq("tags", "y"), None, None, 0)
        .ctx("query")?;
    ensure_eq(
        field_values(&eq, "id"),
        vec![json!(1)],
        "Eq on an array field is containment",
    )?;
    let inn = store
        .query(
            coll,
            &Filter::default().and("tags", Predicate::In(vec![json!("z"), json!("q")])),
            None,
            None,
            0,
        )
        .ctx("query")?;
    ensure_eq(
        field_values(&inn, "id"),
        vec![json!(2)],
        "In matches any element",
    )
}

fn dotted_array_traversal(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"id": 1, "a2a_tasks": [{"a2a_task_id": "t1"}, {"a2a_task_id": "t2"}]}),
            json!({"id": 2, "a2a_tasks": [{"a2a_task_id": "t3"}]}),
        ],
    )?;
    let docs = store
        .query(
            coll,
            &Filter::eq("a2a_tasks.a2a_task_id", "t2"),
            None,
            None,
            0,
        )
        .ctx("query")?;
    ensure_eq(
        field_values(&docs, "id"),
        vec![json!(1)],
        "a dotted path through an array",
    )
}

fn positional_array_index_filter_and_set(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    store
        .insert(
            coll,
            &doc(json!({"id": 1, "a2a_tasks": [{"state": "new"}, {"state": "new"}]})),
        )
        .ctx("insert")?;
    let filter = Filter::eq("id", 1).and("a2a_tasks.0.state", Predicate::Eq(json!("new")));
    let set = UpdateSpec::new().set("a2a_tasks.0.state", "done");
    ensure_eq(
        store.update(coll, &filter, &set, false).ctx("update")?,
        1,
        "positional update",
    )?;
    ensure_eq(
        store
            .find_one(coll, &Filter::eq("id", 1), None)
            .ctx("find_one")?,
        Some(doc(
            json!({"id": 1, "a2a_tasks": [{"state": "done"}, {"state": "new"}]}),
        )),
        "only element 0 changed",
    )?;
    ensure_eq(
        store.update(coll, &filter, &set, false).ctx("update")?,
        0,
        "a repeat misses",
    )
}

fn versioned_entity_store_roundtrip(store: &dyn DocumentStore, coll: &str) -> Result<(), String> {
    let entities = VersionedEntityStore::borrowed(store, coll, &[]).ctx("VersionedEntityStore")?;
    let v1 = entities
        .put(&doc(json!({"id": "e", "name": "one"})), 5)
        .ctx("put")?;
    let v2 = entities
        .put(&doc(json!({"id": "e", "name": "two"})), 5)
        .ctx("put")?;
    ensure_eq((v1, v2), (1, 2), "versions of two puts")?;
    let latest = entities
        .get("e", None)
        .ctx("get")?
        .ok_or("get(latest) found nothing")?;
    ensure_eq(
        latest.get("version").cloned(),
        Some(json!(2)),
        "latest version",
    )?;
    let first = entities
        .get("e", Some(1))
        .ctx("get")?
        .ok_or("get(version 1) found nothing")?;
    ensure_eq(first.get("name").cloned(), Some(json!("one")), "version 1")?;
    ensure_eq(
        entities.get("missing", None).ctx("get")?,
        None,
        "a missing id",
    )?;
    ensure_eq(
        entities.next_version("e").ctx("next_version")?,
        3,
        "next_version",
    )?;
    ensure_eq(
        entities.count(&by_id("e")).ctx("count")?,
        2,
        "count of stored versions",
    )
}

fn latest_per_id_reduces_to_newest_version(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"id": "a", "version": 1, "color": "red"}),
            json!({"id": "a", "version": 2, "color": "blue"}),
            json!({"id": "b", "version": 1, "color": "blue"}),
        ],
    )?;
    let mut latest = store
        .latest_per_id(coll, &Filter::all(), "id", "version", None, None, 0)
        .ctx("latest_per_id")?;
    latest.sort_by_key(|d| d.get("id").map(Value::to_string));
    ensure_eq(
        latest,
        vec![
            doc(json!({"id": "a", "version": 2, "color": "blue"})),
            doc(json!({"id": "b", "version": 1, "color": "blue"})),
        ],
        "one row per id, the highest version",
    )?;
    ensure_eq(
        store
            .count_distinct(coll, &Filter::all(), "id")
            .ctx("count_distinct")?,
        2,
        "count_distinct",
    )?;
    let old = store
        .latest_per_id(
            coll,
            &Filter::eq("color", "red"),
            "id",
            "version",
            None,
            None,
            0,
        )
        .ctx("latest_per_id")?;
    ensure_eq(
        old,
        vec![doc(json!({"id": "a", "version": 1, "color": "red"}))],
        "a filter matching only an old version yields that version",
    )
}

fn latest_per_id_sort_offset_limit_apply_after_grouping(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"id": "a", "version": 1, "rank": 99}),
            json!({"id": "a", "version": 2, "rank": 30}),
            json!({"id": "b", "version": 1, "rank": 40}),
            json!({"id": "c", "version": 1, "rank": 50}),
        ],
    )?;
    let by_rank = Sort::by("rank", true);
    let all = store
        .latest_per_id(
            coll,
            &Filter::all(),
            "id",
            "version",
            Some(&by_rank),
            None,
            0,
        )
        .ctx("latest_per_id")?;
    ensure_eq(
        field_values(&all, "id"),
        vec![json!("c"), json!("b"), json!("a")],
        "sorted by rank after grouping (a ranks 30, not 99)",
    )?;
    let window = store
        .latest_per_id(
            coll,
            &Filter::all(),
            "id",
            "version",
            Some(&by_rank),
            Some(1),
            1,
        )
        .ctx("latest_per_id")?;
    ensure_eq(
        field_values(&window, "id"),
        vec![json!("b")],
        "offset 1, limit 1",
    )?;
    ensure_eq(
        store.count(coll, &Filter::all()).ctx("count")?,
        4,
        "count of all versions",
    )?;
    ensure_eq(
        store
            .count_distinct(coll, &Filter::all(), "id")
            .ctx("count_distinct")?,
        3,
        "count_distinct",
    )
}

fn latest_per_id_page_returns_entity_total_and_window(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"eid": "x", "rev": 1}),
            json!({"eid": "x", "rev": 2}),
            json!({"eid": "y", "rev": 1}),
            json!({"eid": "z", "rev": 1}),
            json!({"rev": 9, "note": "no identity"}),
        ],
    )?;
    let sort = Sort::by("eid", false);
    let page = |limit: Option<usize>, offset: usize| {
        store
            .latest_per_id_page(
                coll,
                &Filter::all(),
                "eid",
                "rev",
                Some(&sort),
                limit,
                offset,
            )
            .ctx("latest_per_id_page")
    };
    let (one, total) = page(Some(1), 0)?;
    ensure_eq(
        (field_values(&one, "eid"), total),
        (vec![json!("x")], 3),
        "limit 1",
    )?;
    ensure_eq(
        one[0].get("rev").cloned(),
        Some(json!(2)),
        "the newest rev of x",
    )?;
    let (all, total) = page(Some(0), 0)?;
    ensure_eq((all.len(), total), (3, 3), "limit 0")?;
    let (all, total) = page(None, 0)?;
    ensure_eq((all.len(), total), (3, 3), "no limit")?;
    let (past, total) = page(Some(2), 5)?;
    ensure_eq((past.len(), total), (0, 3), "offset past the end")
}

fn find_many_by_id_preserves_first_documents_and_request_order(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"id": "a", "n": 1}),
            json!({"id": "b", "n": 2}),
            json!({"id": "a", "n": 3}),
        ],
    )?;
    let got = store
        .find_many_by_id(
            coll,
            "id",
            &[json!("b"), json!("missing"), json!("a"), json!("b")],
        )
        .ctx("find_many_by_id")?;
    ensure_eq(
        got,
        vec![
            doc(json!({"id": "b", "n": 2})),
            doc(json!({"id": "a", "n": 1})),
        ],
        "first document per id, in request order",
    )?;
    ensure_eq(
        store
            .find_many_by_id(coll, "id", &[])
            .ctx("find_many_by_id")?,
        vec![],
        "no ids",
    )
}

fn latest_per_id_orders_absent_last_in_both_directions(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"id": "a", "version": 1, "rank": 2}),
            json!({"id": "b", "version": 1}),
            json!({"id": "c", "version": 1, "rank": 1}),
        ],
    )?;
    let ids = |descending: bool| -> Result<Vec<Value>, String> {
        let docs = store
            .latest_per_id(
                coll,
                &Filter::all(),
                "id",
                "version",
                Some(&Sort::by("rank", descending)),
                None,
                0,
            )
            .ctx("latest_per_id")?;
        Ok(field_values(&docs, "id"))
    };
    ensure_eq(
        ids(false)?,
        vec![json!("c"), json!("a"), json!("b")],
        "ascending",
    )?;
    ensure_eq(
        ids(true)?,
        vec![json!("a"), json!("c"), json!("b")],
        "descending",
    )
}

fn latest_per_id_skips_docs_without_identity(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"id": "a", "version": 1}),
            json!({"version": 5, "note": "no id"}),
        ],
    )?;
    let docs = store
        .latest_per_id(coll, &Filter::all(), "id", "version", None, None, 0)
        .ctx("latest_per_id")?;
    ensure_eq(
        docs,
        vec![doc(json!({"id": "a", "version": 1}))],
        "documents without an id are skipped",
    )
}

fn latest_per_id_missing_version_sorts_lowest(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"id": "a", "tag": "unversioned"}),
            json!({"id": "a", "version": 1, "tag": "v1"}),
        ],
    )?;
    let docs = store
        .latest_per_id(coll, &Filter::all(), "id", "version", None, None, 0)
        .ctx("latest_per_id")?;
    ensure_eq(
        field_values(&docs, "tag"),
        vec![json!("v1")],
        "a missing version ranks lowest",
    )
}

fn latest_per_id_honours_custom_fields(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    insert_all(
        store,
        coll,
        &[
            json!({"eid": "x", "rev": 1}),
            json!({"eid": "x", "rev": 2}),
            json!({"eid": "y", "rev": 1}),
        ],
    )?;
    let docs = store
        .latest_per_id(
            coll,
            &Filter::all(),
            "eid",
            "rev",
            Some(&Sort::by("eid", false)),
            None,
            0,
        )
        .ctx("latest_per_id")?;
    ensure_eq(
        docs,
        vec![
            doc(json!({"eid": "x", "rev": 2})),
            doc(json!({"eid": "y", "rev": 1})),
        ],
        "grouped by eid, newest rev",
    )
}

fn update_one_and_get_upsert_inserts_on_a_miss(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    let after = store
        .update_one_and_get(
            coll,
            &by_id("u"),
            &UpdateSpec::new().set("n", 1),
            true,
            true,
        )
        .ctx("update_one_and_get(upsert)")?;
    ensure_eq(
        after,
        Some(doc(json!({"id": "u", "n": 1}))),
        "post-image of an upsert",
    )?;
    let before = store
        .update_one_and_get(
            coll,
            &by_id("v"),
            &UpdateSpec::new().set("n", 2),
            false,
            true,
        )
        .ctx("update_one_and_get(upsert)")?;
    ensure_eq(before, None, "pre-image of an upsert")?;
    ensure_eq(
        store.find_one(coll, &by_id("v"), None).ctx("find_one")?,
        Some(doc(json!({"id": "v", "n": 2}))),
        "the document a pre-image upsert inserted",
    )
}

/// Runs `attempt(i)` on 8 threads released together and returns their results in thread order.
fn race<T: Send>(attempt: impl Fn(usize) -> Result<T, String> + Sync) -> Result<Vec<T>, String> {
    let barrier = Barrier::new(RACERS);
    let results: Vec<Result<T, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..RACERS)
            .map(|i| {
                let barrier = &barrier;
                let attempt = &attempt;
                scope.spawn(move || {
                    barrier.wait();
                    attempt(i)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a racing thread panicked".to_string()))
            })
            .collect()
    });
    results.into_iter().collect()
}

fn unclaimed(store: &dyn DocumentStore, coll: &str) -> Result<Filter, String> {
    store.insert(coll, &doc(json!({"id": "r"}))).ctx("insert")?;
    Ok(by_id("r").and("owner", Predicate::AbsentOrNull))
}

fn single_winner<T>(results: &[T], won: impl Fn(&T) -> bool, what: &str) -> Result<usize, String> {
    let winners: Vec<usize> = (0..results.len()).filter(|i| won(&results[*i])).collect();
    match winners.as_slice() {
        [one] => Ok(*one),
        _ => Err(format!(
            "{what}: expected exactly one of {RACERS} racers to win, {} did",
            winners.len()
        )),
    }
}

fn stored(store: &dyn DocumentStore, coll: &str) -> Result<Option<Document>, String> {
    store.find_one(coll, &by_id("r"), None).ctx("find_one")
}

fn racing_guarded_updates_have_exactly_one_winner(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    let guard = unclaimed(store, coll)?;
    let results = race(|i| {
        store
            .update(
                coll,
                &guard,
                &UpdateSpec::new().set("owner", i as i64),
                false,
            )
            .ctx("update")
    })?;
    let winner = single_winner(&results, |n| *n == 1, "guarded updates")?;
    ensure_eq(
        stored(store, coll)?,
        Some(doc(json!({"id": "r", "owner": winner}))),
        "the winner's write",
    )
}

fn racing_guarded_replaces_have_exactly_one_winner(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    let guard = unclaimed(store, coll)?;
    let results = race(|i| {
        store
            .replace(coll, &guard, &doc(json!({"id": "r", "owner": i})), false)
            .ctx("replace")
    })?;
    let winner = single_winner(&results, |n| *n == 1, "guarded replaces")?;
    ensure_eq(
        stored(store, coll)?,
        Some(doc(json!({"id": "r", "owner": winner}))),
        "the winner's replacement",
    )
}

fn racing_update_one_and_get_returns_only_its_own_write(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    let guard = unclaimed(store, coll)?;
    let results = race(|i| {
        store
            .update_one_and_get(
                coll,
                &guard,
                &UpdateSpec::new().set("owner", i as i64),
                true,
                false,
            )
            .ctx("update_one_and_get")
    })?;
    let winner = single_winner(&results, Option::is_some, "update_one_and_get")?;
    let want = Some(doc(json!({"id": "r", "owner": winner})));
    ensure_eq(
        results[winner].clone(),
        want.clone(),
        "the winner's post-image",
    )?;
    ensure_eq(stored(store, coll)?, want, "the stored document")
}

fn racing_pre_image_updates_have_exactly_one_winner(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    let guard = unclaimed(store, coll)?;
    let results = race(|i| {
        store
            .update_one_and_get(
                coll,
                &guard,
                &UpdateSpec::new().set("owner", i as i64),
                false,
                false,
            )
            .ctx("update_one_and_get")
    })?;
    let winner = single_winner(&results, Option::is_some, "pre-image updates")?;
    ensure_eq(
        results[winner].clone(),
        Some(doc(json!({"id": "r"}))),
        "the winner's pre-image (unclaimed)",
    )?;
    ensure_eq(
        stored(store, coll)?,
        Some(doc(json!({"id": "r", "owner": winner}))),
        "the stored document",
    )
}

fn concurrent_compare_and_swap_loses_no_update(
    store: &dyn DocumentStore,
    coll: &str,
) -> Result<(), String> {
    store
        .insert(coll, &doc(json!({"id": "r", "items": []})))
        .ctx("insert")?;
    let results = race(|i| {
        compare_and_swap(
            store,
            coll,
            &by_id("r"),
            |current| {
                let mut items = current
                    .and_then(|d| d.get("items"))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                items.push(json!(i));
                Some(UpdateSpec::new().set("items", Value::Array(items)))
            },
            "rev",
            1000,
        )
        .ctx("compare_and_swap")
    })?;
    ensure(results.iter().all(|wrote| *wrote), || {
        "a compare_and_swap gave up".to_string()
    })?;
    let final_doc = stored(store, coll)?.ok_or("the document is gone")?;
    let mut items: Vec<i64> = final_doc
        .get("items")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default();
    items.sort_unstable();
    ensure_eq(
        items,
        (0..RACERS as i64).collect::<Vec<_>>(),
        "every racer's item",
    )?;
    ensure_eq(
        final_doc.get("rev").cloned(),
        Some(json!(RACERS)),
        "the counter",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_stores::Drops;

    fn passes(_: &dyn DocumentStore, _: &str) -> Result<(), String> {
        Ok(())
    }

    fn fails(_: &dyn DocumentStore, _: &str) -> Result<(), String> {
        Err("count: expected 2, got 3".into())
    }

    #[test]
    fn a_cleanup_that_fails_names_the_prefix_left_and_how_to_remove_it() {
        let store = Drops::refusing(&["kit_ab12__count"]);
        let why = in_own_collection(&store, "kit_ab12", "count", passes).unwrap_err();
        assert_eq!(
            why,
            "drop_collection(\"kit_ab12__count\"), as the kit cleans up failed (io-error): the disk \
             went away; so what the kit wrote may be left in the store: remove every collection whose \
             name starts with 'kit_ab12__' with the store's own tools"
        );
    }

    #[test]
    fn a_case_that_failed_and_could_not_clean_up_says_both() {
        let store = Drops::refusing(&["kit_ab12__count"]);
        let why = in_own_collection(&store, "kit_ab12", "count", fails).unwrap_err();
        assert!(
            why.starts_with("count: expected 2, got 3; then drop_collection("),
            "{why}"
        );
        assert!(why.contains("starts with 'kit_ab12__'"), "{why}");
    }

    #[test]
    fn every_collection_is_dropped_even_after_one_could_not_be() {
        let store = Drops::refusing(&["kit_ab12__collections_are_separate"]);
        let why =
            in_own_collection(&store, "kit_ab12", "collections_are_separate", passes).unwrap_err();
        assert!(why.contains("starts with 'kit_ab12__'"), "{why}");
        let asked = store.asked.lock().unwrap();
        assert_eq!(asked.len(), 3, "{asked:?}");
    }

    #[test]
    fn a_cleanup_that_works_leaves_the_outcome_as_it_was() {
        let store = Drops::refusing(&[]);
        assert_eq!(
            in_own_collection(&store, "kit_ab12", "count", passes),
            Ok(())
        );
        assert_eq!(
            in_own_collection(&store, "kit_ab12", "count", fails),
            Err("count: expected 2, got 3".to_string())
        );
    }
}
