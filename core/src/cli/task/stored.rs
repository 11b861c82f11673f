//! The stored-task subcommands: `task put` writes task files as stored tasks, `task get` shows one
//! (or a task a bundle run recorded, by its @local id), and `task run` runs one against the
//! configured stores.

use serde_json::{json, Map, Value};

use super::{pretty, text, GetTaskArgs, PutArgs, RunTaskArgs};
use crate::bundle::ids::LOCAL_PREFIX;
use crate::cli::{Exit, Failure, Terminal};
use crate::run::local_stores::{read_version, LocalVersion};
use crate::run::stored_task;
use crate::session::Session;
use crate::stores::Document;

/// The FILE that `task put` reads from stdin.
const STDIN: &str = "-";

pub(super) fn put(args: PutArgs, session: &Session, term: &Terminal) -> Exit {
    if args.id.is_some() && args.files.len() > 1 {
        return Err(Failure::new("--id names one task: give one FILE with it").with_code(2));
    }
    if args.files.iter().filter(|f| f.as_os_str() == STDIN).count() > 1 {
        return Err(Failure::new("- (stdin) is given twice: stdin holds one task").with_code(2));
    }
    let mut stored: Vec<Value> = Vec::new();
    let mut count = 0;
    let outcome = put_each(&args, session, |id, put, file| {
        count += 1;
        let version = put.version;
        if args.json {
            stored.push(
                json!({"id": id, "version": version, "file": file, "unchanged": put.unchanged}),
            );
        } else if put.unchanged {
            term.print(&format!(
                "{id}: v{version}, unchanged (its latest version has the same steps, so nothing was stored)\n"
            ));
        } else {
            term.print(&format!("{id}: v{version}\n"));
        }
    });
    // The put stops at the first file that fails: the ones after it are said to be left, too.
    let outcome = outcome.map_err(|failure| match args.files.get(count + 1..) {
        Some(left) if !left.is_empty() => {
            let names: Vec<String> = left.iter().map(|f| f.display().to_string()).collect();
            Failure::new(format!(
                "{failure}; the files after it were not stored either ({}): put them again once it is fixed",
                names.join(", ")
            ))
            .with_code(failure.code())
        }
        _ => failure,
    });
    if args.json {
        // The tasks stored before a failure are in the document too: a script learns their versions.
        let mut doc = json!({"format_version": 1, "tasks": stored});
        if let Err(failure) = &outcome {
            doc["status"] = json!("error");
            doc["exit_code"] = json!(failure.code());
            doc["error"] = json!(failure.to_string());
        }
        term.print(&format!("{}\n", pretty(&doc)));
    }
    outcome
}

/// Stores each file of `args` as a task, telling `stored` of each (its id, what the put did and its
/// file) as it goes.
fn put_each(
    args: &PutArgs,
    session: &Session,
    mut stored: impl FnMut(&str, stored_task::PutTask, &str),
) -> Exit {
    for file in &args.files {
        let from_stdin = file.as_os_str() == STDIN;
        let shown = match from_stdin {
            true => "stdin".to_string(),
            false => file.display().to_string(),
        };
        let text = match from_stdin {
            true => std::io::read_to_string(std::io::stdin()),
            false => std::fs::read_to_string(file),
        }
        .map_err(|e| Failure::new(format!("can't read {shown}: {e}")))?;
        // A byte order mark (some editors write one) is not part of the JSON, as in a bundle.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        if text.trim().is_empty() {
            let what = match from_stdin {
                true => "stdin was empty: pipe the task's JSON into it (agent-env task put - --id team/hello < hello.json)".to_string(),
                false => format!("{shown} is empty: a task file holds the task's steps as JSON"),
            };
            return Err(Failure::new(what));
        }
        let steps = stored_task::steps_of(text, &shown).map_err(|e| Failure::new(e.to_string()))?;
        // `--id`, else the id a stored task's document names (`task get ID --json` prints one), else
        // the file's name.
        let id = match (args.id.clone(), stored_task::id_of(text)) {
            (Some(id), _) | (None, Some(id)) => id,
            (None, None) if from_stdin => {
                return Err(Failure::new(
                    "stdin: a task read from stdin has no file name to be its id: give one with --id (such as --id team/hello)",
                )
                .with_code(2))
            }
            (None, None) => file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        // Said and stored in NFC, the form every id is kept in.
        let id = crate::bundle::model::as_nfc(&id).into_owned();
        let put = stored_task::put_task(session, &id, steps)
            .map_err(|e| Failure::new(format!("{shown}: {e}")))?;
        stored(&id, put, &shown);
    }
    Ok(0)
}

pub(super) fn get_task(args: GetTaskArgs, session: &Session, term: &Terminal) -> Exit {
    // An @local id names a task a bundle run recorded: in the local store, where `task instances`
    // and `task get-instance` read its runs.
    let recorded_by_a_bundle = args.id.starts_with(LOCAL_PREFIX);
    let doc = match recorded_by_a_bundle {
        true => bundle_task(session, &args.id, args.version)?,
        false => stored_task::get_task(session, &args.id, args.version)
            .map_err(|e| Failure::new(format!("{e}{}", recorded_here(session, &args.id))))?,
    };
    if args.json {
        term.print(&format!("{}\n", pretty(&Value::Object(doc))));
        return Ok(0);
    }
    let mut out = format!(
        "task:      {} v{}\ncreated:   {}\nsteps:\n",
        text(&doc, "id"),
        doc.get("version").and_then(Value::as_i64).unwrap_or(0),
        text(&doc, "created_at_utc")
    );
    for step in doc
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.push_str(&format!(
            "  {} ({})\n",
            step.get("id").and_then(Value::as_str).unwrap_or("?"),
            step.get("type").and_then(Value::as_str).unwrap_or("?")
        ));
    }
    out.push_str(&match recorded_by_a_bundle {
        true => run_bundle_task(text(&doc, "id")),
        false => format!(
            "Run it with agent-env task run {}.\n",
            crate::quote::word(text(&doc, "id"))
        ),
    });
    term.print(&out);
    Ok(0)
}

/// The task a bundle run recorded as `id` (an @local id), at `version` or its latest, from the local
/// document store.
fn bundle_task(session: &Session, id: &str, version: Option<i64>) -> Result<Document, Failure> {
    let local = crate::run::local_stores::open(&session.paths().state_root()).documents;
    let found = read_version(local.as_ref(), stored_task::TASKS, id, version).map_err(|e| {
        Failure::new(format!(
            "cannot read the task '{id}' from the local document store: {e}"
        ))
    })?;
    let newest = match found {
        LocalVersion::Found(doc) => return Ok(doc),
        LocalVersion::Missing { newest } => newest,
    };
    Err(Failure::new(match (version, newest) {
        (Some(asked), Some(newest)) => format!(
            "no task '{id}' v{asked} in the local document store; its newest version is v{newest}"
        ),
        _ => format!(
            "no task '{id}' in the local document store, where bundle runs record their tasks; agent-env task list shows the tasks that ran"
        ),
    }))
}

/// `; or did you mean @local/<id>, …?` when `id` is given without the @local/ that names a task a
/// bundle run recorded and the local store has that task (`task instances` and `task list --task`
/// take it so); else nothing.
fn recorded_here(session: &Session, id: &str) -> String {
    let local_id = format!("{LOCAL_PREFIX}{id}");
    let local = crate::run::local_stores::open(&session.paths().state_root()).documents;
    match local.latest_version(stored_task::TASKS, &local_id) {
        Ok(Some(_)) => format!(
            "; or did you mean {}, the task a bundle run recorded in the local store?",
            crate::quote::id(&local_id)
        ),
        _ => String::new(),
    }
}

/// How to run again the task a bundle run recorded as `id`: its bundle's run, the task picked by
/// its name (`~/…` under the home folder, a folder by its absolute path when it is here, an
/// installed bundle as `<package>/<bundle>`).
fn run_bundle_task(id: &str) -> String {
    let bare = id.strip_prefix(LOCAL_PREFIX).unwrap_or(id);
    let (root, name) = bare.rsplit_once('/').unwrap_or(("", bare));
    let folder = std::path::Path::new("/").join(root);
    // Quoted for pasting into a shell; `~/` stays outside the quotes, where the shell expands it.
    let bundle = if let Some(under_home) = root.strip_prefix("~/") {
        format!("~/{}", crate::quote::word(under_home))
    } else if !root.is_empty() && folder.is_dir() {
        crate::quote::word(&folder.to_string_lossy())
    } else if root.split_once('/').is_some_and(|(_, b)| !b.contains('/')) {
        crate::quote::word(root)
    } else {
        return format!(
            "Run it with agent-env run FOLDER --task {}, FOLDER being the bundle it came from.\n",
            crate::quote::word(name)
        );
    };
    format!(
        "Run it with agent-env run {bundle} --task {}.\n",
        crate::quote::word(name)
    )
}

pub(super) fn run_stored(
    args: RunTaskArgs,
    verbose: bool,
    session: &Session,
    term: &Terminal,
) -> Exit {
    if args.runs == 0 {
        return Err(
            Failure::new("--runs 0: give how many times to run it, 1 or more").with_code(2),
        );
    }
    if let Some(refused) = stored_task::too_many_runs(args.runs) {
        return Err(Failure::new(refused).with_code(2));
    }
    let request = stored_task::StoredRunRequest {
        id: args.id.clone(),
        runs: args.runs,
        user_overrides: Map::new(),
        sandbox: args.sandbox,
        keep: args.keep,
        stopping: crate::run::Stopping::BySignals(Some(crate::cli::run::on_signal)),
    };
    let watch = crate::cli::run::Watch {
        label: &args.id,
        dry_run: false,
        json: args.json,
        fail_under: args.fail_under,
        verbose,
        quiet: args.quiet,
    };
    watch.run(session, term, |out, observer| {
        // What `agent-env run` says of its state folder before it starts, said here too.
        for message in crate::run::bundle_warnings::before_stored_task_run(session) {
            observer.event(&crate::run::events::RunEvent::Warning {
                task_path: None,
                message,
            });
        }
        stored_task::run_stored_task(session, &request, out, observer)
    })
}
