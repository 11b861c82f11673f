//! `agent-env task …`: stored tasks and the instances runs recorded.
//!
//! - `task put FILE…` writes task files as stored tasks (bare ids) to the configured document store, and
//!   `task run ID` runs one against the configured stores, so every machine sharing them sees the results;
//! - `task list` and `task get-instance ID` show the instances past runs recorded, newest first: a bundle
//!   run's in the local store (`<state root>/document_store/local.db`), a stored task's in the configured
//!   document store.

use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};

use super::{Exit, Failure, Terminal};
use crate::run::builtin_steps::verify_sandbox;
use crate::run::recorded::{newest_started_first, InstanceScores, Recorded};
use crate::run::recorder::{short_id, INSTANCES};
use crate::run::stored_task;
use crate::session::Session;
use crate::stores::{Document, DocumentStore, Filter, Sort};

#[derive(Args)]
pub struct TaskArgs {
    #[command(subcommand)]
    pub command: TaskCommand,
}

#[derive(Subcommand)]
pub enum TaskCommand {
    /// Store task files (JSON arrays of steps) in the configured document store, each as a new version.
    Put(PutArgs),
    /// Run a stored task against the configured stores; its instances and objects go there.
    Run(RunTaskArgs),
    /// Show a stored task: its latest version (or the one asked for) and its steps.
    Get(GetTaskArgs),
    /// List the instances of one task (a stored task's id, or a bundle task's name or id), newest first.
    Instances(InstancesArgs),
    /// List the task instances past runs recorded, newest first.
    List(ListArgs),
    /// Show one task instance: status, scores, steps with their timings, the error.
    GetInstance(GetArgs),
}

#[derive(Args)]
pub struct PutArgs {
    /// Task files: a JSON array of steps, or an object with a `steps` array.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<std::path::PathBuf>,
    /// The task's id (a bare id, such as team/hello); with one file only. Default: the `id` of a
    /// file in object form (as `task get ID --json` prints one), else the file's name without `.json`.
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
}

#[derive(Args)]
pub struct RunTaskArgs {
    /// The stored task's id, as `task put` printed it.
    pub id: String,
    /// Run it this many times, in one run group (at most four at once).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub runs: usize,
    /// The sandbox provider (a comma-separated fallback chain); default: the config's `[sandbox] default`, else the built-in `local`.
    #[arg(long, value_name = "PROVIDER")]
    pub sandbox: Option<String>,
    /// Keep the sandboxes up after the run, until Ctrl-C.
    #[arg(long)]
    pub keep: bool,
    /// Print the run as one JSON document on stdout (progress still goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// Exit 3 when a run scores below this (a run with no score counts as below).
    #[arg(long, value_name = "SCORE")]
    pub fail_under: Option<f64>,
    /// Leave out the line per step: print how each run ended (and why below 1) and the summary.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Args)]
pub struct GetTaskArgs {
    /// The stored task's id.
    pub id: String,
    /// This version instead of the latest.
    #[arg(long, value_name = "N")]
    pub version: Option<i64>,
    /// Print the task document as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct InstancesArgs {
    /// The task: a stored task's id, or a bundle task's name or id.
    pub id: String,
    /// At most this many (0: all).
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub limit: usize,
    /// Print JSON for a script instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct ListArgs {
    /// Only instances of this bundle: its name (`hello`), the end of its folder path, or the folder as
    /// `run` was given it (`./my-bundle`, `~/bundles/b`).
    #[arg(long, value_name = "BUNDLE")]
    pub bundle: Option<String>,
    /// Only instances of this task (its name, e.g. `hello`, or its full id).
    #[arg(long, value_name = "TASK")]
    pub task: Option<String>,
    /// At most this many (0: all).
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub limit: usize,
    /// Print JSON for a script instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct GetArgs {
    /// The instance id as `run` and `task list` print it (the part after the last `/` is enough when
    /// it is unique).
    pub instance: String,
    /// Print the whole instance document as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: TaskArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    match args.command {
        TaskCommand::Put(args) => put(args, session, term),
        TaskCommand::Run(args) => run_stored(args, verbose, session, term),
        TaskCommand::Get(args) => get_task(args, session, term),
        TaskCommand::Instances(args) => {
            let none = format!(
                "No instances of '{id}' recorded yet. Run it with agent-env task run {id} (a stored task), or run its bundle with agent-env run BUNDLE.\n",
                id = args.id
            );
            list(
                ListArgs {
                    bundle: None,
                    task: Some(args.id),
                    limit: args.limit,
                    json: args.json,
                },
                &instance_sources(session, term),
                None,
                |_, _| none.clone(),
                term,
            )
        }
        TaskCommand::List(args) => list(
            args,
            &instance_sources(session, term),
            session.paths().home_dir().as_deref(),
            none_listed,
            term,
        ),
        TaskCommand::GetInstance(args) => get(args, &instance_sources(session, term), term),
    }
}

/// What a list says when it found nothing here and the configured document store could not be read.
const NONE_READABLE: &str = "None found in the local store; the configured document store, where stored tasks' runs are recorded, can't be read (see the warning above), so its instances are not listed. Check it with agent-env config check.\n";

/// What `task list` says when it lists nothing: that nothing is recorded, or that nothing matches.
fn none_listed(recorded: usize, args: &ListArgs) -> String {
    if recorded == 0 || (args.bundle.is_none() && args.task.is_none()) {
        return "No task instances recorded yet. Run a bundle with agent-env run NAME.\n"
            .to_string();
    }
    let mut asked = String::new();
    if let Some(b) = &args.bundle {
        asked.push_str(&format!(" --bundle {b}"));
    }
    if let Some(t) = &args.task {
        asked.push_str(&format!(" --task {t}"));
    }
    format!(
        "None of the {recorded} recorded task instances matches{asked}; agent-env task list shows them all.\n"
    )
}

/// Where instances are recorded: the local store (bundle runs), then the configured document store
/// (stored tasks' runs), with what a reader should know about them: a configured store that cannot be
/// used (left out), and runs that ended without finishing. Each warning is printed on stderr here; a
/// `--json` document carries them too.
struct Sources {
    recorded: Recorded,
    warnings: Vec<String>,
}

fn instance_sources(session: &Session, term: &Terminal) -> Sources {
    let recorded = Recorded::open(session);
    let mut warnings: Vec<String> = recorded.left_out().map(String::from).into_iter().collect();
    let dead = crate::run::liveness::dead_runs(&session.paths().locks_dir());
    let killed = dead.iter().filter(|run| !run.ended).count();
    let unrecorded = dead.len() - killed;
    let they = |n: usize| {
        if n == 1 {
            ("run", "it")
        } else {
            ("runs", "they")
        }
    };
    // Which command's run marks them: one writing to the store their instances are in.
    let marked_by = |ended: bool| {
        crate::run::liveness::either_of(
            dead.iter()
                .filter(|run| run.ended == ended)
                .map(crate::run::liveness::DeadRun::marked_by),
        )
    };
    if killed > 0 {
        let (runs, they) = they(killed);
        let by = marked_by(false);
        warnings.push(format!(
            "{killed} earlier {runs} ended without finishing (agent-env was killed, or its machine stopped): the task instances {they} left show as running until the next {by} marks them failed and removes the sandboxes {they} left"
        ));
    }
    if unrecorded > 0 {
        let (runs, they) = they(unrecorded);
        let by = marked_by(true);
        warnings.push(format!(
            "{unrecorded} earlier {runs} could not write the end of some tasks to the document store: those task instances show as running until the next {by} marks them failed (once the store takes writes); {they} said why when {they} ran"
        ));
    }
    for warning in &warnings {
        term.warn(warning.clone());
    }
    Sources { recorded, warnings }
}

fn put(args: PutArgs, session: &Session, term: &Terminal) -> Exit {
    if args.id.is_some() && args.files.len() > 1 {
        return Err(Failure::new("--id names one task: give one FILE with it").with_code(2));
    }
    for file in &args.files {
        let shown = file.display().to_string();
        let text = std::fs::read_to_string(file)
            .map_err(|e| Failure::new(format!("can't read {shown}: {e}")))?;
        // A byte order mark (some editors write one) is not part of the JSON, as in a bundle.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let steps = stored_task::steps_of(text, &shown).map_err(|e| Failure::new(e.to_string()))?;
        // `--id`, else the id a stored task's document names (`task get ID --json` prints one), else
        // the file's name.
        let id = match (args.id.clone(), stored_task::id_of(text)) {
            (Some(id), _) | (None, Some(id)) => id,
            (None, None) => file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        let version = stored_task::put_task(session, &id, steps)
            .map_err(|e| Failure::new(format!("{shown}: {e}")))?;
        term.print(&format!("{id}: v{version}\n"));
    }
    Ok(0)
}

fn get_task(args: GetTaskArgs, session: &Session, term: &Terminal) -> Exit {
    let doc = stored_task::get_task(session, &args.id, args.version)
        .map_err(|e| Failure::new(e.to_string()))?;
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
    out.push_str(&format!(
        "Run it with agent-env task run {}.\n",
        text(&doc, "id")
    ));
    term.print(&out);
    Ok(0)
}

fn run_stored(args: RunTaskArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    if args.runs == 0 {
        return Err(
            Failure::new("--runs 0: give how many times to run it, 1 or more").with_code(2),
        );
    }
    let request = stored_task::StoredRunRequest {
        id: args.id.clone(),
        runs: args.runs,
        user_overrides: Map::new(),
        sandbox: args.sandbox,
        keep: args.keep,
        on_signal: Some(super::run::on_signal),
    };
    let watch = super::run::Watch {
        label: &args.id,
        dry_run: false,
        json: args.json,
        fail_under: args.fail_under,
        verbose,
        quiet: args.quiet,
    };
    watch.run(session, term, |out, observer| {
        stored_task::run_stored_task(session, &request, out, observer)
    })
}

/// The recorded instances `keep` keeps, newest first, at most `up_to` of them (all with `None`).
/// A list of N reads N first and holds only what it keeps: an instance can be tens of megabytes (a
/// verifier's rows), and `task list --limit 1` read and held every one. When a filter leaves it
/// short, it reads pages twice as large each time, so the reads stay about twice the instances (a
/// store windows a sorted page only after reading what it sorts). A whole list is one read.
fn newest_instances(
    sources: &Recorded,
    keep: impl Fn(&Document) -> bool,
    up_to: Option<usize>,
) -> Result<Vec<Document>, Failure> {
    let read_error = |e: crate::stores::StoreError| {
        Failure::new(format!("cannot read the recorded task instances: {e}"))
    };
    let Some(wanted) = up_to else {
        let mut all = sources
            .query(INSTANCES, &Filter::all(), None, None, 0)
            .map_err(read_error)?;
        all.retain(|d| keep(d));
        all.sort_by(newest_started_first);
        return Ok(all);
    };
    let newest_first = Sort::by("started_at_utc", true);
    let mut page = wanted.max(1);
    let mut offset = 0;
    let mut kept = Vec::new();
    loop {
        let batch = sources
            .query(
                INSTANCES,
                &Filter::all(),
                Some(&newest_first),
                Some(page),
                offset,
            )
            .map_err(read_error)?;
        let read = batch.len();
        kept.extend(batch.into_iter().filter(|d| keep(d)));
        if kept.len() >= wanted || read < page {
            break;
        }
        offset += read;
        page = page.saturating_mul(2);
    }
    // The stores each sort; their merge is sorted again the way a list shows it.
    kept.sort_by(newest_started_first);
    kept.truncate(wanted);
    Ok(kept)
}

fn text<'a>(doc: &'a Document, key: &str) -> &'a str {
    doc.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `@local/<bundle>/<task>`: the bundle part and the task's name.
fn split_task_id(task_id: &str) -> (&str, &str) {
    let bare = task_id.strip_prefix("@local/").unwrap_or(task_id);
    match bare.rsplit_once('/') {
        Some((bundle, name)) => (bundle, name),
        None => ("", bare),
    }
}

/// Which bundle's instances `--bundle` asks for.
enum BundleFilter {
    /// A folder as `run` was given it (`./b`, `~/b`, `/abs/b`): its id root, without `@local/`.
    Folder(String),
    /// A name or the end of a folder path (`hello`, `team/b`).
    Name(String),
}

impl BundleFilter {
    fn new(text: &str, home: Option<&std::path::Path>) -> BundleFilter {
        let folder = crate::bundle::as_folder(text, home)
            .and_then(Result::ok)
            .map(|canonical| crate::bundle::ids::folder_id_root(&canonical, home));
        match folder {
            Some(root) => {
                BundleFilter::Folder(root.strip_prefix("@local/").unwrap_or(&root).to_string())
            }
            None => BundleFilter::Name(text.trim_end_matches('/').to_string()),
        }
    }

    fn admits(&self, bundle: &str) -> bool {
        match self {
            BundleFilter::Folder(root) => bundle == root,
            BundleFilter::Name(b) => bundle == b || bundle.ends_with(&format!("/{b}")),
        }
    }
}

fn matches(doc: &Document, args: &ListArgs, bundle_filter: Option<&BundleFilter>) -> bool {
    let task_id = text(doc, "task_id");
    let (bundle, name) = split_task_id(task_id);
    let bundle_ok = bundle_filter.is_none_or(|f| f.admits(bundle));
    // The name, the whole id, the id as the TASK column shows it (without `@local/`), or its end
    // from a `/` on (`slow/s01` of `@local/~/work/slow/s01`).
    let task_ok = args
        .task
        .as_deref()
        .is_none_or(|t| names_task(t, task_id, name));
    bundle_ok && task_ok
}

/// Whether `asked` names the task `task_id` (whose name is `name`): the name, the whole id, the id as
/// the TASK column shows it (without `@local/`), or its end from a `/` on (`slow/s01` of
/// `@local/~/work/slow/s01`).
fn names_task(asked: &str, task_id: &str, name: &str) -> bool {
    name == asked
        || task_id == asked
        || task_id.strip_prefix("@local/") == Some(asked)
        || task_id.ends_with(&format!("/{asked}"))
}

/// The ids of the stored tasks (of any version) `asked` names, sorted: a typo (none) is told apart
/// from a task that has not run yet, and a name several tasks share is counted whole.
fn tasks_named(sources: &Recorded, asked: &str) -> Result<Vec<String>, Failure> {
    let tasks = sources
        .query(
            crate::run::stored_task::TASKS,
            &Filter::all(),
            None,
            None,
            0,
        )
        .map_err(|e| Failure::new(format!("cannot read the stored tasks: {e}")))?;
    let mut ids: Vec<String> = tasks
        .iter()
        .map(|t| text(t, "id"))
        .filter(|id| names_task(asked, id, split_task_id(id).1))
        .map(str::to_string)
        .collect();
    ids.sort();
    ids.dedup();
    Ok(ids)
}

fn scores_text(scores: &Map<String, Value>) -> String {
    if scores.is_empty() {
        return "-".into();
    }
    scores
        .iter()
        .map(|(id, s)| format!("{id}: {}", score_text(s)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// As `agent-env run` shows a score.
fn score_text(score: &Value) -> String {
    match score.as_f64() {
        Some(f) => crate::run::outcome::format_g(f),
        None => score.to_string(),
    }
}

fn summary(doc: &Document, scores: &InstanceScores<'_>) -> Value {
    json!({
        "instance_id": text(doc, "instance_id"),
        "task_id": text(doc, "task_id"),
        "task_version": doc.get("task_version").cloned().unwrap_or(Value::Null),
        "status": text(doc, "status"),
        "scores": scores.of(doc),
        "started_at_utc": text(doc, "started_at_utc"),
        "completed_at_utc": doc.get("completed_at_utc").cloned().unwrap_or(Value::Null),
        "ended_at_utc": doc.get("ended_at_utc").cloned().unwrap_or(Value::Null),
        "run_group_id": doc.get("context").and_then(|c| c.get("metadata")).and_then(|m| m.get("run_group_id")).cloned().unwrap_or(Value::Null),
    })
}

/// Lists the instances `args` selects, newest first; `none` is what a person reads when there are none.
fn list(
    args: ListArgs,
    Sources {
        recorded: sources,
        warnings,
    }: &Sources,
    home: Option<&std::path::Path>,
    none: impl Fn(usize, &ListArgs) -> String,
    term: &Terminal,
) -> Exit {
    // Names are recorded in NFC, as a bundle's file names are read.
    let args = ListArgs {
        task: args
            .task
            .map(|t| crate::bundle::model::as_nfc(&t).into_owned()),
        ..args
    };
    let bundle_filter = args.bundle.as_deref().map(|b| BundleFilter::new(b, home));
    let found = newest_instances(
        sources,
        |d| matches(d, &args, bundle_filter.as_ref()),
        (args.limit > 0).then_some(args.limit),
    )?;
    // A name several bundles' tasks share lists them all: said, with how to name one alone (all of
    // them, when `--limit` may have cut some off).
    if let Some(asked) = &args.task {
        let mut tasks: Vec<String> = found
            .iter()
            .map(|d| text(d, "task_id").to_string())
            .collect();
        if args.limit > 0 && found.len() >= args.limit {
            tasks.extend(tasks_named(sources, asked)?);
        }
        tasks.sort();
        tasks.dedup();
        if tasks.len() > 1 {
            term.warn(format!(
                "'{asked}' names {} tasks ({}); give more of an id, such as {}, to list one alone",
                tasks.len(),
                tasks.join(", "),
                tasks[0].strip_prefix("@local/").unwrap_or(&tasks[0])
            ));
        }
    }
    // A task name that names no task at all (a typo) is an error, not an empty list.
    if let Some(asked) = args.task.as_deref() {
        if found.is_empty()
            && sources.left_out().is_none()
            && tasks_named(sources, asked)?.is_empty()
        {
            return Err(Failure::new(format!(
                "no task '{asked}' is recorded in the local or the configured document store; agent-env task list shows the tasks that ran"
            )));
        }
    }
    let scores = InstanceScores::new(sources);
    if args.json {
        let rows: Vec<Value> = found.iter().map(|d| summary(d, &scores)).collect();
        let mut doc = json!({"format_version": 1, "instances": rows});
        // Present only when there are some: a script can tell "no runs" from "a store left out".
        if !warnings.is_empty() {
            doc["warnings"] = json!(warnings);
        }
        term.print(&format!("{}\n", pretty(&doc)));
        return Ok(0);
    }
    if found.is_empty() {
        // Not "nothing recorded": what the store left out may hold them.
        if sources.left_out().is_some() {
            term.print(NONE_READABLE);
            return Ok(0);
        }
        let recorded = sources.count(INSTANCES, &Filter::all()).unwrap_or(0);
        term.print(&none(recorded as usize, &args));
        return Ok(0);
    }
    let rows: Vec<[String; 5]> = found
        .iter()
        .map(|d| {
            let task_id = text(d, "task_id");
            [
                short_id(text(d, "instance_id")).to_string(),
                text(d, "status").to_string(),
                scores_text(&scores.of(d)),
                format!(
                    "{} v{}",
                    task_id.strip_prefix("@local/").unwrap_or(task_id),
                    d.get("task_version").and_then(Value::as_i64).unwrap_or(0)
                ),
                text(d, "started_at_utc").to_string(),
            ]
        })
        .collect();
    let header = ["INSTANCE", "STATUS", "SCORES", "TASK", "STARTED"];
    let table: Vec<[String; 5]> = std::iter::once(header.map(str::to_string))
        .chain(rows)
        .collect();
    let mut out = String::new();
    for line in crate::table::lines(&table) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("Show one with agent-env task get-instance INSTANCE.\n");
    term.print(&out);
    Ok(0)
}

fn get(
    args: GetArgs,
    Sources {
        recorded: sources, ..
    }: &Sources,
    term: &Terminal,
) -> Exit {
    let wanted = crate::bundle::model::as_nfc(args.instance.trim());
    let wanted = wanted.as_ref();
    // The whole id is looked up; the short form (its end) is looked for among them all.
    let exact = sources
        .query(
            INSTANCES,
            &Filter::eq("instance_id", wanted),
            None,
            Some(2),
            0,
        )
        .map_err(|e| Failure::new(format!("cannot read the recorded task instances: {e}")))?;
    let candidates = if exact.is_empty() && crate::run::short_ids::is_short(wanted) {
        let mut found = crate::run::short_ids::ending_in(sources, wanted, None)
            .map_err(|e| Failure::new(format!("cannot read the recorded task instances: {e}")))?;
        found.sort_by(newest_started_first);
        found
    } else {
        exact
    };
    let doc = match candidates.as_slice() {
        [one] => one,
        [] => {
            // Why the configured store was left out, said here too: a script reads only this.
            return Err(Failure::new(match sources.left_out() {
                Some(why) => format!(
                    "no task instance '{wanted}' in the local document store, and {why}; agent-env config check says what is wrong with it"
                ),
                None => format!(
                    "no task instance '{wanted}' in the local or the configured document store; agent-env task list shows the recorded ones"
                ),
            }));
        }
        many => {
            let ids: Vec<&str> = many.iter().map(|d| text(d, "instance_id")).collect();
            return Err(Failure::new(format!(
                "'{wanted}' names {} instances ({}); give the whole id",
                many.len(),
                ids.join(", ")
            ))
            .with_code(2));
        }
    };
    if args.json {
        term.print(&format!("{}\n", pretty(&Value::Object(doc.clone()))));
        return Ok(0);
    }
    term.print(&describe(doc, &InstanceScores::new(sources)));
    Ok(0)
}

/// Each verification's criteria: whether each passed and, when not, why.
fn checks(doc: &Document) -> String {
    let verifications = doc
        .get("context")
        .and_then(|c| c.get("metadata"))
        .and_then(|m| m.get("verifications"))
        .and_then(Value::as_object);
    let mut out = String::new();
    for (verifier, verification) in verifications.into_iter().flatten() {
        let Some(rows) = verification.get("results").and_then(Value::as_array) else {
            continue;
        };
        // Named by its verifier, which the scores line (by step) does not show.
        out.push_str(&format!("checks (verifier {verifier}):\n"));
        for (position, row) in rows.iter().enumerate() {
            // Counted from 1, as people count; a row with no index (a plugin's) by its place.
            let name = match verify_sandbox::criterion_of(row) {
                verify_sandbox::CriterionName::Named(c) => c.to_string(),
                verify_sandbox::CriterionName::Numbered(i) if i >= 0 => {
                    format!("criterion {}", i + 1)
                }
                verify_sandbox::CriterionName::Numbered(_) => format!("criterion {}", position + 1),
            };
            let why = row
                .get("justification")
                .and_then(Value::as_str)
                .unwrap_or("");
            let verdict = match criterion_passed(row) {
                Some(true) => "passed".to_string(),
                Some(false) => format!("did not pass: {}", verify_sandbox::one_line(why)),
                None => format!("skipped: {}", verify_sandbox::one_line(why)),
            };
            out.push_str(&format!("  {name}: {verdict}\n"));
        }
    }
    out
}

/// The human view of one instance.
fn describe(doc: &Document, scores: &InstanceScores<'_>) -> String {
    let mut out = String::new();
    let mut line = |label: &str, value: String| {
        out.push_str(&format!("{label:<11}{value}\n"));
    };
    line("instance:", text(doc, "instance_id").to_string());
    line(
        "task:",
        format!(
            "{} v{}",
            text(doc, "task_id"),
            doc.get("task_version").and_then(Value::as_i64).unwrap_or(0)
        ),
    );
    line("status:", text(doc, "status").to_string());
    line("scores:", scores_text(&scores.of(doc)));
    line("started:", text(doc, "started_at_utc").to_string());
    let ended = doc.get("ended_at_utc").and_then(Value::as_str);
    let completed = doc.get("completed_at_utc").and_then(Value::as_str);
    match (ended, completed) {
        // A failed or cancelled instance ended; it did not complete.
        (Some(done), _) => {
            let label = match text(doc, "status") {
                "completed" => "completed:",
                _ => "ended:",
            };
            line(label, done.to_string());
        }
        // Only the minute: a later run found it ended (its own end was not written) and marked it.
        (None, Some(marked)) if crate::run::liveness::marked_by_a_later_run(doc) => line(
            "ended:",
            format!("unknown; a later run marked it failed at {marked}"),
        ),
        // An instance the Python agent-env recorded has the minute alone.
        (None, Some(done)) => line(
            if text(doc, "status") == "completed" {
                "completed:"
            } else {
                "ended:"
            },
            done.to_string(),
        ),
        (None, None) => {}
    }
    if let Some(error) = doc.get("error").filter(|e| !e.is_null()) {
        line(
            "error:",
            error
                .as_str()
                .map_or_else(|| error.to_string(), str::to_string),
        );
    }
    let objects: Vec<&str> = doc
        .get("objects")
        .and_then(Value::as_array)
        .map(|o| o.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !objects.is_empty() {
        out.push_str(&format!("objects ({}):\n", objects.len()));
        for url in objects {
            out.push_str(&format!("  {url}\n"));
        }
    }
    out.push_str(&checks(doc));
    let total = doc.get("total_steps").and_then(Value::as_u64).unwrap_or(0);
    let completed = doc
        .get("completed_steps")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let id_of = |step: &Value| {
        step.get("step_id")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    // A retried step has a row per attempt: numbered, so the rows add up.
    let attempts_of = |id: &str| completed.iter().filter(|s| id_of(s) == id).count();
    if completed.len() as u64 > total {
        out.push_str(&format!(
            "steps ({total}; {} attempts, with retries):\n",
            completed.len()
        ));
    } else {
        out.push_str(&format!("steps ({total}):\n"));
    }
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for step in &completed {
        let id = id_of(step);
        let took = step
            .get("duration_seconds")
            .and_then(Value::as_f64)
            .map(|s| format!(" in {s:.2}s"))
            .unwrap_or_default();
        let attempt = seen.entry(id.clone()).or_insert(0);
        *attempt += 1;
        let of = attempts_of(&id);
        let numbered = if of > 1 {
            format!(" (attempt {attempt} of {of})")
        } else {
            String::new()
        };
        out.push_str(&format!(
            "  {id} {}{took}{numbered}\n",
            step.get("status").and_then(Value::as_str).unwrap_or("?"),
        ));
    }
    let failed = doc
        .get("context")
        .and_then(|c| c.get("metadata"))
        .and_then(|m| m.get("failed_steps"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for f in &failed {
        let retried = f.get("retried").and_then(Value::as_bool) == Some(true);
        out.push_str(&format!(
            "failed step {}{}: {}: {}\n",
            f.get("step_id").and_then(Value::as_str).unwrap_or("?"),
            if retried { " (retried)" } else { "" },
            f.get("error_type")
                .and_then(Value::as_str)
                .unwrap_or("Error"),
            f.get("error").and_then(Value::as_str).unwrap_or(""),
        ));
        if let Some(tb) = f.get("traceback").and_then(Value::as_str) {
            for l in tb.lines() {
                out.push_str(&format!("    {l}\n"));
            }
        }
    }
    out
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// Whether a result row passed; `None` when it was skipped. A row says so by `result` (`true` /
/// `false`, or a plugin's `"pass"` / `"fail"`), else by `skipped`, else by its `score`.
fn criterion_passed(row: &Value) -> Option<bool> {
    match row.get("result") {
        Some(Value::Bool(passed)) => Some(*passed),
        Some(Value::String(s)) if matches!(s.as_str(), "pass" | "passed") => Some(true),
        Some(Value::String(s)) if matches!(s.as_str(), "fail" | "failed") => Some(false),
        _ if row.get("skipped").and_then(Value::as_bool) == Some(true) => None,
        _ => row.get("score").and_then(Value::as_f64).map(|s| s >= 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_passes_by_its_result_then_by_skipped_then_by_its_score() {
        for (row, passed) in [
            (json!({"result": true}), Some(true)),
            (json!({"result": false, "score": 1.0}), Some(false)),
            (json!({"result": "pass"}), Some(true)),
            (json!({"result": "fail"}), Some(false)),
            (json!({"result": null, "skipped": true, "score": 1.0}), None),
            (json!({"skipped": false, "score": 1.0}), Some(true)),
            (json!({"score": 0.5}), Some(false)),
            (json!({}), None),
        ] {
            assert_eq!(criterion_passed(&row), passed, "{row}");
        }
    }

    /// Read a page at a time from two stores, the newest kept ones come back in order, however many
    /// pages it takes to find them.
    #[test]
    fn the_newest_kept_instances_are_found_across_pages_and_stores() {
        use crate::stores::local::LocalSqliteDocumentStore;
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let a = LocalSqliteDocumentStore::new(dir.path().join("a.db"));
        let b = LocalSqliteDocumentStore::new(dir.path().join("b.db"));
        for n in 0..300 {
            let store = if n % 3 == 0 { &b } else { &a };
            let doc = json!({"instance_id": format!("t-{n:03}"), "task_id": if n < 5 { "old" } else { "new" },
                "started_at_utc": format!("2026-01-01T00:{:02}:{:02}.000000Z", n / 60, n % 60)});
            store.insert(INSTANCES, doc.as_object().unwrap()).unwrap();
        }
        let sources = Recorded::of(vec![Arc::new(a), Arc::new(b)]);
        let ids = |docs: Vec<Document>| -> Vec<String> {
            docs.iter()
                .map(|d| text(d, "instance_id").to_string())
                .collect()
        };
        let newest = newest_instances(&sources, |_| true, Some(3)).unwrap();
        assert_eq!(ids(newest), ["t-299", "t-298", "t-297"]);
        // The old ones are beyond the first pages.
        let old = newest_instances(&sources, |d| text(d, "task_id") == "old", Some(2)).unwrap();
        assert_eq!(ids(old), ["t-004", "t-003"]);
        let every = newest_instances(&sources, |_| true, None).unwrap();
        assert_eq!(every.len(), 300);
    }
}
