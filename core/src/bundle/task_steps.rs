//! The checks a task's steps pass wherever the task comes from: a bundle's task file, the file
//! `agent-env task put` stores, and a stored task a run reads back. Each problem is said once, with
//! every other, in words that name the step (`step 2 needs an 'id'`); the caller says which file or
//! task they are about.

use serde_json::{Map, Value};

/// A task's steps as read, with every problem they have.
#[derive(Debug, Default)]
pub struct CheckedSteps {
    /// The steps that are objects, in order (those with problems included, so that what else is
    /// wrong with the task can still be found).
    pub steps: Vec<Map<String, Value>>,
    /// What is wrong with them, in step order; empty when they can run.
    pub problems: Vec<String>,
}

/// `text` cut to its first 60 characters, marked as cut.
fn shortened(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// What a task's step `n` (from 1) that is `item`, not an object, is told.
pub fn not_a_step_object(n: usize, item: &Value) -> String {
    format!(
        "step {n} is {}, not a step object ({{\"id\": …, \"type\": …}})",
        shortened(&item.to_string())
    )
}

/// Checks a task's `items`: at least one step; each an object with a non-empty string `id`, unique
/// in the task, and a non-empty string `type`; no two giving one `verifier_id`; `fail_task_on_error`
/// true or false; `retry_config` of its form, resuming from this step or an earlier one; and
/// `depends_on` naming earlier steps.
pub fn check_steps(items: Vec<Value>) -> CheckedSteps {
    let mut checked = CheckedSteps::default();
    let problems = &mut checked.problems;
    let mut ids_so_far: Vec<String> = Vec::new();
    // verifier_id → the step that gives it: the task is scored by each verifier's score, so a
    // second step giving one would replace the first's score (a failing grade hidden).
    let mut verifiers: Vec<(String, String)> = Vec::new();
    if items.is_empty() {
        problems.push("a task needs at least one step".to_string());
    }
    for (index, item) in items.into_iter().enumerate() {
        let n = index + 1;
        let Value::Object(step) = item else {
            problems.push(not_a_step_object(n, &item));
            continue;
        };
        let id = match step.get("id") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => {
                problems.push(format!("step {n} needs an 'id' (a non-empty string)"));
                format!("#{n}")
            }
        };
        if !matches!(step.get("type"), Some(Value::String(s)) if !s.is_empty()) {
            problems.push(format!("step '{id}' needs a 'type' (a non-empty string)"));
        }
        if ids_so_far.contains(&id) {
            problems.push(format!(
                "two steps have the id '{id}'; step ids must be unique in a task"
            ));
        }
        if let Some(Value::String(verifier)) = step.get("verifier_id") {
            match verifiers.iter().find(|(v, _)| v == verifier) {
                Some((_, first)) => problems.push(format!(
                    "steps '{first}' and '{id}' both give verifier_id '{verifier}': the task is scored by each verifier's score, so '{id}' would replace the score of '{first}'; give each step its own verifier_id"
                )),
                None => verifiers.push((verifier.clone(), id.clone())),
            }
        }
        if let Some(f) = step.get("fail_task_on_error") {
            if !f.is_boolean() {
                problems.push(format!(
                    "step '{id}': fail_task_on_error must be true or false, got {f}"
                ));
            }
        }
        if let Some(config) = step.get("retry_config").filter(|c| !c.is_null()) {
            if let Err(m) = super::step_fields::retry_form(config) {
                problems.push(format!("step '{id}': {m}"));
            }
            let target = super::step_fields::retry_target(config);
            if let Some(from) = target.filter(|f| *f != id && !ids_so_far.iter().any(|i| i == f)) {
                problems.push(format!(
                    "step '{id}': retry_config resumes from '{from}', which is not this step or an earlier step of this task"
                ));
            }
        }
        if let Some(deps) = step.get("depends_on") {
            match super::step_fields::dependency_ids(deps) {
                Ok(list) => {
                    for dep in list {
                        if !ids_so_far.contains(&dep) {
                            problems.push(format!(
                                "step '{id}' depends on '{dep}', which is not an earlier step of this task"
                            ));
                        }
                    }
                }
                Err(m) => problems.push(format!("step '{id}': {m}")),
            }
        }
        ids_so_far.push(id);
        checked.steps.push(step);
    }
    checked
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(items: Value) -> Vec<String> {
        match items {
            Value::Array(items) => check_steps(items).problems,
            _ => unreachable!("an array"),
        }
    }

    #[test]
    fn steps_that_can_run_have_no_problem() {
        let ok = json!([{"id": "a", "type": "t"}, {"id": "b", "type": "t", "depends_on": ["a"]}]);
        assert!(problems(ok).is_empty());
    }

    #[test]
    fn every_problem_is_said() {
        assert_eq!(problems(json!([])), ["a task needs at least one step"]);
        assert_eq!(
            problems(
                json!([{"id": "a", "type": "t"}, {"id": "a", "type": "t"}, {"type": "t"}, {"id": 5}])
            ),
            [
                "two steps have the id 'a'; step ids must be unique in a task",
                "step 3 needs an 'id' (a non-empty string)",
                "step 4 needs an 'id' (a non-empty string)",
                "step '#4' needs a 'type' (a non-empty string)",
            ]
        );
    }
}
