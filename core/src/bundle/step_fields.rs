//! The common fields of a step object: `depends_on` and `fail_task_on_error`.

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
