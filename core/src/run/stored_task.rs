//! Stored tasks: task documents with bare (non-`@local`) ids kept in the configured document store, so
//! a team shares them, and their runs, which read and write only the configured stores (documents and
//! objects), so every machine pointed at the same stores sees the instances and what they wrote.
//!
//! A bundle run is the other kind: its ids are `@local` and everything it writes stays in the local
//! stores. The two never mix: a stored task may not name an `@local` id anywhere in its steps.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::bundle_run::{choose_sandbox_provider, start_plugin_steps, RunPlanContext};
use super::events::RunObserver;
use super::executor::NoPlugins;
use super::materialize::Places;
use super::plan::{self, Plan, PlannedTask, RunOfMany};
use super::plugin_steps::warn_noise;
use super::run_stores::RunStores;
use super::{run_planned, RunError, RunOptions, RunStatus};
use crate::bundle::ids::LOCAL_PREFIX;
use crate::bundle::{Bundle, BundleError, Task};
use crate::output::Output;
use crate::session::Session;
use crate::stores::{Document, StoreError, VersionedEntityStore};

/// The collection stored tasks live in (unique on `[id, version]`).
pub const TASKS: &str = "tasks";
/// The collection stored evals live in (`{id, version, tasks: [task ids]}`).
pub const EVALS: &str = "evals";
/// The collection of stored artifacts.
pub const ARTIFACTS: &str = "artifacts";

/// The most runs one `task run --runs N` makes. Every run is planned before the first starts, and
/// the run's events, its summary and its `--json` document name each one, so what a run holds grows
/// with N: ten million runs asked for (a typo, a script's unit mistake) ran the machine out of memory
/// before any started. A longer soak is several runs of this many.
pub const MAX_RUNS: usize = 10_000;

/// What `--runs N` asking for more than [`MAX_RUNS`] is told, or `None` when N is within it.
pub fn too_many_runs(runs: usize) -> Option<String> {
    (runs > MAX_RUNS).then(|| {
        format!(
            "--runs {runs}: at most {MAX_RUNS} runs in one run group (each run is planned before the first starts, and the summary names every one); for a longer soak, run it again"
        )
    })
}

/// A run of a stored task.
#[derive(Clone)]
pub struct StoredRunRequest {
    /// The task's bare id.
    pub id: String,
    /// How many times to run it (at least 1); the runs share one run group.
    pub runs: usize,
    /// `user_overrides` for every context.
    pub user_overrides: Map<String, Value>,
    /// The `--sandbox` fallback chain.
    pub sandbox: Option<String>,
    /// Keep the sandboxes up after the run, until Ctrl-C.
    pub keep: bool,
    /// How the run stops (by signals, for the CLI).
    pub stopping: super::Stopping,
}

/// The configured document and object stores, as a run writes to them.
pub(crate) fn configured_stores(session: &Session) -> Result<RunStores, RunError> {
    let stores = session.stores();
    let documents = stores.document().map_err(|e| {
        BundleError::one(format!("the configured document store can't be used: {e}"))
    })?;
    let objects = stores
        .object()
        .map_err(|e| BundleError::one(format!("the configured object store can't be used: {e}")))?;
    Ok(RunStores { documents, objects })
}

/// Which store the configured document store is, as the run's journal names it, so that a task's end
/// it keeps is written into this store alone. `None` when it cannot be told (the store was built, so
/// its settings read; a secret store that stopped answering since, say): the journal then names none,
/// and is taken for any configured store's, as journals written before they named theirs are.
fn configured_document_store(
    session: &Session,
) -> Option<crate::config::store_identity::StoreIdentity> {
    crate::config::store_identity::configured_identity(
        session.config(),
        crate::stores::StoreKind::Document,
        Some(session.stores().as_ref()),
    )
    .ok()
}

/// The first `@local` id anywhere in `value`, with where it is (`steps[0].artifact`).
fn local_reference(value: &Value, path: &str) -> Option<(String, String)> {
    match value {
        Value::String(s) if s.starts_with(LOCAL_PREFIX) => Some((s.clone(), path.to_string())),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| local_reference(v, &format!("{path}[{i}]"))),
        Value::Object(map) => map
            .iter()
            .find_map(|(k, v)| local_reference(v, &format!("{path}.{k}"))),
        _ => None,
    }
}

/// A one-task bundle around a stored task's steps, so it plans as a bundle's task does; its task's
/// name and id are in NFC, the form [`Bundle::task`] finds a task by.
fn as_bundle(id: &str, steps: Vec<Map<String, Value>>) -> Bundle {
    let id = crate::bundle::model::as_nfc(id);
    Bundle {
        display_root: String::new(),
        id_root: id.to_string(),
        description: None,
        artifacts: Vec::new(),
        tasks: vec![Task {
            name: id.to_string(),
            path: id.to_string(),
            id: id.to_string(),
            steps,
        }],
        evals: Vec::new(),
        builds: Vec::new(),
        aliases: Default::default(),
        ignored: Vec::new(),
        unread: Vec::new(),
        artifacts_unlisted: false,
    }
}

/// The id a task file in object form names (`{"id": ..., "steps": [...]}`, as `task get ID --json`
/// prints a stored task), when it names one.
pub fn id_of(text: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Named {
        id: String,
    }
    serde_json::from_str::<Named>(text)
        .ok()
        .map(|n| n.id)
        .filter(|id| !id.trim().is_empty())
}

/// The steps of a task file: a JSON array of step objects, or an object with a `steps` array.
pub fn steps_of(text: &str, file: &str) -> Result<Vec<Map<String, Value>>, BundleError> {
    use crate::bundle::task_json;
    let parsed = task_json::parse_all(text.as_bytes()).map_err(|e| {
        BundleError::one(format!(
            "{file}: {}",
            task_json::why_not_json(&e, text.as_bytes())
        ))
    })?;
    // Every key given twice, as a bundle run says them, with the file's other problems.
    let mut problems: Vec<String> = parsed
        .duplicates
        .iter()
        .map(|d| format!("{file}: {}", d.describe(&parsed.value)))
        .collect();
    let steps = match parsed.value {
        Value::Array(steps) => steps,
        Value::Object(mut doc) if doc.get("steps").is_some_and(Value::is_array) => {
            match doc.remove("steps") {
                Some(Value::Array(steps)) => steps,
                _ => Vec::new(),
            }
        }
        _ => {
            problems.push(format!(
                "{file}: a task file is an array of steps, or an object with a 'steps' array"
            ));
            return Err(BundleError::new(problems));
        }
    };
    // The checks a bundle's task file passes, so what is stored runs as that file would.
    let checked = crate::bundle::task_steps::check_steps(steps);
    problems.extend(checked.problems.iter().map(|p| format!("{file}: {p}")));
    match problems.is_empty() {
        true => Ok(checked.steps),
        false => Err(BundleError::new(problems)),
    }
}

/// What a put of a task did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PutTask {
    /// The version the task is stored as.
    pub version: i64,
    /// Whether that version was there already, with the same steps, so nothing was written.
    pub unchanged: bool,
}

/// Checks a stored task's id and steps (each step's type known, its fields right, no `@local` id named)
/// and writes it as the id's next version in the configured document store, unless the latest
/// version has the same steps (as planned: a step's defaults filled in), which it is then said to be.
/// An artifact a step loads is named by its id alone (a run loads its latest version), so the steps
/// are all there is to compare.
pub fn put_task(
    session: &Session,
    id: &str,
    steps: Vec<Map<String, Value>>,
) -> Result<PutTask, RunError> {
    if id.starts_with('@') {
        let what = if id.starts_with(LOCAL_PREFIX) {
            "an @local id (@local tasks live in bundles, run with agent-env run)".to_string()
        } else {
            "an id with the reserved '@' prefix".to_string()
        };
        return Err(BundleError::one(format!(
            "'{id}' is {what}; a stored task has a bare id, such as team/hello"
        ))
        .into());
    }
    // Kept in NFC, as every id is: `team/café` typed with a combining accent is the same task.
    let id = &crate::bundle::ids::bare_id(id).map_err(|problem| {
        BundleError::one(format!(
            "{problem}; a stored task's id is a path of names, such as team/hello (--id gives one)"
        ))
    })?;
    if let Some((local, path)) = local_reference(
        &Value::Array(steps.iter().cloned().map(Value::Object).collect()),
        "steps",
    ) {
        return Err(BundleError::one(format!(
            "'{id}' is not an @local id, so it can't reference one: {path} names an @local id ('{local}')"
        ))
        .into());
    }
    let stores = configured_stores(session)?;
    let bundle = as_bundle(id, steps);
    let ctx = RunPlanContext {
        stores: &stores,
        session,
        bare: true,
    };
    let plan = plan::plan(&bundle, &[id.to_string()], &[], &ctx)?;
    let planned = plan
        .tasks
        .first()
        .ok_or_else(|| BundleError::one(format!("internal: the task '{id}' did not plan")))?;
    let steps = Value::Array(planned.step_docs());
    if let Some(version) = same_latest_version(&stores, id, &steps)? {
        return Ok(PutTask {
            version,
            unchanged: true,
        });
    }
    let mut doc = Document::new();
    doc.insert("id".into(), json!(id));
    doc.insert("type".into(), json!("task"));
    doc.insert("steps".into(), steps);
    doc.insert("created_at_utc".into(), json!(crate::clock::iso_now()));
    Ok(PutTask {
        version: put_next_version(&stores, TASKS, &doc)?,
        unchanged: false,
    })
}

/// The latest stored version of the task `id`, when its steps are `steps`.
fn same_latest_version(
    stores: &RunStores,
    id: &str,
    steps: &Value,
) -> Result<Option<i64>, RunError> {
    let latest = latest_stored(stores, TASKS, id, "task")?;
    Ok(latest.and_then(|doc| {
        let same =
            doc.get("steps") == Some(steps) && doc.get("type").is_none_or(|t| t == &json!("task"));
        same.then(|| doc.get("version").and_then(Value::as_i64))
            .flatten()
    }))
}

/// The latest stored version of `id` in `collection` (its `what`: task, artifact), if any.
pub(super) fn latest_stored(
    stores: &RunStores,
    collection: &str,
    id: &str,
    what: &str,
) -> Result<Option<Document>, RunError> {
    let entities = VersionedEntityStore::new(stores.documents.clone(), collection, &[])
        .map_err(|e| BundleError::one(format!("the configured document store: {e}")))?;
    Ok(entities
        .get(id, None)
        .map_err(|e| BundleError::one(format!("reading the {what} '{id}': {e}")))?)
}

/// How many times a put races other writers for the next version before it gives up.
const PUT_TRIES: u32 = 10;

/// Writes `doc` as the next version of its id in `collection` of the configured document store,
/// racing other writers up to [`PUT_TRIES`] times; returns the version.
pub(crate) fn put_next_version(
    stores: &RunStores,
    collection: &str,
    doc: &Document,
) -> Result<i64, RunError> {
    let entities = VersionedEntityStore::new(stores.documents.clone(), collection, &[])
        .map_err(|e| BundleError::one(format!("the configured document store: {e}")))?;
    let id = doc.get("id").and_then(Value::as_str).unwrap_or_default();
    let what = collection.trim_end_matches('s');
    let version = entities.put(doc, PUT_TRIES).map_err(|e| {
        let advice = match e {
            StoreError::ConcurrentModification(_) => {
                "; other writers were putting the same id at once: run the command again"
            }
            _ => "",
        };
        BundleError::one(format!("writing the {what} '{id}': {e}{advice}"))
    })?;
    Ok(version)
}

/// A stored entity of `collection` in the configured stores: `version`, or the latest.
fn entity(
    stores: &RunStores,
    collection: &str,
    id: &str,
    version: Option<i64>,
) -> Result<Document, RunError> {
    let entities = VersionedEntityStore::new(stores.documents.clone(), collection, &[])
        .map_err(|e| BundleError::one(format!("the configured document store: {e}")))?;
    let what = collection.trim_end_matches('s');
    let found = entities
        .get(id, version)
        .map_err(|e| BundleError::one(format!("reading the {what} '{id}': {e}")))?;
    found.ok_or_else(|| {
        let which = version.map_or(String::new(), |v| format!(" v{v}"));
        // Another version of it, when one exists, is what the reader asked about.
        let newest = version
            .and_then(|_| entities.get(id, None).ok().flatten())
            .and_then(|d| d.get("version").and_then(Value::as_i64));
        let hint = match (newest, collection) {
            (Some(newest), _) => format!("; its newest version is v{newest}"),
            (None, _) if id.starts_with(LOCAL_PREFIX) => format!(
                "; an @local id names what a bundle run recorded, which the configured store does not hold: put {} there under a bare id (such as team/{}), or {}",
                crate::words::with_article(what),
                id.rsplit('/').next().unwrap_or(id),
                bundle_of_local_id(id)
            ),
            (None, TASKS) => format!(
                "; put one with agent-env task put FILE --id {}",
                crate::quote::word(id)
            ),
            (None, ARTIFACTS) => format!(
                "; put one with agent-env artifact put FOLDER --id {}",
                crate::quote::word(id)
            ),
            _ => String::new(),
        };
        RunError::NotStored(format!(
            "the configured document store has no {what} '{id}'{which}{hint}"
        ))
    })
}

/// A stored entity of `collection` (an eval, an artifact): its latest version, or `version`.
pub fn get_document(
    session: &Session,
    collection: &str,
    id: &str,
    version: Option<i64>,
) -> Result<Document, RunError> {
    entity(&configured_stores(session)?, collection, id, version)
}

/// A stored task's document: its latest version, or `version`.
pub fn get_task(session: &Session, id: &str, version: Option<i64>) -> Result<Document, RunError> {
    entity(&configured_stores(session)?, TASKS, id, version)
}

/// The step objects of a stored task's document.
pub fn task_steps(doc: &Document) -> Vec<Map<String, Value>> {
    doc.get("steps")
        .and_then(Value::as_array)
        .map(|steps| {
            steps
                .iter()
                .filter_map(|s| s.as_object().cloned())
                .collect()
        })
        .unwrap_or_default()
}

/// The steps of a stored task's document, checked as `task put` checks them now: a task stored
/// before a check was added (two steps of one id, a step without one) is refused with every problem
/// it has and how to store a corrected version, where it ran wrongly.
fn runnable_steps(
    id: &str,
    version: i64,
    doc: &Document,
) -> Result<Vec<Map<String, Value>>, BundleError> {
    let items = match doc.get("steps") {
        Some(Value::Array(items)) => items.clone(),
        _ => Vec::new(),
    };
    let checked = crate::bundle::task_steps::check_steps(items);
    if checked.problems.is_empty() {
        return Ok(checked.steps);
    }
    let fix = format!(
        "; put a corrected version with agent-env task put FILE --id {} (agent-env task get {} --json prints this one)",
        crate::quote::word(id),
        crate::quote::word(id)
    );
    Err(BundleError::new(
        checked
            .problems
            .iter()
            .map(|p| format!("the stored task '{id}' v{version} can't run: {p}{fix}"))
            .collect(),
    ))
}

/// Runs the latest version of a stored task `runs` times against the configured stores.
pub fn run_stored_task(
    session: &Session,
    request: &StoredRunRequest,
    out: &dyn Output,
    observer: Arc<dyn RunObserver>,
) -> Result<RunStatus, RunError> {
    if let Some(refused) = too_many_runs(request.runs) {
        return Err(BundleError::one(refused).into());
    }
    // Signals are watched from the start, as a bundle run watches them.
    let cancel = super::cancel_of(&request.stopping)?;
    let _store_stderr = super::plugin_steps::hear_store_stderr(observer.clone(), session);
    let config = session.config();
    let manifests = match config.path {
        Some(_) => session.manifests(),
        None => Vec::new(),
    };
    crate::config::check::preflight(config, None, &manifests, None)?;
    let stores = configured_stores(session)?;
    let task = entity(&stores, TASKS, &request.id, None)?;
    let version = task.get("version").and_then(Value::as_i64).unwrap_or(1);
    let bundle = as_bundle(&request.id, runnable_steps(&request.id, version, &task)?);
    let ctx = RunPlanContext {
        stores: &stores,
        session,
        bare: true,
    };
    let one = plan::plan(&bundle, std::slice::from_ref(&request.id), &[], &ctx)?;
    let planned: Vec<PlannedTask<'_>> = one.tasks;
    let runs = request.runs.max(1);
    // One copy of the planned task per run; several runs are told apart in the lines a person reads
    // (`[team/x, run 2] …`, and `team/x v1, run 2 of 3` in the summary), a single run keeps the
    // task's own name.
    let copies: Vec<(crate::bundle::Task, &PlannedTask<'_>, Option<RunOfMany>)> = (1..=runs)
        .flat_map(|run| {
            planned.iter().map(move |p| {
                let (path, run) = match runs {
                    1 => (p.task.path.clone(), None),
                    _ => (
                        format!("{}, run {run}", p.task.path),
                        Some(RunOfMany {
                            task_path: p.task.path.clone(),
                            number: run,
                            of: runs,
                        }),
                    ),
                };
                // The planned steps are what runs: the copy leaves out the steps as written.
                let task = crate::bundle::Task {
                    name: p.task.name.clone(),
                    path,
                    id: p.task.id.clone(),
                    steps: Vec::new(),
                };
                (task, p, run)
            })
        })
        .collect();
    let tasks: Vec<PlannedTask<'_>> = copies
        .iter()
        .map(|(task, p, run)| PlannedTask {
            task,
            steps: p.steps.clone(),
            run: run.clone(),
        })
        .collect();
    let plan = Plan {
        artifacts: Vec::new(),
        tasks,
        evals: Vec::new(),
        skipped: Vec::new(),
    };
    let sandbox_dir = session.paths().local_sandbox_dir();
    let sandbox_provider =
        choose_sandbox_provider(request.sandbox.as_deref(), session, &sandbox_dir)?;
    let plugins = start_plugin_steps(&bundle, &plan, &stores, session, observer.clone(), &cancel)?;
    if let Some(signal) = cancel.signal() {
        if let Some(p) = plugins {
            warn_noise(&p.shutdown(), observer.as_ref());
        }
        out.line(super::CANCELLED_BEFORE_TASKS);
        return Ok(RunStatus::Cancelled { signal });
    }
    let liveness = super::heartbeat::Liveness::for_run(session.env(), observer.as_ref());
    let options = RunOptions {
        dry_run: false,
        keep: request.keep,
        user_overrides: request.user_overrides.clone(),
        sandbox_provider,
        cancel,
        run_group_id: None,
        context_metadata: Map::new(),
        observer,
        pinned: Default::default(),
        liveness,
        places: Places {
            locks_dir: session.paths().locks_dir(),
            fixture_prefix: None,
            sandbox_dir,
            instances_in: super::liveness::InstancesIn::Configured,
            document_store: configured_document_store(session),
        },
    };
    let version_of = |_: &str| version;
    // What the task holds that its steps do not read, said once however many times it runs.
    super::say_task_notes(
        &plan.tasks[..plan.tasks.len().min(1)],
        false,
        options.observer.as_ref(),
        out,
    );
    let status = match &plugins {
        Some(p) => run_planned(
            &plan,
            &version_of,
            &request.id,
            &stores,
            p.as_ref(),
            &options,
            out,
        ),
        None => run_planned(
            &plan,
            &version_of,
            &request.id,
            &stores,
            &NoPlugins,
            &options,
            out,
        ),
    };
    if let Some(p) = plugins {
        warn_noise(&p.shutdown(), options.observer.as_ref());
    }
    status
}

/// How to get at the bundle an @local id came from: run its folder (`@local/~/…` under the home
/// folder, `@local/<absolute parts>`, when that folder is here), else copy the installed bundle
/// (`@local/<package>/<bundle>`).
fn bundle_of_local_id(id: &str) -> String {
    let root = id
        .strip_prefix(LOCAL_PREFIX)
        .and_then(|rest| rest.rsplit_once('/'))
        .map_or("", |(root, _)| root);
    // Quoted for pasting into a shell; `~/` stays outside the quotes, where the shell expands it.
    if let Some(under_home) = root.strip_prefix("~/") {
        return format!(
            "run the bundle it came from with agent-env run ~/{}",
            crate::quote::word(under_home)
        );
    }
    let folder = std::path::Path::new("/").join(root);
    if !root.is_empty() && folder.is_dir() {
        return format!(
            "run the bundle it came from with agent-env run {}",
            crate::quote::word(&folder.to_string_lossy())
        );
    }
    match root.split_once('/') {
        Some((package, name)) if !name.contains('/') => format!(
            "copy the bundle it came from with agent-env bundle init FOLDER --from-bundle {}",
            crate::quote::word(&format!("{package}/{name}"))
        ),
        _ => "run the bundle it came from with agent-env run FOLDER".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_at_local_id_leads_to_its_bundle() {
        assert_eq!(
            bundle_of_local_id("@local/agentenv-framework/hello/hello"),
            "copy the bundle it came from with agent-env bundle init FOLDER --from-bundle agentenv-framework/hello"
        );
        assert_eq!(
            bundle_of_local_id("@local/~/work/mine/t"),
            "run the bundle it came from with agent-env run ~/work/mine"
        );
        assert_eq!(
            bundle_of_local_id("@local/tmp/t"),
            "run the bundle it came from with agent-env run /tmp"
        );
        // A path a shell would split is quoted, so the command can be pasted.
        assert_eq!(
            bundle_of_local_id("@local/~/my bundles/b ü/t"),
            "run the bundle it came from with agent-env run ~/'my bundles/b ü'"
        );
        let spaced = tempfile::tempdir().unwrap();
        let folder = spaced.path().join("b ü");
        std::fs::create_dir(&folder).unwrap();
        let id = format!("@local{}/t", folder.display());
        assert_eq!(
            bundle_of_local_id(&id),
            format!(
                "run the bundle it came from with agent-env run '{}'",
                folder.display()
            )
        );
    }

    #[test]
    fn local_references_are_found_with_their_path() {
        let steps = json!([{"id": "a", "type": "load_artifact", "artifact": {"id": "@local/x/y"}}]);
        assert_eq!(
            local_reference(&steps, "steps"),
            Some(("@local/x/y".to_string(), "steps[0].artifact.id".to_string()))
        );
        assert_eq!(local_reference(&json!(["team/x"]), "steps"), None);
    }

    #[test]
    fn task_files_are_arrays_of_steps_or_objects_with_steps() {
        assert_eq!(
            steps_of(r#"[{"id": "a", "type": "t"}]"#, "f")
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            steps_of(r#"{"steps": [{"id": "a", "type": "t"}]}"#, "f")
                .unwrap()
                .len(),
            1
        );
        assert!(steps_of(r#"{"id": "a"}"#, "f").is_err());
        assert!(steps_of(r#"[1]"#, "f").is_err());
        assert_eq!(
            steps_of("[{\"id\": \"a\", \"type\": \"t\",\n  \"id\": \"b\"}, 2]", "f")
                .unwrap_err()
                .problems,
            [
                "f: step 1 ('b') has the key 'id' twice (line 2, column 3), and only the last would be read: keep the one you mean",
                "f: step 2 is 2, not a step object ({\"id\": …, \"type\": …})"
            ]
        );
    }
}
