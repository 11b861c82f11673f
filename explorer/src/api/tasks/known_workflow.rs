//! Which of this explorer's runs recorded an instance, as every answer that shows an instance says.

use serde_json::Value;

use crate::data::runs_here::workflow_of;
use crate::state::AppState;

/// The workflow of the explorer's run that recorded `doc`, while this explorer knows it: `null` for
/// a run it did not start, and for one an earlier explorer started (its workflow is gone after a
/// restart, so an id of it would lead nowhere).
pub(super) fn known_workflow_id(s: &AppState, doc: &agent_env_store::document::Document) -> Value {
    workflow_of(doc)
        .filter(|w| s.runs.get(w).is_some())
        .map(Value::from)
        .unwrap_or(Value::Null)
}
