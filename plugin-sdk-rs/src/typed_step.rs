//! Task steps whose document is read into a type of the plugin's own ([`TypedStep`]), beside the
//! untyped [`crate::TaskStep`], which gets the document as a JSON map.

use agent_env_protocol::methods::ExecuteResult;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::context::StepContext;
use crate::error::StepError;
use crate::step::TaskStep;

/// A task step whose document is read into [`TypedStep::Input`] before it runs. Register it with
/// [`crate::Plugin::typed_step`].
///
/// The whole step document is read, `id` and `type` included, so the input type either names the
/// fields it needs and ignores the others (serde's default), or keeps them with `#[serde(flatten)]`. A
/// document that does not fit fails the step with a `ValueError` naming the step and what is wrong,
/// and the host sees the same failure while it plans the run, before any step runs (`task_step.validate`).
///
/// ```
/// use agent_env_plugin_sdk::{json, ExecuteResult, Map, StepContext, StepError, TypedStep, Value};
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct CountInput {
///     text: String,
///     #[serde(default = "one")]
///     min_words: usize,
///     verifier_id: Option<String>,
/// }
/// fn one() -> usize { 1 }
///
/// struct CountWords;
///
/// impl TypedStep for CountWords {
///     type Input = CountInput;
///     fn type_name(&self) -> &str { "count_words" }
///     fn class(&self) -> &str { "CountWords" }
///     fn execute(&self, _ctx: &StepContext<'_>, input: CountInput, _context: &Value)
///         -> Result<ExecuteResult, StepError> {
///         let words = input.text.split_whitespace().count();
///         let score = if words >= input.min_words { 1.0 } else { 0.0 };
///         let verifier = input.verifier_id.unwrap_or_else(|| "count_words".into());
///         let mut metadata = Map::new();
///         metadata.insert("verifications".into(), json!({ verifier: {"score": score, "words": words} }));
///         Ok(ExecuteResult { metadata })
///     }
/// }
///
/// // What the SDK does with a document before `execute`:
/// let doc = json!({"id": "c", "type": "count_words", "text": "one two three", "min_words": 2});
/// let input: CountInput = serde_json::from_value(doc).unwrap();
/// assert_eq!(input.min_words, 2);
/// ```
pub trait TypedStep: Send + Sync + 'static {
    /// What the step document is read into.
    type Input: DeserializeOwned;

    /// The `type` task documents use for this step; also its name under `[provides.task_steps]`.
    fn type_name(&self) -> &str;

    /// The class label (the manifest's value under `[provides.task_steps]`).
    fn class(&self) -> &str;

    /// Runs the step with its document read into `input`; `context` is the run's context. What the
    /// result's `metadata` holds is merged into `context.metadata`.
    fn execute(
        &self,
        ctx: &StepContext<'_>,
        input: Self::Input,
        context: &Value,
    ) -> Result<ExecuteResult, StepError>;

    /// A one-line description.
    fn description(&self) -> Option<&str> {
        None
    }
}

/// A [`TypedStep`] seen as a [`TaskStep`]: reads the document, then runs the typed step.
pub(crate) struct Typed<S>(pub(crate) S);

impl<S: TypedStep> Typed<S> {
    fn input(&self, step: &Map<String, Value>) -> Result<S::Input, StepError> {
        // Read with the path to what did not fit, so the message names the field.
        serde_path_to_error::deserialize(Value::Object(step.clone())).map_err(|e| {
            let id = step.get("id").and_then(Value::as_str).unwrap_or("?");
            let at = match e.path().to_string() {
                path if path == "." => String::new(),
                path => format!("{path}: "),
            };
            StepError::value(format!(
                "step '{id}' of type '{}' does not fit what the step takes: {at}{}",
                self.0.type_name(),
                e.inner()
            ))
        })
    }
}

impl<S: TypedStep> TaskStep for Typed<S> {
    fn type_name(&self) -> &str {
        self.0.type_name()
    }

    fn class(&self) -> &str {
        self.0.class()
    }

    fn execute(
        &self,
        ctx: &StepContext<'_>,
        step: &Map<String, Value>,
        context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        let input = self.input(step)?;
        self.0.execute(ctx, input, context)
    }

    fn validates(&self) -> bool {
        true
    }

    fn validate(&self, step: &Map<String, Value>) -> Result<(), StepError> {
        self.input(step).map(|_| ())
    }

    fn description(&self) -> Option<&str> {
        self.0.description()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize)]
    struct Input {
        text: String,
    }

    struct Echo;

    impl TypedStep for Echo {
        type Input = Input;
        fn type_name(&self) -> &str {
            "echo"
        }
        fn class(&self) -> &str {
            "Echo"
        }
        fn execute(
            &self,
            _ctx: &StepContext<'_>,
            input: Input,
            _context: &Value,
        ) -> Result<ExecuteResult, StepError> {
            let mut metadata = Map::new();
            metadata.insert("text".into(), json!(input.text));
            Ok(ExecuteResult { metadata })
        }
    }

    fn doc(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn a_document_that_fits_validates_and_one_that_does_not_names_the_step_and_the_field() {
        let step = Typed(Echo);
        assert!(step.validates());
        assert!(step
            .validate(&doc(json!({"id": "e", "type": "echo", "text": "hi"})))
            .is_ok());
        let err = step
            .validate(&doc(json!({"id": "e1", "type": "echo", "text": 5})))
            .unwrap_err();
        assert_eq!(err.error_type, "ValueError");
        assert!(
            err.message.contains("step 'e1' of type 'echo'") && err.message.contains("string"),
            "{}",
            err.message
        );
        let missing = step.validate(&doc(json!({"id": "e2"}))).unwrap_err();
        assert!(missing.message.contains("text"), "{}", missing.message);
    }
}
