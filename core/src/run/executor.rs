//! How a step type that is not built in runs: in its plugin's process, through `execute`
//! (docs/protocol.md §4.3). The run calls a [`StepExecutor`]; the host-backed one sends the request to
//! the plugin's child process and merges the answer's `metadata` into the context.

use serde_json::{Map, Value};

use crate::run::builtin_steps::StepError;
use crate::run::cancel::Cancel;
use crate::run::events::StepRef;

/// Runs plugin steps.
pub trait StepExecutor: Send + Sync {
    /// Executes one step of `type_name` from `package` with the run's context; returns the metadata to
    /// merge into `context.metadata`. `at` says which step of which task run it is.
    fn execute(
        &self,
        package: &str,
        type_name: &str,
        step: &Map<String, Value>,
        context: &Value,
        cancel: &Cancel,
        at: &StepRef,
    ) -> Result<Map<String, Value>, StepError>;

    /// The URLs of the objects the steps of task instance `instance_id` wrote through the host's stores
    /// (each asked once, when the instance ends).
    fn objects_written(&self, _instance_id: &str) -> Vec<String> {
        Vec::new()
    }

    /// What the plugin steps of task instance `instance_id` answered that their author should hear
    /// of, as the task's warnings (each asked once, when the instance ends).
    fn warnings(&self, _instance_id: &str) -> Vec<String> {
        Vec::new()
    }
}

/// The executor for a run with no plugin steps: any call is a bug in planning, reported as a failure.
pub struct NoPlugins;

impl StepExecutor for NoPlugins {
    fn execute(
        &self,
        package: &str,
        type_name: &str,
        _step: &Map<String, Value>,
        _context: &Value,
        _cancel: &Cancel,
        _at: &StepRef,
    ) -> Result<Map<String, Value>, StepError> {
        Err(StepError::runtime(format!(
            "the step type '{type_name}' comes from the plugin {package}, and this run has no plugin host"
        )))
    }
}
