//! Bundle claims: a bundle is a folder, never started. Its claim fails on an incompatible core or when
//! its entry is not a bundle; a name two packages install is qualified-only; and with plugins loaded,
//! every step and artifact type the bundle names must resolve.

use std::collections::BTreeMap;

use super::outcome::{codes, ClaimOutcome, Status};
use super::resolve::{Entry, Registry};
use crate::builtin_names;
use crate::bundle::manifest_entry;
use crate::bundle::Bundle;

/// Bundles are folders: never started. Incompatible core, then the name and folder, then sharing a name.
pub(super) fn classify(reg: &mut Registry, incompatible: &[Option<String>]) {
    let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for i in 0..reg.claims.len() {
        let claim = &reg.claims[i];
        if claim.group != "bundles" {
            continue;
        }
        let manifest = &reg.discovery.plugins[claim.plugin].manifest;
        let outcome = if let Some(needs) = &incompatible[claim.plugin] {
            Some(ClaimOutcome::with(
                Status::Failed,
                codes::INCOMPATIBLE_CORE,
                format!("{} {needs}", manifest.name),
            ))
        } else {
            manifest_entry::problem(
                manifest.folder(),
                &manifest.canonical_name(),
                &claim.name,
                &claim.class,
                reg.home.as_deref(),
            )
            .map(|p| ClaimOutcome::with(Status::Failed, codes::INVALID_PLUGIN, p))
        };
        match outcome {
            Some(outcome) => {
                let label = reg.label(claim);
                let reason = outcome.reason.clone().unwrap_or_default();
                reg.failures.insert(
                    ("bundles", claim.name.clone()),
                    format!("registered by {label} but {reason}"),
                );
                reg.claims[i].outcome = outcome;
            }
            None => by_name.entry(claim.name.clone()).or_default().push(i),
        }
    }
    for (name, claims) in by_name {
        let core_has_it = builtin_names::CORE_BUNDLES.iter().any(|(n, _)| *n == name);
        if claims.len() == 1 && !core_has_it {
            let c = &reg.claims[claims[0]];
            reg.entries.insert(
                ("bundles", name.clone()),
                Entry::Plugin {
                    plugin: c.plugin,
                    class: c.class.clone(),
                    config: None,
                    from_config: None,
                },
            );
            continue;
        }
        for &i in &claims {
            let canonical = reg.discovery.plugins[reg.claims[i].plugin]
                .manifest
                .canonical_name();
            reg.claims[i].outcome = ClaimOutcome::with(
                Status::Active,
                codes::QUALIFIED_ONLY,
                format!("another package also installs '{name}', so run this one as '{canonical}/{name}'"),
            );
            let c = &reg.claims[i];
            reg.entries.insert(
                ("bundles", format!("{canonical}/{name}")),
                Entry::Plugin {
                    plugin: c.plugin,
                    class: c.class.clone(),
                    config: None,
                    from_config: None,
                },
            );
        }
    }
    for (name, _) in builtin_names::CORE_BUNDLES {
        reg.entries.insert(
            ("bundles", name.to_string()),
            Entry::BuiltIn { config: None },
        );
        reg.entries.insert(
            (
                "bundles",
                format!("{}/{name}", agent_env_protocol::names::CORE_PACKAGE),
            ),
            Entry::BuiltIn { config: None },
        );
    }
}

/// With plugins loaded, a bundle whose steps or artifacts name a type that does not resolve is invalid.
pub(super) fn check_types(reg: &mut Registry) {
    for i in 0..reg.claims.len() {
        let claim = &reg.claims[i];
        if claim.group != "bundles" || claim.outcome.status != Status::Active {
            continue;
        }
        let manifest = &reg.discovery.plugins[claim.plugin].manifest;
        let Ok(bundle) = manifest_entry::parse(
            manifest.folder(),
            &manifest.canonical_name(),
            &claim.name,
            &claim.class,
            reg.home.as_deref(),
        ) else {
            continue;
        };
        if let Some(problem) = type_problem(&bundle, reg) {
            let label = reg.label(&reg.claims[i]);
            reg.failures.insert(
                ("bundles", reg.claims[i].name.clone()),
                format!("registered by {label} but {problem}"),
            );
            reg.claims[i].outcome =
                ClaimOutcome::with(Status::Failed, codes::INVALID_PLUGIN, problem);
        }
    }
}

/// With plugins loaded: the first step or artifact type the bundle names that does not resolve.
fn type_problem(bundle: &Bundle, registry: &Registry) -> Option<String> {
    for task in &bundle.tasks {
        for (i, step) in task.steps.iter().enumerate() {
            let Some(ty) = step.get("type").and_then(|t| t.as_str()) else {
                continue;
            };
            if let Err(e) = registry.resolve("task_steps", ty) {
                let id = step
                    .get("id")
                    .and_then(|v| v.as_str())
                    .map(|s| format!("'{s}'"))
                    .unwrap_or_else(|| format!("{}", i + 1));
                return Some(format!(
                    "it isn't a valid bundle: {}: step {id}: {}",
                    task.path,
                    e.not_known("step")
                ));
            }
        }
    }
    for artifact in &bundle.artifacts {
        if let Err(e) = registry.resolve("artifacts", &artifact.artifact_type) {
            return Some(format!(
                "it isn't a valid bundle: {}: {}",
                artifact.path,
                e.not_known("artifact")
            ));
        }
    }
    None
}
