//! The common fields of a step object: `depends_on`, `fail_task_on_error` and `retry_config`.

use serde_json::{Map, Value};

/// The step ids a `depends_on` value names: a list of step ids or `{"task_step_id": …}` objects.
pub fn dependency_ids(value: &Value) -> Result<Vec<String>, String> {
    let Value::Array(items) = value else {
        return Err("depends_on must be a list of step ids".to_string());
    };
    items
        .iter()
        .map(|item| match item {
            Value::String(s) => Ok(s.clone()),
            Value::Object(o) => match o.get("task_step_id") {
                Some(Value::String(s)) => Ok(s.clone()),
                _ => Err("a depends_on entry that is an object needs a task_step_id".to_string()),
            },
            _ => Err("depends_on must be a list of step ids".to_string()),
        })
        .collect()
}

/// A step's id (empty when it has none, which parsing refuses).
pub fn step_id(step: &Map<String, Value>) -> &str {
    step.get("id").and_then(Value::as_str).unwrap_or("")
}

/// A step's type.
pub fn step_type(step: &Map<String, Value>) -> &str {
    step.get("type").and_then(Value::as_str).unwrap_or("")
}

/// Whether a failure of this step fails the task (default true).
pub fn fails_task_on_error(step: &Map<String, Value>) -> bool {
    step.get("fail_task_on_error")
        .and_then(Value::as_bool)
        .unwrap_or(true)
}

/// Whether the step declares `depends_on`.
pub fn declares_dependencies(step: &Map<String, Value>) -> bool {
    step.contains_key("depends_on")
}

/// What a `retry_config` says: the step it resumes from (`retry_from_step_id`, or the original's
/// `go_to_step_id`; none is the step itself) and how many times.
pub struct RetryForm {
    pub from: Option<String>,
    pub max_retries: u32,
}

/// Reads a `retry_config`'s form: `{"retry_from_step_id": …, "max_retries": 1}`. Whether the step it
/// resumes from is one it depends on is the plan's to check.
pub fn retry_form(value: &Value) -> Result<RetryForm, String> {
    let Value::Object(map) = value else {
        return Err("retry_config must be an object such as {\"max_retries\": 1}".to_string());
    };
    let max_retries = match map.get("max_retries") {
        None => 1,
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or("retry_config.max_retries must be a whole number of 0 or more")?,
    };
    let from = match map
        .get("retry_from_step_id")
        .or_else(|| map.get("go_to_step_id"))
    {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id.clone()),
        Some(_) => return Err("retry_config.retry_from_step_id must be a step id".to_string()),
    };
    Ok(RetryForm { from, max_retries })
}
