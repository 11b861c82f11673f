//! `agent-env bundle init FOLDER --from-task ID… [--from-eval ID…]`: stored tasks (and evals) written out
//! as a bundle folder a person can change and run; `--from-bundle NAME`: a copy of an installed bundle
//! (agent-env's own `hello` included). With `--json`, what was written is one document on stdout
//! (`docs/json-output.md`).

use clap::{Args, Subcommand};
use serde_json::Value;

use super::{Exit, Failure, Terminal};
use crate::bundle::export::{self, EvalExport, TaskExport};
use crate::run::cancel::{watch_signals, Cancel, Signalled};
use crate::run::{stored_artifact, stored_task};
use crate::session::Session;
use crate::words::plural;

#[derive(Args)]
pub struct BundleArgs {
    #[command(subcommand)]
    pub command: BundleCommand,
}

#[derive(Subcommand)]
pub enum BundleCommand {
    /// Write stored tasks or evals, or a copy of an installed bundle, out as a bundle folder.
    Init(InitArgs),
}

#[derive(Args)]
pub struct InitArgs {
    /// The folder to write; it must be missing or empty.
    pub folder: std::path::PathBuf,
    /// A stored task's id (repeatable).
    #[arg(long = "from-task", value_name = "ID")]
    pub tasks: Vec<String>,
    /// A stored eval's id (repeatable): the eval and each of its tasks.
    #[arg(long = "from-eval", value_name = "ID")]
    pub evals: Vec<String>,
    /// An installed bundle to copy (a name `agent-env run` lists, such as hello).
    #[arg(long = "from-bundle", value_name = "NAME", conflicts_with_all = ["tasks", "evals"])]
    pub bundle: Option<String>,
    /// Print one JSON document for a script: the folder written, its tasks, evals, artifacts and
    /// files, and the command that runs it.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: BundleArgs, session: &Session, term: &Terminal) -> Exit {
    match args.command {
        BundleCommand::Init(args) => init(args, session, term),
    }
}

fn init(args: InitArgs, session: &Session, term: &Terminal) -> Exit {
    // A folder whose name is not UTF-8 could not be run (it has no bundle id of its own): refused
    // before anything is written.
    crate::bundle::folder_id::check_new_folder(
        &session.env().cwd().join(&args.folder),
        session.paths().home_dir().as_deref(),
    )
    .map_err(|e| Failure::new(e.to_string()))?;
    if let Some(name) = &args.bundle {
        return copy_installed(name, &args.folder, args.json, session, term);
    }
    if args.tasks.is_empty() && args.evals.is_empty() {
        return Err(Failure::new(
            "name what to write out: --from-task ID (a stored task), --from-eval ID (a stored eval) or --from-bundle NAME (an installed bundle)",
        )
        .with_code(2));
    }
    let failure = |e: crate::run::RunError| Failure::new(e.to_string());
    let mut evals = Vec::new();
    let mut task_ids = args.tasks.clone();
    for id in &args.evals {
        let doc =
            stored_task::get_document(session, stored_task::EVALS, id, None).map_err(failure)?;
        let ids: Vec<String> = doc
            .get("tasks")
            .and_then(Value::as_array)
            .map(|t| {
                t.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        for task in &ids {
            if !task_ids.contains(task) {
                task_ids.push(task.clone());
            }
        }
        evals.push(EvalExport {
            id: id.clone(),
            task_ids: ids,
        });
    }
    let mut tasks = Vec::new();
    for id in &task_ids {
        let doc = stored_task::get_task(session, id, None).map_err(failure)?;
        tasks.push(TaskExport {
            id: id.clone(),
            steps: stored_task::task_steps(&doc),
        });
    }
    let folder = session.env().cwd().join(&args.folder);
    // A link to an empty folder is written through, as --from-bundle writes: the bundle is moved
    // onto the folder it leads to (a rename onto the link itself fails).
    let folder = match std::fs::canonicalize(&folder) {
        Ok(real) if real.is_dir() => real,
        _ => folder,
    };
    crate::bundle::copy::ensure_empty(&folder).map_err(|e| Failure::new(e.to_string()))?;
    // Written beside it and moved into place whole: a store that fails halfway (an artifact's
    // object gone, a server down) leaves nothing, so the same command can simply be run again.
    let staging = Staging::beside(&folder)?;
    // A signal stops the copy between two files; the staging folder then goes as it drops.
    let cancel = Cancel::new();
    watch_signals(cancel.clone(), Some(on_init_signal))
        .map_err(|e| Failure::new(format!("can't watch for Ctrl-C: {e}")))?;
    let artifacts = export::artifact_folders(&tasks);
    let title = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "bundle".into());
    let written = export::write_bundle(staging.path(), &title, &tasks, &evals, &artifacts)
        .map_err(|e| Failure::new(e.to_string()))?;
    let mut lines = String::new();
    for file in &written.files {
        let shown = file.strip_prefix(staging.path()).unwrap_or(file);
        lines.push_str(&format!("wrote {}\n", args.folder.join(shown).display()));
    }
    // The stored artifacts the tasks load, copied in: the bundle runs without the shared stores.
    let mut copied = Vec::new();
    for (id, name) in &artifacts {
        let rel = std::path::Path::new("artifacts").join(name);
        let count = stored_artifact::write_out(session, id, &staging.path().join(&rel), &cancel)
            .map_err(|e| {
                Failure::new(format!("{e}; nothing was written")).with_code(e.exit_code())
            })?;
        lines.push_str(&format!(
            "wrote {}/ ({id}, {count} {})\n",
            args.folder.join(&rel).display(),
            plural(count, "file", "files")
        ));
        copied.push(ArtifactCopied {
            id: id.clone(),
            folder: slashed(&rel),
            files: count,
        });
    }
    // A signal during the last file: it is copied, and the bundle is not put in place all the same.
    if let Some(signal) = cancel.signal() {
        return Err(Failure::new(
            "stopped by a signal before the bundle was put in place; nothing was written"
                .to_string(),
        )
        .with_code(128 + signal));
    }
    staging.finish(&folder)?;
    let run = format!("agent-env run {}", shown_folder(&args.folder));
    lines.push_str(&format!("Run it with {run}.\n"));
    let wrote = InitDocument {
        format_version: 1,
        folder: args.folder.display().to_string(),
        path: std::fs::canonicalize(&folder).unwrap_or(folder.clone()),
        from_bundle: None,
        tasks: tasks
            .iter()
            .map(|t| Entity {
                id: t.id.clone(),
                file: format!("tasks/{}.json", export::file_name(&t.id)),
            })
            .collect(),
        evals: evals
            .iter()
            .map(|e| Entity {
                id: e.id.clone(),
                file: format!("evals/{}.toml", export::file_name(&e.id)),
            })
            .collect(),
        artifacts: copied,
        files: files_below(&folder),
        run,
        warnings: written.notes,
    };
    tell(&wrote, lines, args.json, term)
}

/// What `bundle init` wrote: its `--json` document.
#[derive(serde::Serialize)]
struct InitDocument {
    format_version: u32,
    /// The folder as it was given.
    folder: String,
    /// The folder written, absolute.
    path: std::path::PathBuf,
    /// The installed bundle copied (`--from-bundle`), or `None` for stored tasks written out.
    from_bundle: Option<String>,
    tasks: Vec<Entity>,
    evals: Vec<Entity>,
    artifacts: Vec<ArtifactCopied>,
    /// Every file in the folder, relative to it, sorted.
    files: Vec<String>,
    /// The command that runs the folder.
    run: String,
    /// What was also said on stderr as `note: …`.
    warnings: Vec<String>,
}

/// A task or eval written: the id it was written from and its file in the folder.
#[derive(serde::Serialize)]
struct Entity {
    id: String,
    file: String,
}

/// An artifact written: the id it was written from, its folder in the bundle and how many files it holds.
#[derive(serde::Serialize)]
struct ArtifactCopied {
    id: String,
    folder: String,
    files: usize,
}

/// Prints what `bundle init` wrote: `lines` for a person, or the document under `--json`; the
/// warnings go to stderr either way.
fn tell(wrote: &InitDocument, lines: String, json: bool, term: &Terminal) -> Exit {
    if json {
        let text = serde_json::to_string_pretty(wrote)
            .map_err(|e| Failure::new(format!("cannot print what was written: {e}")))?;
        term.print(&format!("{text}\n"));
    } else {
        term.print(&lines);
    }
    for note in &wrote.warnings {
        term.eprintln(&format!("note: {note}"));
    }
    Ok(0)
}

/// The files under `folder`, relative to it with `/` between parts, sorted.
fn files_below(folder: &std::path::Path) -> Vec<String> {
    fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => walk(&path, root, out),
                Ok(_) => out.push(slashed(path.strip_prefix(root).unwrap_or(&path))),
                Err(_) => {}
            }
        }
    }
    let mut files = Vec::new();
    walk(folder, folder, &mut files);
    files.sort();
    files
}

/// A relative path with `/` between its parts, as bundles name their files.
fn slashed(path: &std::path::Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// A folder written beside its destination and moved there whole by [`Staging::finish`]; dropped
/// before that, it is removed.
struct Staging {
    path: std::path::PathBuf,
    finished: bool,
}

impl Staging {
    fn beside(folder: &std::path::Path) -> Result<Staging, Failure> {
        let name = folder
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parent = folder.parent().unwrap_or(std::path::Path::new("."));
        let path = parent.join(format!(
            ".{name}.agent-env-partial-{}",
            crate::sandbox::random_hex(6)
        ));
        std::fs::create_dir_all(&path)
            .map_err(|e| Failure::new(format!("cannot create {}: {e}", path.display())))?;
        let _ = STAGING.set(path.clone());
        Ok(Staging {
            path,
            finished: false,
        })
    }

    fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Moves the folder to `folder` (missing, or empty: an empty folder is replaced).
    fn finish(mut self, folder: &std::path::Path) -> Result<(), Failure> {
        std::fs::rename(&self.path, folder).map_err(|e| {
            Failure::new(format!(
                "cannot move the written bundle to {}: {e}",
                folder.display()
            ))
        })?;
        self.finished = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.finished {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// A signal during `bundle init`: the first stops the copy once the file being copied is written (what
/// was written beside the folder is then removed), the next stops at once.
fn on_init_signal(signalled: Signalled) {
    super::stopping::two_step(
        signalled,
        "Stopping once the file being copied is copied",
        || match STAGING.get() {
            Some(path) => format!("what was written is left in {}; remove it", path.display()),
            None => "nothing was written".to_string(),
        },
    );
}

/// The folder `bundle init` writes beside the one it was given, for its signal handler to name.
static STAGING: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Writes a copy of the installed bundle `name` into `folder`.
fn copy_installed(
    name: &str,
    folder: &std::path::Path,
    json: bool,
    session: &Session,
    term: &Terminal,
) -> Exit {
    let installed = crate::bundle::installed(&session.manifests());
    let failure = |e: crate::bundle::BundleError| Failure::new(e.to_string());
    let crate::bundle::Target::Installed(bundle) =
        crate::bundle::installed::resolve_installed_only(name, &installed).map_err(failure)?
    else {
        return Err(Failure::new(format!("'{name}' is not an installed bundle")));
    };
    let target = session.env().cwd().join(folder);
    let written = crate::bundle::copy::copy_out(bundle, &target).map_err(failure)?;
    let mut lines = String::new();
    for file in &written {
        let shown = file.strip_prefix(&target).unwrap_or(file);
        lines.push_str(&format!("wrote {}\n", folder.join(shown).display()));
    }
    let run = format!("agent-env run {}", shown_folder(folder));
    lines.push_str(&format!("Change it and run it with {run}.\n"));
    let mut wrote = InitDocument {
        format_version: 1,
        folder: folder.display().to_string(),
        path: std::fs::canonicalize(&target).unwrap_or(target.clone()),
        from_bundle: Some(bundle.qualified_name()),
        tasks: Vec::new(),
        evals: Vec::new(),
        artifacts: Vec::new(),
        files: written
            .iter()
            .map(|file| slashed(file.strip_prefix(&target).unwrap_or(file)))
            .collect(),
        run,
        warnings: Vec::new(),
    };
    wrote.files.sort();
    // What it holds, as the installed bundle names it (read only for the document).
    if json {
        match bundle.parse(session.paths().home_dir().as_deref()) {
            Ok(parsed) => {
                let entity = |id: &str, file: &str| Entity {
                    id: id.to_string(),
                    file: file.to_string(),
                };
                wrote.tasks = parsed.tasks.iter().map(|t| entity(&t.id, &t.path)).collect();
                wrote.evals = parsed.evals.iter().map(|e| entity(&e.id, &e.path)).collect();
                wrote.artifacts = parsed
                    .artifacts
                    .iter()
                    .map(|a| ArtifactCopied {
                        id: a.id.clone(),
                        folder: a.path.clone(),
                        files: a.files.len(),
                    })
                    .collect();
            }
            Err(e) => wrote.warnings.push(format!(
                "the copy's tasks, evals and artifacts are not listed: {e}; agent-env run {} says what is wrong",
                shown_folder(folder)
            )),
        }
    }
    tell(&wrote, lines, json, term)
}

/// How `run` is told the folder: a relative one starts with `./`.
fn shown_folder(folder: &std::path::Path) -> String {
    let text = folder.display().to_string();
    let path = if folder.is_absolute() || text.starts_with('.') || text.starts_with('~') {
        text
    } else {
        format!("./{text}")
    };
    // Quoted as a shell needs it, so the line can be pasted (a leading `~` stays bare to expand).
    match path.strip_prefix("~/") {
        Some(rest) => format!("~/{}", crate::quote::word(rest)),
        None => crate::quote::word(&path),
    }
}
