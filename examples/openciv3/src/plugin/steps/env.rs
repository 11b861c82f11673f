//! Finding the env a step names among the run's deployed envs, and the extensions its card advertises.

use agent_env_plugin_sdk::StepError;
use serde_json::{Map, Value};

/// The deployed env whose `env_id` is `env_id`, or the error every OpenCiv3 step gives.
pub fn deployed_env<'a>(
    context: &'a Value,
    env_id: &str,
) -> Result<&'a Map<String, Value>, StepError> {
    context
        .get("deployed_envs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .find(|env| env.get("env_id").and_then(Value::as_str) == Some(env_id))
        .ok_or_else(|| StepError::value(format!("env '{env_id}' is not deployed in this run")))
}

/// Checks that the env's card, or one of its `children_environments`, advertises `uri`.
pub fn require_extension(
    env: &Map<String, Value>,
    env_id: &str,
    uri: &str,
) -> Result<(), StepError> {
    if advertises(&Value::Object(env.clone()), uri) {
        Ok(())
    } else {
        Err(StepError::value(format!(
            "env '{env_id}' does not advertise {uri}"
        )))
    }
}

fn advertises(env: &Value, uri: &str) -> bool {
    let card = env
        .get("env_card")
        .or_else(|| env.get("card"))
        .unwrap_or(env);
    let lists = [
        card.get("extensions"),
        card.get("capabilities").and_then(|c| c.get("extensions")),
    ];
    let listed = lists
        .into_iter()
        .flatten()
        .filter_map(Value::as_array)
        .flatten()
        .any(|ext| {
            ext.as_str() == Some(uri) || ext.get("uri").and_then(Value::as_str) == Some(uri)
        });
    listed
        || [
            env.get("children_environments"),
            card.get("children_environments"),
        ]
        .into_iter()
        .flatten()
        .filter_map(Value::as_array)
        .flatten()
        .any(|child| advertises(child, uri))
}

/// What a step says when it would have to call the env: this build has no client for the env's data plane.
pub fn cannot_call_env(step_type: &str, env_id: &str, what: &str) -> StepError {
    StepError::new(
        "NotImplementedError",
        format!(
            "{step_type}: env '{env_id}' is deployed, but {what} needs the OpenCiv3 env's data plane, which this build of agentenv-openciv3 cannot reach (it has no HTTP client yet)"
        ),
    )
}
