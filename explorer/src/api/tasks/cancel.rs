//! `POST /tasks/{task_id}/cancel-run`: the runs of a task this explorer started, named by workflow,
//! instance or run group, cancelled; and why a run it did not start cannot be.

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::task_lookup::require_task;
use crate::api::extract::{json_body, TaskIds};
use crate::data::instances;
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
/// another explorer (one still serving, or one since stopped), or by this one and let go once they
/// finished, or by `agent-env run` in another process, which is where they are cancelled; else no
/// run of the task this explorer started matches.
fn not_started_here(task_id: &str, recorded: &[agent_env_store::document::Document]) -> String {
    let by_explorer = recorded.iter().any(|d| workflow_of(d).is_some());
    if by_explorer {
        format!(
            "the run of task '{task_id}' asked for was started by another explorer (another agent-env up, or one since stopped), or by this one, which lets a run go once it has finished (then there is nothing to cancel): a run of another explorer is cancelled from that explorer, or by stopping that agent-env up (its runs are cancelled as it stops)"
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
