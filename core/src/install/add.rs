//! `agent-env plugin add SPEC…`: plan, confirm, lock, snapshot, install, check, and roll back on a problem.

use std::collections::BTreeMap;
use std::path::Path;

use super::interrupt::Interrupts;
use super::plan::{self, StepOutcome};
use super::snapshot::Snapshot;
use super::source::{classify, Installer, Spec};
use super::{check, confirm, lock, restore, InstallError, CARGO_ROOT, INTERRUPTED, ROLLING_BACK};
use crate::discovery::{discover, SearchPath};

/// What `add` was asked.
pub struct AddOptions {
    pub specs: Vec<String>,
    pub installer: Option<Installer>,
    pub dry_run: bool,
    pub yes: bool,
    pub keep: bool,
}

/// Every manifest under the plugins directory (folders and the managed venv): canonical name → bytes.
fn our_manifests(plugins: &Path) -> BTreeMap<String, (String, Vec<u8>)> {
    let search = SearchPath::from_env();
    discover(&search)
        .plugins
        .into_iter()
        .filter(|p| p.manifest.path.starts_with(plugins))
        .map(|p| {
            let bytes = std::fs::read(&p.manifest.path).unwrap_or_default();
            (
                p.manifest.canonical_name(),
                (p.manifest.name.clone(), bytes),
            )
        })
        .collect()
}

/// Runs `add`; returns the exit code.
pub fn add(opts: &AddOptions) -> Result<i32, InstallError> {
    let specs: Vec<Spec> = opts
        .specs
        .iter()
        .map(|s| classify(s, opts.installer))
        .collect::<Result<_, _>>()?;
    for s in &specs {
        if s.name.as_deref().is_some_and(super::is_core) {
            return Err(InstallError::CoreAdd(s.text.clone()));
        }
        if s.installer == Installer::Folder && s.name.is_none() {
            return Err(InstallError::BadSpec {
                spec: s.text.clone(),
                reason: "its agent-env-plugin.toml names no [plugin] name".into(),
            });
        }
    }
    let plugins = crate::paths::plugins_dir();
    let _lock = lock::acquire(&plugins)?;
    let steps = plan::build(&specs, &plugins)?;
    println!("agent-env: plugins directory at {}", plugins.display());
    for step in &steps {
        println!("{}", step.describe(&plugins));
    }
    if opts.dry_run {
        return Ok(0);
    }
    if !confirm(opts.yes)? {
        println!("Nothing changed.");
        return Ok(1);
    }
    let interrupts = Interrupts::install();
    let before = Snapshot::take(&plugins)?;
    let manifests_before = our_manifests(&plugins);
    let cargo_before = plan::digests(&plugins.join(CARGO_ROOT).join("bin"));
    let mut problems = Vec::new();
    for step in &steps {
        if interrupts.interrupted() {
            break;
        }
        match plan::run(step, &plugins, &interrupts, &cargo_before) {
            Ok(StepOutcome::Done) => {}
            Ok(StepOutcome::Failed(p)) => {
                problems.push(p);
                break;
            }
            Err(e) => {
                problems.push(format!("could not finish the change: {e}"));
                break;
            }
        }
    }
    if interrupts.interrupted() {
        return restore(&before, INTERRUPTED, 130);
    }
    if problems.is_empty() {
        let after = Snapshot::take(&plugins)?;
        if before.changed_paths(&after).is_empty() {
            println!("Nothing changed: the installer left every package as it was.");
            return Ok(0);
        }
        let now = our_manifests(&plugins);
        let changed: Vec<(String, String)> = now
            .iter()
            .filter(|(k, v)| manifests_before.get(*k) != Some(v))
            .map(|(k, (name, _))| (k.clone(), name.clone()))
            .collect();
        let removed: Vec<&String> = manifests_before
            .iter()
            .filter(|(k, _)| !now.contains_key(*k))
            .map(|(_, (name, _))| name)
            .collect();
        for name in removed {
            problems.push(format!(
                "the installer removed {name}, which this change did not ask for"
            ));
        }
        if changed.is_empty() && problems.is_empty() {
            problems.push("none of the packages it installed declares an agent-env manifest, so it is not an agent-env plugin".into());
        }
        for (_, name) in &changed {
            problems.extend(check::check_package(name));
        }
        if interrupts.interrupted() {
            return restore(&before, INTERRUPTED, 130);
        }
    }
    if problems.is_empty() {
        println!("Added. `agent-env plugin list` shows every installed plugin.");
        return Ok(0);
    }
    for p in &problems {
        eprintln!("problem: {p}");
    }
    if opts.keep {
        println!("Kept as installed (--keep).");
        return Ok(1);
    }
    restore(&before, ROLLING_BACK, 1)
}
