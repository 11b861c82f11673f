//! Reading a step document's fields with the messages a task author sees.

use agent_env_plugin_sdk::StepError;
use serde_json::{Map, Value};

/// The fields of one step document, named in errors as `<type> step '<id>'`.
pub struct Fields<'a> {
    step: &'a Map<String, Value>,
    type_name: &'static str,
}

impl<'a> Fields<'a> {
    pub fn new(step: &'a Map<String, Value>, type_name: &'static str) -> Fields<'a> {
        Fields { step, type_name }
    }

    /// The step's `id` (empty when the document has none).
    pub fn id(&self) -> &'a str {
        self.step.get("id").and_then(Value::as_str).unwrap_or("")
    }

    pub fn error(&self, message: impl std::fmt::Display) -> StepError {
        StepError::value(format!(
            "{} step '{}': {message}",
            self.type_name,
            self.id()
        ))
    }

    fn present(&self, name: &str) -> Option<&'a Value> {
        self.step.get(name).filter(|v| !v.is_null())
    }

    pub fn required_str(&self, name: &str) -> Result<&'a str, StepError> {
        match self.present(name) {
            Some(Value::String(text)) if !text.trim().is_empty() => Ok(text),
            Some(other) => {
                Err(self.error(format!("{name} must be a non-empty string, got {other}")))
            }
            None => Err(self.error(format!("{name} is required"))),
        }
    }

    pub fn optional_str(&self, name: &str) -> Result<Option<&'a str>, StepError> {
        match self.present(name) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(self.error(format!("{name} must be a string, got {other}"))),
        }
    }

    pub fn str_or(&self, name: &str, default: &'a str) -> Result<&'a str, StepError> {
        Ok(self.optional_str(name)?.unwrap_or(default))
    }

    /// A whole number of at least `min`.
    pub fn int_or(&self, name: &str, default: i64, min: i64) -> Result<i64, StepError> {
        let value = match self.present(name) {
            None => default,
            Some(Value::Number(n)) if n.is_i64() => n.as_i64().unwrap_or(default),
            Some(other) => {
                return Err(self.error(format!("{name} must be a whole number, got {other}")))
            }
        };
        if value < min {
            return Err(self.error(format!("{name} must be at least {min}, got {value}")));
        }
        Ok(value)
    }

    pub fn required_int(&self, name: &str, min: i64) -> Result<i64, StepError> {
        if self.present(name).is_none() {
            return Err(self.error(format!("{name} is required")));
        }
        self.int_or(name, 0, min)
    }

    /// A number of seconds greater than zero.
    pub fn seconds_or(&self, name: &str, default: f64) -> Result<f64, StepError> {
        let value = match self.present(name) {
            None => default,
            Some(Value::Number(n)) => n.as_f64().unwrap_or(default),
            Some(other) => {
                return Err(self.error(format!("{name} must be a number of seconds, got {other}")))
            }
        };
        if value <= 0.0 || !value.is_finite() {
            return Err(self.error(format!("{name} must be more than 0 seconds, got {value}")));
        }
        Ok(value)
    }

    pub fn bool_or(&self, name: &str, default: bool) -> Result<bool, StepError> {
        match self.present(name) {
            None => Ok(default),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(other) => Err(self.error(format!("{name} must be true or false, got {other}"))),
        }
    }

    /// A list of strings (absent: empty).
    pub fn str_list(&self, name: &str) -> Result<Vec<&'a str>, StepError> {
        match self.present(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str().ok_or_else(|| {
                        self.error(format!(
                            "{name} must be a list of strings, got {item} in it"
                        ))
                    })
                })
                .collect(),
            Some(other) => {
                Err(self.error(format!("{name} must be a list of strings, got {other}")))
            }
        }
    }

    /// A table of string to string (absent: empty), in document order.
    pub fn str_map(&self, name: &str) -> Result<Vec<(&'a str, &'a str)>, StepError> {
        match self.present(name) {
            None => Ok(Vec::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(key, value)| {
                    value.as_str().map(|v| (key.as_str(), v)).ok_or_else(|| {
                        self.error(format!("{name}.{key} must be a string, got {value}"))
                    })
                })
                .collect(),
            Some(other) => Err(self.error(format!(
                "{name} must be a table of names to strings, got {other}"
            ))),
        }
    }

    /// `humans`: a table of name to civ, or a list of names (civs assigned later).
    pub fn names_with_optional_civ(
        &self,
        name: &str,
    ) -> Result<Vec<(&'a str, Option<&'a str>)>, StepError> {
        match self.present(name) {
            Some(Value::Array(_)) => Ok(self
                .str_list(name)?
                .into_iter()
                .map(|n| (n, None))
                .collect()),
            Some(Value::Object(_)) => Ok(self
                .str_map(name)?
                .into_iter()
                .map(|(n, c)| (n, Some(c)))
                .collect()),
            None => Ok(Vec::new()),
            Some(other) => Err(self.error(format!(
                "{name} must be a list of names or a table of names to civs, got {other}"
            ))),
        }
    }
}
