//! Checking a store against the conformance kits in-process, from `cargo test`: the same cases
//! `agent-env store check KIND` runs, with no host and no child process.
//!
//! ```
//! use agent_env_plugin_sdk::testing;
//! # use agent_env_plugin_sdk::{SecretStore, StoreResult};
//! # struct MySecrets;
//! # impl SecretStore for MySecrets {
//! #     fn get(&self, name: &str) -> StoreResult<Option<String>> {
//! #         Ok(testing::SECRET_FIXTURE.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))
//! #     }
//! # }
//! // In a #[test]: panics with the list of failed cases, if any.
//! testing::assert_secret_store_conforms(&MySecrets);
//! ```
//!
//! [`PluginProcess`] drives a plugin's built executable over its stdin and stdout as agent-env does
//! (handshake, `execute`, `shutdown`), for a test of its steps end to end.
//!
//! `assert_object_store_conforms(&store)` (and the document and image equivalents) write under a fresh
//! namespace each call, so they work on an empty store and on a shared one alike. For a report instead of
//! a panic, run a kit with [`object_kit`] (and friends) and look at the [`KitReport`].

pub use crate::plugin_process::PluginProcess;
use agent_env_store::kits::{self, KitReport};
use agent_env_store::{DocumentStore, ImageStore, ObjectStore, SecretStore, StoreKind};

/// The secrets [`assert_secret_store_conforms`] expects the store to hold (`conformance_present` is
/// `value-1`, `conformance_present_empty` is the empty string); it must not hold `conformance_absent`.
pub const SECRET_FIXTURE: [(&str, &str); 2] = kits::secret::FIXTURE;

/// Runs every object-kit case against `store`, writing only under keys that start with `ns` (`""` for the
/// whole store). The transfer-grant cases are skipped unless the store issues grants.
pub fn object_kit(store: &(dyn ObjectStore + 'static), ns: &str) -> KitReport {
    let kit = kits::object::cases_for(store.supports_transfer_grants());
    kits::run(&kit, store, ns)
}

/// Runs every document-kit case against `store`, in collections whose names start with `ns`.
pub fn document_kit(store: &(dyn DocumentStore + 'static), ns: &str) -> KitReport {
    kits::run(&kits::document::cases(), store, ns)
}

/// Runs every image-kit case against `store`, with `ns` as the repository. The push-and-pull case runs
/// only where docker is usable.
pub fn image_kit(store: &(dyn ImageStore + 'static), ns: &str) -> KitReport {
    kits::run(&kits::image::cases(), store, ns)
}

/// Runs every secret-kit case against `store`, which holds [`SECRET_FIXTURE`].
pub fn secret_kit(store: &(dyn SecretStore + 'static)) -> KitReport {
    kits::run(&kits::secret::cases(), store, "")
}

/// Panics unless every case of the object kit passes on `store`, listing each failed case and why.
pub fn assert_object_store_conforms(store: &(dyn ObjectStore + 'static)) {
    assert_passed(&object_kit(
        store,
        &kits::unique_namespace(StoreKind::Object),
    ));
}

/// Panics unless every case of the document kit passes on `store`, listing each failed case and why.
pub fn assert_document_store_conforms(store: &(dyn DocumentStore + 'static)) {
    assert_passed(&document_kit(
        store,
        &kits::unique_namespace(StoreKind::Document),
    ));
}

/// Panics unless every case of the image kit passes on `store`, listing each failed case and why.
pub fn assert_image_store_conforms(store: &(dyn ImageStore + 'static)) {
    assert_passed(&image_kit(store, &kits::unique_namespace(StoreKind::Image)));
}

/// Panics unless every case of the secret kit passes on `store` (seeded with [`SECRET_FIXTURE`]),
/// listing each failed case and why.
pub fn assert_secret_store_conforms(store: &(dyn SecretStore + 'static)) {
    assert_passed(&secret_kit(store));
}

/// Panics unless no case of `report` failed: `the object kit failed 2 of 27 cases:` and one
/// `FAILED <case>: <why>` line per failure. Skipped cases do not fail a kit.
pub fn assert_passed(report: &KitReport) {
    let failures = report.failures();
    if failures.is_empty() {
        return;
    }
    let ran = report.results.len() - report.count(|o| matches!(o, kits::CaseOutcome::Skipped(_)));
    panic!(
        "the {} kit failed {} of {ran} cases:\n{}",
        report.kit,
        failures.len(),
        failures.join("\n")
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_env_store::StoreResult;

    struct Empty;

    impl SecretStore for Empty {
        fn get(&self, _name: &str) -> StoreResult<Option<String>> {
            Ok(None)
        }
    }

    #[test]
    fn a_failing_store_panics_with_the_list_of_failed_cases() {
        let Err(panic) = std::panic::catch_unwind(|| assert_secret_store_conforms(&Empty)) else {
            panic!("an empty secret store passed the secret kit")
        };
        let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        let mut lines = message.lines();
        assert_eq!(lines.next(), Some("the secret kit failed 2 of 3 cases:"));
        let failed: Vec<&str> = lines.collect();
        assert_eq!(failed.len(), 2, "{message}");
        assert!(
            failed[0].starts_with("FAILED get_returns_value: "),
            "{message}"
        );
        assert!(
            failed[1].starts_with("FAILED get_returns_empty_string_verbatim: "),
            "{message}"
        );
    }
}
