//! What every start of a run checks besides its task: the models and agent it names, no longer than
//! a name ([`overrides`]), the agent artifact it names, stored, and the state folder, usable.

use serde_json::{json, Map, Value};

use crate::data::entities::{self, COLLECTIONS};
use crate::data::state_folder;
use crate::http::blocking::blocking;
use crate::http::problem::{ApiError, ApiResult};
use crate::http::shown::shown;
use crate::state::Shared;

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

/// 404 naming `agent_artifact_id` when no artifact of that id is stored: a run would go on without
/// it, recording the id only among its `user_overrides`.
pub(super) async fn require_agent_artifact(
    s: &Shared,
    agent_artifact_id: Option<&str>,
) -> ApiResult<()> {
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

/// 503 naming the state folder and what to do when it can't be used: a run started now could not
/// take its locks or record anything (asynchronous runs would answer queued and fail later).
pub async fn refuse_without_state(s: &Shared) -> ApiResult<()> {
    let s = s.clone();
    match blocking(move || Ok(s.state_unusable())).await? {
        Some(why) => Err(state_folder::refusal(&why)),
        None => Ok(()),
    }
}
