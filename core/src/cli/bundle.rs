//! `agent-env bundle init FOLDER --from-task ID… [--from-eval ID…]`: stored tasks (and evals) written out
//! as a bundle folder a person can change and run; `--from-bundle NAME`: a copy of an installed bundle
//! (agent-env's own `hello` included).

use clap::{Args, Subcommand};
use serde_json::Value;

use super::{Exit, Failure, Terminal};
use crate::bundle::export::{self, EvalExport, TaskExport};
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
}

pub fn run(args: BundleArgs, session: &Session, term: &Terminal) -> Exit {
    match args.command {
        BundleCommand::Init(args) => init(args, session, term),
    }
}

fn init(args: InitArgs, session: &Session, term: &Terminal) -> Exit {
    if let Some(name) = &args.bundle {
        return copy_installed(name, &args.folder, session, term);
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
    let artifacts = export::artifact_folders(&tasks);
    let written = export::write_bundle(&folder, &tasks, &evals, &artifacts)
        .map_err(|e| Failure::new(e.to_string()))?;
    let mut out = String::new();
    for file in &written.files {
        let shown = file.strip_prefix(&folder).unwrap_or(file);
        out.push_str(&format!("wrote {}\n", args.folder.join(shown).display()));
    }
    // The stored artifacts the tasks load, copied in: the bundle runs without the shared stores.
    for (id, name) in &artifacts {
        let rel = std::path::Path::new("artifacts").join(name);
        let count = stored_artifact::write_out(session, id, &folder.join(&rel))
            .map_err(|e| Failure::new(e.to_string()))?;
        out.push_str(&format!(
            "wrote {}/ ({id}, {count} {})\n",
            args.folder.join(&rel).display(),
            plural(count, "file", "files")
        ));
    }
    out.push_str(&format!(
        "Run it with agent-env run {}.\n",
        shown_folder(&args.folder)
    ));
    term.print(&out);
    for note in &written.notes {
        term.eprintln(&format!("note: {note}"));
    }
    Ok(0)
}

/// Writes a copy of the installed bundle `name` into `folder`.
fn copy_installed(
    name: &str,
    folder: &std::path::Path,
    session: &Session,
    term: &Terminal,
) -> Exit {
    let installed = crate::bundle::installed(&session.manifests());
    let failure = |e: crate::bundle::BundleError| Failure::new(e.to_string());
    let crate::bundle::Target::Installed(bundle) =
        crate::bundle::resolve_installed(name, &installed).map_err(failure)?
    else {
        return Err(Failure::new(format!("'{name}' is not an installed bundle")));
    };
    let target = session.env().cwd().join(folder);
    let written = crate::bundle::copy::copy_out(bundle, &target).map_err(failure)?;
    let mut out = String::new();
    for file in &written {
        let shown = file.strip_prefix(&target).unwrap_or(file);
        out.push_str(&format!("wrote {}\n", folder.join(shown).display()));
    }
    out.push_str(&format!(
        "Change it and run it with agent-env run {}.\n",
        shown_folder(folder)
    ));
    term.print(&out);
    Ok(0)
}

/// How `run` is told the folder: a relative one starts with `./`.
fn shown_folder(folder: &std::path::Path) -> String {
    let text = folder.display().to_string();
    if folder.is_absolute() || text.starts_with('.') || text.starts_with('~') {
        text
    } else {
        format!("./{text}")
    }
}
