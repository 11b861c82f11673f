//! `POST /tasks/{task_id}/cancel-run`: the runs of a task this explorer started, named by workflow,
//! instance or run group, cancelled; and why a run it did not start cannot be: it has ended (409,
//! with its status), or it runs in another process (404, naming what started it when the instance
//! records it: an explorer's run records its workflow, an agent-env command's nothing).

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use agent_env_store::document::Document;

use super::task_lookup::require_task;
use crate::api::extract::{json_body, TaskIds};
use crate::data::instances::{self, Judge};
use crate::data::runs_here::workflow_of;
use crate::http::blocking::blocking;
use crate::http::problem::{ApiError, ApiResult};
use crate::http::shown::shown;
use crate::runs::manager::{self, Workflow};
use crate::state::Shared;

/// `POST /tasks/{task_id}/cancel-run`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CancelBody {
    pub workflow_id: Option<String>,
    pub instance_id: Option<String>,
    pub run_group_id: Option<String>,
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
    let mut recorded: Vec<RecordedRun> = Vec::new();
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
                    let docs = r.document(instances::of_group(r.docs(), &group, Some(&task)))?;
                    let judge = st.judge(r.docs());
                    Ok::<_, ApiError>(
                        docs.iter()
                            .map(|d| RecordedRun::of(d, &judge))
                            .collect::<Vec<_>>(),
                    )
                })
                .await?,
            );
        }
    }
    if let Some(instance) = &body.instance_id {
        let st = s.clone();
        let (instance, task) = (instance.clone(), task_id.clone());
        let (workflow, run) = blocking(move || {
            let r = st.reading();
            let doc = r.document(instances::get(r.docs(), &instance, Some(&task)))?;
            let judge = st.judge(r.docs());
            Ok::<_, ApiError>((
                workflow_of(&doc).map(str::to_string),
                RecordedRun::of(&doc, &judge),
            ))
        })
        .await?;
        chosen.extend(workflow.and_then(|w| s.runs.get(&w)));
        recorded.push(run);
    }
    chosen.retain(|w| w.spec.task_id.as_deref() == Some(task_id.as_str()));
    chosen.dedup_by(|a, b| a.id == b.id);
    if chosen.is_empty() {
        return Err(not_started_here(&task_id, &recorded));
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

/// A recorded run a cancel names, as far as a cancel needs it.
struct RecordedRun {
    instance_id: String,
    /// The explorer workflow that started it, when one did (an agent-env command records none).
    by_explorer: bool,
    /// How it ended (its status: `completed`, `failed`, `cancelled`), or why it is not running
    /// though recorded `running` (its run ended without finishing it); `None` while it may run.
    ended: Option<String>,
    /// The machine its run runs on, when recorded.
    run_host: Option<String>,
}

impl RecordedRun {
    fn of(doc: &Document, judge: &Judge<'_>) -> RecordedRun {
        let text = |key: &str| doc.get(key).and_then(Value::as_str).map(str::to_string);
        let ended = match text("status").as_deref() {
            // Recorded `running`, but its run may have ended without finishing it.
            Some("running") | Some("queued") | None => judge
                .verdict(doc)
                .interrupted
                .map(|why| format!("it is recorded as running, but is not: {}", why.warning())),
            Some(status) => Some(format!("it {}", ended_as(status))),
        };
        RecordedRun {
            instance_id: text("instance_id").unwrap_or_default(),
            by_explorer: workflow_of(doc).is_some(),
            ended,
            run_host: text(agent_env::run::heartbeat::RUN_HOST),
        }
    }
}

/// How a run whose recorded status is `status` ended, in a sentence's words (`completed`, `failed`,
/// `was cancelled`).
fn ended_as(status: &str) -> String {
    match status {
        "cancelled" => "was cancelled".to_string(),
        "completed" | "failed" => status.to_string(),
        other => format!("ended as {}", shown(other)),
    }
}

/// Why none of the runs a cancel names can be cancelled here: they have ended (409, each with how),
/// or they run elsewhere, started by another explorer or by an agent-env command in another process,
/// which is where they are cancelled (404); else no run of the task this explorer started matches.
fn not_started_here(task_id: &str, recorded: &[RecordedRun]) -> ApiError {
    let task = shown(task_id);
    let running: Vec<&RecordedRun> = recorded.iter().filter(|r| r.ended.is_none()).collect();
    if recorded.is_empty() {
        return ApiError::not_found(format!(
            "no run of task '{task}' started by this explorer matches; only the runs an explorer started can be cancelled from it"
        ));
    }
    if running.is_empty() {
        let each: Vec<String> = recorded
            .iter()
            .take(NAMED_AT_MOST)
            .map(|r| {
                format!(
                    "'{}': {}",
                    shown(&r.instance_id),
                    r.ended.as_deref().unwrap_or_default()
                )
            })
            .collect();
        let ended = match recorded.len() {
            1 => format!("the run of task '{task}' asked for has already ended"),
            _ => format!("the runs of task '{task}' asked for have all ended"),
        };
        return ApiError::conflict(format!(
            "{ended}, so there is nothing to cancel ({}{})",
            each.join("; "),
            more(recorded.len())
        ));
    }
    // Where each runs, as it records it: its machine, and whether an explorer started it. Runs
    // that share one are named together; each is said where it runs, never where another does.
    let mut places: Vec<(Place<'_>, Vec<&RecordedRun>)> = Vec::new();
    for run in &running {
        let place = Place::of(run);
        match places.iter_mut().find(|(p, _)| *p == place) {
            Some((_, runs)) => runs.push(run),
            None => places.push((place, vec![run])),
        }
    }
    if let [(place, runs)] = places.as_slice() {
        let (runs_word, is, it) = match runs.len() {
            1 => ("the run", "is", "it is"),
            _ => ("the runs", "are", "they are"),
        };
        let asked = format!(
            "{runs_word} of task '{task}' asked for ({}) {is} running",
            named(runs)
        );
        return ApiError::not_found(match place.by_explorer {
            true => format!(
                "{asked}, started by another explorer (another agent-env up){}, not by this one: {EXPLORER_CANCEL}",
                place.on()
            ),
            false => format!(
                "{asked} in another agent-env process{}, not in this explorer: {it} {PROCESS_CANCEL}",
                place.on()
            ),
        });
    }
    let each: Vec<String> = places
        .iter()
        .map(|(place, runs)| match place.by_explorer {
            true => format!(
                "{} started by another explorer (another agent-env up){}",
                named(runs),
                place.on()
            ),
            false => format!("{} in another agent-env process{}", named(runs), place.on()),
        })
        .collect();
    let mut how = Vec::new();
    if places.iter().any(|(p, _)| !p.by_explorer) {
        how.push(format!(
            "a run in another agent-env process is {PROCESS_CANCEL}"
        ));
    }
    if places.iter().any(|(p, _)| p.by_explorer) {
        how.push(EXPLORER_CANCEL.to_string());
    }
    ApiError::not_found(format!(
        "the runs of task '{task}' asked for are running elsewhere, none in this explorer: {}. {}",
        each.join("; "),
        capitalized(&how.join("; "))
    ))
}

/// How a run in another agent-env process is cancelled.
const PROCESS_CANCEL: &str = "cancelled from there, by Ctrl-C in the terminal that process runs in (or SIGINT to that process)";

/// How a run another explorer started is cancelled.
const EXPLORER_CANCEL: &str = "a run of another explorer is cancelled from that explorer, or by stopping that agent-env up (its runs are cancelled as it stops)";

/// Where a recorded run runs, as it records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Place<'r> {
    by_explorer: bool,
    host: Option<&'r str>,
}

impl<'r> Place<'r> {
    fn of(run: &'r RecordedRun) -> Place<'r> {
        Place {
            by_explorer: run.by_explorer,
            host: run.run_host.as_deref(),
        }
    }

    /// ` on the machine 'h'`, or nothing when the run records no machine.
    fn on(&self) -> String {
        self.host
            .map_or_else(String::new, |h| format!(" on the machine '{}'", shown(h)))
    }
}

/// `'a', 'b', and 3 more`: the instances of `runs`, the first [`NAMED_AT_MOST`] named.
fn named(runs: &[&RecordedRun]) -> String {
    let ids: Vec<String> = runs
        .iter()
        .take(NAMED_AT_MOST)
        .map(|r| format!("'{}'", shown(&r.instance_id)))
        .collect();
    format!("{}{}", ids.join(", "), more(runs.len()))
}

/// `text` with its first letter upper case.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// How many instances a refusal names before it counts the rest.
const NAMED_AT_MOST: usize = 5;

/// `, and 3 more` after the first [`NAMED_AT_MOST`] of `count` instances named.
fn more(count: usize) -> String {
    match count.saturating_sub(NAMED_AT_MOST) {
        0 => String::new(),
        n => format!(", and {n} more"),
    }
}
