//! What a step's error says of how it came about: an error's `source()` chain kept as the traceback
//! (`caused by: ...`, a cause a line, as the Go SDK writes it), and context added on the way out
//! ([`StepError::context`], and [`StepResultExt`] on a `Result`), so a failure that does not say what
//! it is about (a `std::io::Error` names no file) can say it.

use std::fmt;

use crate::error::StepError;

impl StepError {
    /// The same failure, its message led by `what` (`reading /data/essay.txt: No such file or
    /// directory (os error 2)`), and the message it had before kept as the first cause in the
    /// traceback, as `fmt.Errorf("...: %w", err)` is in the Go SDK. The error type stays.
    pub fn context(self, what: impl fmt::Display) -> StepError {
        let message = format!("{what}: {}", self.message);
        let mut lines = vec![message.clone(), format!("caused by: {}", self.message)];
        if let Some(traceback) = &self.traceback {
            let mut before = traceback.lines().peekable();
            // A traceback of causes starts with the message it explains, the line just added.
            if before.peek() == Some(&self.message.as_str()) {
                before.next();
            }
            lines.extend(before.map(|line| format!("  {line}")));
        }
        StepError {
            error_type: self.error_type,
            message,
            traceback: Some(lines.join("\n")),
        }
    }
}

/// [`StepError::context`] on a `Result` whose error becomes a [`StepError`] (`std::io::Error`,
/// `serde_json::Error`, [`crate::StoreError`], [`crate::HostCallError`], a `StepError`):
///
/// ```
/// use agent_env_plugin_sdk::{StepError, StepResultExt};
///
/// fn read_essay(path: &std::path::Path) -> Result<Vec<u8>, StepError> {
///     std::fs::read(path).with_context(|| format!("reading the essay {}", path.display()))
/// }
///
/// let err = read_essay("/no/such/essay.txt".as_ref()).unwrap_err();
/// assert_eq!(err.error_type, "FileNotFoundError");
/// assert!(err.message.starts_with("reading the essay /no/such/essay.txt: "));
/// ```
pub trait StepResultExt<T> {
    /// The error, if any, as a [`StepError`] led by `what`.
    fn context(self, what: impl fmt::Display) -> Result<T, StepError>;

    /// As [`StepResultExt::context`], with `what` made only when there is an error.
    fn with_context<D: fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T, StepError>;
}

impl<T, E: Into<StepError>> StepResultExt<T> for Result<T, E> {
    fn context(self, what: impl fmt::Display) -> Result<T, StepError> {
        self.map_err(|e| e.into().context(what))
    }

    fn with_context<D: fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T, StepError> {
        self.map_err(|e| e.into().context(what()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_env_protocol::message::RpcError;
    use std::error::Error;

    /// An error with an optional cause, to build chains of any length.
    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl Error for Layer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1.as_deref().map(|e| e as &(dyn Error + 'static))
        }
    }

    #[test]
    fn each_cause_is_a_line_one_step_deeper() {
        let error = Layer(
            "saving the grade",
            Some(Box::new(Layer(
                "writing grades.json",
                Some(Box::new(Layer("disk full", None))),
            ))),
        );
        let step = StepError::from_error("OSError", &error);
        assert_eq!(step.message, "saving the grade");
        assert_eq!(
            step.traceback.as_deref(),
            Some("saving the grade\ncaused by: writing grades.json\n  caused by: disk full")
        );
        assert_eq!(
            StepError::from_error("OSError", &Layer("alone", None)).traceback,
            None
        );
    }

    #[test]
    fn an_io_error_that_wraps_another_keeps_it_as_a_cause() {
        let inner = std::io::Error::other(Layer("the socket closed", None));
        let outer = std::io::Error::new(
            std::io::ErrorKind::NotFound,
            Layer(
                "no such essay",
                Some(Box::new(Layer("the index is stale", None))),
            ),
        );
        assert_eq!(StepError::from(inner).traceback, None);
        let step = StepError::from(outer);
        assert_eq!(step.error_type, "FileNotFoundError");
        assert_eq!(
            step.traceback.as_deref(),
            Some("no such essay\ncaused by: the index is stale")
        );
    }

    #[test]
    fn context_names_what_failed_and_keeps_the_io_error_as_the_cause() {
        let path = std::env::temp_dir()
            .join("agent-env-sdk-no-such-dir")
            .join("essay.txt");
        let err = std::fs::read(&path)
            .with_context(|| format!("reading {}", path.display()))
            .unwrap_err();
        let io = std::fs::read(&path).unwrap_err().to_string();
        assert_eq!(err.error_type, "FileNotFoundError");
        assert_eq!(err.message, format!("reading {}: {io}", path.display()));
        assert_eq!(
            err.traceback.as_deref(),
            Some(format!("{}\ncaused by: {io}", err.message).as_str())
        );
    }

    #[test]
    fn context_on_context_indents_the_earlier_causes() {
        let error = Layer("disk full", Some(Box::new(Layer("quota reached", None))));
        let step = StepError::from_error("OSError", &error)
            .context("writing grades.json")
            .context("saving the grade");
        assert_eq!(
            step.message,
            "saving the grade: writing grades.json: disk full"
        );
        assert_eq!(
            step.traceback.as_deref(),
            Some(
                "saving the grade: writing grades.json: disk full\n\
                 caused by: writing grades.json: disk full\n  \
                 caused by: disk full\n    \
                 caused by: quota reached"
            )
        );
        assert_eq!(step.error_type, "OSError");
    }

    #[test]
    fn the_traceback_goes_in_the_data_and_only_when_there_is_one() {
        let plain = RpcError::from(StepError::value("essay is empty"));
        assert_eq!(plain.message, "ValueError: essay is empty");
        assert!(plain
            .data
            .as_ref()
            .and_then(|d| d.get("traceback"))
            .is_none());
        let with = RpcError::from(StepError::value("essay is empty").context("grading e1"));
        let data = with.data.as_ref().map(|d| d["traceback"].clone());
        assert_eq!(
            data,
            Some(serde_json::json!(
                "grading e1: essay is empty\ncaused by: essay is empty"
            ))
        );
        assert_eq!(with.message, "ValueError: grading e1: essay is empty");
    }
}
