//! `agent-env plugin add SPEC…`: plan, confirm, lock, snapshot, install, check, and roll back on a problem.

use std::path::Path;

use super::interrupt::Interrupts;
use super::plan::{self, Step, StepOutcome};
use super::report::Problems;
use super::snapshot::Snapshot;
use super::source::{classify, Installer, Spec};
use super::touched::{code_changes, touched, InstalledManifest, Manifests};
use super::{
    check, confirm, restore, ChangeOutcome, ChangeReport, Context, InstallError, Rollback,
    CARGO_ROOT,
};
use crate::discovery::{discover, SearchPath};

/// What `add` was asked.
pub struct AddOptions {
    pub specs: Vec<String>,
    pub installer: Option<Installer>,
    pub dry_run: bool,
    pub yes: bool,
    pub keep: bool,
    /// Where pip finds Python packages, and whether it installs an installed version again.
    pub pip: plan::PipOptions,
}

/// Every manifest under the plugins directory (folders and the managed venv), by canonical name.
fn our_manifests(search: &SearchPath, plugins: &Path) -> Manifests {
    discover(search)
        .plugins
        .into_iter()
        .filter(|p| p.manifest.path.starts_with(plugins))
        .map(|p| {
            let bytes = std::fs::read(&p.manifest.path).unwrap_or_default();
            let installed = InstalledManifest {
                name: p.manifest.name.clone(),
                path: p.manifest.path.clone(),
                bytes,
                version: p.manifest.version.clone(),
            };
            (p.manifest.canonical_name(), installed)
        })
        .collect()
}

/// Runs `add`: how it ended, with the problems it found.
pub fn add(opts: &AddOptions, ctx: &Context<'_>) -> ChangeReport {
    let mut reported = Problems::new(ctx.out);
    let result = try_add(opts, ctx, &mut reported);
    reported.report(result)
}

/// Runs `add`, reporting its problems to `reported` as it says them.
fn try_add(
    opts: &AddOptions,
    ctx: &Context<'_>,
    reported: &mut Problems<'_>,
) -> Result<ChangeOutcome, InstallError> {
    let out = ctx.out;
    let specs: Vec<Spec> = opts
        .specs
        .iter()
        .map(|s| classify(s, opts.installer, ctx.home.as_deref()))
        .collect::<Result<_, _>>()?;
    for s in &specs {
        if s.name.as_deref().is_some_and(super::is_core) {
            return Err(InstallError::CoreAdd(s.text.clone()));
        }
    }
    for note in specs.iter().filter_map(super::source::folder_of_that_name) {
        out.note(&note);
    }
    let plugins = ctx.plugins_dir.clone();
    let _lock = ctx.lock_for_change()?;
    let steps = plan::build(&specs, &plugins, &opts.pip)?;
    // Before anything is written, and in a dry run too: an installer that is not there.
    plan::check_tools(&steps)?;
    out.line(&format!(
        "agent-env: plugins directory at {}",
        plugins.display()
    ));
    // Said once, under the first pip install (a reinstall runs two).
    let mut pip_without_index = opts.pip.without_index();
    for step in &steps {
        out.line(&step.describe(&plugins));
        if step.is_pip_install() {
            if let Some(no_index) = pip_without_index.take() {
                out.line(&format!("  {no_index}"));
            }
        }
        // A folder's manifest can be read before anything is installed: what of the environment it
        // asks for is said before the question (other sources say it once installed).
        if let plan::Step::Copy { from, .. } = step {
            if let Some(request) = folder_env_request(from) {
                out.line(&format!("  {request}"));
            }
            // The copy holds the folder alone: what its exec runs from elsewhere stays there.
            if let Some(warning) = super::outside_exec::warning(from) {
                out.note(&warning);
            }
            // What it names in the folder by an absolute path runs there, not in the copy.
            if let Some(warning) = super::inside_exec::warning(from) {
                out.note(&warning);
            }
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
    let manifests_before = our_manifests(&ctx.search, &plugins);
    let cargo_before = plan::digests(&plugins.join(CARGO_ROOT).join("bin"));
    let mut problems = Vec::new();
    // What to do about a failed installer, said after the problems.
    let mut hints = Vec::new();
    // Whether writing the change itself failed (in the plugins directory, not in what was added).
    let mut change_failed = false;
    for step in &steps {
        if interrupts.interrupted() {
            break;
        }
        match plan::run(step, &plugins, &interrupts, &cargo_before, out) {
            Ok(StepOutcome::Done) => {}
            Ok(StepOutcome::Failed(p)) => {
                problems.push(p);
                break;
            }
            Ok(StepOutcome::InstallerFailed { problem, said }) => {
                problems.push(problem);
                // pip ran in this process's environment, so its index variables are read there.
                let pip_variable = |name: &str| std::env::var(name).ok();
                let ask_index =
                    |project: &str| super::index_probe::troubles(&opts.pip, &pip_variable, project);
                hints = super::sdk_advice::after_failed_install(
                    &specs,
                    &said,
                    opts.pip.no_index,
                    &ask_index,
                    std::env::var("GONOSUMDB").ok().as_deref(),
                );
                break;
            }
            Err(e) => {
                problems.push(format!("could not finish the change: {e}"));
                change_failed = true;
                break;
            }
        }
    }
    if interrupts.interrupted() {
        return restore(&before, Rollback::Interrupted(interrupts.signal()), out);
    }
    // Said once the change stands: packages it replaced with an older version.
    let mut notes_after = Vec::new();
    if problems.is_empty() {
        let after = Snapshot::take(&plugins)?;
        let changed_paths = code_changes(before.changed_paths(&after));
        if changed_paths.is_empty() {
            out.line("Nothing changed: every installed file is as it was (the installer may have written the same files again).");
            // pip installs a project folder afresh every time, so only a package from an index or a
            // file can have kept old code under an unchanged version.
            let kept_by_version = |s: &Spec| {
                s.installer == Installer::Pip && !s.path.as_ref().is_some_and(|p| p.is_dir())
            };
            if !opts.pip.reinstall && specs.iter().any(kept_by_version) {
                out.line("pip keeps a version that is already installed; to install a Python plugin's changed code under the same version, add it again with --reinstall.");
            }
            return Ok(ChangeOutcome::Unchanged);
        }
        let now = our_manifests(&ctx.search, &plugins);
        notes_after = downgrades(&manifests_before, &now);
        let changed = touched(
            &plugins,
            &manifests_before,
            &now,
            &changed_paths,
            &asked_distributions(&specs),
        );
        notes_after.extend(env_requests(&now, &changed));
        let removed: Vec<&String> = manifests_before
            .iter()
            .filter(|(k, _)| !now.contains_key(*k))
            .map(|(_, m)| &m.name)
            .collect();
        for name in removed {
            problems.push(format!(
                "the installer removed {name}, which this change did not ask for"
            ));
        }
        if changed.is_empty() && problems.is_empty() {
            problems.push(format!(
                "none of the packages it installed declares an agent-env manifest, so it is not an agent-env plugin{}",
                original_entry_points(&plugins, &changed_paths)
            ));
        }
        // Pinned before the check, which starts them in a fresh process (a package added again
        // replaces its pins); a rollback puts the pin file back with the rest.
        let added: Vec<String> = changed
            .iter()
            .map(|(canonical, _)| canonical.clone())
            .collect();
        if problems.is_empty() {
            if let Err(e) = pin_added(&ctx.search, &plugins, &added) {
                problems.push(e.to_string());
            }
        }
        if problems.is_empty() {
            for (_, name) in &changed {
                problems.extend(check::check_package(name, out));
            }
        }
        if interrupts.interrupted() {
            return restore(&before, Rollback::Interrupted(interrupts.signal()), out);
        }
    }
    if problems.is_empty() {
        for note in &notes_after {
            out.note(note);
        }
        out.line("Added. `agent-env plugin list` shows every installed plugin.");
        return Ok(ChangeOutcome::Added);
    }
    if opts.keep {
        for p in &problems {
            reported.problem(p);
        }
        for hint in &hints {
            out.note(&format!("hint: {hint}"));
        }
        out.line("Kept as installed (--keep).");
        return Ok(ChangeOutcome::Kept);
    }
    // Each problem names the path that failed; the rollback removes the installed copy it was
    // found in, so a note names what is kept instead. A change that could not be written failed in
    // the plugins directory itself, so it has no source to point at.
    for p in &problems {
        reported.problem(p);
    }
    if !change_failed {
        let copies = copies_named(&problems, &steps);
        for (from, to) in &copies {
            out.note(&format!(
                "note: {} above is the installed copy of {}, which is removed now; make the change in {} and add it again",
                to.display(),
                from.display(),
                from.display()
            ));
        }
        if copies.is_empty()
            && problems
                .iter()
                .any(|p| names_an_installed_copy(p, &plugins))
        {
            out.note(&format!(
                "note: paths under {} above are of the installed copy, which is removed now; make the change in what you added and add it again",
                plugins.display()
            ));
        }
    }
    for hint in &hints {
        out.note(&format!("hint: {hint}"));
    }
    restore(&before, Rollback::Problem, out)
}

/// For a Python package written for the original agent-env (its plugins are `agent_env.*` entry
/// points, loaded into the original's process): what this agent-env needs instead. Empty otherwise.
fn original_entry_points(plugins: &Path, changed: &[std::path::PathBuf]) -> String {
    let groups: Vec<String> = changed
        .iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "entry_points.txt"))
        .filter_map(|p| {
            std::fs::read_to_string(plugins.join(p))
                .or_else(|_| std::fs::read_to_string(p))
                .ok()
        })
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| {
                    l.trim()
                        .strip_prefix('[')?
                        .strip_suffix(']')
                        .map(str::to_string)
                })
                .filter(|group| group.starts_with("agent_env."))
                .collect::<Vec<_>>()
        })
        .collect();
    if groups.is_empty() {
        return String::new();
    }
    format!(
        "; it declares the original agent-env's entry points ({}), which this agent-env does not load: here a plugin is a program that agent-env starts, found by its manifest (shipped as share/agent-env/plugins/<name>.toml); port it with the Python plugin SDK (agent-env-plugin-sdk), as `agent-env plugin new NAME --lang python` sets one up",
        groups.join(", ")
    )
}

/// A note for each package the add replaced with an older version (a source's `@latest`, say, behind
/// what was installed from a folder): it is not an error, but it is easy to miss.
fn downgrades(before: &Manifests, after: &Manifests) -> Vec<String> {
    let older =
        |old: &str, new: &str| match (semver::Version::parse(old), semver::Version::parse(new)) {
            (Ok(old), Ok(new)) => new < old,
            _ => false,
        };
    after
        .iter()
        .filter_map(|(key, now)| {
            let was = before.get(key)?;
            older(&was.version, &now.version).then(|| {
                format!(
                    "note: {} {} replaced the installed {}, a newer version",
                    now.name, now.version, was.version
                )
            })
        })
        .collect()
}

/// What of the environment the manifest of the folder `from` asks for, when it asks.
fn folder_env_request(from: &Path) -> Option<String> {
    let path = from.join(agent_env_protocol::manifest::MANIFEST_FILE);
    let manifest = agent_env_protocol::manifest::Manifest::load(&path).ok()?;
    let request = crate::discovery::env_request::env_request(&manifest.env)?;
    Some(format!("{} {request}", manifest.name))
}

/// For each added package whose manifest asks for environment variables: what it asks for, said
/// once it is installed, so the user sees what of their keys and tokens it can read.
fn env_requests(now: &Manifests, added: &[(String, String)]) -> Vec<String> {
    added
        .iter()
        .filter_map(|(canonical, name)| {
            let installed = now.get(canonical)?;
            let text = std::str::from_utf8(&installed.bytes).ok()?;
            let manifest =
                agent_env_protocol::manifest::Manifest::parse(&installed.path, text).ok()?;
            let request = crate::discovery::env_request::env_request(&manifest.env)?;
            Some(format!("note: {name} {request}"))
        })
        .collect()
}

/// Whether `problem` names a path in a plugin's installed folder (`<plugins>/<name>/…`), which the
/// rollback removes; the folders agent-env keeps for installers (`.python`, `.cargo`) are not one.
fn names_an_installed_copy(problem: &str, plugins: &Path) -> bool {
    let prefix = format!("{}/", plugins.display());
    problem
        .match_indices(&prefix)
        .any(|(at, _)| !problem[at + prefix.len()..].starts_with('.'))
}

/// The copied folders (`from`, `to`) whose installed path (`to`) one of `problems` names.
fn copies_named<'s>(problems: &[String], steps: &'s [Step]) -> Vec<(&'s Path, &'s Path)> {
    steps
        .iter()
        .filter_map(|step| match step {
            Step::Copy { from, to } => Some((from.as_path(), to.as_path())),
            _ => None,
        })
        .filter(|(_, to)| {
            let installed = to.display().to_string();
            problems.iter().any(|p| p.contains(&installed))
        })
        .collect()
}

/// The Python distributions the specs name: what pip was asked to install.
fn asked_distributions(specs: &[Spec]) -> Vec<String> {
    specs
        .iter()
        .filter(|s| s.installer == Installer::Pip)
        .filter_map(|s| s.name.clone())
        .collect()
}

/// Pins the files each added package starts from (see [`super::pins`]).
fn pin_added(
    search: &SearchPath,
    plugins: &Path,
    added: &[String],
) -> Result<(), agent_env_host::pins::PinError> {
    let discovery = discover(search);
    let manifests: Vec<&agent_env_protocol::manifest::Manifest> = discovery
        .plugins
        .iter()
        .map(|p| &p.manifest)
        .filter(|m| m.path.starts_with(plugins) && added.contains(&m.canonical_name()))
        .collect();
    crate::discovery::pins::pin_packages(plugins, &manifests)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plugins_installed_folder_is_an_installed_copy() {
        let plugins = Path::new("/p/plugins");
        assert!(names_an_installed_copy(
            "its manifest /p/plugins/agentenv-x/agent-env-plugin.toml does not load",
            plugins
        ));
        // The installers' own folders are kept: a failure of the venv's pip names no copy.
        assert!(!names_an_installed_copy(
            "the installer failed (/p/plugins/.python/bin/python ended with exit status: 1)",
            plugins
        ));
        assert!(!names_an_installed_copy("pip: no index", plugins));
    }

    #[test]
    fn a_package_written_for_the_original_is_told_how_to_port_it() {
        let tmp = tempfile::tempdir().unwrap();
        let record = std::path::PathBuf::from(
            ".python/lib/python3.11/site-packages/essay-1.0.dist-info/entry_points.txt",
        );
        std::fs::create_dir_all(tmp.path().join(record.parent().unwrap())).unwrap();
        std::fs::write(
            tmp.path().join(&record),
            "[agent_env.task_steps]\ngrade = essay.steps:Grade\n\n[console_scripts]\nessay = essay:main\n",
        )
        .unwrap();
        let said = original_entry_points(tmp.path(), &[record]);
        assert!(
            said.starts_with("; it declares the original agent-env's entry points (agent_env.task_steps), which this agent-env does not load"),
            "{said}"
        );
        assert_eq!(original_entry_points(tmp.path(), &[]), "");
    }

    #[test]
    fn a_package_replaced_by_an_older_version_is_noted() {
        let installed = |version: &str| InstalledManifest {
            name: "agentenv-x".into(),
            path: "/p/agentenv-x/agent-env-plugin.toml".into(),
            bytes: Vec::new(),
            version: version.into(),
        };
        let of = |version: &str| Manifests::from([("agentenv-x".to_string(), installed(version))]);
        assert_eq!(
            downgrades(&of("0.2.1"), &of("0.2.0")),
            ["note: agentenv-x 0.2.0 replaced the installed 0.2.1, a newer version"]
        );
        assert!(downgrades(&of("0.2.0"), &of("0.2.1")).is_empty());
        assert!(downgrades(&Manifests::new(), &of("0.2.0")).is_empty());
    }
}
