//! One instance: as its task's run stored it, or with its summary, its progress and the explorer's
//! run that recorded it.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use super::known_workflow::known_workflow_id;
use super::progress::progress_of;
use crate::api::extract::{Ids, TaskIds};
use crate::data::instances;
use crate::data::runs_here::workflow_of;
use crate::http::blocking::blocking;
use crate::http::problem::ApiResult;
use crate::state::{AppState, Shared};
use agent_env_store::document::DocumentStore;

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
