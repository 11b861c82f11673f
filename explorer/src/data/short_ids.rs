//! An instance named by its short id, as `agent-env task list` prints it: the part of its id after
//! the last `/` (`hello-ab12cd34` for `@local/agentenv-framework/hello/hello-ab12cd34`). The whole id
//! is looked up first; a short one is looked for among every instance (of the task, when one is
//! given), as `agent-env task get-instance` does, and must be the end of one id only.

pub use agent_env::run::recorder::short_id;
pub use agent_env::run::short_ids::is_short;
use agent_env_store::document::{Document, DocumentStore};
use serde_json::Value;

use crate::http::problem::{ApiError, ApiResult};

/// Every instance (of `task_id`, when given) whose short id is `wanted`.
pub fn ending_in(
    docs: &dyn DocumentStore,
    wanted: &str,
    task_id: Option<&str>,
) -> ApiResult<Vec<Document>> {
    Ok(agent_env::run::short_ids::ending_in(docs, wanted, task_id)?)
}

/// 409 for a short id that ends several instances' ids, naming them.
pub fn ambiguous(wanted: &str, many: &[Document]) -> ApiError {
    let ids: Vec<&str> = many
        .iter()
        .filter_map(|d| d.get("instance_id").and_then(Value::as_str))
        .collect();
    ApiError::new(
        axum::http::StatusCode::CONFLICT,
        format!(
            "'{wanted}' is the end of {} instances' ids ({}); give the whole id",
            ids.len(),
            ids.join(", ")
        ),
    )
}

/// What a 404 for an instance adds: how its id is written.
pub const HOW_IDS_ARE_WRITTEN: &str = "give its whole id, as GET /api/v1/task-instances lists it (@local/agentenv-framework/hello/hello-ab12cd34), or the end agent-env task list shows (hello-ab12cd34), percent-encoded as one path segment";
