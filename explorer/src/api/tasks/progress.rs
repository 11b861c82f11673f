//! An instance's progress against its task version's steps.

use axum::extract::State;
use axum::Json;
use serde_json::Value;

use crate::api::extract::TaskIds;
use crate::data::entities::{self, COLLECTIONS};
use crate::data::instances::{self, Verdict};
use crate::http::blocking::blocking;
use crate::http::problem::ApiResult;
use crate::state::Shared;
use agent_env_store::document::DocumentStore;

/// An instance's progress against its task version's steps, as `verdict` judged it.
pub(super) fn progress_of(
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
