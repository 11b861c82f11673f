//! The common fields of a step object: `depends_on`, `fail_task_on_error` and `retry_config`.

use serde_json::{Map, Value};

/// The step ids a `depends_on` value names: a list of step ids or `{"task_step_id": …}` objects.
pub fn dependency_ids(value: &Value) -> Result<Vec<String>, String> {
    let items = match value {
        Value::Array(items) => items,
        // One step id is written as the list of it.
        Value::String(_) => {
            return Err(format!(
                "depends_on must be a list of step ids, got {value}: write [{value}]"
            ))
        }
        _ => {
            return Err(format!(
                "depends_on must be a list of step ids, got {value}"
            ))
        }
    };
    items
        .iter()
        .map(|item| match item {
            Value::String(s) => Ok(s.clone()),
            Value::Object(o) => match o.get("task_step_id") {
                Some(Value::String(s)) => Ok(s.clone()),
                _ => Err("a depends_on entry that is an object needs a task_step_id".to_string()),
            },
            _ => Err(format!(
                "depends_on must be a list of step ids, and it holds {item}"
            )),
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

/// Whether a failure of this step fails the task: its `fail_task_on_error`, else `default` (its
/// kind's: a built-in step's or its plugin's manifest's).
pub fn fails_task_on_error(step: &Map<String, Value>, default: bool) -> bool {
    step.get("fail_task_on_error")
        .and_then(Value::as_bool)
        .unwrap_or(default)
}

/// Whether the step declares `depends_on`.
pub fn declares_dependencies(step: &Map<String, Value>) -> bool {
    step.contains_key("depends_on")
}

/// The keys a `retry_config` takes.
pub const RETRY_FIELDS: [&str; 3] = ["retry_from_step_id", "go_to_step_id", "max_retries"];

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
    // Every problem of the object at once.
    let mut problems = Vec::new();
    let max_retries = match map.get("max_retries") {
        None => 1,
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or_else(|| {
                problems.push("retry_config.max_retries must be a whole number of 0 or more");
                1
            }),
    };
    let target = |key: &str| match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(id)) => Ok(Some(id.clone())),
        Some(_) => Err(format!("retry_config.{key} must be a step id")),
    };
    let (retry_from, go_to) = (target("retry_from_step_id"), target("go_to_step_id"));
    let mut said: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    let from = match (retry_from, go_to) {
        (Err(e), _) | (_, Err(e)) => {
            said.push(e);
            None
        }
        (Ok(Some(a)), Ok(Some(b))) if a != b => {
            said.push(format!(
                "retry_config gives retry_from_step_id '{a}' and go_to_step_id '{b}': give one of them"
            ));
            None
        }
        (Ok(a), Ok(b)) => a.or(b),
    };
    if !said.is_empty() {
        return Err(said.join("; "));
    }
    Ok(RetryForm { from, max_retries })
}

/// The step a `retry_config` resumes from, when it names one as a string, whatever else is wrong
/// with it (so its existence is checked beside the object's other problems).
pub fn retry_target(value: &Value) -> Option<&str> {
    RETRY_FIELDS[..2]
        .iter()
        .find_map(|key| value.get(key).and_then(Value::as_str))
}
