//! `openciv3_await_game`: waits for the game on an OpenCiv3 env to end.

use agent_env_plugin_sdk::{ExecuteResult, StepContext, StepError, TaskStep};
use serde_json::{Map, Value};

use super::env::{cannot_call_env, deployed_env};
use super::fields::Fields;

pub const TYPE: &str = "openciv3_await_game";

/// The step document, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct AwaitSpec {
    pub env_id: String,
    pub timeout_seconds: f64,
    pub poll_seconds: f64,
}

impl AwaitSpec {
    pub fn parse(step: &Map<String, Value>) -> Result<AwaitSpec, StepError> {
        let f = Fields::new(step, TYPE);
        let spec = AwaitSpec {
            env_id: f.required_str("env_id")?.to_string(),
            timeout_seconds: f.seconds_or("timeout_seconds", 36_000.0)?,
            poll_seconds: f.seconds_or("poll_seconds", 10.0)?,
        };
        if spec.poll_seconds > spec.timeout_seconds {
            return Err(f.error(format!(
                "poll_seconds ({}) is longer than timeout_seconds ({}); poll more often than the timeout",
                spec.poll_seconds, spec.timeout_seconds
            )));
        }
        Ok(spec)
    }
}

pub struct AwaitGameStep;

impl TaskStep for AwaitGameStep {
    fn type_name(&self) -> &str {
        TYPE
    }

    fn class(&self) -> &str {
        "AwaitGameStep"
    }

    fn description(&self) -> Option<&str> {
        Some("Wait until the OpenCiv3 game is over and record how it ended")
    }

    fn validate(&self, step: &Map<String, Value>) -> Result<(), StepError> {
        AwaitSpec::parse(step).map(|_| ())
    }

    fn execute(
        &self,
        _ctx: &StepContext<'_>,
        step: &Map<String, Value>,
        context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        let spec = AwaitSpec::parse(step)?;
        deployed_env(context, &spec.env_id)?;
        Err(cannot_call_env(
            TYPE,
            &spec.env_id,
            "polling the game's state",
        ))
    }
}
