//! Errors a plugin's handlers return; each becomes a JSON-RPC error with a stable kind.

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::peer::CallError;
use serde_json::Value;

/// A task step that failed: the run prints `failed at step '<id>': <error_type>: <message>`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{error_type}: {message}")]
pub struct StepError {
    /// The error's type name, e.g. `ValueError` or `FileNotFoundError`.
    pub error_type: String,
    pub message: String,
}

impl StepError {
    pub fn new(error_type: impl Into<String>, message: impl Into<String>) -> Self {
        StepError {
            error_type: error_type.into(),
            message: message.into(),
        }
    }

    /// A `ValueError`, the usual type for a bad step document or input.
    pub fn value(message: impl Into<String>) -> Self {
        StepError::new("ValueError", message)
    }
}

impl From<StepError> for RpcError {
    fn from(e: StepError) -> RpcError {
        RpcError::new(ErrorKind::StepFailed, e.to_string())
            .with_data("error_type", Value::String(e.error_type))
            .with_data("message", Value::String(e.message))
    }
}

impl From<HostCallError> for StepError {
    fn from(e: HostCallError) -> StepError {
        StepError::new("HostCallError", e.to_string())
    }
}

/// A store operation that failed, with its kind (`not-found`, `already-exists`, ...).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct StoreError {
    pub kind: ErrorKind,
    pub message: String,
}

impl StoreError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        StoreError {
            kind,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        StoreError::new(ErrorKind::NotFound, message)
    }

    pub fn already_exists(message: impl Into<String>) -> Self {
        StoreError::new(ErrorKind::AlreadyExists, message)
    }

    pub fn invalid_value(message: impl Into<String>) -> Self {
        StoreError::new(ErrorKind::InvalidValue, message)
    }

    pub fn config(message: impl Into<String>) -> Self {
        StoreError::new(ErrorKind::ConfigError, message)
    }

    pub fn io(e: &std::io::Error, what: &str) -> Self {
        StoreError::new(ErrorKind::IoError, format!("{what}: {e}"))
    }

    pub fn not_supported(op: &str) -> Self {
        StoreError::new(
            ErrorKind::NotSupported,
            format!("this store does not implement {op}"),
        )
    }
}

impl From<StoreError> for RpcError {
    fn from(e: StoreError) -> RpcError {
        RpcError::new(e.kind, e.message)
    }
}

impl From<HostCallError> for StoreError {
    fn from(e: HostCallError) -> StoreError {
        StoreError::new(e.kind().unwrap_or(ErrorKind::InternalError), e.to_string())
    }
}

/// A call from the plugin to the host (`host.*`) that failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostCallError {
    /// The host answered with an error (a missing object stays `not-found`).
    #[error("{0}")]
    Host(RpcError),
    #[error("agent-env did not answer {method}: {reason}")]
    Connection { method: String, reason: String },
    #[error("agent-env answered {method} with something unexpected: {detail}")]
    BadAnswer { method: String, detail: String },
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
