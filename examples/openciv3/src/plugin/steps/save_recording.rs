//! `save_env_recording`: asks the env's recording extension for the game's files and keeps them as
//! `file` artifacts. Unlike most steps its `fail_task_on_error` defaults to false: a missing recording
//! should not fail a game that was played.

use agent_env_plugin_sdk::{ExecuteResult, LogLevel, StepContext, StepError, TaskStep};
use serde_json::{json, Map, Value};

use super::env::{cannot_call_env, deployed_env, require_extension};
use super::fields::Fields;

pub const TYPE: &str = "save_env_recording";
pub const RECORDING_URI: &str = "urn:openciv3:recording/v1";
/// This step's default, where other steps default to true.
pub const FAIL_TASK_ON_ERROR_DEFAULT: bool = false;

/// The step document, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordingSpec {
    pub id: String,
    pub env_id: String,
    pub extension_uri: String,
    pub formats: Vec<String>,
    pub view: String,
    pub timeout_seconds: f64,
    pub fail_task_on_error: bool,
}

impl RecordingSpec {
    pub fn parse(step: &Map<String, Value>) -> Result<RecordingSpec, StepError> {
        let f = Fields::new(step, TYPE);
        Ok(RecordingSpec {
            id: f.id().to_string(),
            env_id: f.required_str("env_id")?.to_string(),
            extension_uri: f.str_or("extension_uri", RECORDING_URI)?.to_string(),
            formats: f
                .str_list("formats")?
                .into_iter()
                .map(str::to_string)
                .collect(),
            view: f.str_or("view", "spectator")?.to_string(),
            timeout_seconds: f.seconds_or("timeout_seconds", 300.0)?,
            fail_task_on_error: f.bool_or("fail_task_on_error", FAIL_TASK_ON_ERROR_DEFAULT)?,
        })
    }

    /// The step as a document again, every default written out (`from_dict(to_dict())` is the identity).
    pub fn to_dict(&self) -> Map<String, Value> {
        let mut step = Map::new();
        step.insert("id".into(), json!(self.id));
        step.insert("type".into(), json!(TYPE));
        step.insert("env_id".into(), json!(self.env_id));
        step.insert("extension_uri".into(), json!(self.extension_uri));
        step.insert("formats".into(), json!(self.formats));
        step.insert("view".into(), json!(self.view));
        step.insert("timeout_seconds".into(), json!(self.timeout_seconds));
        step.insert("fail_task_on_error".into(), json!(self.fail_task_on_error));
        step
    }
}

/// The artifact id of one recorded file: `<task id or env id>-recording-<instance>.<extension>`, where the
/// extension is everything after the file name's first dot (`game.replay.html` → `replay.html`).
pub fn recording_artifact_id(
    context: &Value,
    env_id: &str,
    file_name: &str,
    random_hex: &str,
) -> String {
    let base = context
        .pointer("/metadata/task_id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .unwrap_or(env_id);
    let instance = context
        .get("instance_id")
        .and_then(Value::as_str)
        .and_then(|id| id.rsplit('/').next())
        .filter(|id| !id.is_empty())
        .unwrap_or(random_hex);
    match file_name.split_once('.') {
        Some((_, extension)) if !extension.is_empty() => {
            format!("{base}-recording-{instance}.{extension}")
        }
        _ => format!("{base}-recording-{instance}"),
    }
}

pub struct SaveRecordingStep;

impl SaveRecordingStep {
    fn record(&self, spec: &RecordingSpec, context: &Value) -> Result<ExecuteResult, StepError> {
        let env = deployed_env(context, &spec.env_id)?;
        require_extension(env, &spec.env_id, &spec.extension_uri)?;
        Err(cannot_call_env(
            TYPE,
            &spec.env_id,
            &format!("fetching the recording through {}", spec.extension_uri),
        ))
    }
}

impl TaskStep for SaveRecordingStep {
    fn type_name(&self) -> &str {
        TYPE
    }

    fn class(&self) -> &str {
        "SaveEnvRecordingStep"
    }

    fn description(&self) -> Option<&str> {
        Some("Keep the env's game recording (MP4, HTML replay) as file artifacts")
    }

    fn validate(&self, step: &Map<String, Value>) -> Result<(), StepError> {
        RecordingSpec::parse(step).map(|_| ())
    }

    /// A failure with `fail_task_on_error` false (the default when the document gives none) is recorded
    /// under `metadata.recording_errors.<step id>` and the task goes on; with true it fails the step.
    fn execute(
        &self,
        ctx: &StepContext<'_>,
        step: &Map<String, Value>,
        context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        let spec = RecordingSpec::parse(step)?;
        match self.record(&spec, context) {
            Ok(result) => Ok(result),
            Err(err) if !spec.fail_task_on_error => {
                ctx.host().log(
                    LogLevel::Warning,
                    &format!("{TYPE} step '{}' kept no recording: {err}", spec.id),
                );
                let mut metadata = Map::new();
                metadata.insert(
                    "recording_errors".into(),
                    json!({ spec.id.clone(): {"error_type": err.error_type, "message": err.message} }),
                );
                Ok(ExecuteResult { metadata })
            }
            Err(err) => Err(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_round_trips_through_to_dict_and_defaults_to_not_failing_the_task() {
        let step = json!({"id": "recording", "type": TYPE, "env_id": "openciv3"});
        let spec = RecordingSpec::parse(step.as_object().unwrap()).unwrap();
        assert!(!spec.fail_task_on_error);
        assert_eq!(
            (
                spec.extension_uri.as_str(),
                spec.view.as_str(),
                spec.timeout_seconds
            ),
            (RECORDING_URI, "spectator", 300.0)
        );
        let again = RecordingSpec::parse(&spec.to_dict()).unwrap();
        assert_eq!(again, spec);
    }

    #[test]
    fn artifact_ids_name_the_task_the_instance_and_the_extension() {
        let context = json!({"instance_id": "i1", "metadata": {"task_id": "smoke"}});
        assert_eq!(
            recording_artifact_id(&context, "openciv3", "game.mp4", "ab12"),
            "smoke-recording-i1.mp4"
        );
        assert_eq!(
            recording_artifact_id(&context, "openciv3", "game.replay.html", "ab12"),
            "smoke-recording-i1.replay.html"
        );
        let bare = json!({});
        assert_eq!(
            recording_artifact_id(&bare, "openciv3", "game.mp4", "ab12"),
            "openciv3-recording-ab12.mp4"
        );
    }
}
