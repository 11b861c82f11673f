//! Task steps: a `type` the task documents name, and an `execute`.

use agent_env_protocol::methods::ExecuteResult;
use serde_json::{Map, Value};

use crate::context::StepContext;
use crate::error::StepError;

/// A task step type. Register it with [`crate::Plugin::task_step`].
pub trait TaskStep: Send + Sync + 'static {
    /// The `type` task documents use for this step; also its name under `[provides.task_steps]`.
    fn type_name(&self) -> &str;

    /// The class label (the manifest's value under `[provides.task_steps]`).
    fn class(&self) -> &str;

    /// Runs the step. `step` is the step as the task document wrote it, `context` the run's context.
    /// What the result's `metadata` holds is merged into `context.metadata`.
    fn execute(
        &self,
        ctx: &StepContext<'_>,
        step: &Map<String, Value>,
        context: &Value,
    ) -> Result<ExecuteResult, StepError>;

    /// Whether [`TaskStep::validate`] is implemented (then the host calls it while planning).
    fn validates(&self) -> bool {
        false
    }

    /// Checks a step document before any step runs.
    fn validate(&self, _step: &Map<String, Value>) -> Result<(), StepError> {
        Ok(())
    }

    /// A one-line description.
    fn description(&self) -> Option<&str> {
        None
    }
}
