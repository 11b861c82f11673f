//! Deliberately broken document, image and secret stores: one fault per rule that the document kit's
//! added cases, and every case of the image and secret kits, hold a store to. Each case must fail on the
//! store that breaks its rule and pass on the clean built-in store. The object kit's faults are in
//! `store_object`.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use agent_env::stores::document::eval::apply_update;
use agent_env::stores::kits::{self, Outcome};
use agent_env::stores::{
    Document, DocumentStore, Filter, ImageStore, LocalRegistryImageStore, LocalSecretStore,
    LocalSqliteDocumentStore, Predicate, RegistryAuth, SecretStore, Sort, StoreError, StoreResult,
    UpdateSpec,
};
use serde_json::Value;

/// One rule a [`BrokenDocs`] gets wrong.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
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

    fn filter(&self, filter: &Filter) -> Filter {
        let mut out = filter.clone();
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
                    _ => out,
                };
            }
        }
        out
    }
}

impl DocumentStore for BrokenDocs {
    fn find_one(&self, c: &str, f: &Filter, s: Option<&Sort>) -> StoreResult<Option<Document>> {
        self.inner.find_one(self.coll(c), &self.filter(f), s)
    }
    fn query(
        &self,
        c: &str,
        f: &Filter,
        s: Option<&Sort>,
        limit: Option<usize>,
        offset: usize,
    ) -> StoreResult<Vec<Document>> {
        let mut docs = self
            .inner
            .query(self.coll(c), &self.filter(f), s, limit, offset)?;
        if let (true, Some(sort)) = (self.has(Fault::SortsAbsentLast), s) {
            let field = &sort.keys[0].field;
            docs.sort_by_key(|d| d.get(field).is_none_or(Value::is_null));
        }
        Ok(docs)
    }
    fn count(&self, c: &str, f: &Filter) -> StoreResult<u64> {
        self.inner.count(self.coll(c), &self.filter(f))
    }
    fn insert(&self, c: &str, doc: &Document) -> StoreResult<()> {
        self.inner.insert(self.coll(c), doc)
    }
    fn update(&self, c: &str, f: &Filter, u: &UpdateSpec, upsert: bool) -> StoreResult<u64> {
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
        self.inner.update(self.coll(c), &self.filter(f), u, upsert)
    }
    fn update_one_and_get(
        &self,
        c: &str,
        f: &Filter,
        u: &UpdateSpec,
        after: bool,
        upsert: bool,
    ) -> StoreResult<Option<Document>> {
        self.inner
            .update_one_and_get(self.coll(c), &self.filter(f), u, after, upsert)
    }
    fn replace(&self, c: &str, f: &Filter, doc: &Document, upsert: bool) -> StoreResult<u64> {
        self.inner
            .replace(self.coll(c), &self.filter(f), doc, upsert)
    }
    fn delete(&self, c: &str, f: &Filter) -> StoreResult<u64> {
        self.inner.delete(self.coll(c), &self.filter(f))
    }
    fn ensure_index(&self, c: &str, fields: &[&str], unique: bool) -> StoreResult<()> {
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
}

#[test]
fn each_added_document_case_catches_the_rule_it_checks() {
    let pairs = [
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
    let added: Vec<&str> = pairs.iter().map(|(n, _)| *n).collect();
    assert_eq!(names[37..], added[..], "every added case has a fault here");
    for (case, fault) in pairs {
        let dir = tempfile::tempdir().unwrap();
        let only = kits::Kit {
            name: "document",
            cases: kit
                .cases
                .iter()
                .copied()
                .filter(|c| c.name == case)
                .collect(),
            skipped: Vec::new(),
        };
        let clean = LocalSqliteDocumentStore::new(dir.path().join("clean.db"));
        assert!(kits::run(&only, &clean, "coll").all_passed(), "{case}");
        let store = BrokenDocs {
            inner: LocalSqliteDocumentStore::new(dir.path().join("broken.db")),
            fault,
            indexes: Mutex::new(HashSet::new()),
        };
        let report = kits::run(&only, &store, "coll");
        assert!(
            matches!(report.results[0], (_, Outcome::Failed(_))),
            "{case} should catch {fault:?}: {:?}",
            report.lines()
        );
    }
}

/// One rule a [`BrokenImages`] gets wrong.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ImageFault {
    /// Refs leave out the repository.
    RefWithoutRepository,
    /// A second `ensure_repository` of one repository fails.
    EnsureOnce,
    /// `auth` hands out login material for any ref.
    AuthForAnyRef,
    /// Every ref gets tag `v1`.
    OneTag,
    /// `owns` claims every ref.
    OwnsEverything,
    /// `auth` hands out login material for refs it says it does not own.
    AuthWithoutOwning,
}

struct BrokenImages {
    inner: LocalRegistryImageStore,
    fault: ImageFault,
    ensured: Mutex<HashSet<String>>,
}

fn login() -> RegistryAuth {
    RegistryAuth {
        registry: "localhost:5000".into(),
        username: "kit".into(),
        password: "secret".into(),
    }
}

impl ImageStore for BrokenImages {
    fn image_ref(&self, repository: &str, tag: &str) -> StoreResult<String> {
        let tag = if self.fault == ImageFault::OneTag {
            "v1"
        } else {
            tag
        };
        if self.fault == ImageFault::RefWithoutRepository {
            return self.inner.image_ref("images", tag);
        }
        self.inner.image_ref(repository, tag)
    }
    fn ensure_repository(&self, repository: &str) -> StoreResult<()> {
        let fresh = self.ensured.lock().unwrap().insert(repository.to_string());
        if !fresh && self.fault == ImageFault::EnsureOnce {
            return Err(StoreError::InvalidValue(format!(
                "repository {repository} exists already"
            )));
        }
        Ok(())
    }
    fn owns(&self, image_ref: &str) -> StoreResult<bool> {
        match self.fault {
            ImageFault::OwnsEverything => Ok(true),
            ImageFault::AuthWithoutOwning => Ok(false),
            _ => self.inner.owns(image_ref),
        }
    }
    fn auth(&self, image_ref: &str) -> StoreResult<Option<RegistryAuth>> {
        if self.fault == ImageFault::AuthForAnyRef
            || (self.fault == ImageFault::AuthWithoutOwning && self.inner.owns(image_ref)?)
        {
            return Ok(Some(login()));
        }
        self.inner.auth(image_ref)
    }
}

#[test]
fn each_image_case_catches_the_rule_it_checks() {
    let pairs = [
        (
            "image_ref_contains_repository_and_tag",
            ImageFault::RefWithoutRepository,
        ),
        ("ensure_repository_is_idempotent", ImageFault::EnsureOnce),
        ("auth_is_none_for_a_foreign_ref", ImageFault::AuthForAnyRef),
        (
            "image_refs_differ_by_repository_and_tag",
            ImageFault::OneTag,
        ),
        (
            "owns_is_false_for_a_foreign_ref",
            ImageFault::OwnsEverything,
        ),
        ("auth_only_for_a_ref_it_owns", ImageFault::AuthWithoutOwning),
    ];
    let kit = kits::image::cases();
    let names: Vec<&str> = kit.cases.iter().map(|c| c.name).collect();
    let paired: Vec<&str> = pairs.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names[..6],
        paired[..],
        "every case that needs no docker has a fault here"
    );
    for (case, fault) in pairs {
        let only = kits::Kit {
            name: "image",
            cases: kit
                .cases
                .iter()
                .copied()
                .filter(|c| c.name == case)
                .collect(),
            skipped: Vec::new(),
        };
        let clean = LocalRegistryImageStore::new("localhost:5000").unwrap();
        assert!(kits::run(&only, &clean, "kit-repo").all_passed(), "{case}");
        let store = BrokenImages {
            inner: LocalRegistryImageStore::new("localhost:5000").unwrap(),
            fault,
            ensured: Mutex::new(HashSet::new()),
        };
        let report = kits::run(&only, &store, "kit-repo");
        assert!(
            matches!(report.results[0], (_, Outcome::Failed(_))),
            "{case} should catch {fault:?}: {:?}",
            report.lines()
        );
    }
}

/// One rule a [`BrokenSecrets`] gets wrong.
#[derive(Clone, Copy, Debug, PartialEq)]
enum SecretFault {
    /// Values come back trimmed of their last character.
    ValueClipped,
    /// An absent name reads as the empty string.
    AbsentIsEmpty,
    /// An empty value reads as absent.
    EmptyIsAbsent,
}

struct BrokenSecrets {
    inner: LocalSecretStore,
    fault: SecretFault,
}

impl SecretStore for BrokenSecrets {
    fn get(&self, name: &str) -> StoreResult<Option<String>> {
        let value = self.inner.get(name)?;
        Ok(match (self.fault, value) {
            (SecretFault::ValueClipped, Some(mut v)) => {
                v.pop();
                Some(v)
            }
            (SecretFault::AbsentIsEmpty, None) => Some(String::new()),
            (SecretFault::EmptyIsAbsent, Some(v)) if v.is_empty() => None,
            (_, value) => value,
        })
    }
}

#[test]
fn each_secret_case_catches_the_rule_it_checks() {
    let pairs = [
        ("get_returns_value", SecretFault::ValueClipped),
        ("get_returns_none_for_absent", SecretFault::AbsentIsEmpty),
        (
            "get_returns_empty_string_verbatim",
            SecretFault::EmptyIsAbsent,
        ),
    ];
    let kit = kits::secret::cases();
    let names: Vec<&str> = kit.cases.iter().map(|c| c.name).collect();
    let paired: Vec<&str> = pairs.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, paired, "every case has a fault here");
    let seeded = || {
        let values: HashMap<String, String> = kits::secret::FIXTURE
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        LocalSecretStore::new(values, None, false).unwrap()
    };
    for (case, fault) in pairs {
        let only = kits::Kit {
            name: "secret",
            cases: kit
                .cases
                .iter()
                .copied()
                .filter(|c| c.name == case)
                .collect(),
            skipped: Vec::new(),
        };
        assert!(kits::run(&only, &seeded(), "").all_passed(), "{case}");
        let store = BrokenSecrets {
            inner: seeded(),
            fault,
        };
        let report = kits::run(&only, &store, "");
        assert!(
            matches!(report.results[0], (_, Outcome::Failed(_))),
            "{case} should catch {fault:?}: {:?}",
            report.lines()
        );
    }
}
