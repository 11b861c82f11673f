//! An instance named by its short id, as `agent-env task list` prints it: the part of its id after
//! the last `/` (`hello-ab12cd34` for `@local/agentenv-framework/hello/hello-ab12cd34`). The whole id
//! is looked up first; a short one is looked for among every instance (of the task, when one is
//! given), as `agent-env task get-instance` does, and must be the end of one id only.

use agent_env::run::recorder::INSTANCES;
use agent_env_store::document::{Document, DocumentStore, Filter, Sort};
use serde_json::Value;

use crate::http::problem::{ApiError, ApiResult};

/// How many instances one read of the scan takes.
const PAGE: usize = 500;

/// The short form of an instance id: the part after the last `/`.
pub fn short_id(instance_id: &str) -> &str {
    instance_id.rsplit('/').next().unwrap_or(instance_id)
}

/// Whether `wanted` can be a short id: no `/`, not empty.
pub fn is_short(wanted: &str) -> bool {
    !wanted.is_empty() && !wanted.contains('/')
}

/// Every instance (of `task_id`, when given) whose short id is `wanted`, read a page at a time.
pub fn ending_in(
    docs: &dyn DocumentStore,
    wanted: &str,
    task_id: Option<&str>,
) -> ApiResult<Vec<Document>> {
    let filter = match task_id {
        Some(t) => Filter::eq("task_id", t),
        None => Filter::default(),
    };
    let sort = Sort::by("instance_id", false);
    let mut found = Vec::new();
    let mut offset = 0;
    loop {
        let page = docs.query(INSTANCES, &filter, Some(&sort), Some(PAGE), offset)?;
        let read = page.len();
        found.extend(page.into_iter().filter(|d| short_of(d) == Some(wanted)));
        if read < PAGE {
            return Ok(found);
        }
        offset += read;
    }
}

fn short_of(doc: &Document) -> Option<&str> {
    doc.get("instance_id").and_then(Value::as_str).map(short_id)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_id_is_the_end_after_the_last_slash() {
        assert_eq!(short_id("@local/~/slowpoke/slow-dkta22co"), "slow-dkta22co");
        assert_eq!(short_id("plain-1"), "plain-1");
        assert!(is_short("slow-dkta22co"));
        assert!(!is_short("@local/x-1"));
        assert!(!is_short(""));
    }
}
