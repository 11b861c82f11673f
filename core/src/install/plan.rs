//! The steps an `add` runs, printed before they run (`Will run: …`), and running them.
//!
//! What a step shows is what runs, with the credentials of every URL in it (an index's password or
//! token, a `GOPROXY`'s) masked by their place, however short. pip runs with `--no-input`: an index
//! that wants credentials fails the install instead of prompting (with `--yes` no one answers). A Go
//! install shows the settings it inherits that decide where modules come from (`GOPROXY`, `GOFLAGS`,
//! `GONOSUMDB`, `GOPRIVATE`, `GONOPROXY`), when set in the environment, as pip's index is shown
//! (those written with `go env -w` are Go's own file's, which the plan does not read). pip told to
//! use no index (`PIP_NO_INDEX`) is said to, since it then ignores the indexes the plan shows.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use agent_env_protocol::manifest::{Manifest, MANIFEST_FILE};
use agent_env_protocol::version::PRINT_MANIFEST_ARG;
use sha2::{Digest, Sha256};

use super::folder_name::folder_name;
use super::interrupt::{run_to_end, Interrupts};
use super::source::{Installer, Spec};
use super::{InstallError, CARGO_ROOT, PYTHON_ENV};
use crate::output::Output;
use crate::quote;

/// One step of a plan.
#[derive(Debug, Clone)]
pub enum Step {
    /// An installer command.
    Run {
        argv: Vec<String>,
        cwd: Option<PathBuf>,
        env: Vec<(String, String)>,
        /// A folder put first on the installer's `PATH` and left out of the plan's text: the folder
        /// `cargo install` writes to, which it otherwise warns is not on `PATH` (agent-env finds the
        /// executables there through the manifests it writes, so the warning would mislead).
        first_on_path: Option<PathBuf>,
    },
    /// An installer command run only when `check` fails (exits non-zero, or cannot run): pip's
    /// install of what a reinstalled package needs, run only when `pip check` finds it missing.
    RunUnless {
        check: Vec<String>,
        argv: Vec<String>,
    },
    /// Replace `to` with a copy of the folder `from`.
    Copy { from: PathBuf, to: PathBuf },
    /// Ask each executable that `cargo install` wrote for its manifest; write it to `<plugins>/<name>/`.
    CargoManifests { bin: PathBuf },
    /// Move each executable `go install` built into `<plugins>/<name>/`, beside the manifest it prints.
    GoManifests { staging: PathBuf },
}

impl Step {
    /// Whether it runs `pip install` (of the packages, or of what they need).
    pub fn is_pip_install(&self) -> bool {
        let argv = match self {
            Step::Run { argv, .. } | Step::RunUnless { argv, .. } => argv,
            _ => return false,
        };
        argv.get(1..4)
            .is_some_and(|words| words == ["-m", "pip", "install"])
    }

    pub fn describe(&self, plugins: &Path) -> String {
        match self {
            Step::Run { argv, cwd, env, .. } => {
                let mut words: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
                words.extend(argv.iter().cloned());
                let words: Vec<String> = words.iter().map(|w| masked(w)).collect();
                let cd = cwd
                    .as_ref()
                    .map(|d| format!("cd {} && ", quote::word(&d.display().to_string())))
                    .unwrap_or_default();
                format!("Will run: {cd}{}", quote::line(&words))
            }
            Step::RunUnless { check, argv } => format!(
                "Will run: {} (only when {} finds something missing)",
                quote::line(&argv.iter().map(|w| masked(w)).collect::<Vec<_>>()),
                quote::line(check)
            ),
            // An installed copy is replaced (the check that follows decides whether it stays).
            Step::Copy { from, to } if to.exists() => format!(
                "Will replace: {} with a copy of {}",
                to.display(),
                from.display()
            ),
            Step::Copy { from, to } => format!(
                "Will copy: {} -> {}",
                from.display(),
                to.display()
            ),
            Step::CargoManifests { .. } | Step::GoManifests { .. } => format!(
                "Will run: <each new executable> {PRINT_MANIFEST_ARG}, and write its manifest to {}/<package>/{MANIFEST_FILE}",
                plugins.display()
            ),
        }
    }
}

/// `word` with the credentials of a URL in it masked (see the module docs).
fn masked(word: &str) -> String {
    crate::redaction::mask_url_credentials(word).into_owned()
}

/// The variables a Go install inherits that decide where its modules come from, shown in its plan.
const GO_SOURCE_VARIABLES: [&str; 5] =
    ["GOPROXY", "GOFLAGS", "GONOSUMDB", "GOPRIVATE", "GONOPROXY"];

/// The settings of [`GO_SOURCE_VARIABLES`] that `lookup` finds set (and not empty), in that order.
fn go_source_settings(lookup: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    GO_SOURCE_VARIABLES
        .iter()
        .filter_map(|name| {
            lookup(name)
                .filter(|value| !value.is_empty())
                .map(|value| (name.to_string(), value))
        })
        .collect()
}

/// Where pip finds Python packages, and whether it installs again a version already installed.
#[derive(Debug, Clone, Default)]
pub struct PipOptions {
    /// The index in place of PyPI (`pip install --index-url`).
    pub index_url: Option<String>,
    /// Indexes searched besides it (`--extra-index-url`): a private registry beside PyPI, which
    /// still serves the build tools (setuptools) a source package needs.
    pub extra_index_urls: Vec<String>,
    /// Install again even when the same version is installed (`--force-reinstall`): a plugin's
    /// changed code under an unchanged version.
    pub reinstall: bool,
    /// pip is told to use no index (`PIP_NO_INDEX` set to a true value in the environment it runs
    /// in, an offline CI job's switch): it ignores `--index-url` and `--extra-index-url`.
    pub no_index: bool,
}

/// Whether pip reads `value`, a `PIP_…` variable of an on/off option, as on (pip's rule: `1`, `y`,
/// `yes`, `t`, `true`, `on`, in any case).
pub fn pip_switch_on(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "y" | "yes" | "t" | "true" | "on"
    )
}

impl PipOptions {
    /// What the plan says of pip told to use no index: that it uses none, why, and that the
    /// indexes given are ignored; `None` when it uses its indexes.
    pub fn without_index(&self) -> Option<String> {
        if !self.no_index {
            return None;
        }
        let mut given: Vec<&str> = Vec::new();
        if self.index_url.is_some() {
            given.push("--index-url");
        }
        if !self.extra_index_urls.is_empty() {
            given.push("--extra-index-url");
        }
        let ignored = match given.as_slice() {
            [] => String::new(),
            flags => format!(
                "; {} {} ignored while it is set",
                flags.join(" and "),
                if flags.len() == 1 { "is" } else { "are" }
            ),
        };
        Some(format!(
            "pip uses no index: PIP_NO_INDEX is set, so it installs only the files and folders given (and those in PIP_FIND_LINKS){ignored}; unset PIP_NO_INDEX to use an index"
        ))
    }

    /// The option that names an index, when one is given (`--index-url URL`, else the first
    /// `--extra-index-url URL`).
    fn first_index(&self) -> Option<String> {
        match (&self.index_url, self.extra_index_urls.first()) {
            (Some(url), _) => Some(format!("--index-url {}", masked(url))),
            (None, Some(url)) => Some(format!("--extra-index-url {}", masked(url))),
            (None, None) => None,
        }
    }
}

/// The steps for `specs`, in order: folders, then Python (one pip call, with `pip`'s indexes and
/// reinstall), then crates, then Go modules. Fails, before anything runs, when a folder's manifest
/// names a package that cannot be a folder name, or when an index is given without a Python package
/// to install.
pub fn build(specs: &[Spec], plugins: &Path, pip: &PipOptions) -> Result<Vec<Step>, InstallError> {
    let mut steps = Vec::new();
    for s in specs.iter().filter(|s| s.installer == Installer::Folder) {
        if let (Some(from), Some(name)) = (&s.path, &s.name) {
            let folder = folder_name(name, &from.join(MANIFEST_FILE))?;
            steps.push(Step::Copy {
                from: from.clone(),
                to: plugins.join(folder),
            });
        }
    }
    let python: Vec<&Spec> = specs
        .iter()
        .filter(|s| s.installer == Installer::Pip)
        .collect();
    if let (Some(option), true) = (pip.first_index(), python.is_empty()) {
        return Err(InstallError::BadSpec {
            spec: option,
            reason: "it is where pip finds Python packages, and none of the specs is one; drop it, or name a Python package".into(),
        });
    }
    if !python.is_empty() {
        let venv = plugins.join(PYTHON_ENV);
        let interpreter = venv.join("bin/python");
        // There but not runnable: the Python it was made with was removed or upgraded.
        if !interpreter.exists() && fs::symlink_metadata(&interpreter).is_ok() {
            let gone = fs::canonicalize(&interpreter)
                .err()
                .and_then(|_| broken_link_end(&interpreter))
                .unwrap_or_else(|| interpreter.clone());
            return Err(InstallError::BrokenVenv { venv, gone });
        }
        if !interpreter.exists() {
            // venv, then ensurepip as a step of its own: venv's own pip set-up hides why it failed.
            steps.push(Step::Run {
                argv: vec![
                    "python3".into(),
                    "-m".into(),
                    "venv".into(),
                    "--without-pip".into(),
                    venv.display().to_string(),
                ],
                cwd: None,
                env: Vec::new(),
                first_on_path: None,
            });
            steps.push(Step::Run {
                argv: vec![
                    venv.join("bin/python").display().to_string(),
                    "-m".into(),
                    "ensurepip".into(),
                    "--upgrade".into(),
                    "--default-pip".into(),
                ],
                cwd: None,
                env: Vec::new(),
                first_on_path: None,
            });
        }
        let mut argv = vec![
            venv.join("bin/python").display().to_string(),
            "-m".into(),
            "pip".into(),
            "install".into(),
            "--no-input".into(),
        ];
        if let Some(url) = &pip.index_url {
            argv.extend(["--index-url".into(), url.clone()]);
        }
        for url in &pip.extra_index_urls {
            argv.extend(["--extra-index-url".into(), url.clone()]);
        }
        let packages: Vec<String> = python
            .iter()
            .map(|s| {
                s.path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| s.text.clone())
            })
            .collect();
        if pip.reinstall {
            // The packages named, again, without their dependencies: pip's --force-reinstall alone
            // fetched every dependency anew (an SDK installed from a checkout, which no index has,
            // failed the reinstall). A plain install after it adds a dependency now missing, run
            // only when `pip check` finds one: pip collects a dependency given as a folder again
            // even when it is installed.
            let mut again = argv.clone();
            again.extend(["--force-reinstall".into(), "--no-deps".into()]);
            again.extend(packages.iter().cloned());
            steps.push(Step::Run {
                argv: again,
                cwd: None,
                env: Vec::new(),
                first_on_path: None,
            });
            argv.extend(packages);
            let check = vec![
                venv.join("bin/python").display().to_string(),
                "-m".into(),
                "pip".into(),
                "check".into(),
            ];
            steps.push(Step::RunUnless { check, argv });
        } else {
            argv.extend(packages);
            steps.push(Step::Run {
                argv,
                cwd: None,
                env: Vec::new(),
                first_on_path: None,
            });
        }
    }
    let root = plugins.join(CARGO_ROOT);
    let crates: Vec<&Spec> = specs
        .iter()
        .filter(|s| s.installer == Installer::Cargo)
        .collect();
    for s in &crates {
        let mut argv: Vec<String> = vec!["cargo".into(), "install".into(), "--force".into()];
        match &s.path {
            Some(p) => {
                // The versions the project was built and tested with, when it keeps them.
                if p.join("Cargo.lock").is_file() {
                    argv.push("--locked".into());
                }
                argv.extend(["--path".into(), p.display().to_string()]);
            }
            None => argv.push(s.text.clone()),
        }
        argv.extend(["--root".into(), root.display().to_string()]);
        steps.push(Step::Run {
            argv,
            cwd: None,
            env: Vec::new(),
            first_on_path: Some(root.join("bin")),
        });
    }
    if !crates.is_empty() {
        steps.push(Step::CargoManifests {
            bin: root.join("bin"),
        });
    }
    let staging = plugins.join(format!(".staging-{}", std::process::id()));
    let modules: Vec<&Spec> = specs
        .iter()
        .filter(|s| s.installer == Installer::Go)
        .collect();
    // Inherited, and set again to the same values only to be shown.
    let go_settings = go_source_settings(|name| std::env::var(name).ok());
    for s in &modules {
        let (target, cwd) = match &s.path {
            // A module's folder builds every command in it; a command's folder inside a module, that one.
            Some(p) if p.join("go.mod").is_file() => ("./...".to_string(), Some(p.clone())),
            Some(p) => (".".to_string(), Some(p.clone())),
            None => (s.text.clone(), None),
        };
        steps.push(Step::Run {
            argv: vec!["go".into(), "install".into(), target],
            cwd,
            env: go_settings
                .iter()
                .cloned()
                .chain([("GOBIN".into(), staging.display().to_string())])
                .collect(),
            first_on_path: None,
        });
    }
    if !modules.is_empty() {
        steps.push(Step::GoManifests { staging });
    }
    Ok(steps)
}

/// Where a chain of symbolic links from `link` ends, when that is missing.
fn broken_link_end(link: &Path) -> Option<PathBuf> {
    let mut at = link.to_path_buf();
    for _ in 0..40 {
        let target = fs::read_link(&at).ok()?;
        let next = at.parent().map_or(target.clone(), |dir| dir.join(&target));
        if fs::symlink_metadata(&next).is_err() {
            return Some(next);
        }
        at = next;
    }
    None
}

/// The installers the steps start, each found on `PATH` (a Python venv's own interpreter is given
/// by its path); the first missing one is an error saying what it is needed for.
pub fn check_tools(steps: &[Step]) -> Result<(), InstallError> {
    for step in steps {
        let Step::Run { argv, .. } = step else {
            continue;
        };
        let Some(program) = argv.first() else {
            continue;
        };
        let needs = match program.as_str() {
            "go" => "a Go module is built with `go install`",
            "cargo" => "a Rust crate is built with `cargo install`",
            "python3" => {
                "a Python plugin is installed into a virtual environment made with python3"
            }
            _ => continue,
        };
        if which::which(program).is_err() {
            return Err(InstallError::ToolMissing {
                program: program.clone(),
                needs,
            });
        }
    }
    Ok(())
}

/// How running a step went.
pub enum StepOutcome {
    Done,
    /// A problem to report (then roll back).
    Failed(String),
    /// The installer ended with an error: the problem, and the end of what it wrote (which says
    /// why, for advice).
    InstallerFailed {
        problem: String,
        said: String,
    },
}

/// Runs one step. Installer output goes straight to the terminal.
pub fn run(
    step: &Step,
    plugins: &Path,
    interrupts: &Interrupts,
    cargo_before: &BTreeMap<String, [u8; 32]>,
    out: &dyn Output,
) -> Result<StepOutcome, InstallError> {
    match step {
        Step::Run {
            argv,
            cwd,
            env,
            first_on_path,
        } => {
            let mut cmd = Command::new(&argv[0]);
            cmd.args(&argv[1..]);
            if let Some(d) = cwd {
                cmd.current_dir(d);
            }
            for (k, v) in env {
                cmd.env(k, v);
            }
            if let Some(path) = first_on_path.as_deref().and_then(path_with_first) {
                cmd.env("PATH", path);
            }
            let finished = run_to_end(cmd, interrupts, out)?;
            if finished.status.success() {
                Ok(StepOutcome::Done)
            } else {
                Ok(StepOutcome::InstallerFailed {
                    problem: format!(
                        "the installer failed ({} ended with {})",
                        argv[0], finished.status
                    ),
                    said: finished.said,
                })
            }
        }
        Step::RunUnless { check, argv } => {
            let satisfied = check.split_first().is_some_and(|(program, args)| {
                Command::new(program)
                    .args(args)
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            });
            if satisfied {
                return Ok(StepOutcome::Done);
            }
            let run = Step::Run {
                argv: argv.clone(),
                cwd: None,
                env: Vec::new(),
                first_on_path: None,
            };
            self::run(&run, plugins, interrupts, cargo_before, out)
        }
        Step::Copy { from, to } => {
            fs::create_dir_all(plugins).map_err(|e| write_err(plugins, e))?;
            if fs::symlink_metadata(to).is_ok() {
                fs::remove_dir_all(to).map_err(|e| write_err(to, e))?;
            }
            copy_tree(from, to)?;
            Ok(StepOutcome::Done)
        }
        Step::CargoManifests { bin } => {
            let after = digests(bin);
            let built: Vec<PathBuf> = after
                .iter()
                .filter(|(n, d)| cargo_before.get(*n) != Some(d))
                .map(|(n, _)| bin.join(n))
                .collect();
            for exe in built {
                if let Some(problem) = place_manifest(&exe, plugins, false)? {
                    return Ok(StepOutcome::Failed(problem));
                }
            }
            Ok(StepOutcome::Done)
        }
        Step::GoManifests { staging } => {
            let built: Vec<PathBuf> = digests(staging).keys().map(|n| staging.join(n)).collect();
            let mut placed = 0;
            let mut problems = Vec::new();
            for exe in &built {
                match place_manifest(exe, plugins, true) {
                    Ok(None) => placed += 1,
                    Ok(Some(problem)) => problems.push((exe, problem)),
                    Err(e) => {
                        let _ = fs::remove_dir_all(staging);
                        return Err(e);
                    }
                }
            }
            let _ = fs::remove_dir_all(staging);
            // A module may hold commands besides its plugins (a helper, a tool): with a plugin
            // installed, each of those is said and left out; with none, the module is no plugin.
            if placed == 0 {
                if let Some(problem) = problems
                    .into_iter()
                    .map(|(_, p)| p)
                    .reduce(|a, b| format!("{a}; {b}"))
                {
                    return Ok(StepOutcome::Failed(problem));
                }
                return Ok(StepOutcome::Done);
            }
            for (exe, problem) in problems {
                let name = exe
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                out.note(&format!(
                    "note: the module also built {name}, which is not installed: it gave no plugin manifest ({problem})"
                ));
            }
            Ok(StepOutcome::Done)
        }
    }
}

/// This process's `PATH` with `folder` first; `None` when the result cannot be a `PATH` (a folder
/// name holding `:`), and then the installer runs with the `PATH` it would have had.
fn path_with_first(folder: &Path) -> Option<std::ffi::OsString> {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    let mut folders = vec![folder.to_path_buf()];
    // An empty PATH stays without entries: split, it would add "" (the current folder).
    if !rest.is_empty() {
        folders.extend(std::env::split_paths(&rest));
    }
    std::env::join_paths(folders).ok()
}

fn write_err(path: &Path, source: std::io::Error) -> InstallError {
    InstallError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// sha256 of each regular file in `dir` (by name); a missing folder has none.
pub fn digests(dir: &Path) -> BTreeMap<String, [u8; 32]> {
    let mut out = BTreeMap::new();
    let Ok(read) = fs::read_dir(dir) else {
        return out;
    };
    for e in read.flatten() {
        let path = e.path();
        if !path.is_file() {
            continue;
        }
        if let (Ok(name), Ok(bytes)) = (e.file_name().into_string(), fs::read(&path)) {
            out.insert(name, Sha256::digest(&bytes).into());
        }
    }
    out
}

/// Asks `exe` for its manifest and writes it to `<plugins>/<name>/`, with `exec` pointing at the executable
/// (moved into that folder when `move_in`). A problem is returned as text.
fn place_manifest(
    exe: &Path,
    plugins: &Path,
    move_in: bool,
) -> Result<Option<String>, InstallError> {
    let out = Command::new(exe)
        .arg(PRINT_MANIFEST_ARG)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| InstallError::Spawn {
            program: exe.display().to_string(),
            source,
        })?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        // An SDK that refuses its own registrations exits non-zero saying why on stderr.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let said = stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect::<Vec<_>>();
        let tail = said[said.len().saturating_sub(5)..].join("; ");
        return Ok(Some(format!(
            "{} {PRINT_MANIFEST_ARG} ended with {}{}",
            exe.display(),
            out.status,
            if tail.is_empty() {
                ", printing no manifest".to_string()
            } else {
                format!(": {tail}")
            }
        )));
    }
    if text.trim().is_empty() {
        return Ok(Some(format!(
            "{} printed no manifest for {PRINT_MANIFEST_ARG}, so it is not an agent-env plugin",
            exe.display()
        )));
    }
    let manifest = match Manifest::parse(exe, &text) {
        Ok(m) => m,
        Err(e) => {
            return Ok(Some(format!(
                "the manifest {} printed does not parse: {}",
                exe.display(),
                e.message
            )))
        }
    };
    let file_name = exe
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let folder = match folder_name(&manifest.name, exe) {
        Ok(f) => plugins.join(f),
        Err(e) => return Ok(Some(e.to_string())),
    };
    // What an earlier install of the package left in its folder (a folder plugin's copy, a Go
    // binary) is no part of this one: the folder holds this install's manifest (and executable) alone.
    // A rollback puts it back as it was.
    if folder.is_dir() {
        fs::remove_dir_all(&folder).map_err(|e| write_err(&folder, e))?;
    }
    fs::create_dir_all(&folder).map_err(|e| write_err(&folder, e))?;
    let exec = if move_in {
        let dest = folder.join(&file_name);
        fs::rename(exe, &dest).map_err(|e| write_err(&dest, e))?;
        format!("./{file_name}")
    } else {
        format!("../{CARGO_ROOT}/bin/{file_name}")
    };
    let mut doc: toml::Table = match text.parse() {
        Ok(d) => d,
        Err(e) => {
            return Ok(Some(format!(
                "the manifest {} printed does not parse: {e}",
                exe.display()
            )))
        }
    };
    if let Some(plugin) = doc.get_mut("plugin").and_then(|p| p.as_table_mut()) {
        plugin.insert(
            "exec".into(),
            toml::Value::Array(vec![toml::Value::String(exec)]),
        );
    }
    let path = folder.join(MANIFEST_FILE);
    // The executable by its name, not by the build's staging folder (new on every add), so adding
    // the same build again writes the same manifest.
    let body = format!(
        "# Written by `agent-env plugin add` from `{file_name} {PRINT_MANIFEST_ARG}`.\n{}",
        toml::to_string(&doc).unwrap_or(text)
    );
    fs::write(&path, body).map_err(|e| write_err(&path, e))?;
    Ok(None)
}

/// Copies a folder: files with their modes, symlinks as symlinks.
pub fn copy_tree(from: &Path, to: &Path) -> Result<(), InstallError> {
    use std::os::unix::fs::PermissionsExt;
    let read_err = |p: &Path, source| InstallError::Read {
        path: p.to_path_buf(),
        source,
    };
    fs::create_dir_all(to).map_err(|e| write_err(to, e))?;
    let meta = fs::metadata(from).map_err(|e| read_err(from, e))?;
    for entry in fs::read_dir(from).map_err(|e| read_err(from, e))? {
        let entry = entry.map_err(|e| read_err(from, e))?;
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let kind = fs::symlink_metadata(&src).map_err(|e| read_err(&src, e))?;
        if kind.file_type().is_symlink() {
            let target = fs::read_link(&src).map_err(|e| read_err(&src, e))?;
            std::os::unix::fs::symlink(target, &dst).map_err(|e| write_err(&dst, e))?;
        } else if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            fs::copy(&src, &dst).map_err(|e| write_err(&dst, e))?;
        }
    }
    fs::set_permissions(to, fs::Permissions::from_mode(meta.permissions().mode()))
        .map_err(|e| write_err(to, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `RunUnless` runs its installer only when its check fails or cannot start.
    #[test]
    fn run_unless_installs_only_when_its_check_does_not_pass() {
        let tmp = tempfile::tempdir().unwrap();
        let installed = tmp.path().join("installed");
        let step = |check: &str| Step::RunUnless {
            check: vec![check.to_string()],
            argv: vec!["touch".into(), installed.display().to_string()],
        };
        let ran = |check: &str| {
            let out = crate::output::Collected::default();
            let done = run(
                &step(check),
                &tmp.path().join("plugins"),
                &Interrupts::none(),
                &BTreeMap::new(),
                &out,
            );
            assert!(matches!(done, Ok(StepOutcome::Done)), "{check}");
            installed.exists()
        };
        assert!(!ran("true"), "a check that passed installs nothing");
        assert!(ran("false"), "a check that failed installs");
        std::fs::remove_file(&installed).unwrap();
        assert!(
            ran("/nonexistent/check"),
            "a check that cannot start installs"
        );
    }

    #[test]
    fn an_executable_that_refuses_to_print_its_manifest_is_quoted() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let exe = tmp.path().join("hello-go");
        std::fs::write(
            &exe,
            "#!/bin/sh\necho \"agentenv: task step type 'dup' is registered twice\" >&2\nexit 1\n",
        )
        .unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let problem = place_manifest(&exe, tmp.path(), false).unwrap().unwrap();
        assert_eq!(
            problem,
            format!(
                "{} {PRINT_MANIFEST_ARG} ended with exit status: 1: agentenv: task step type 'dup' is registered twice",
                exe.display()
            )
        );
    }

    #[test]
    fn a_crate_that_keeps_its_lock_file_is_installed_with_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"agentenv-x\"\nversion = \"0.1.0\"\n",
        )
        .unwrap();
        let describe = |dir: &Path| -> String {
            let spec = super::super::source::classify(dir.to_str().unwrap(), None, None).unwrap();
            let steps = build(&[spec], Path::new("/nowhere"), &PipOptions::default()).unwrap();
            steps[0].describe(Path::new("/nowhere"))
        };
        assert!(
            !describe(dir.path()).contains("--locked"),
            "{}",
            describe(dir.path())
        );
        std::fs::write(dir.path().join("Cargo.lock"), "version = 3\n").unwrap();
        assert!(
            describe(dir.path()).contains("cargo install --force --locked --path"),
            "{}",
            describe(dir.path())
        );
    }

    #[test]
    fn pip_options_are_passed_to_pip_without_prompts_and_a_password_is_shown_masked() {
        let specs = [super::super::source::classify("agentenv-x", None, None).unwrap()];
        let pip = PipOptions {
            index_url: None,
            extra_index_urls: vec!["http://al:pw1@127.0.0.1:9/simple".into()],
            reinstall: true,
            no_index: false,
        };
        let steps = build(&specs, Path::new("/nowhere"), &pip).unwrap();
        let lines: Vec<String> = steps
            .iter()
            .map(|s| s.describe(Path::new("/nowhere")))
            .collect();
        let n = lines.len();
        assert!(
            lines[n - 2].ends_with(
                "pip install --no-input --extra-index-url 'http://al:***@127.0.0.1:9/simple' --force-reinstall --no-deps agentenv-x"
            ),
            "{lines:?}"
        );
        assert!(
            lines[n - 1].ends_with(
                "pip install --no-input --extra-index-url 'http://al:***@127.0.0.1:9/simple' agentenv-x (only when /nowhere/.python/bin/python -m pip check finds something missing)"
            ),
            "{lines:?}"
        );
        // What runs keeps the password.
        let Step::Run { argv, .. } = &steps[n - 2] else {
            panic!("{:?}", steps[n - 2]);
        };
        assert!(argv.contains(&"http://al:pw1@127.0.0.1:9/simple".to_string()));
        // An index given without a Python package is refused, its password masked.
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(
            folder.path().join("Cargo.toml"),
            "[package]\nname = \"x\"\n",
        )
        .unwrap();
        let crate_spec =
            super::super::source::classify(folder.path().to_str().unwrap(), None, None).unwrap();
        let refused = build(&[crate_spec], Path::new("/nowhere"), &pip).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("--extra-index-url http://al:***@127.0.0.1:9/simple"),
            "{refused}"
        );
    }

    #[test]
    fn a_go_installs_module_sources_are_shown_when_set() {
        let set = |name: &str| match name {
            "GOPROXY" => Some("https://tok@proxy.example,direct".to_string()),
            "GONOSUMDB" => Some("github.com/agent-env/*".to_string()),
            "GOFLAGS" => Some(String::new()),
            _ => None,
        };
        let settings = go_source_settings(set);
        assert_eq!(
            settings,
            [
                (
                    "GOPROXY".to_string(),
                    "https://tok@proxy.example,direct".to_string()
                ),
                (
                    "GONOSUMDB".to_string(),
                    "github.com/agent-env/*".to_string()
                ),
            ]
        );
        let step = Step::Run {
            argv: vec!["go".into(), "install".into(), "./...".into()],
            cwd: None,
            env: settings,
            first_on_path: None,
        };
        assert_eq!(
            step.describe(Path::new("/nowhere")),
            "Will run: 'GOPROXY=https://***@proxy.example,direct' 'GONOSUMDB=github.com/agent-env/*' go install ./..."
        );
    }
}
