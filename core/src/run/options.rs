//! How to run: the options a bundle run and a stored task's run hand to the run itself.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::cancel::Cancel;
use super::events::RunObserver;
use super::materialize;

/// How to run.
#[derive(Clone)]
pub struct RunOptions {
    pub dry_run: bool,
    pub keep: bool,
    /// `user_overrides` for every context (models, sandbox).
    pub user_overrides: Map<String, Value>,
    /// The sandbox provider deploy steps use.
    pub sandbox_provider: String,
    /// Where the run writes: the per-id locks folder and the artifacts' object key prefix.
    pub places: materialize::Places,
    /// What cancels the run, made from how its caller said it stops (see
    /// [`Stopping`](super::Stopping)).
    pub cancel: Arc<Cancel>,
    /// The run group id; with none, a fresh `run-<suffix>`.
    pub run_group_id: Option<String>,
    /// Entries every task's `context.metadata` starts with (see
    /// [`RunRequest::context_metadata`](super::RunRequest::context_metadata)).
    pub context_metadata: Map<String, Value>,
    /// Who watches the run's events.
    pub observer: Arc<dyn RunObserver>,
    /// Task versions the run must record, by task id (see [`materialize::Writing::pinned`]).
    pub pinned: materialize::Versions,
    /// How often running instances record a heartbeat, and how long a task's end waits for the
    /// document store.
    pub liveness: super::heartbeat::Liveness,
}
