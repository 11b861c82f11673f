//! `POST /tasks/{task_id}/runs`: a group of runs of a task, as many as asked or one per seed, all
//! started at once under a new run group.

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::runnable::{refuse_problems, runnable, Runnable};
use super::start_checks::{overrides, refuse_without_state, require_agent_artifact};
use crate::api::extract::{json_body, TaskIds};
use crate::http::problem::{ApiError, ApiResult};
use crate::runs::manager::StartSpec;
use crate::runs::pin::Pin;
use crate::runs::RunManager;
use crate::state::Shared;

/// The most runs one request may start.
pub const MAX_RUNS_PER_REQUEST: usize = 100;

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
    let specs: Vec<StartSpec> = seeds
        .iter()
        .enumerate()
        .map(|(index, seed)| StartSpec {
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
        })
        .collect();
    // Started together, so none of the group is let go before the rest is started.
    let runs: Vec<Value> = s
        .runs
        .start_all(specs)
        .into_iter()
        .zip(seeds)
        .enumerate()
        .map(|(index, (started, seed))| match started {
            Ok(w) => json!({"index": index, "workflow_id": w.id, "seed": seed, "error": null}),
            Err(e) => {
                json!({"index": index, "workflow_id": null, "seed": seed, "error": e.to_string()})
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
