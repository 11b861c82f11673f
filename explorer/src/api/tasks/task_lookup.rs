//! A task's document looked up: one version of it, or whether the task is there at all.

use serde_json::Value;

use crate::data::entities::{self, COLLECTIONS};
use crate::http::blocking::blocking;
use crate::http::problem::{ApiError, ApiResult};
use crate::http::shown::shown;
use crate::state::Shared;

/// The task document (`version`, else the newest); 404 `Task '<id>' … not found`.
pub(super) async fn task_doc(s: &Shared, task_id: &str, version: Option<i64>) -> ApiResult<Value> {
    let s = s.clone();
    let id = task_id.to_string();
    blocking(move || {
        let r = s.reading();
        r.document(entities::get(r.docs(), COLLECTIONS[2], &id, version))
    })
    .await
}

/// 404 `Task '<id>' not found` unless the task has a document (no version named: the route is
/// about the task, not one of its versions).
pub(super) async fn require_task(s: &Shared, task_id: &str) -> ApiResult<()> {
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
