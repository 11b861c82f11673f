//! The secret kit: the original's 3 cases (`docs/store-contract.md`, Secret stores). The store must be
//! seeded with [`FIXTURE`] and must not hold `conformance_absent`.
//!
//! Seeding, for `agent-env store check secret`: a store that reads the environment (the built-in
//! `LocalSecretStore` does, with `use_env`) is seeded by running the check with the two variables set:
//! `conformance_present=value-1 conformance_present_empty= agent-env store check secret`; `--seed` adds
//! the fixture to the built-in store's `values`; any other store needs the two secrets stored in it.
//! The check skips the two cases that read them on a store that holds neither
//! ([`cases_unless_unseeded`]).

use super::support::ensure_eq;
use super::support::Ctx;
use super::{Case, Kit};
use crate::secret::SecretStore;

/// The secrets the store is seeded with.
pub const FIXTURE: [(&str, &str); 2] = [
    ("conformance_present", "value-1"),
    ("conformance_present_empty", ""),
];

/// A name the store must not hold.
pub const ABSENT: &str = "conformance_absent";

const SEED_HINT: &str = "seed the store with conformance_present=value-1 and conformance_present_empty='' \
     (for the built-in store: set both as environment variables, or pass --seed to agent-env store check secret)";

type SecretCase = Case<dyn SecretStore>;

/// The 3 cases.
pub fn cases() -> Kit<dyn SecretStore> {
    Kit {
        name: "secret",
        cases: vec![
            SecretCase {
                name: "get_returns_value",
                run: get_returns_value,
            },
            SecretCase {
                name: "get_returns_none_for_absent",
                run: get_returns_none_for_absent,
            },
            SecretCase {
                name: "get_returns_empty_string_verbatim",
                run: get_returns_empty_string_verbatim,
            },
        ],
        skipped: Vec::new(),
    }
}

/// The 3 cases, as `agent-env store check secret` runs them against `store`: when it holds neither
/// secret of the [`FIXTURE`] (nobody seeded it: a store on its defaults), the two cases that read
/// them are skipped, saying how to seed it, rather than failed, so a check of each store kind passes
/// on a machine's defaults. A store holding one of them, or that does not answer, runs all three (what
/// it got wrong is a failure). A store's own tests, which seed it, use [`cases`].
pub fn cases_unless_unseeded(store: &dyn SecretStore) -> Kit<dyn SecretStore> {
    let mut kit = cases();
    let holds_none = FIXTURE
        .iter()
        .all(|(name, _)| matches!(store.get(name), Ok(None)));
    if holds_none {
        let (reading_it, others): (Vec<SecretCase>, Vec<SecretCase>) = kit
            .cases
            .into_iter()
            .partition(|c| READ_THE_FIXTURE.contains(&c.name));
        kit.cases = others;
        kit.skipped = reading_it
            .iter()
            .map(|c| (c.name, format!("the store is not seeded; {SEED_HINT}")))
            .collect();
    }
    kit
}

/// The cases that read the [`FIXTURE`] secrets.
const READ_THE_FIXTURE: [&str; 2] = ["get_returns_value", "get_returns_empty_string_verbatim"];

fn seeded(store: &dyn SecretStore, name: &str, want: &str) -> Result<(), String> {
    match store.get(name).ctx(&format!("get({name:?})"))? {
        None => Err(format!(
            "get({name:?}) is None: the store is not seeded; {SEED_HINT}"
        )),
        got => ensure_eq(got, Some(want.to_string()), &format!("get({name:?})")),
    }
}

fn get_returns_value(store: &dyn SecretStore, _ns: &str) -> Result<(), String> {
    seeded(store, FIXTURE[0].0, FIXTURE[0].1)
}

fn get_returns_none_for_absent(store: &dyn SecretStore, _ns: &str) -> Result<(), String> {
    ensure_eq(
        store.get(ABSENT).ctx("get")?,
        None,
        &format!("get({ABSENT:?})"),
    )
}

fn get_returns_empty_string_verbatim(store: &dyn SecretStore, _ns: &str) -> Result<(), String> {
    seeded(store, FIXTURE[1].0, FIXTURE[1].1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::StoreResult;
    use crate::kits::{run, CaseOutcome};

    struct Holding(&'static [(&'static str, &'static str)]);

    impl SecretStore for Holding {
        fn get(&self, name: &str) -> StoreResult<Option<String>> {
            Ok(self
                .0
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string()))
        }
    }

    #[test]
    fn an_unseeded_store_skips_the_cases_that_read_the_fixture_saying_how_to_seed_it() {
        let store = Holding(&[]);
        let report = run(&cases_unless_unseeded(&store), &store, "");
        assert!(report.all_passed(), "{:?}", report.results);
        assert_eq!(report.summary(), "1 passed, 0 failed, 2 skipped");
        for (name, outcome) in &report.results {
            if READ_THE_FIXTURE.contains(name) {
                assert!(
                    matches!(outcome, CaseOutcome::Skipped(why) if why.contains("not seeded") && why.contains("--seed")),
                    "{name}: {outcome:?}"
                );
            }
        }
    }

    #[test]
    fn a_store_seeded_in_part_runs_every_case() {
        let store = Holding(&[("conformance_present", "value-1")]);
        let report = run(&cases_unless_unseeded(&store), &store, "");
        assert_eq!(report.summary(), "2 passed, 1 failed, 0 skipped");
        let seeded = Holding(&FIXTURE);
        let report = run(&cases_unless_unseeded(&seeded), &seeded, "");
        assert_eq!(report.summary(), "3 passed, 0 failed, 0 skipped");
    }
}
