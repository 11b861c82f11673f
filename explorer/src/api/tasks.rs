//! The run routes under `/api/v1/tasks/{task_id}` (start one run or a group, cancel, list runs,
//! instances and run groups, progress) and the instance routes under `/api/v1/task-instances`.

use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::extract::{json_body, Ids, TaskIds, Q};
use super::group_runs::RunsPage;
use crate::data::entities::{self, COLLECTIONS};
use crate::data::instances::{self, InstanceFilter, Judge, Listed, Paging, Shape, Verdict};
use crate::data::records::{DocumentStores, Reading};
use crate::data::runs_here::workflow_of;
use crate::data::state_folder;
use crate::http::blocking::{blocking, blocking_scan};
use crate::http::page::{Page, Window};
use crate::http::problem::{ApiError, ApiResult};
use crate::http::shown::shown;
use crate::runs::bundles::{source_of, steps_now, unrun_task, version_now, TaskSource};
use crate::runs::manager::{self, Phase, StartSpec, Workflow, WORKFLOW_KEY};
use crate::runs::pin::Pin;
use crate::runs::seed_tokens;
use crate::runs::RunManager;
use crate::state::{AppState, Shared};
use agent_env::run::plan::seed_in_shell;
use agent_env_store::document::{DocumentStore, Filter, Predicate};

/// The first version of a task: a `version` below it names none.
pub const FIRST_VERSION: i64 = 1;

/// The most runs one request may start.
pub const MAX_RUNS_PER_REQUEST: usize = 100;

/// How long starting one run that has a free slot waits for its instance to be recorded before
/// answering without it.
const INSTANCE_WAIT: Duration = Duration::from_secs(30);

/// `POST /tasks/{task_id}/run`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunBody {
    pub version: Option<i64>,
    pub agent_model: Option<String>,
    pub user_model: Option<String>,
    pub judge_model: Option<String>,
    pub agent_artifact_id: Option<String>,
    pub seed: Option<Map<String, Value>>,
}

/// `POST /tasks/{task_id}/runs`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupBody {
    pub version: Option<i64>,
    pub agent_model: Option<String>,
    pub user_model: Option<String>,
    pub judge_model: Option<String>,
    pub agent_artifact_id: Option<String>,
    pub count: Option<i64>,
    pub seeds: Option<Vec<Value>>,
}

/// `POST /tasks/{task_id}/cancel-run`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CancelBody {
    pub workflow_id: Option<String>,
    pub instance_id: Option<String>,
    pub run_group_id: Option<String>,
}

/// The longest model or agent name a run takes: a name, not a document (each run records it, so a
/// megabyte of it was written into every instance a request started).
pub const MAX_NAME_CHARS: usize = 256;

/// The `user_overrides` a run's models and agent become, as `agent-env run --model …` sets them;
/// 422 naming the field when one is longer than [`MAX_NAME_CHARS`]. `agent` is the body's field
/// naming the agent and its value.
pub fn overrides(
    agent_model: &Option<String>,
    user_model: &Option<String>,
    judge_model: &Option<String>,
    agent: (&str, &Option<String>),
) -> ApiResult<Map<String, Value>> {
    let mut o = Map::new();
    for (key, field, value) in [
        ("agent_model", "agent_model", agent_model),
        ("user_model", "user_model", user_model),
        ("judge_model", "judge_model", judge_model),
        ("agent", agent.0, agent.1),
    ] {
        if let Some(v) = value {
            if v.chars().count() > MAX_NAME_CHARS {
                return Err(ApiError::invalid(
                    &["body", field],
                    format!("String should have at most {MAX_NAME_CHARS} characters"),
                    "string_too_long",
                ));
            }
            o.insert(key.into(), json!(v));
        }
    }
    Ok(o)
}

/// The task document (`version`, else the newest); 404 `Task '<id>' … not found`.
async fn task_doc(s: &Shared, task_id: &str, version: Option<i64>) -> ApiResult<Value> {
    let s = s.clone();
    let id = task_id.to_string();
    blocking(move || {
        let r = s.reading();
        r.document(entities::get(r.docs(), COLLECTIONS[2], &id, version))
    })
    .await
}

/// 404 naming `agent_artifact_id` when no artifact of that id is stored: a run would go on without
/// it, recording the id only among its `user_overrides`.
async fn require_agent_artifact(s: &Shared, agent_artifact_id: Option<&str>) -> ApiResult<()> {
    let Some(id) = agent_artifact_id.map(str::to_string) else {
        return Ok(());
    };
    let s = s.clone();
    blocking(move || {
        let r = s.reading();
        let found = entities::get(r.docs(), COLLECTIONS[0], &id, None).map_err(|e| {
            if e.status == axum::http::StatusCode::NOT_FOUND {
                ApiError::not_found(format!(
                    "agent_artifact_id '{}' names no stored artifact (GET /api/v1/artifacts lists them); nothing ran",
                    shown(&id)
                ))
            } else {
                e
            }
        });
        r.document(found).map(|_| ())
    })
    .await
}

/// A task a run can be started of: its bundle, the version a run records, and its steps as that
/// run will have them (for the seed tokens they hold).
struct Runnable {
    version: i64,
    source: TaskSource,
    steps: Vec<Map<String, Value>>,
}

impl Runnable {
    /// The 422 problems (at `loc` and the key) of `seed`: a value that is no text (null, a list, an
    /// object), else a key that names a token none of the
    /// steps has (such a seed would run the task as unseeded, silently), and a value that would land
    /// in a command a shell runs holding more than plain text (it would run as shell code).
    fn seed_problems(&self, seed: &Map<String, Value>, loc: &[&str]) -> Vec<Value> {
        let problem = |key: &str, msg: String| {
            let mut at: Vec<&str> = loc.to_vec();
            at.push(key);
            json!({"loc": at, "msg": msg, "type": "value_error"})
        };
        let not_text: Vec<Value> = seed_tokens::not_text(seed)
            .into_iter()
            .map(|key| problem(key, seed_tokens::NOT_TEXT.to_string()))
            .collect();
        // A value that is no text has no text to check where it lands.
        if !not_text.is_empty() {
            return not_text;
        }
        let unused = seed_tokens::unused(seed, &self.steps)
            .into_iter()
            .map(|key| problem(key, seed_tokens::refusal(key, &self.steps)));
        let in_shell = self
            .steps
            .iter()
            .flat_map(|step| seed_in_shell::refusals(step, seed))
            .map(|refused| problem(&refused.key, refused.to_string()));
        unused.chain(in_shell).collect()
    }
}

/// 422 with `problems`, when there are any.
fn refuse_problems(problems: Vec<Value>) -> ApiResult<()> {
    if problems.is_empty() {
        return Ok(());
    }
    Err(ApiError {
        status: axum::http::StatusCode::UNPROCESSABLE_ENTITY,
        detail: Value::Array(problems),
    })
}

/// What runs a task: its bundle, found again, and the version a run records, which is the one
/// reported. A run writes the bundle as it is now, so that is the newest stored version, or the next
/// one when the bundle changed since; a `version` asked for must be it (a version that is neither it
/// nor stored is a 404, as for any read).
async fn runnable(s: &Shared, task_id: &str, version: Option<i64>) -> ApiResult<Runnable> {
    // Versions start at 1, as the query's `version` holds them.
    if version.is_some_and(|v| v < FIRST_VERSION) {
        return Err(ApiError::invalid(
            &["body", "version"],
            format!("Input should be greater than or equal to {FIRST_VERSION}"),
            "greater_than_equal",
        ));
    }
    // A task of an installed bundle that no run has stored yet runs as the bundle's run of it would.
    let (newest, missing) = match task_doc(s, task_id, None).await {
        Ok(doc) => (Some(doc), None),
        Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => (None, Some(e)),
        Err(e) => return Err(e),
    };
    let st = s.clone();
    let (id, doc) = (task_id.to_string(), newest.clone());
    let (source, now, steps) = blocking(move || {
        // The plugins as they are now: a step type installed since `up` started is known.
        let session = st.current.get();
        let source = match &doc {
            Some(doc) => source_of(&session, doc)?,
            None => unrun_task(&session, &id).ok_or_else(|| {
                missing.unwrap_or_else(|| {
                    ApiError::not_found(format!("Task '{}' not found", shown(&id)))
                })
            })?,
        };
        let now = version_now(&session, &source, &id)?;
        // The steps as the bundle has them now, which the run writes; else the stored version's.
        let steps = steps_now(&session, &source)
            .unwrap_or_else(|| doc.as_ref().map(stored_steps).unwrap_or_default());
        Ok((source, now, steps))
    })
    .await?;
    if let Some(asked) = version.filter(|v| *v != now) {
        task_doc(s, task_id, Some(asked)).await?;
        let newest_version = newest
            .as_ref()
            .and_then(|d| d.get("version"))
            .and_then(Value::as_i64);
        let why = if newest_version == Some(now - 1) {
            " (its bundle changed since, so a run now records a new version)"
        } else {
            ""
        };
        return Err(ApiError::invalid(
            &["body", "version"],
            format!(
                "only the newest version of a task can run: a run of '{task_id}' now records version {now}{why}, not version {asked}; leave out version, or ask for {now}"
            ),
            "value_error",
        ));
    }
    Ok(Runnable {
        version: now,
        source,
        steps,
    })
}

/// The step objects of a stored task document.
fn stored_steps(doc: &Value) -> Vec<Map<String, Value>> {
    doc.get("steps")
        .and_then(Value::as_array)
        .map(|steps| {
            steps
                .iter()
                .filter_map(|step| step.as_object().cloned())
                .collect()
        })
        .unwrap_or_default()
}

pub async fn start_one(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let task_id = ids.at(0)?.to_string();
    let body: RunBody = json_body(&body)?;
    let task = runnable(&s, &task_id, body.version).await?;
    if let Some(seed) = &body.seed {
        refuse_problems(task.seed_problems(seed, &["body", "seed"]))?;
    }
    let Runnable {
        version, source, ..
    } = task;
    let user_overrides = overrides(
        &body.agent_model,
        &body.user_model,
        &body.judge_model,
        ("agent_artifact_id", &body.agent_artifact_id),
    )?;
    require_agent_artifact(&s, body.agent_artifact_id.as_deref()).await?;
    refuse_without_state(&s).await?;
    let spec = StartSpec {
        bundle: source.bundle,
        tasks: vec![source.task_name],
        user_overrides,
        seed: body.seed,
        pin: Some(Pin {
            task_id: task_id.clone(),
            version,
        }),
        task_id: Some(task_id),
        ..StartSpec::default()
    };
    // A run that must wait its turn records no instance until it starts: the answer does not wait
    // for it, and says where to find it.
    let waits_its_turn = !s.runs.can_start_now();
    let workflow = s
        .runs
        .start(spec)
        .map_err(|e| ApiError::new(axum::http::StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
    if waits_its_turn {
        return Ok(Json(json!({
            "workflow_id": workflow.id,
            "instance_id": null,
            "run_group_id": workflow.run_group_id,
            "task_version": version,
            "status": "queued",
        })));
    }
    let instance_id = {
        let s = s.clone();
        let workflow = workflow.clone();
        blocking(move || wait_for_instance(&s, &workflow)).await?
    };
    if let (None, Phase::Errored(e)) = (&instance_id, workflow.phase()) {
        // The server's side failing (its state folder closed since) is no fault of the request.
        let st = s.clone();
        if let Some(why) = blocking(move || Ok(st.state_unusable())).await? {
            return Err(state_folder::refusal(&format!(
                "{why} (the run stopped: {e})"
            )));
        }
        return Err(ApiError::conflict(format!("the run did not start: {e}")));
    }
    Ok(Json(json!({
        "workflow_id": workflow.id,
        "instance_id": instance_id,
        "run_group_id": workflow.run_group_id,
        "task_version": version,
        "status": "queued",
    })))
}

/// 503 naming the state folder and what to do when it can't be used: a run started now could not
/// take its locks or record anything (asynchronous runs would answer queued and fail later).
pub async fn refuse_without_state(s: &Shared) -> ApiResult<()> {
    let s = s.clone();
    match blocking(move || Ok(s.state_unusable())).await? {
        Some(why) => Err(state_folder::refusal(&why)),
        None => Ok(()),
    }
}

/// The instance a workflow's run recorded, once it has one (none when the run ended without one,
/// or is still waiting for its turn after [`INSTANCE_WAIT`]).
fn wait_for_instance(s: &AppState, workflow: &Workflow) -> ApiResult<Option<String>> {
    let deadline = Instant::now() + INSTANCE_WAIT;
    let filter = Filter::default().and(
        &format!("context.metadata.{WORKFLOW_KEY}"),
        Predicate::Eq(json!(workflow.id)),
    );
    let r = s.reading();
    loop {
        let done = workflow.phase().is_done();
        let found = r.docs().find_one(instances_collection(), &filter, None)?;
        if let Some(doc) = found {
            return Ok(doc
                .get("instance_id")
                .and_then(Value::as_str)
                .map(String::from));
        }
        if done || Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn instances_collection() -> &'static str {
    agent_env::run::recorder::INSTANCES
}

/// `rg-<12 hex digits>`.
fn new_group_id() -> String {
    let mut bytes = [0u8; 6];
    if getrandom::getrandom(&mut bytes).is_err() {
        return RunManager::new_id("rg");
    }
    format!(
        "rg-{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

pub async fn start_group(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let task_id = ids.at(0)?.to_string();
    let body: GroupBody = json_body(&body)?;
    let seeds: Vec<Option<Map<String, Value>>> = match &body.seeds {
        Some(seeds) => seeds
            .iter()
            .enumerate()
            .map(|(i, seed)| match seed {
                Value::Object(m) => Ok(Some(m.clone())),
                Value::Null => Ok(None),
                _ => Err(ApiError::invalid(
                    &["body", "seeds", &i.to_string()],
                    "a seed is an object of values for the steps' <key> tokens",
                    "dict_type",
                )),
            })
            .collect::<ApiResult<_>>()?,
        None => {
            let count = body.count.unwrap_or(1);
            if count < 1 {
                return Err(ApiError::invalid(
                    &["body", "count"],
                    "Input should be greater than or equal to 1",
                    "greater_than_equal",
                ));
            }
            vec![
                None;
                usize::try_from(count)
                    .unwrap_or(usize::MAX)
                    .min(MAX_RUNS_PER_REQUEST + 1)
            ]
        }
    };
    let asked = body
        .seeds
        .as_ref()
        .map(|s| s.len() as i64)
        .unwrap_or(body.count.unwrap_or(1));
    if seeds.len() > MAX_RUNS_PER_REQUEST || asked > MAX_RUNS_PER_REQUEST as i64 {
        let field = if body.seeds.is_some() {
            "seeds"
        } else {
            "count"
        };
        return Err(ApiError::invalid(
            &["body", field],
            format!("at most {MAX_RUNS_PER_REQUEST} runs per request (got {asked})"),
            if field == "seeds" {
                "too_long"
            } else {
                "less_than_equal"
            },
        ));
    }
    if seeds.is_empty() {
        return Err(ApiError::invalid(
            &["body", "seeds"],
            "seeds needs at least one seed",
            "too_short",
        ));
    }
    let task = runnable(&s, &task_id, body.version).await?;
    // Each problem is named once, at the first seed that has it (a key no step has, at the first
    // seed that gives it).
    let mut problems: Vec<Value> = Vec::new();
    let mut named: Vec<(String, Value)> = Vec::new();
    for (i, seed) in seeds.iter().enumerate() {
        let Some(seed) = seed else { continue };
        for problem in task.seed_problems(seed, &["body", "seeds", &i.to_string()]) {
            let key = problem["loc"][3].as_str().unwrap_or_default().to_string();
            let said = (key, problem["msg"].clone());
            if !named.contains(&said) {
                named.push(said);
                problems.push(problem);
            }
        }
    }
    refuse_problems(problems)?;
    let Runnable {
        version, source, ..
    } = task;
    let user_overrides = overrides(
        &body.agent_model,
        &body.user_model,
        &body.judge_model,
        ("agent_artifact_id", &body.agent_artifact_id),
    )?;
    require_agent_artifact(&s, body.agent_artifact_id.as_deref()).await?;
    refuse_without_state(&s).await?;
    let group = new_group_id();
    let runs: Vec<Value> = seeds
        .into_iter()
        .enumerate()
        .map(|(index, seed)| {
            let spec = StartSpec {
                bundle: source.bundle.clone(),
                tasks: vec![source.task_name.clone()],
                user_overrides: user_overrides.clone(),
                run_group_id: Some(group.clone()),
                task_id: Some(task_id.clone()),
                index,
                seed: seed.clone(),
                pin: Some(Pin {
                    task_id: task_id.clone(),
                    version,
                }),
                ..StartSpec::default()
            };
            match s.runs.start(spec) {
                Ok(w) => json!({"index": index, "workflow_id": w.id, "seed": seed, "error": null}),
                Err(e) => json!({"index": index, "workflow_id": null, "seed": seed, "error": e.to_string()}),
            }
        })
        .collect();
    Ok(Json(json!({
        "run_group_id": group,
        "task_id": task_id,
        "task_version": version,
        "total": runs.len(),
        "runs": runs,
    })))
}

pub async fn cancel_run(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let task_id = ids.at(0)?.to_string();
    let body: CancelBody = json_body(&body)?;
    // A task that is not there has no runs to cancel: said as such, not as runs that don't match.
    require_task(&s, &task_id).await?;
    if body.workflow_id.is_none() && body.instance_id.is_none() && body.run_group_id.is_none() {
        return Err(ApiError::invalid(
            &["body"],
            "name the run to cancel: workflow_id, instance_id or run_group_id",
            "missing",
        ));
    }
    let mut chosen: Vec<std::sync::Arc<Workflow>> = Vec::new();
    // The recorded runs asked for, to say who started them when this explorer did not.
    let mut recorded: Vec<agent_env_store::document::Document> = Vec::new();
    if let Some(id) = &body.workflow_id {
        chosen.extend(s.runs.get(id));
    }
    if let Some(group) = &body.run_group_id {
        chosen.extend(s.runs.of_group(group));
        if chosen.is_empty() {
            let st = s.clone();
            let (group, task) = (group.clone(), task_id.clone());
            recorded.extend(
                blocking(move || {
                    let r = st.reading();
                    r.document(instances::of_group(r.docs(), &group, Some(&task)))
                })
                .await?,
            );
        }
    }
    if let Some(instance) = &body.instance_id {
        let st = s.clone();
        let (instance, task) = (instance.clone(), task_id.clone());
        let doc = blocking(move || {
            let r = st.reading();
            r.document(instances::get(r.docs(), &instance, Some(&task)))
        })
        .await?;
        chosen.extend(workflow_of(&doc).and_then(|w| s.runs.get(w)));
        recorded.push(doc);
    }
    chosen.retain(|w| w.spec.task_id.as_deref() == Some(task_id.as_str()));
    chosen.dedup_by(|a, b| a.id == b.id);
    if chosen.is_empty() {
        return Err(ApiError::not_found(not_started_here(&task_id, &recorded)));
    }
    // `cancelled` holds the runs this request cancelled, so a script counting them counts each once.
    let (mut cancelled, mut stopping, mut finished) = (Vec::new(), Vec::new(), Vec::new());
    for w in &chosen {
        match manager::cancel(w) {
            manager::Cancelled::Now => cancelled.push(w.id.clone()),
            manager::Cancelled::AlreadyStopping => stopping.push(w.id.clone()),
            manager::Cancelled::AlreadyFinished => finished.push(w.id.clone()),
        }
    }
    Ok(Json(json!({
        "cancelled": cancelled,
        "already_stopping": stopping,
        "already_finished": finished,
    })))
}

/// Why none of the runs a cancel names can be cancelled here: the recorded ones were started by
/// another explorer (one still serving, or one since stopped) or by `agent-env run` in another
/// process, which is where they are cancelled; else no run of the task this explorer started matches.
fn not_started_here(task_id: &str, recorded: &[agent_env_store::document::Document]) -> String {
    let by_explorer = recorded.iter().any(|d| workflow_of(d).is_some());
    if by_explorer {
        format!(
            "the run of task '{task_id}' asked for was started by another explorer (another agent-env up, or one since stopped), not this one: cancel it from the explorer that started it, or stop that agent-env up (its runs are cancelled as it stops)"
        )
    } else if !recorded.is_empty() {
        format!(
            "the run of task '{task_id}' asked for was started by agent-env run in another process, not by this explorer: Ctrl-C in its terminal (or SIGINT to that process) cancels it"
        )
    } else {
        format!(
            "no run of task '{}' started by this explorer matches; only the runs an explorer started can be cancelled from it",
            shown(task_id)
        )
    }
}

/// 404 `Task '<id>' not found` unless the task has a document (no version named: the route is
/// about the task, not one of its versions).
async fn require_task(s: &Shared, task_id: &str) -> ApiResult<()> {
    let s = s.clone();
    let id = task_id.to_string();
    blocking(move || {
        let r = s.reading();
        let found = entities::get(r.docs(), COLLECTIONS[2], &id, None).map_err(|e| {
            if e.status == axum::http::StatusCode::NOT_FOUND {
                ApiError::not_found(format!("Task '{}' not found", shown(&id)))
            } else {
                e
            }
        });
        r.document(found).map(|_| ())
    })
    .await
}

pub async fn list_runs(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
    Q(q): Q,
) -> ApiResult<Json<InstancePage>> {
    let task_id = ids.at(0)?.to_string();
    let paging = Paging::from_query(&q, 50)?;
    require_task(&s, &task_id).await?;
    let which = InstanceFilter {
        task_id: Some(task_id),
        ..InstanceFilter::default()
    };
    summaries_page(s, which, paging).await
}

/// One page of the instances `which` selects as summaries, each with the `workflow_id` of the
/// explorer's run that recorded it ([`known_workflow_id`]).
async fn summaries_page(
    s: Shared,
    which: InstanceFilter,
    paging: Paging,
) -> ApiResult<Json<InstancePage>> {
    // The summaries read the stores too (each instance's task version): on the blocking pool, with
    // the listing, since a hosted store blocks on the explorer's own runtime.
    blocking_scan(move || {
        let r = s.reading();
        let docs = r.docs();
        let judge = s.judge(docs);
        let mut listed = instances::list(docs, &which, &paging, &judge, Shape::Documents)?;
        listed.page.items = listed
            .page
            .items
            .into_iter()
            .map(|doc| {
                let Value::Object(doc) = doc else { return doc };
                let mut summary = instances::summary(&doc, &judge);
                summary["workflow_id"] = known_workflow_id(&s, &doc);
                summary
            })
            .collect();
        InstancePage::of(&r, Ok(listed))
    })
    .await
    .map(Json)
}

/// The workflow of the explorer's run that recorded `doc`, while this explorer knows it: `null` for
/// a run it did not start, and for one an earlier explorer started (its workflow is gone after a
/// restart, so an id of it would lead nowhere).
fn known_workflow_id(s: &AppState, doc: &agent_env_store::document::Document) -> Value {
    workflow_of(doc)
        .filter(|w| s.runs.get(w).is_some())
        .map(Value::from)
        .unwrap_or(Value::Null)
}

pub async fn list_instances(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
    Q(q): Q,
) -> ApiResult<Json<InstancePage>> {
    let task_id = ids.at(0)?.to_string();
    let paging = Paging::from_query(&q, 50)?;
    let which = InstanceFilter {
        task_id: Some(task_id.clone()),
        ..InstanceFilter::default()
    }
    .with_status(&q.all("status"))?;
    require_task(&s, &task_id).await?;
    scan_instances(s, which, paging, Shape::Documents).await
}

pub async fn list_all_instances(State(s): State<Shared>, Q(q): Q) -> ApiResult<Json<InstancePage>> {
    let paging = Paging::from_query(&q, 50)?;
    let task_id = match q.get("task_id").filter(|t| !t.is_empty()) {
        Some(given) => {
            let (s, given) = (s.clone(), given.to_string());
            Some(
                blocking(move || Ok(entities::task_id_as_stored(s.reading().docs(), &given)))
                    .await?,
            )
        }
        None => None,
    };
    let which = InstanceFilter {
        task_id,
        ..InstanceFilter::default()
    }
    .with_status(&q.all("status"))?;
    summaries_page(s, which, paging).await
}

/// One page of the instances `which` selects, each judged, in `shape`.
async fn scan_instances(
    s: Shared,
    which: InstanceFilter,
    paging: Paging,
    shape: Shape,
) -> ApiResult<Json<InstancePage>> {
    blocking_scan(move || {
        let r = s.reading();
        let judge = s.judge(r.docs());
        InstancePage::of(
            &r,
            instances::list(r.docs(), &which, &paging, &judge, shape),
        )
    })
    .await
    .map(Json)
}

/// A page of instances: the envelope every list answers with, and `next_cursor`, where the next
/// page starts (`null` on the last page).
#[derive(Debug, Serialize)]
pub struct InstancePage {
    #[serde(flatten)]
    page: Page,
    next_cursor: Option<String>,
}

impl InstancePage {
    /// The answer of `listed`, read through `r` (which says what it left out).
    fn of(r: &Reading<DocumentStores>, listed: ApiResult<Listed>) -> ApiResult<InstancePage> {
        let (page, next_cursor) = match listed {
            Ok(listed) => (Ok(listed.page), listed.next_cursor),
            Err(e) => (Err(e), None),
        };
        Ok(InstancePage {
            page: r.page(page)?,
            next_cursor,
        })
    }
}

pub async fn get_instance(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
) -> ApiResult<Json<Value>> {
    let (task, instance) = (ids.at(0)?.to_string(), ids.at(1)?.to_string());
    blocking(move || {
        let r = s.reading();
        r.document(instances::get(r.docs(), &instance, Some(&task)))
    })
    .await
    .map(|d| Json(Value::Object(d)))
}

/// An instance's progress against its task version's steps, as `verdict` judged it.
fn progress_of(
    docs: &dyn DocumentStore,
    doc: &agent_env_store::document::Document,
    verdict: &Verdict,
) -> ApiResult<Value> {
    let task_id = doc.get("task_id").and_then(Value::as_str).unwrap_or("");
    let version = doc.get("task_version").and_then(Value::as_i64);
    let steps = match entities::get(docs, COLLECTIONS[2], task_id, version) {
        Ok(task) => task
            .get("steps")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => Vec::new(),
        Err(e) => return Err(e),
    };
    Ok(instances::progress_of(doc, &steps, verdict))
}

pub async fn progress(State(s): State<Shared>, TaskIds(ids): TaskIds) -> ApiResult<Json<Value>> {
    let (task, instance) = (ids.at(0)?.to_string(), ids.at(1)?.to_string());
    blocking(move || {
        let r = s.reading();
        let answer = instances::get(r.docs(), &instance, Some(&task))
            .and_then(|doc| progress_of(r.docs(), &doc, &s.judge(r.docs()).verdict(&doc)));
        r.object(answer)
    })
    .await
    .map(Json)
}

pub async fn get_any_instance(State(s): State<Shared>, ids: Ids) -> ApiResult<Json<Value>> {
    let instance = ids.at(0)?.to_string();
    blocking(move || {
        let r = s.reading();
        r.object(any_instance(&s, r.docs(), &instance))
    })
    .await
    .map(Json)
}

/// An instance with its summary, its progress and, when the explorer started it, its workflow.
fn any_instance(s: &AppState, docs: &dyn DocumentStore, instance: &str) -> ApiResult<Value> {
    let doc = instances::get(docs, instance, None)?;
    // Judged once: the summary and the progress say the same.
    let verdict = s.judge(docs).verdict(&doc);
    let progress = progress_of(docs, &doc, &verdict)?;
    let workflow = workflow_of(&doc)
        .and_then(|w| s.runs.get(w))
        .map(|w| w.to_json());
    let mut summary = instances::summary_of(&doc, &verdict);
    summary["workflow_id"] = known_workflow_id(s, &doc);
    Ok(json!({
        "instance": doc,
        "summary": summary,
        "progress": progress,
        "workflow": workflow,
    }))
}

/// A page of `collection`'s documents whose `field` is `value`.
fn page_of(
    docs: &dyn DocumentStore,
    collection: &str,
    field: &str,
    value: &str,
    w: Window,
) -> ApiResult<Page> {
    let filter = Filter::eq(field, value);
    let total = docs.count(collection, &filter)?;
    let items = docs.query(
        collection,
        &filter,
        None,
        Some(w.limit as usize),
        w.offset as usize,
    )?;
    Ok(Page::new(
        items.into_iter().map(Value::Object).collect(),
        total,
        w,
    ))
}

/// An instance document's whole id.
fn id_of(doc: &agent_env_store::document::Document) -> &str {
    doc.get("instance_id").and_then(Value::as_str).unwrap_or("")
}

pub async fn triggers(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
    Q(q): Q,
) -> ApiResult<Json<Page>> {
    let (task, instance) = (ids.at(0)?.to_string(), ids.at(1)?.to_string());
    let window = Window::from_query(&q, 50)?;
    blocking(move || {
        let r = s.reading();
        // By the whole id: the path may give the short one.
        let answer = instances::get(r.docs(), &instance, Some(&task))
            .and_then(|d| page_of(r.docs(), "triggers", "instance_id", id_of(&d), window));
        r.page(answer)
    })
    .await
    .map(Json)
}

pub async fn conversations(State(s): State<Shared>, ids: Ids, Q(q): Q) -> ApiResult<Json<Page>> {
    let instance = ids.at(0)?.to_string();
    let window = Window::from_query(&q, 50)?;
    blocking(move || {
        let r = s.reading();
        let answer = instances::get(r.docs(), &instance, None).and_then(|d| {
            page_of(
                r.docs(),
                "conversations",
                "task_instance_id",
                id_of(&d),
                window,
            )
        });
        r.page(answer)
    })
    .await
    .map(Json)
}

pub async fn list_groups(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
    Q(q): Q,
) -> ApiResult<Json<Page>> {
    let task_id = ids.at(0)?.to_string();
    let window = Window::from_query(&q, 50)?;
    require_task(&s, &task_id).await?;
    blocking(move || {
        let r = s.reading();
        r.page(groups_of_task(&s, r.docs(), &task_id, window))
    })
    .await
    .map(Json)
}

/// The run groups of `task_id`: the ones recorded, and the explorer's own that recorded nothing.
fn groups_of_task(
    s: &AppState,
    docs: &dyn DocumentStore,
    task_id: &str,
    window: Window,
) -> ApiResult<Page> {
    let judge = s.judge(docs);
    let mut groups = instances::groups_of_task(docs, task_id, &judge)?;
    // A recorded group the explorer started is told as its own snapshot tells it: its planned
    // total, and the runs still waiting their turn (the store knows only those that began).
    for group in groups.iter_mut() {
        let Some(id) = group["run_group_id"].as_str().map(String::from) else {
            continue;
        };
        if s.runs.of_group(&id).is_empty() {
            continue;
        }
        if let Some(mut state) = group_snapshot(s, docs, &id, Some(task_id), &judge)? {
            if let Value::Object(m) = &mut state {
                m.remove("instances");
                m.remove("workflows");
            }
            *group = state;
        }
    }
    // The explorer's own groups of this task that recorded nothing (their runs are waiting, or
    // stopped with an error) come first: they are the newest.
    let mut own: Vec<Value> = Vec::new();
    for w in s.runs.all() {
        let group = w.run_group_id.as_str();
        let listed = |g: &Value| g["run_group_id"].as_str() == Some(group);
        if w.spec.task_id.as_deref() != Some(task_id)
            || groups.iter().any(listed)
            || own.iter().any(listed)
        {
            continue;
        }
        if let Some(mut state) = group_snapshot(s, docs, group, Some(task_id), &judge)? {
            if let Value::Object(m) = &mut state {
                m.remove("instances");
                m.remove("workflows");
            }
            own.push(state);
        }
    }
    own.append(&mut groups);
    // One shape whoever started a group: `errors`, as a group's own route answers it.
    for group in own.iter_mut() {
        if group.get("errors").is_none() {
            group["errors"] = json!([]);
        }
    }
    Ok(Page::of_all(own, window))
}

/// A run group's state from the store and the explorer's own workflows; `None` when neither knows it.
pub fn group_snapshot(
    s: &AppState,
    docs: &dyn DocumentStore,
    group: &str,
    task_id: Option<&str>,
    judge: &Judge<'_>,
) -> ApiResult<Option<Value>> {
    let found = instances::of_group(docs, group, task_id)?;
    let workflows: Vec<_> = s
        .runs
        .of_group(group)
        .into_iter()
        .filter(|w| task_id.is_none() || w.spec.task_id.as_deref() == task_id)
        .collect();
    if found.is_empty() && workflows.is_empty() {
        return Ok(None);
    }
    let planned = (!workflows.is_empty()).then_some(workflows.len() as u64);
    let mut state = instances::group_state(group, &found, planned, judge);
    // Each run says which of the explorer's runs recorded it (null for one it did not start), as
    // a task's list of runs does, so a page can put it beside that run's place in the group.
    if let Some(summaries) = state["instances"].as_array_mut() {
        for (summary, doc) in summaries.iter_mut().zip(&found) {
            summary["workflow_id"] = known_workflow_id(s, doc);
        }
    }
    let all_done = !workflows.is_empty() && workflows.iter().all(|w| w.phase().is_done());
    if all_done {
        let running = state["running"].as_u64().unwrap_or(0);
        state["complete"] = json!(running == 0);
    } else if !workflows.is_empty() {
        state["complete"] = json!(false);
    }
    // Runs that stopped with an error before recording an instance count as `error`, with why.
    let recorded_by = |w: &Workflow| found.iter().any(|d| workflow_of(d) == Some(w.id.as_str()));
    // Runs cancelled while queued never recorded one either: they count as `cancelled`.
    let mut errors: Vec<String> = Vec::new();
    let mut errored = 0u64;
    let mut cancelled_unrecorded = 0u64;
    for w in &workflows {
        match w.phase() {
            Phase::Errored(e) if !recorded_by(w) => {
                errored += 1;
                if !errors.contains(&e) {
                    errors.push(e);
                }
            }
            Phase::Finished("cancelled") if !recorded_by(w) => cancelled_unrecorded += 1,
            _ => {}
        }
    }
    if errored > 0 {
        state["outcomes"]["error"] = json!(errored);
    }
    if cancelled_unrecorded > 0 {
        let recorded = state["outcomes"]["cancelled"].as_u64().unwrap_or(0);
        state["outcomes"]["cancelled"] = json!(recorded + cancelled_unrecorded);
    }
    state["errors"] = json!(errors);
    // Runs that recorded nothing yet are of the task they were asked for.
    instances::set_task_ids(
        &mut state,
        workflows.iter().filter_map(|w| w.spec.task_id.as_deref()),
    );
    state["workflows"] = json!(workflows.iter().map(|w| w.to_json()).collect::<Vec<_>>());
    Ok(Some(state))
}

fn group_not_found(group: &str, task_id: Option<&str>) -> ApiError {
    ApiError::not_found(match task_id {
        Some(t) => format!(
            "Run group '{}' of task '{}' not found",
            shown(group),
            shown(t)
        ),
        None => format!("Run group '{}' not found", shown(group)),
    })
}

/// A run group's answer as reading `r` gives it: its state over the whole group with `page` of its
/// runs, and `warnings` when a store was left out; a 404 for a group neither the stores nor the
/// explorer know (a 503 when the configured store failed while it was looked up).
pub fn group_answer(
    s: &AppState,
    r: &Reading<DocumentStores>,
    group: &str,
    task_id: Option<&str>,
    page: &RunsPage,
) -> ApiResult<Value> {
    let snapshot = group_snapshot(s, r.docs(), group, task_id, &s.judge(r.docs()));
    let found = snapshot.and_then(|g| g.ok_or_else(|| group_not_found(group, task_id)));
    r.object(found.map(|g| page.apply(g)))
}

pub async fn get_group(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
    Q(q): Q,
) -> ApiResult<Json<Value>> {
    let (task, group) = (ids.at(0)?.to_string(), ids.at(1)?.to_string());
    let page = RunsPage::from_query(&q)?;
    blocking(move || group_answer(&s, &s.reading(), &group, Some(&task), &page))
        .await
        .map(Json)
}

pub async fn get_any_group(State(s): State<Shared>, ids: Ids, Q(q): Q) -> ApiResult<Json<Value>> {
    let group = ids.at(0)?.to_string();
    let page = RunsPage::from_query(&q)?;
    blocking(move || group_answer(&s, &s.reading(), &group, None, &page))
        .await
        .map(Json)
}
