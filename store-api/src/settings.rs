//! What is wrong with one store's config table: every problem found, not only the first. A store built
//! from its settings reads each key on its own and keeps each problem, so `agent-env config check` can
//! list them one by one, and a store that fails to build names them all in one [`StoreError`].

use crate::error::StoreError;

/// Every problem found in one store's config table, in the order found. Each is a sentence that names
/// the store and the key (`S3ObjectStore: region must be a string, got 5`); shown as one message, they
/// are joined by `; `.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
#[error("{}", .found.join("; "))]
pub struct SettingsProblems {
    found: Vec<String>,
}

impl SettingsProblems {
    /// No problem yet.
    pub fn new() -> Self {
        SettingsProblems::default()
    }

    /// Keeps one problem.
    pub fn push(&mut self, problem: impl Into<String>) {
        self.found.push(problem.into());
    }

    /// The value of `result`, or `None` with its problems kept: how a reader goes on to the next key
    /// after a bad one.
    pub fn keep<T, E: Into<SettingsProblems>>(&mut self, result: Result<T, E>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(problems) => {
                self.found.extend(problems.into().found);
                None
            }
        }
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// The problems, in the order found.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.found.iter().map(String::as_str)
    }

    /// `Ok(value)` when nothing was found, else these problems.
    pub fn into_result<T>(self, value: T) -> Result<T, SettingsProblems> {
        if self.found.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

/// One problem: the error's sentence (a constructor's check of a setting, say).
impl From<StoreError> for SettingsProblems {
    fn from(err: StoreError) -> Self {
        SettingsProblems {
            found: vec![err.to_string()],
        }
    }
}

/// One problem, as written.
impl From<String> for SettingsProblems {
    fn from(problem: String) -> Self {
        SettingsProblems {
            found: vec![problem],
        }
    }
}

/// A store that could not be built from its settings fails with a config error naming every problem.
impl From<SettingsProblems> for StoreError {
    fn from(problems: SettingsProblems) -> Self {
        StoreError::Config(problems.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_problem_is_kept_and_named_in_one_error() {
        let mut problems = SettingsProblems::new();
        assert_eq!(problems.keep(Ok::<_, StoreError>(1)), Some(1));
        assert!(problems.is_empty());
        let bad: Result<u8, StoreError> = Err(StoreError::Config("S: a must be x".into()));
        assert_eq!(problems.keep(bad), None);
        problems.keep(Err::<(), _>("S: b must be y".to_string()));
        assert_eq!(
            problems.iter().collect::<Vec<_>>(),
            ["S: a must be x", "S: b must be y"]
        );
        let err = StoreError::from(problems.clone().into_result(()).unwrap_err());
        assert!(matches!(&err, StoreError::Config(m) if m == "S: a must be x; S: b must be y"));
        assert_eq!(SettingsProblems::new().into_result(7), Ok(7));
    }
}
