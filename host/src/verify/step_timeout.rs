//! A task step's own time limit, its `timeout_seconds`: a number of seconds above 0 and below
//! [`MAX_SECONDS`], as a run reads it. A value that is none (0, below 0, a string, too large) is a
//! mistake said before anything starts, never a limit quietly swapped for the host's call timeout.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::config::{CALL_TIMEOUT_VAR, MAX_SECONDS};

/// A step's `timeout_seconds` that is not a number of seconds a step can be given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "'timeout_seconds' must be a number of seconds above 0 and below {MAX_SECONDS}, got {value}: give the step's \
     limit in seconds, e.g. \"timeout_seconds\": 30, or leave it out for the host's call timeout ({CALL_TIMEOUT_VAR})"
)]
pub struct StepTimeoutError {
    /// The value the step gives, as JSON.
    pub value: Value,
}

/// The step's own limit: `None` when it gives no `timeout_seconds` (or `null`), the limit when it
/// gives a number of seconds above 0 and below [`MAX_SECONDS`], else the mistake.
pub fn step_timeout(step: &Map<String, Value>) -> Result<Option<Duration>, StepTimeoutError> {
    let Some(value) = step.get("timeout_seconds").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    value
        .as_f64()
        .filter(|s| s.is_finite() && *s > 0.0 && *s < MAX_SECONDS)
        .map(|s| Some(Duration::from_secs_f64(s)))
        .ok_or_else(|| StepTimeoutError {
            value: value.clone(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn timeout(step: Value) -> Result<Option<Duration>, StepTimeoutError> {
        match step {
            Value::Object(step) => step_timeout(&step),
            other => panic!("not a step: {other}"),
        }
    }

    #[test]
    fn a_number_of_seconds_above_0_is_the_steps_limit_and_none_is_no_limit_of_its_own() {
        assert_eq!(
            timeout(json!({"timeout_seconds": 0.5})),
            Ok(Some(Duration::from_millis(500)))
        );
        assert_eq!(timeout(json!({"type": "x"})), Ok(None));
        assert_eq!(timeout(json!({"timeout_seconds": null})), Ok(None));
    }

    #[test]
    fn zero_below_zero_a_string_or_too_many_seconds_is_a_mistake_naming_the_value() {
        for bad in [json!(0), json!(-1), json!("3"), json!(1e9), json!(true)] {
            let e = timeout(json!({"timeout_seconds": bad.clone()})).unwrap_err();
            assert_eq!(e.value, bad);
            assert!(
                e.to_string().starts_with(&format!(
                    "'timeout_seconds' must be a number of seconds above 0 and below 1000000000, got {bad}: "
                )),
                "{e}"
            );
        }
    }
}
