//! Task steps: a `type` the task documents name, and an `execute`.

use agent_env_protocol::methods::ExecuteResult;
use serde_json::{Map, Value};

use crate::context::StepContext;
use crate::error::StepError;

/// Whether `validate` (a step's [`TaskStep::validate`]) is the step's own rather than the default:
/// it is called with an empty document, and is the step's own unless it accepted it through the
/// default. A panic counts as the step's own (the default never panics) and is not printed.
pub(crate) fn implements_validate(
    validate: impl FnOnce(&Map<String, Value>) -> Result<(), StepError>,
) -> bool {
    let empty = Map::new();
    let (answer, reached_default) =
        crate::defaults::reached_default(|| crate::panics::catching_quietly(|| validate(&empty)));
    match answer {
        Ok(Ok(())) => !reached_default,
        Ok(Err(_)) | Err(_) => true,
    }
}

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

    /// Whether the host calls [`TaskStep::validate`] while it plans a run (the handshake lists
    /// `validate` among the step's methods). You need not implement it: by default it is true exactly
    /// when `validate` is implemented, which the SDK learns by calling `validate` once, when the step is
    /// registered, with an empty document (the default `validate` says it is the default; any answer
    /// of yours, a refusal or a panic included, says it is not). Override it only to turn off a
    /// `validate` you implemented.
    fn validates(&self) -> bool {
        implements_validate(|doc| self.validate(doc))
    }

    /// Checks a step document before any step runs: the host calls it for each step of this type
    /// while it plans a run, and an error fails the run before anything runs, with your message.
    /// Implementing it is enough for the host to call it. Keep it to reading the document: it gets no
    /// host, and it is also called once with an empty document when the step is registered.
    /// The default accepts every document.
    fn validate(&self, _step: &Map<String, Value>) -> Result<(), StepError> {
        crate::defaults::mark();
        Ok(())
    }

    /// A one-line description.
    fn description(&self) -> Option<&str> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Validate = fn(&Map<String, Value>) -> Result<(), StepError>;

    /// A step whose `validate` is `validate`, or does what the default does when `None`.
    struct Probe {
        validate: Option<Validate>,
    }

    impl TaskStep for Probe {
        fn type_name(&self) -> &str {
            "probe"
        }
        fn class(&self) -> &str {
            "Probe"
        }
        fn execute(
            &self,
            _: &StepContext<'_>,
            _: &Map<String, Value>,
            _: &Value,
        ) -> Result<ExecuteResult, StepError> {
            Err(StepError::value("not run in these tests"))
        }
        fn validate(&self, step: &Map<String, Value>) -> Result<(), StepError> {
            match self.validate {
                Some(validate) => validate(step),
                // What the default does.
                None => {
                    crate::defaults::mark();
                    Ok(())
                }
            }
        }
    }

    /// A step that keeps every default.
    struct Plain;

    impl TaskStep for Plain {
        fn type_name(&self) -> &str {
            "plain"
        }
        fn class(&self) -> &str {
            "Plain"
        }
        fn execute(
            &self,
            _: &StepContext<'_>,
            _: &Map<String, Value>,
            _: &Value,
        ) -> Result<ExecuteResult, StepError> {
            Err(StepError::value("not run in these tests"))
        }
    }

    /// A step that hands `validate` to the one it wraps.
    struct Wrapping<S>(S);

    impl<S: TaskStep> TaskStep for Wrapping<S> {
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
            self.0.execute(ctx, step, context)
        }
        fn validate(&self, step: &Map<String, Value>) -> Result<(), StepError> {
            self.0.validate(step)
        }
    }

    #[test]
    fn a_step_validates_exactly_when_its_validate_is_its_own() {
        assert!(!Plain.validates());
        assert_eq!(Plain.validate(&Map::new()), Ok(()));
        assert!(!Wrapping(Plain).validates());
        let refuses: Validate = |_| Err(StepError::value("needs a path"));
        let accepts: Validate = |_| Ok(());
        // Indexing a map panics on a missing key: the empty document does.
        let panics: fn(&Map<String, Value>) -> Result<(), StepError> = |step| match step["path"] {
            Value::String(_) => Ok(()),
            _ => Err(StepError::value("needs a string path")),
        };
        for own in [refuses, accepts, panics] {
            assert!(Probe {
                validate: Some(own)
            }
            .validates());
        }
        assert!(!Probe { validate: None }.validates());
        let wrapped = Wrapping(Probe {
            validate: Some(refuses),
        });
        assert!(wrapped.validates());
    }
}
