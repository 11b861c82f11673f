//! The built-in task step types `agent-env run` executes in-process: `deploy_sandbox`, `load_artifact`
//! and `verify_sandbox`. Step types from plugins run in their plugin's process (see `run::executor`
//! and `run::plugin_steps`).

use std::sync::Mutex;

use serde_json::{Map, Value};

use crate::run::cancel::Cancel;
use crate::run::context::TaskStepContext;
use crate::run::run_stores::RunStores;
use crate::sandbox::Deployed;

pub(crate) mod bash_command;
pub mod deploy_sandbox;
pub mod load_artifact;
mod not_executable;
mod patterns;
pub mod verify_sandbox;

/// The type of [`StepError::environment`]'s errors.
const ENVIRONMENT_ERROR: &str = "EnvironmentError";

/// A step that failed: the error's type name (as the summary prints it) and its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{error_type}: {message}")]
pub struct StepError {
    pub error_type: String,
    pub message: String,
    /// More to show the user than the one-line message (a plugin's stderr tail, say).
    pub detail: Option<String>,
    /// Where the step failed, as its plugin reports it: a Python traceback, a Rust panic's
    /// location, a Go error chain. Shown with `--verbose` and kept in the instance record.
    pub traceback: Option<String>,
}

impl StepError {
    pub fn new(error_type: &str, message: impl Into<String>) -> Self {
        StepError {
            error_type: error_type.to_string(),
            message: message.into(),
            detail: None,
            traceback: None,
        }
    }

    pub fn value(message: impl Into<String>) -> Self {
        Self::new("ValueError", message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new("NotFoundError", message)
    }

    pub fn runtime(message: impl Into<String>) -> Self {
        Self::new("RuntimeError", message)
    }

    /// The machine lacks what the step needs (no bash on PATH): the step cannot check anything,
    /// whatever the sandbox holds, so it fails rather than scoring the sandbox 0.
    pub fn environment(message: impl Into<String>) -> Self {
        Self::new(ENVIRONMENT_ERROR, message)
    }

    /// Whether it is an [`StepError::environment`] error.
    pub fn is_environment(&self) -> bool {
        self.error_type == ENVIRONMENT_ERROR
    }

    /// Whether it is the error of a cancelled run ([`StepError::cancelled`]).
    pub fn is_cancelled(&self) -> bool {
        self.error_type == "Cancelled"
    }

    pub fn cancelled() -> Self {
        Self::new("Cancelled", "the run was cancelled")
    }
}

/// What a running step can reach.
pub struct StepEnv<'a> {
    pub context: &'a Mutex<TaskStepContext>,
    pub stores: &'a RunStores,
    pub sandboxes: &'a Deployed,
    pub cancel: &'a Cancel,
    pub instance_id: &'a str,
}

impl StepEnv<'_> {
    /// Runs `f` on the context.
    pub fn with_context<T>(
        &self,
        f: impl FnOnce(&mut TaskStepContext) -> T,
    ) -> Result<T, StepError> {
        let mut guard = self
            .context
            .lock()
            .map_err(|_| StepError::runtime("the task's context is poisoned by a failed step"))?;
        Ok(f(&mut guard))
    }

    /// The sandbox a step names by `sandbox_name`.
    pub fn sandbox(&self, step: &Map<String, Value>) -> Result<crate::sandbox::Sandbox, StepError> {
        let name = str_field(step, "sandbox_name").unwrap_or("");
        self.sandboxes.get(name).ok_or_else(|| {
            let deployed: Vec<String> = self.sandboxes.all().into_iter().map(|s| s.name).collect();
            StepError::runtime(format!(
                "Sandbox '{name}' not found in context.deployed_sandboxes (deployed: {}); deploy it with a deploy_sandbox step first",
                crate::config::tables::py_list(&deployed)
            ))
        })
    }
}

/// A step type built into agent-env.
pub trait BuiltinStep: Sync {
    fn type_name(&self) -> &'static str;
    /// Problems with the step's own fields, found while planning.
    fn check(&self, step: &Map<String, Value>) -> Vec<String>;
    /// What is not wrong with the step's fields but will not do what it may seem to (a criterion of
    /// a type it does not know, skipped when it runs): said before every run, dry or not.
    fn check_notes(&self, _step: &Map<String, Value>) -> Vec<String> {
        Vec::new()
    }
    /// The score the step gives whatever it finds, when its own fields fix it (no criterion to
    /// check, weights that add up to 0, a criterion that fails whatever the sandbox holds): what a
    /// dry run holds against `--fail-under`.
    fn fixed_score(&self, _step: &Map<String, Value>) -> Option<f64> {
        None
    }
    /// Whether the step may give its task a score (it writes the task's `verifications`): a task
    /// none of whose steps may ends with none, whatever they find.
    fn gives_score(&self) -> bool {
        false
    }
    /// The fields of its own it reads, besides those every step has ([`STEP_FIELDS`]).
    fn fields(&self) -> &'static [&'static str] {
        &[]
    }
    /// What limits how long the step's work may take, when something does: said to a task that
    /// gives the step a `timeout_seconds`, which only a plugin's step reads.
    fn time_limits(&self) -> Option<&'static str> {
        None
    }
    /// Fields that name an artifact (a bundle name there is rewritten to its id).
    fn artifact_fields(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether a failure fails the task when the step does not say.
    fn fails_task_by_default(&self) -> bool {
        true
    }
    fn run(&self, step: &Map<String, Value>, env: &StepEnv<'_>) -> Result<(), StepError>;
    /// Undoes what the step, having succeeded, left that would stop it from running again, before a
    /// retry runs it again (a sandbox it deployed).
    fn before_rerun(&self, _step: &Map<String, Value>, _env: &StepEnv<'_>) {}
    /// What a person should hear about what the step, having succeeded, left in the task's
    /// `metadata` (a result that passes but should not have, say); one sentence each.
    fn warnings(&self, _step: &Map<String, Value>, _metadata: &Map<String, Value>) -> Vec<String> {
        Vec::new()
    }
    /// Why the step, having succeeded, scored below 1 (the checks that did not pass, with what they
    /// found); one sentence each, for the person watching the run.
    fn misses(&self, _step: &Map<String, Value>, _metadata: &Map<String, Value>) -> Vec<String> {
        Vec::new()
    }
}

static BUILTINS: [&dyn BuiltinStep; 3] = [
    &deploy_sandbox::DeploySandbox,
    &load_artifact::LoadArtifact,
    &verify_sandbox::VerifySandbox,
];

/// The built-in step type of this name.
pub fn builtin(type_name: &str) -> Option<&'static dyn BuiltinStep> {
    BUILTINS
        .iter()
        .copied()
        .find(|s| s.type_name() == type_name)
}

/// Whether `type_name` is a built-in step type of the Python original that this build does not have
/// yet, so a bundle written for it gets a precise message. Derived from the one list of built-in step
/// names (`builtin_names::TASK_STEPS`) minus the steps implemented here.
pub fn not_yet_built_in(type_name: &str) -> bool {
    crate::builtin_names::TASK_STEPS.contains(&type_name) && builtin(type_name).is_none()
}

/// The fields every step may have (`version` is in every stored step, and a run's plan adds it).
/// `timeout_seconds` limits a plugin's step; a built-in step does not read it ([`step_notes`]).
pub const STEP_FIELDS: [&str; 8] = [
    "id",
    "type",
    "version",
    "depends_on",
    "fail_task_on_error",
    "retry_config",
    "verifier_id",
    "timeout_seconds",
];

/// What a step holds that nothing reads: a key close to one of the fields every step has (and to
/// one of `builtin`'s own, for a built-in step; a plugin's own fields are its plugin's to read),
/// `timeout_seconds` on a built-in step, and a `retry_config` key close to one it takes.
pub fn step_notes(
    step_id: &str,
    step: &Map<String, Value>,
    builtin: Option<&dyn BuiltinStep>,
) -> Vec<String> {
    let what = format!("step '{step_id}'");
    let mut known: Vec<&str> = STEP_FIELDS.to_vec();
    known.extend(builtin.map(|b| b.fields()).unwrap_or_default());
    let mut notes = typo_notes(&what, step, &known);
    if let Some(builtin) = builtin.filter(|_| step.contains_key("timeout_seconds")) {
        let instead = builtin
            .time_limits()
            .map(|limits| format!("; {limits}"))
            .unwrap_or_default();
        notes.push(format!(
            "{what}: 'timeout_seconds' limits a plugin's step, and a built-in step does not read it{instead}"
        ));
    }
    if let Some(Value::Object(retry)) = step.get("retry_config") {
        notes.extend(typo_notes(
            &format!("{what} retry_config"),
            retry,
            &crate::bundle::step_fields::RETRY_FIELDS,
        ));
    }
    notes
}

/// For each key of `object` that is none of `known` but close to one (a typo, most likely): a note
/// naming the one it may have meant. A key close to none is left alone (a task may carry fields
/// for other tools, such as a description).
pub fn typo_notes(what: &str, object: &Map<String, Value>, known: &[&str]) -> Vec<String> {
    object
        .keys()
        .filter(|key| !known.contains(&key.as_str()))
        .filter_map(|key| {
            let near = known
                .iter()
                .copied()
                .filter(|k| same_words_but_a_typo(key, k));
            let meant = crate::similar::best_match(key, near, 0.75)?;
            Some(format!(
                "{what}: '{key}' is not a field it reads: did you mean '{meant}'?"
            ))
        })
        .collect()
}

/// How alike two words must be to be one word mistyped (`retry` for `retries` is 0.67; `id` for
/// `mode` 0.33, `image` for `name` 0.44); the whole key must still be 0.75 alike.
const WORD_CLOSE: f64 = 0.6;

/// Whether `key` could be `known` mistyped: its `_`-separated words each the same or close
/// (`sandbox_mod` for `sandbox_mode`), one word left off either end at most (`retry_from_step` for
/// `retry_from_step_id`); not another word in one place (`sandbox_id` is no mistyped
/// `sandbox_mode`, whatever their letters share).
fn same_words_but_a_typo(key: &str, known: &str) -> bool {
    let words: Vec<&str> = key.split('_').collect();
    let known_words: Vec<&str> = known.split('_').collect();
    let (short, long) = match words.len() <= known_words.len() {
        true => (&words, &known_words),
        false => (&known_words, &words),
    };
    // The short one's words against the long one's, from its first word or its second.
    let close_from = |start: usize| {
        short
            .iter()
            .zip(&long[start..])
            .all(|(w, k)| w == k || crate::similar::ratio(w, k) >= WORD_CLOSE)
    };
    match long.len() - short.len() {
        0 => close_from(0),
        1 => close_from(0) || close_from(1),
        _ => false,
    }
}

/// For a key `object` lacks, a key it has that may be that one mistyped (`sandbox_nme`), said as
/// the notes say a field close to one a step reads: `; 'sandbox_nme' is not a field it reads: did you
/// mean 'sandbox_name'?`; empty when it has none.
pub fn mistyped_key(object: &Map<String, Value>, key: &str) -> String {
    let near = object
        .keys()
        .map(String::as_str)
        .filter(|given| *given != key && same_words_but_a_typo(given, key));
    match crate::similar::best_match(key, near, 0.75) {
        Some(given) => format!("; '{given}' is not a field it reads: did you mean '{key}'?"),
        None => String::new(),
    }
}

/// A string field of a step.
pub fn str_field<'a>(step: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    step.get(key).and_then(Value::as_str)
}

/// A problem unless `key` is a non-empty string.
pub fn require_str(step: &Map<String, Value>, key: &str, problems: &mut Vec<String>) {
    match step.get(key) {
        Some(Value::String(s)) if !s.is_empty() => {}
        None | Some(Value::Null) => problems.push(format!(
            "needs '{key}' (a non-empty string){}",
            mistyped_key(step, key)
        )),
        Some(Value::String(_)) => problems.push(format!("'{key}' is empty; give it a value")),
        Some(other) => problems.push(format!("'{key}' must be a non-empty string, got {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_is_told_from_another_word() {
        let Value::Object(step) = serde_json::json!({
            "sandbox_mod": "vm", "sandbox_id": "x", "sandbox_image": "y", "agregator": "any_pass",
            "description": "free text", "retry_from_step": "a"
        }) else {
            unreachable!()
        };
        let known = [
            "sandbox_mode",
            "sandbox_name",
            "aggregator",
            "retry_from_step_id",
        ];
        let notes = typo_notes("step 's'", &step, &known);
        assert_eq!(
            notes,
            [
                "step 's': 'agregator' is not a field it reads: did you mean 'aggregator'?",
                "step 's': 'retry_from_step' is not a field it reads: did you mean 'retry_from_step_id'?",
                "step 's': 'sandbox_mod' is not a field it reads: did you mean 'sandbox_mode'?",
            ]
        );
    }

    #[test]
    fn a_steps_notes_cover_its_limit_and_its_retry_config() {
        let Value::Object(step) = serde_json::json!({
            "id": "s", "type": "deploy_sandbox", "sandbox_name": "b", "timeout_seconds": 5,
            "retry_config": {"max_retry": 2}, "depend_on": ["a"]
        }) else {
            unreachable!()
        };
        let deploy: &dyn BuiltinStep = &deploy_sandbox::DeploySandbox;
        assert_eq!(
            step_notes("s", &step, Some(deploy)),
            [
                "step 's': 'depend_on' is not a field it reads: did you mean 'depends_on'?",
                "step 's': 'timeout_seconds' limits a plugin's step, and a built-in step does not read it",
                "step 's' retry_config: 'max_retry' is not a field it reads: did you mean 'max_retries'?",
            ]
        );
        // A plugin's step reads its limit; its own fields are its plugin's.
        assert_eq!(
            step_notes("s", &step, None),
            [
                "step 's': 'depend_on' is not a field it reads: did you mean 'depends_on'?",
                "step 's' retry_config: 'max_retry' is not a field it reads: did you mean 'max_retries'?",
            ]
        );
    }

    #[test]
    fn a_missing_field_names_the_key_it_may_be_mistyped_as() {
        let Value::Object(step) = serde_json::json!({
            "id": "l", "type": "load_artifact", "sandbox_nme": "box", "artifact": "a",
            "destination_path": "/app"
        }) else {
            unreachable!()
        };
        let load: &dyn BuiltinStep = &load_artifact::LoadArtifact;
        assert_eq!(
            load.check(&step),
            [
                "needs 'sandbox_name' (a non-empty string); 'sandbox_nme' is not a field it reads: did you mean 'sandbox_name'?",
                "needs 'artifact_id' (a non-empty string); 'artifact' is not a field it reads: did you mean 'artifact_id'?",
            ]
        );
        // A key close to none is left unsaid.
        let Value::Object(step) = serde_json::json!({"id": "b", "box": "x"}) else {
            unreachable!()
        };
        assert_eq!(mistyped_key(&step, "sandbox_name"), "");
    }

    #[test]
    fn every_implemented_step_is_a_listed_builtin_and_not_reported_missing() {
        for step in BUILTINS {
            let name = step.type_name();
            assert!(
                crate::builtin_names::TASK_STEPS.contains(&name),
                "{name} is implemented but not in builtin_names::TASK_STEPS"
            );
            assert!(!not_yet_built_in(name), "{name} is implemented");
        }
        let implemented: Vec<&str> = BUILTINS.iter().map(|s| s.type_name()).collect();
        assert_eq!(implemented, crate::builtin_names::RUNNABLE_TASK_STEPS);
        assert!(not_yet_built_in("prompt_agent"));
        assert!(!not_yet_built_in("no_such_step"));
    }
}
