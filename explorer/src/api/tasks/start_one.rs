//! `POST /tasks/{task_id}/run`: one run of a task, answered with its instance once the run records
//! one (or queued, when it waits its turn).

use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::runnable::{refuse_problems, runnable, Runnable};
use super::start_checks::{overrides, refuse_without_state, require_agent_artifact};
use crate::api::extract::{json_body, TaskIds};
use crate::data::state_folder;
use crate::http::blocking::blocking;
use crate::http::problem::{ApiError, ApiResult};
use crate::runs::manager::{Phase, StartSpec, Workflow, WORKFLOW_KEY};
use crate::runs::pin::Pin;
use crate::state::{AppState, Shared};
use agent_env_store::document::{Filter, Predicate};

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
