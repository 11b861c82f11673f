//! `agent-env plugin remove PACKAGE…`: refuse while something still uses the package (unless `--force`),
//! then remove its folder (and uninstall a Python package from the managed venv), rolling back on failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use agent_env_protocol::names::canonical_name;

use super::interrupt::{run_to_end, Interrupts};
use super::report::Problems;
use super::snapshot::Snapshot;
use super::{
    blockers, confirm, restore, ChangeOutcome, ChangeReport, Context, InstallError, Rollback,
    CARGO_ROOT, PYTHON_ENV,
};
use crate::discovery::discover;
use crate::discovery::not_installed::NotInstalled;
use crate::output::Output;
use crate::quote;

pub struct RemoveOptions {
    pub packages: Vec<String>,
    pub force: bool,
    pub dry_run: bool,
    pub yes: bool,
    /// Read a remote document store for stored uses too.
    pub check_usage: bool,
}

/// What agent-env's Python environment itself needs: never removed as a plugin.
const ENVIRONMENT_PACKAGES: [&str; 3] = ["pip", "setuptools", "wheel"];

enum Removal {
    /// The plugin's folder, and the executable `cargo install` put in `.cargo/bin` for it, if any.
    Folder(PathBuf, Option<PathBuf>),
    Pip {
        python: PathBuf,
        name: String,
    },
}

/// Runs `remove`: how it ended, with the problems (or what blocks it) it found.
pub fn remove(opts: &RemoveOptions, ctx: &Context<'_>) -> ChangeReport {
    let mut reported = Problems::new(ctx.out);
    let result = try_remove(opts, ctx, &mut reported);
    reported.report(result)
}

/// Runs `remove`, reporting its problems and blockers to `reported` as it says them.
fn try_remove(
    opts: &RemoveOptions,
    ctx: &Context<'_>,
    reported: &mut Problems<'_>,
) -> Result<ChangeOutcome, InstallError> {
    let out = ctx.out;
    for p in &opts.packages {
        if super::is_core(p) {
            return Err(InstallError::CoreRemove(p.clone()));
        }
    }
    let plugins = ctx.plugins_dir.clone();
    let _lock = ctx.lock_for_change()?;
    let discovery = discover(&ctx.search);
    let venv = plugins.join(PYTHON_ENV);
    let removing: Vec<String> = opts.packages.iter().map(|p| canonical_name(p)).collect();
    let mut removals = Vec::new();
    let mut blocked = false;
    let mut table_notes: Vec<String> = Vec::new();
    for p in &opts.packages {
        let canonical = canonical_name(p);
        let Some(found) = discovery.find(&canonical) else {
            let broken = discovery
                .broken
                .iter()
                .find(|b| canonical_name(&b.label) == canonical);
            let Some(broken) = broken else {
                // No manifest at all: a package `plugin add --keep` kept in the managed venv.
                let name = crate::discovery::python_record::installed_distribution(&venv, p)
                    .ok_or_else(|| {
                        InstallError::NotInstalled(NotInstalled::new(
                            p,
                            discovery.plugins.iter().map(|f| f.manifest.name.as_str()),
                        ))
                    })?;
                let users = crate::discovery::python_record::required_by(&venv, &name);
                if ENVIRONMENT_PACKAGES.contains(&canonical.as_str()) || !users.is_empty() {
                    return Err(InstallError::NotAPlugin { name, users });
                }
                out.note(&format!(
                    "note: {name} is in agent-env's Python environment without an agent-env manifest (plugin add --keep leaves such a package), so it provides nothing and nothing names it"
                ));
                removals.push(Removal::Pip {
                    python: venv.join("bin/python"),
                    name,
                });
                continue;
            };
            removals.push(removal_of(
                &broken.path,
                &broken.label,
                None,
                &plugins,
                &venv,
            )?);
            out.note(&format!(
                "note: {}'s manifest does not load ({}), so nothing it provides is in effect and nothing that names it was checked",
                broken.label, broken.error
            ));
            continue;
        };
        let m = &found.manifest;
        removals.push(removal_of(
            &m.path,
            &m.name,
            m.resolved_exec().first().map(PathBuf::from),
            &plugins,
            &venv,
        )?);
        let uses = blockers::blockers(
            m,
            &discovery,
            &removing,
            ctx.config_path.as_deref(),
            &ctx.state_root,
        );
        let mut found = uses.blocking;
        match (&ctx.remote_documents, opts.check_usage) {
            (Some(remote), true) => found.extend(blockers::remote_blockers(m, &discovery, remote)),
            (Some(remote), false) => out.line(&format!(
                "note: the document store ({}) is remote, so stored documents were not checked (--check-usage does)",
                remote.impl_name
            )),
            (None, _) => {}
        }
        // Removing several, each line says which of them it is about ("its" alone would not).
        let whose = if opts.packages.len() > 1 {
            format!("{}: ", m.name)
        } else {
            String::new()
        };
        // What bundle runs recorded stays, unable to run: said, never a blocker.
        for w in uses.warnings {
            out.note(&format!("warning: {whose}{w}"));
        }
        for b in found {
            if opts.force {
                out.note(&format!("warning: {whose}{b}"));
            } else {
                reported.blocked(&format!("{whose}{b}"));
                blocked = true;
            }
        }
        if ctx.config_path.is_some() {
            table_notes.push(format!(
                "note: the config's [plugins.{}] table, if any, stays in the file; delete it yourself if you no longer need it",
                m.name
            ));
        }
    }
    if blocked {
        return Err(InstallError::Blocked);
    }
    // Said only of a removal that goes ahead: a refused one leaves everything as it was.
    for note in &table_notes {
        out.line(note);
    }
    for r in &removals {
        match r {
            Removal::Folder(f, built) => {
                out.line(&format!("Will remove: {}", f.display()));
                if let Some(b) = built {
                    out.line(&format!("Will remove: {}", b.display()));
                }
            }
            Removal::Pip { python, name } => out.line(&format!(
                "Will run: {}",
                quote::line(&[
                    &python.display().to_string(),
                    "-m",
                    "pip",
                    "uninstall",
                    "-y",
                    name
                ])
            )),
        }
    }
    if opts.dry_run {
        out.line("Dry run: nothing was changed.");
        return Ok(ChangeOutcome::DryRun);
    }
    // From the question on, a signal is counted, not fatal: one at the question ends it with
    // nothing changed.
    let interrupts = Interrupts::install();
    if !confirm(opts.yes, out, &interrupts)? {
        out.line("Nothing changed.");
        return Ok(ChangeOutcome::Declined);
    }
    let before = Snapshot::take(&plugins)?;
    let mut problem = None;
    for r in &removals {
        let result = match r {
            Removal::Folder(f, built) => std::fs::remove_dir_all(f)
                .and_then(|()| built.as_ref().map_or(Ok(()), std::fs::remove_file))
                .map_err(|e| format!("cannot remove {}: {e}", f.display())),
            Removal::Pip { python, name } => {
                let mut cmd = Command::new(python);
                cmd.args(["-m", "pip", "uninstall", "-y", name]);
                match run_to_end(cmd, &interrupts, out) {
                    Ok(f) if f.status.success() => Ok(()),
                    Ok(f) => Err(format!(
                        "the installer failed (pip ended with {})",
                        f.status
                    )),
                    Err(e) => Err(e.to_string()),
                }
            }
        };
        if let Err(p) = result {
            problem = Some(p);
            break;
        }
    }
    if interrupts.interrupted() {
        return restore(&before, Rollback::Interrupted(interrupts.signal()), out);
    }
    if problem.is_none() {
        let still: Vec<String> = discover(&ctx.search)
            .plugins
            .iter()
            .filter(|p| removing.contains(&p.manifest.canonical_name()))
            .filter(|p| p.manifest.path.starts_with(&plugins))
            .map(|p| p.manifest.name.clone())
            .collect();
        if !still.is_empty() {
            problem = Some(format!(
                "still installed after the installer ran: {}",
                still.join(", ")
            ));
        }
    }
    if problem.is_none() {
        problem = crate::discovery::pins::unpin_packages(&plugins, &removing)
            .err()
            .map(|e| e.to_string());
    }
    if problem.is_none() {
        forget_cargo_installs(&removals, &plugins, out);
    }
    if let Some(p) = problem {
        reported.problem(&p);
        return restore(&before, Rollback::Problem, out);
    }
    out.line("Removed.");
    Ok(ChangeOutcome::Removed)
}

/// Takes the executables removed out of `cargo install`'s record. A record that cannot be changed
/// is said, not rolled back for: it lists an executable that is gone, which the next install (run
/// with `--force`) replaces.
fn forget_cargo_installs(removals: &[Removal], plugins: &Path, out: &dyn Output) {
    let root = plugins.join(CARGO_ROOT);
    for removal in removals {
        let Removal::Folder(_, Some(built)) = removal else {
            continue;
        };
        let Some(bin) = built.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if let Err(e) = super::cargo_tracking::forget_executable(&root, bin) {
            out.note(&format!(
                "warning: {bin} is removed, but cargo's record of it stays: {e}"
            ));
        }
    }
}

/// How the package whose manifest is `manifest` goes: by pip when it lives in the managed venv, else
/// by deleting its folder in the plugins directory (and the executable `cargo install` put in
/// `.cargo/bin` for it, when `executable` is that one). A package anywhere else is not ours to remove.
fn removal_of(
    manifest: &Path,
    name: &str,
    executable: Option<PathBuf>,
    plugins: &Path,
    venv: &Path,
) -> Result<Removal, InstallError> {
    if manifest.starts_with(venv) {
        // pip knows the package by the name of the distribution that installed the manifest.
        let name = crate::discovery::python_record::distribution_name(manifest)
            .unwrap_or_else(|| name.to_string());
        return Ok(Removal::Pip {
            python: venv.join("bin/python"),
            name,
        });
    }
    let Some(folder) = plugin_folder(plugins, manifest) else {
        return Err(InstallError::NotOurs {
            name: name.to_string(),
            path: manifest.to_path_buf(),
        });
    };
    let cargo_bin = plugins.join(CARGO_ROOT).join("bin").canonicalize().ok();
    let built = executable
        .and_then(|p| p.canonicalize().ok())
        .filter(|p| cargo_bin.is_some() && p.parent() == cargo_bin.as_deref());
    Ok(Removal::Folder(folder, built))
}

/// The folder a removal deletes, when the package lives in the plugins directory.
fn plugin_folder(plugins: &Path, manifest: &Path) -> Option<PathBuf> {
    let folder = manifest.parent()?;
    (folder.parent() == Some(plugins)).then(|| folder.to_path_buf())
}
