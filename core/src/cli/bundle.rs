//! `agent-env bundle init FOLDER --from-task ID… [--from-eval ID…]`: stored tasks (and evals) written out
//! as a bundle folder a person can change and run.

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
    /// Write stored tasks or evals out as a bundle folder (tasks/, evals/, README.md).
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
}

pub fn run(args: BundleArgs, session: &Session, term: &Terminal) -> Exit {
    match args.command {
        BundleCommand::Init(args) => init(args, session, term),
    }
}

fn init(args: InitArgs, session: &Session, term: &Terminal) -> Exit {
    if args.tasks.is_empty() && args.evals.is_empty() {
        return Err(Failure::new(
            "name what to write out: --from-task ID (a stored task) or --from-eval ID (a stored eval)",
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

/// How `run` is told the folder: a relative one starts with `./`.
fn shown_folder(folder: &std::path::Path) -> String {
    let text = folder.display().to_string();
    if folder.is_absolute() || text.starts_with('.') || text.starts_with('~') {
        text
    } else {
        format!("./{text}")
    }
}
