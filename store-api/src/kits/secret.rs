//! The secret kit: the original's 3 cases (`docs/store-contract.md`, Secret stores). The store must be
//! seeded with [`FIXTURE`] and must not hold `conformance_absent`.
//!
//! Seeding, for `agent-env store check secret`: a store that reads the environment (the built-in
//! `LocalSecretStore` does, with `use_env`) is seeded by running the check with the two variables set:
//! `conformance_present=value-1 conformance_present_empty= agent-env store check secret`; `--seed` adds
//! the fixture to the built-in store's `values`; any other store needs the two secrets stored in it.

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
