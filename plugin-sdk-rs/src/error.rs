//! Errors a plugin's handlers return; each becomes a JSON-RPC error with a stable kind. Store operations
//! return the store API's [`StoreError`].

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::peer::CallError;
use agent_env_store::StoreError;
use serde_json::Value;

/// A task step that failed: the run prints `failed at step '<id>': <error_type>: <message>`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{error_type}{}{message}", if message.is_empty() { "" } else { ": " })]
pub struct StepError {
    /// The error's type name, e.g. `ValueError` or `FileNotFoundError`.
    pub error_type: String,
    /// What went wrong, for the user.
    pub message: String,
    /// How it came about, sent as `data.traceback` (agent-env shows it with `--verbose` and keeps it
    /// in the task instance): the message, then each cause on a line of its own, `caused by: ...`,
    /// indented one step deeper than the error it caused. `None` for an error with no causes.
    pub traceback: Option<String>,
}

impl StepError {
    /// A failure of type `error_type` saying `message`.
    pub fn new(error_type: impl Into<String>, message: impl Into<String>) -> Self {
        StepError {
            error_type: error_type.into(),
            message: message.into(),
            traceback: None,
        }
    }

    /// A failure of type `error_type` made from `error`: its message, and its
    /// [`source`](std::error::Error::source) chain as the traceback.
    pub fn from_error(error_type: impl Into<String>, error: &dyn std::error::Error) -> Self {
        StepError {
            traceback: cause_chain(error),
            ..StepError::new(error_type, error.to_string())
        }
    }

    /// A `ValueError`, the usual type for a bad step document or input.
    pub fn value(message: impl Into<String>) -> Self {
        StepError::new("ValueError", message)
    }
}

impl From<StepError> for RpcError {
    fn from(e: StepError) -> RpcError {
        let error = RpcError::new(ErrorKind::StepFailed, e.to_string())
            .with_data("error_type", Value::String(e.error_type))
            .with_data("message", Value::String(e.message));
        match e.traceback {
            Some(traceback) => error.with_data("traceback", Value::String(traceback)),
            None => error,
        }
    }
}

impl From<HostCallError> for StepError {
    fn from(e: HostCallError) -> StepError {
        StepError::from_error(host_error_type(&e.to_string()), &e)
    }
}

/// What the error of a host handle used after its call ended says (`host.rs` words it); a step that
/// returns it fails as a `CallEndedError`, as the Python and Go SDKs name it.
pub(crate) const CALL_ENDED: &str = "this host handle was given for has ended";

/// The type a failed host call is told as: `CallEndedError` for a host handle used after its call
/// ended (the name the Python and Go SDKs give it), else `HostCallError`.
fn host_error_type(message: &str) -> &'static str {
    if message.contains(CALL_ENDED) {
        "CallEndedError"
    } else {
        "HostCallError"
    }
}

/// A file or system error in a task step, so `?` works on `std::fs` and friends: typed as Python
/// names the same failures (`FileNotFoundError`, `PermissionError`, `FileExistsError`, else
/// `OSError`), which is how the run shows a step's error type. A `std::io::Error` does not name the
/// file it is about (`No such file or directory (os error 2)`): add it with
/// [`StepResultExt::context`](crate::StepResultExt::context), `std::fs::read(&path).with_context(||
/// format!("reading {}", path.display()))?`.
impl From<std::io::Error> for StepError {
    fn from(e: std::io::Error) -> StepError {
        let error_type = match e.kind() {
            std::io::ErrorKind::NotFound => "FileNotFoundError",
            std::io::ErrorKind::PermissionDenied => "PermissionError",
            std::io::ErrorKind::AlreadyExists => "FileExistsError",
            _ => "OSError",
        };
        StepError::from_error(error_type, &e)
    }
}

/// JSON that a step could not read or write, so `?` works on `serde_json`: a `JSONDecodeError`
/// for text that is not JSON, else a `ValueError` (a value of the wrong shape).
impl From<serde_json::Error> for StepError {
    fn from(e: serde_json::Error) -> StepError {
        let error_type = match e.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                "JSONDecodeError"
            }
            _ => "ValueError",
        };
        StepError::from_error(error_type, &e)
    }
}

/// A store error in a task step. The stores a step reaches through the SDK are the host's
/// ([`crate::HostHandle::objects`] and friends), so it keeps the type name a failed host call has:
/// the run prints `failed at step '<id>': HostCallError: <message>`.
impl From<StoreError> for StepError {
    fn from(e: StoreError) -> StepError {
        StepError::from_error(host_error_type(&e.to_string()), &e)
    }
}

/// A failed host call inside a store operation keeps the host's error kind.
impl From<HostCallError> for StoreError {
    fn from(e: HostCallError) -> StoreError {
        match e {
            HostCallError::Host(e) => StoreError::from(e),
            other => StoreError::Internal(other.to_string()),
        }
    }
}

/// A call from the plugin to the host (`host.*`) that failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostCallError {
    /// The host answered with an error (a missing object stays `not-found`).
    #[error("{0}")]
    Host(RpcError),
    /// The host did not answer (the connection closed, the call timed out, the message was too large).
    #[error("agent-env did not answer {method}: {reason}")]
    Connection {
        /// The host method called.
        method: String,
        /// Why no answer came.
        reason: String,
    },
    /// The host answered with something of the wrong shape.
    #[error("agent-env answered {method} with something unexpected: {detail}")]
    BadAnswer {
        /// The host method called.
        method: String,
        /// What was wrong with the answer.
        detail: String,
    },
}

impl HostCallError {
    /// The wire kind of the host's error.
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            HostCallError::Host(e) => e.kind(),
            _ => None,
        }
    }

    pub(crate) fn from_call(method: &str, e: CallError) -> Self {
        match e {
            CallError::Rpc(e) => HostCallError::Host(e),
            other => HostCallError::Connection {
                method: method.into(),
                reason: other.to_string(),
            },
        }
    }
}

impl From<HostCallError> for RpcError {
    fn from(e: HostCallError) -> RpcError {
        match e {
            HostCallError::Host(e) => e,
            other => RpcError::new(ErrorKind::InternalError, other.to_string()),
        }
    }
}

/// The most causes a traceback lists: a chain longer than that is cut there, so an error whose
/// sources lead back to itself cannot loop.
const MAX_CAUSES: usize = 32;

/// `error`'s message, then each of its causes as `caused by: <message>`, each one indented two spaces
/// deeper than the one before; `None` when `error` has no cause.
pub(crate) fn cause_chain(error: &dyn std::error::Error) -> Option<String> {
    let mut lines = vec![error.to_string()];
    let mut cause = error.source();
    while let Some(e) = cause {
        if lines.len() > MAX_CAUSES {
            break;
        }
        let depth = lines.len() - 1;
        lines.push(format!("{}caused by: {e}", "  ".repeat(depth)));
        cause = e.source();
    }
    (lines.len() > 1).then(|| lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_without_a_message_reads_as_its_type_alone() {
        assert_eq!(
            StepError::new("ValueError", "bad").to_string(),
            "ValueError: bad"
        );
        assert_eq!(StepError::new("ValueError", "").to_string(), "ValueError");
    }

    #[test]
    fn io_and_json_failures_take_the_type_names_python_gives_them() {
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert_eq!(StepError::from(missing).error_type, "FileNotFoundError");
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(StepError::from(denied).error_type, "PermissionError");
        let other = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert_eq!(StepError::from(other).error_type, "OSError");
        let not_json = serde_json::from_str::<Value>("{oops").unwrap_err();
        assert_eq!(StepError::from(not_json).error_type, "JSONDecodeError");
        let wrong_shape = serde_json::from_str::<u32>("\"seven\"").unwrap_err();
        assert_eq!(StepError::from(wrong_shape).error_type, "ValueError");
    }
}
