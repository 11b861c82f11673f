//! A deliberately broken document store: for every case of the document kit, a store that breaks the
//! rule it checks. Each case must fail on its broken store and pass on the clean built-in one. The object
//! kit's faults are in `store_object`, the image and secret kits' in `store_faults_images_secrets`.

use std::collections::HashSet;
use std::sync::Mutex;

use agent_env::stores::document::eval::{apply_update, latest_order, query_order, window};
use agent_env::stores::document::reduce_to_latest;
use agent_env::stores::kits::{self, CaseOutcome};
use agent_env::stores::{
    Document, DocumentStore, Filter, LocalSqliteDocumentStore, Predicate, Sort, StoreError,
    StoreResult, UpdateSpec,
};
use serde_json::Value;

/// One rule a [`BrokenDocs`] gets wrong.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    /// Documents read back with a backend `_id`.
    AddsBackendId,
    /// Unique indexes are made non-unique.
    UniqueIgnored,
    /// Every index is made unique.
    EveryIndexUnique,
    /// `absent_or_null` matches only an absent field.
    AbsentOrNullSkipsNull,
    /// `ne` is dropped from filters.
    NeIgnored,
    /// Only the first path of a filter counts.
    FirstPathOnly,
    /// `find_one` ignores its sort.
    FindOneUnsorted,
    /// `query` ignores its offset.
    OffsetIgnored,
    /// `query` with limit 0 returns nothing.
    LimitZeroIsNone,
    /// `count` ignores its filter.
    CountIgnoresFilter,
    /// `add_to_set` appends like `push`.
    AddToSetPushes,
    /// Writes match on `id` alone, ignoring their guards.
    GuardsIgnored,
    /// `update_one_and_get` always returns the post-image.
    AlwaysPostImage,
    /// Upserts never insert.
    UpsertIgnored,
    /// An upsert inserts the update's `set` fields only.
    UpsertSetOnly,
    /// An upsert refused by a unique index reports a miss instead.
    UpsertSwallowsDuplicate,
    /// `delete` removes every match.
    DeleteAll,
    /// `update` leaves out `inc`.
    IncIgnored,
    /// `eq` compares a whole array instead of looking inside it.
    EqIsExact,
    /// Conditions on dotted paths are dropped.
    DottedPathsIgnored,
    /// `find_many_by_id` answers in id order, not request order.
    FindManySorted,
    /// `latest_per_id` keeps every version.
    LatestKeepsEveryVersion,
    /// `latest_per_id` sorts and windows before it groups.
    LatestWindowFirst,
    /// `latest_per_id_page` counts versions, not ids.
    LatestTotalCountsVersions,
    /// `latest_per_id` sorts absent values first ascending.
    LatestAbsentFirst,
    /// `latest_per_id` keeps documents without the id field.
    LatestKeepsIdless,
    /// `latest_per_id` ranks a missing version highest.
    LatestMissingVersionHighest,
    /// `latest_per_id` uses `id` and `version` whatever fields it is given.
    LatestDefaultFields,
    /// `gte` leaves out its bound.
    GteExclusive,
    /// `exists(true)` treats a `null` field as absent.
    ExistsSkipsNull,
    /// `eq(null)` does not match an absent field.
    EqNullNeedsField,
    /// `query` sorts absent and `null` values last ascending.
    SortsAbsentLast,
    /// `update` changes every match.
    UpdatesAll,
    /// `set` of a dotted path under a missing parent is refused.
    SetNeedsParents,
    /// A second `ensure_index` of the same fields is refused.
    IndexOnce,
    /// Every collection is one table.
    OneCollection,
    /// An `update` or `replace` with upsert that inserts answers 0, as for a miss.
    UpsertInsertCountsZero,
}

struct BrokenDocs {
    inner: LocalSqliteDocumentStore,
    fault: Fault,
    indexes: Mutex<HashSet<(String, Vec<String>)>>,
}

impl BrokenDocs {
    fn has(&self, fault: Fault) -> bool {
        self.fault == fault
    }

    fn coll<'a>(&self, name: &'a str) -> &'a str {
        if self.has(Fault::OneCollection) {
            "shared"
        } else {
            name
        }
    }

    /// A write's result, with a duplicate-key refusal turned into `miss` under
    /// [`Fault::UpsertSwallowsDuplicate`].
    fn swallow<T>(&self, result: StoreResult<T>, miss: T) -> StoreResult<T> {
        match result {
            Err(StoreError::DuplicateKey(_)) if self.has(Fault::UpsertSwallowsDuplicate) => {
                Ok(miss)
            }
            other => other,
        }
    }

    /// What the write operations match on.
    fn guard(&self, filter: &Filter) -> Filter {
        if self.has(Fault::GuardsIgnored) {
            let mut only_id = Filter::default();
            if let Some(id) = filter.conditions.get("id") {
                only_id.conditions.insert("id".into(), id.clone());
            }
            return only_id;
        }
        self.filter(filter)
    }

    fn shown(&self, doc: Document) -> Document {
        let mut doc = doc;
        if self.has(Fault::AddsBackendId) {
            doc.insert("_id".into(), Value::from(1));
        }
        doc
    }

    fn filter(&self, filter: &Filter) -> Filter {
        if self.has(Fault::FirstPathOnly) {
            let mut first = Filter::default();
            if let Some((path, predicates)) = filter.conditions.iter().next() {
                first.conditions.insert(path.clone(), predicates.clone());
            }
            return first;
        }
        let mut out = filter.clone();
        if self.has(Fault::DottedPathsIgnored) {
            out.conditions.retain(|path, _| !path.contains('.'));
        }
        if self.has(Fault::NeIgnored) {
            for predicates in out.conditions.values_mut() {
                predicates.retain(|p| !matches!(p, Predicate::Ne(_)));
            }
        }
        for (path, predicates) in &filter.conditions {
            for p in predicates {
                out = match p {
                    Predicate::Gte(v) if self.has(Fault::GteExclusive) => {
                        out.and(path, Predicate::Ne(v.clone()))
                    }
                    Predicate::Exists(true) if self.has(Fault::ExistsSkipsNull) => {
                        out.and(path, Predicate::Ne(Value::Null))
                    }
                    Predicate::Eq(Value::Null) if self.has(Fault::EqNullNeedsField) => {
                        out.and(path, Predicate::Exists(true))
                    }
                    Predicate::AbsentOrNull if self.has(Fault::AbsentOrNullSkipsNull) => {
                        out.and(path, Predicate::Exists(false))
                    }
                    _ => out,
                };
            }
        }
        out
    }
}

impl DocumentStore for BrokenDocs {
    fn find_one(&self, c: &str, f: &Filter, s: Option<&Sort>) -> StoreResult<Option<Document>> {
        let s = if self.has(Fault::FindOneUnsorted) {
            None
        } else {
            s
        };
        Ok(self
            .inner
            .find_one(self.coll(c), &self.filter(f), s)?
            .map(|d| self.shown(d)))
    }
    fn query(
        &self,
        c: &str,
        f: &Filter,
        s: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        if self.has(Fault::LimitZeroIsNone) && limit == Some(0) {
            return Ok(Vec::new());
        }
        let offset = if self.has(Fault::OffsetIgnored) {
            0
        } else {
            offset
        };
        let mut docs = self
            .inner
            .query(self.coll(c), &self.filter(f), s, limit, offset)?;
        docs = docs.into_iter().map(|d| self.shown(d)).collect();
        if self.has(Fault::EqIsExact) {
            docs.retain(|d| {
                f.conditions.iter().all(|(path, predicates)| {
                    predicates.iter().all(|p| match p {
                        Predicate::Eq(v) => d.get(path).unwrap_or(&Value::Null) == v,
                        _ => true,
                    })
                })
            });
        }
        if let (true, Some(sort)) = (self.has(Fault::SortsAbsentLast), s) {
            let field = &sort.keys[0].field;
            docs.sort_by_key(|d| d.get(field).is_none_or(Value::is_null));
        }
        Ok(docs)
    }
    fn count(&self, c: &str, f: &Filter) -> StoreResult<u64> {
        if self.has(Fault::CountIgnoresFilter) {
            return self.inner.count(self.coll(c), &Filter::default());
        }
        self.inner.count(self.coll(c), &self.filter(f))
    }
    fn insert(&self, c: &str, doc: &Document) -> StoreResult<()> {
        self.inner.insert(self.coll(c), doc)
    }
    fn update(&self, c: &str, f: &Filter, u: &UpdateSpec, upsert: bool) -> StoreResult<u64> {
        if self.has(Fault::UpsertInsertCountsZero) {
            let missed = self.inner.count(c, f)? == 0;
            let written = self.inner.update(c, f, u, upsert)?;
            return Ok(if upsert && missed { 0 } else { written });
        }
        let mut u = u.clone();
        if self.has(Fault::AddToSetPushes) {
            u.push.extend(std::mem::take(&mut u.add_to_set));
        }
        if self.has(Fault::IncIgnored) {
            u.inc.clear();
        }
        let u = &u;
        if upsert && self.has(Fault::UpsertSetOnly) {
            let matched = self.inner.update(c, f, u, false)?;
            if matched == 0 {
                self.inner.insert(c, &u.set)?;
            }
            return Ok(1);
        }
        let upsert = upsert && !self.has(Fault::UpsertIgnored);
        if self.has(Fault::SetNeedsParents) && u.set.keys().any(|k| k.contains('.')) {
            return Err(StoreError::InvalidValue("no parent to set into".into()));
        }
        if self.has(Fault::UpdatesAll) {
            let matches = self.inner.query(c, f, None, None, 0)?;
            for old in &matches {
                let mut new = old.clone();
                apply_update(&mut new, u)?;
                let exact = Filter::of(old.iter().map(|(k, v)| (k.as_str(), v.clone())));
                self.inner.replace(c, &exact, &new, false)?;
            }
            return Ok(matches.len() as u64);
        }
        self.swallow(
            self.inner.update(self.coll(c), &self.guard(f), u, upsert),
            0,
        )
    }
    fn update_one_and_get(
        &self,
        c: &str,
        f: &Filter,
        u: &UpdateSpec,
        after: bool,
        upsert: bool,
    ) -> StoreResult<Option<Document>> {
        let after = after || self.has(Fault::AlwaysPostImage);
        let upsert = upsert && !self.has(Fault::UpsertIgnored);
        let got = self
            .inner
            .update_one_and_get(self.coll(c), &self.guard(f), u, after, upsert);
        self.swallow(got, None)
    }
    fn replace(&self, c: &str, f: &Filter, doc: &Document, upsert: bool) -> StoreResult<u64> {
        if self.has(Fault::UpsertInsertCountsZero) {
            let missed = self.inner.count(c, f)? == 0;
            let written = self.inner.replace(c, f, doc, upsert)?;
            return Ok(if upsert && missed { 0 } else { written });
        }
        let upsert = upsert && !self.has(Fault::UpsertIgnored);
        let replaced = self
            .inner
            .replace(self.coll(c), &self.guard(f), doc, upsert);
        self.swallow(replaced, 0)
    }
    fn delete(&self, c: &str, f: &Filter) -> StoreResult<u64> {
        let mut deleted = self.inner.delete(self.coll(c), &self.filter(f))?;
        while self.has(Fault::DeleteAll) && deleted > 0 {
            let more = self.inner.delete(self.coll(c), &self.filter(f))?;
            if more == 0 {
                break;
            }
            deleted += more;
        }
        Ok(deleted)
    }
    fn ensure_index(&self, c: &str, fields: &[&str], unique: bool) -> StoreResult<()> {
        let unique =
            (unique && !self.has(Fault::UniqueIgnored)) || self.has(Fault::EveryIndexUnique);
        let key = (
            c.to_string(),
            fields.iter().map(|f| f.to_string()).collect(),
        );
        let fresh = self.indexes.lock().unwrap().insert(key);
        if !fresh && self.has(Fault::IndexOnce) {
            return Err(StoreError::InvalidValue("that index exists already".into()));
        }
        self.inner.ensure_index(self.coll(c), fields, unique)
    }
    fn find_many_by_id(
        &self,
        c: &str,
        id_field: &str,
        ids: &[Value],
    ) -> StoreResult<Vec<Document>> {
        let mut docs = self.inner.find_many_by_id(self.coll(c), id_field, ids)?;
        if self.has(Fault::FindManySorted) {
            docs.sort_by_key(|d| d.get(id_field).map(Value::to_string));
        }
        Ok(docs.into_iter().map(|d| self.shown(d)).collect())
    }
    fn latest_per_id_page(
        &self,
        c: &str,
        f: &Filter,
        id_field: &str,
        version_field: &str,
        sort: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<(Vec<Document>, u64)> {
        let (id_field, version_field) = if self.has(Fault::LatestDefaultFields) {
            ("id", "version")
        } else {
            (id_field, version_field)
        };
        let all = self.query(c, f, None, None, 0)?;
        let versions = all.len() as u64;
        let latest = if self.has(Fault::LatestKeepsEveryVersion) {
            all
        } else if self.has(Fault::LatestWindowFirst) {
            let windowed = window(all, sort, latest_order, limit, offset);
            let latest = reduce_to_latest(windowed, id_field, version_field);
            let total = latest.len() as u64;
            return Ok((latest, total));
        } else if self.has(Fault::LatestMissingVersionHighest) {
            let mut all = all;
            for d in &mut all {
                d.entry(version_field).or_insert(Value::from(i64::MAX));
            }
            reduce_to_latest(all, id_field, version_field)
                .into_iter()
                .map(|mut d| {
                    if d.get(version_field) == Some(&Value::from(i64::MAX)) {
                        d.remove(version_field);
                    }
                    d
                })
                .collect()
        } else {
            let idless: Vec<Document> = all
                .iter()
                .filter(|d| d.get(id_field).is_none())
                .cloned()
                .collect();
            let mut latest = reduce_to_latest(all, id_field, version_field);
            if self.has(Fault::LatestKeepsIdless) {
                latest.extend(idless);
            }
            latest
        };
        let total = if self.has(Fault::LatestTotalCountsVersions) {
            versions
        } else {
            latest.len() as u64
        };
        let order = if self.has(Fault::LatestAbsentFirst) {
            query_order
        } else {
            latest_order
        };
        Ok((window(latest, sort, order, limit, offset), total))
    }
}

#[test]
fn each_document_case_catches_the_rule_it_checks() {
    let pairs = [
        ("insert_find_one_strips_id", Fault::AddsBackendId),
        (
            "ensure_index_unique_rejects_duplicate",
            Fault::UniqueIgnored,
        ),
        (
            "ensure_index_unique_on_other_fields_rejects_duplicate",
            Fault::UniqueIgnored,
        ),
        (
            "ensure_index_non_unique_allows_duplicate",
            Fault::EveryIndexUnique,
        ),
        ("absent_or_null_precondition", Fault::AbsentOrNullSkipsNull),
        ("ne_requires_present_field", Fault::NeIgnored),
        ("two_fused_predicates_and", Fault::FirstPathOnly),
        ("find_one_latest_by_sort", Fault::FindOneUnsorted),
        ("query_sort_offset_limit", Fault::OffsetIgnored),
        ("query_limit_zero_returns_all", Fault::LimitZeroIsNone),
        ("count", Fault::CountIgnoresFilter),
        ("update_ops", Fault::AddToSetPushes),
        ("update_cas_miss_and_hit", Fault::GuardsIgnored),
        ("lte_or_absent_precondition", Fault::GuardsIgnored),
        (
            "update_one_and_get_before_after_and_miss",
            Fault::AlwaysPostImage,
        ),
        ("replace_and_upsert", Fault::UpsertIgnored),
        (
            "update_upsert_synthesizes_from_filter",
            Fault::UpsertSetOnly,
        ),
        (
            "upsert_colliding_with_a_unique_index_raises_duplicate_key",
            Fault::UpsertSwallowsDuplicate,
        ),
        ("delete", Fault::DeleteAll),
        ("eq_and_in_array_containment", Fault::EqIsExact),
        ("dotted_array_traversal", Fault::DottedPathsIgnored),
        (
            "positional_array_index_filter_and_set",
            Fault::DottedPathsIgnored,
        ),
        ("versioned_entity_store_roundtrip", Fault::FindOneUnsorted),
        (
            "latest_per_id_reduces_to_newest_version",
            Fault::LatestKeepsEveryVersion,
        ),
        (
            "latest_per_id_sort_offset_limit_apply_after_grouping",
            Fault::LatestWindowFirst,
        ),
        (
            "latest_per_id_page_returns_entity_total_and_window",
            Fault::LatestTotalCountsVersions,
        ),
        (
            "find_many_by_id_preserves_first_documents_and_request_order",
            Fault::FindManySorted,
        ),
        (
            "latest_per_id_orders_absent_last_in_both_directions",
            Fault::LatestAbsentFirst,
        ),
        (
            "latest_per_id_skips_docs_without_identity",
            Fault::LatestKeepsIdless,
        ),
        (
            "latest_per_id_missing_version_sorts_lowest",
            Fault::LatestMissingVersionHighest,
        ),
        (
            "latest_per_id_honours_custom_fields",
            Fault::LatestDefaultFields,
        ),
        (
            "update_one_and_get_upsert_inserts_on_a_miss",
            Fault::UpsertIgnored,
        ),
        (
            "racing_guarded_updates_have_exactly_one_winner",
            Fault::GuardsIgnored,
        ),
        (
            "racing_guarded_replaces_have_exactly_one_winner",
            Fault::GuardsIgnored,
        ),
        (
            "racing_update_one_and_get_returns_only_its_own_write",
            Fault::GuardsIgnored,
        ),
        (
            "racing_pre_image_updates_have_exactly_one_winner",
            Fault::GuardsIgnored,
        ),
        (
            "concurrent_compare_and_swap_loses_no_update",
            Fault::IncIgnored,
        ),
        ("gte_and_lte_are_inclusive_and_typed", Fault::GteExclusive),
        (
            "exists_matches_presence_even_of_null",
            Fault::ExistsSkipsNull,
        ),
        ("eq_null_matches_null_and_absent", Fault::EqNullNeedsField),
        ("query_sorts_absent_and_null_lowest", Fault::SortsAbsentLast),
        ("update_and_replace_touch_one_match", Fault::UpdatesAll),
        (
            "set_creates_parents_and_inc_starts_at_zero",
            Fault::SetNeedsParents,
        ),
        ("ensure_index_twice_is_harmless", Fault::IndexOnce),
        ("collections_are_separate", Fault::OneCollection),
    ];
    let kit = kits::document::cases();
    let names: Vec<&str> = kit.cases.iter().map(|c| c.name).collect();
    let paired: Vec<&str> = pairs.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, paired, "every case has a fault here");
    for (case, fault) in pairs {
        let dir = tempfile::tempdir().unwrap();
        let only = only(case);
        let clean = LocalSqliteDocumentStore::new(dir.path().join("clean.db"));
        assert!(kits::run(&only, &clean, "coll").all_passed(), "{case}");
        let store = BrokenDocs {
            inner: LocalSqliteDocumentStore::new(dir.path().join("broken.db")),
            fault,
            indexes: Mutex::new(HashSet::new()),
        };
        let report = kits::run(&only, &store, "coll");
        assert!(
            matches!(report.results[0], (_, CaseOutcome::Failed(_))),
            "{case} should catch {fault:?}: {:?}",
            report.lines()
        );
    }
}

/// The document kit with its case `name` alone.
fn only(name: &str) -> kits::Kit<dyn DocumentStore> {
    let mut kit = kits::document::cases();
    kit.cases.retain(|c| c.name == name);
    kit
}

/// `update` and `replace` with upsert count an insert as 1, as the core relies on (`compare_and_swap`
/// would take a 0 for a lost race and apply its change again): each of the two cases that upsert
/// with one of them fails a store that answers 0 for the insert, saying the rule.
#[test]
fn an_upsert_that_inserts_but_counts_zero_fails_for_update_and_replace() {
    for (case, op) in [
        ("replace_and_upsert", "replace"),
        ("update_upsert_synthesizes_from_filter", "update"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = BrokenDocs {
            inner: LocalSqliteDocumentStore::new(dir.path().join("broken.db")),
            fault: Fault::UpsertInsertCountsZero,
            indexes: Mutex::new(HashSet::new()),
        };
        let report = kits::run(&only(case), &store, "coll");
        let want = format!(
            "{op} with upsert of a miss, which inserts (1 when it matched or, with upsert, inserted; 0 otherwise): expected 1, got 0"
        );
        assert!(
            matches!(&report.results[0], (_, CaseOutcome::Failed(why)) if *why == want),
            "{case}: {:?}",
            report.lines()
        );
    }
}
