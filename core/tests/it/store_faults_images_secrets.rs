//! Deliberately broken image and secret stores: for every case of those kits (the image kit's docker case
//! aside), a store that breaks the rule it checks. Each case must fail on its broken store and pass on the
//! clean built-in one.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use agent_env::stores::kits::{self, CaseOutcome};
use agent_env::stores::{
    ImageStore, LocalRegistryImageStore, LocalSecretStore, RegistryAuth, SecretStore, StoreError,
    StoreResult,
};

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
            matches!(report.results[0], (_, CaseOutcome::Failed(_))),
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
        LocalSecretStore::new(values, None, None).unwrap()
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
            matches!(report.results[0], (_, CaseOutcome::Failed(_))),
            "{case} should catch {fault:?}: {:?}",
            report.lines()
        );
    }
}
