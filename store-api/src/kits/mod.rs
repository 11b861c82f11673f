//! The conformance kits: named cases any store must pass, shipped in the binary (`agent-env store check
//! KIND`) and usable from `cargo test`:
//!
//! ```
//! use agent_env_store::kits;
//! # use agent_env_store::{StoreResult, SecretStore};
//! # struct MySecrets;
//! # impl SecretStore for MySecrets {
//! #     fn get(&self, name: &str) -> StoreResult<Option<String>> {
//! #         Ok(kits::secret::FIXTURE.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))
//! #     }
//! # }
//! let report = kits::run(&kits::secret::cases(), &MySecrets, "");
//! print!("{}", report.render());
//! assert!(report.all_passed(), "{:?}", report.failures());
//! ```
//!
//! A case is `fn(&S, ns) -> Result<(), String>` where `ns` namespaces what it writes (a key prefix for
//! the object kit, a collection for the document kit, a repository for the image kit). A case that does
//! not apply to a store is listed as skipped with its reason.

pub mod document;
pub mod document_rules;
pub mod image;
pub mod object;
#[cfg(feature = "grant-kit")]
pub mod object_grants;
pub mod object_rules;
pub mod secret;

mod rfc3339;
mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};

use serde_json::{json, Value};

/// One named case of a kit.
pub struct Case<S: ?Sized> {
    /// The case's name, as reports list it.
    pub name: &'static str,
    /// Runs the case against a store in a namespace; `Err` says what the store got wrong.
    pub run: fn(&S, &str) -> Result<(), String>,
}

impl<S: ?Sized> Clone for Case<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S: ?Sized> Copy for Case<S> {}

/// A kit's cases for a store, and the ones left out with why.
pub struct Kit<S: ?Sized> {
    /// The kit's name: the store kind it checks.
    pub name: &'static str,
    /// The cases that run, in order.
    pub cases: Vec<Case<S>>,
    /// The cases left out for this store, each with why.
    pub skipped: Vec<(&'static str, String)>,
}

/// How one case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseOutcome {
    /// The store did what the case checks.
    Passed,
    /// The store got the case's rule wrong, and how.
    Failed(String),
    /// The case did not run, and why.
    Skipped(String),
}

/// [`CaseOutcome`]'s former name, kept for plugins that match on a [`KitReport`]'s results by it.
#[deprecated(note = "renamed to `CaseOutcome`")]
pub type Outcome = CaseOutcome;

/// The outcome of every case of a kit, in order.
#[derive(Debug, Clone)]
pub struct KitReport {
    /// The kit's name.
    pub kit: &'static str,
    /// Each case's name and outcome, the ones that ran first, then the skipped ones.
    pub results: Vec<(&'static str, CaseOutcome)>,
}

impl KitReport {
    /// True when no case failed (skipped cases do not fail a kit).
    pub fn all_passed(&self) -> bool {
        !self
            .results
            .iter()
            .any(|(_, o)| matches!(o, CaseOutcome::Failed(_)))
    }

    /// How many cases ended as `wanted` says.
    pub fn count(&self, wanted: fn(&CaseOutcome) -> bool) -> usize {
        self.results.iter().filter(|(_, o)| wanted(o)).count()
    }

    /// One line per case: `PASSED <case>`, `FAILED <case>: <why>`, `SKIPPED <case>: <why>`.
    pub fn lines(&self) -> Vec<String> {
        self.results
            .iter()
            .map(|(name, outcome)| match outcome {
                CaseOutcome::Passed => format!("PASSED {name}"),
                CaseOutcome::Failed(why) => format!("FAILED {name}: {why}"),
                CaseOutcome::Skipped(why) => format!("SKIPPED {name}: {why}"),
            })
            .collect()
    }

    /// `27 passed, 0 failed, 3 skipped`.
    pub fn summary(&self) -> String {
        format!(
            "{} passed, {} failed, {} skipped",
            self.count(|o| *o == CaseOutcome::Passed),
            self.count(|o| matches!(o, CaseOutcome::Failed(_))),
            self.count(|o| matches!(o, CaseOutcome::Skipped(_)))
        )
    }

    /// The report as `agent-env store check` shows it: one line per case, then `<kit> kit: <summary>`, each
    /// line ending in a newline. The kits never print; the caller writes this where it wants.
    pub fn render(&self) -> String {
        let mut text = String::new();
        for line in self.lines() {
            text.push_str(&line);
            text.push('\n');
        }
        text.push_str(&format!("{} kit: {}\n", self.kit, self.summary()));
        text
    }

    /// The failed cases, one `FAILED <case>: <why>` line each; empty when the kit passed.
    pub fn failures(&self) -> Vec<String> {
        self.results
            .iter()
            .filter_map(|(name, outcome)| match outcome {
                CaseOutcome::Failed(why) => Some(format!("FAILED {name}: {why}")),
                _ => None,
            })
            .collect()
    }

    /// `{"kit", "passed": bool, "cases": [{"name", "outcome", "reason"?}]}`.
    pub fn to_json(&self) -> Value {
        let cases: Vec<Value> = self
            .results
            .iter()
            .map(|(name, outcome)| match outcome {
                CaseOutcome::Passed => json!({"name": name, "outcome": "passed"}),
                CaseOutcome::Failed(why) => {
                    json!({"name": name, "outcome": "failed", "reason": why})
                }
                CaseOutcome::Skipped(why) => {
                    json!({"name": name, "outcome": "skipped", "reason": why})
                }
            })
            .collect();
        json!({"kit": self.kit, "passed": self.all_passed(), "cases": cases})
    }
}

/// Runs every case of a kit against `store` with namespace `ns`. A case that panics counts as failed,
/// with the panic's message.
pub fn run<S: ?Sized>(kit: &Kit<S>, store: &S, ns: &str) -> KitReport {
    run_until(kit, store, ns, &|| false)
}

/// [`run`], stopping before the next case once `stopped` says so (a signal: the case running then ends,
/// and removes what it made); the cases not run are skipped, saying why.
pub fn run_until<S: ?Sized>(
    kit: &Kit<S>,
    store: &S,
    ns: &str,
    stopped: &dyn Fn() -> bool,
) -> KitReport {
    let mut results: Vec<(&'static str, CaseOutcome)> = Vec::new();
    for case in &kit.cases {
        if stopped() {
            results.push((
                case.name,
                CaseOutcome::Skipped("not run: the check was stopped".into()),
            ));
            continue;
        }
        let outcome = match catch_unwind(AssertUnwindSafe(|| (case.run)(store, ns))) {
            Ok(Ok(())) => CaseOutcome::Passed,
            Ok(Err(why)) => CaseOutcome::Failed(why),
            Err(panic) => CaseOutcome::Failed(format!("panicked: {}", panic_text(&panic))),
        };
        results.push((case.name, outcome));
    }
    for (name, why) in &kit.skipped {
        results.push((name, CaseOutcome::Skipped(why.clone())));
    }
    KitReport {
        kit: kit.name,
        results,
    }
}

/// A namespace no other run uses: `agent-env-kit/<12 hex>/` for objects (a key prefix), `kit_<12 hex>` for
/// documents (a collection prefix) and images (a repository).
pub fn unique_namespace(kind: crate::StoreKind) -> String {
    let suffix = support::unique_suffix();
    match kind {
        crate::StoreKind::Object => format!("agent-env-kit/{suffix}/"),
        crate::StoreKind::Image => format!("agent-env-kit-{suffix}"),
        _ => format!("kit_{suffix}"),
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(no message)".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn ok(_: &Cell<u32>, _: &str) -> Result<(), String> {
        Ok(())
    }

    fn counted(runs: &Cell<u32>, _: &str) -> Result<(), String> {
        runs.set(runs.get() + 1);
        Ok(())
    }

    #[test]
    fn a_stopped_kit_skips_the_cases_it_did_not_run() {
        let kit = Kit {
            name: "test",
            cases: vec![
                Case {
                    name: "first",
                    run: counted,
                },
                Case {
                    name: "second",
                    run: counted,
                },
                Case {
                    name: "third",
                    run: ok,
                },
            ],
            skipped: Vec::new(),
        };
        let runs = Cell::new(0);
        let report = run_until(&kit, &runs, "ns", &|| runs.get() >= 1);
        assert_eq!(runs.get(), 1);
        let text = report.render();
        assert!(text.contains("PASSED first"), "{text}");
        assert!(
            text.contains("SKIPPED second: not run: the check was stopped"),
            "{text}"
        );
        assert!(
            text.contains("SKIPPED third: not run: the check was stopped"),
            "{text}"
        );
    }
}
