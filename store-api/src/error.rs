//! The one error type every store returns, whatever its kind or backend.
//!
//! Each variant maps to a wire [`ErrorKind`], so an error raised by a plugin store comes back to the host as the
//! same variant: a missing object is [`StoreError::NotFound`] whether the store runs in-process or in a child.

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::RpcError;
use serde_json::Value;

/// What went wrong in a store operation. The message is the user-facing sentence.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No object, document or secret at that address (`No object at <url>.`).
    #[error("{0}")]
    NotFound(String),
    /// A write-once object exists already (`Object already exists at <path>.`).
    #[error("{0}")]
    AlreadyExists(String),
    /// A URL that is not this store's.
    #[error("{0}")]
    ForeignUrl(String),
    /// An argument is wrong (a key that escapes the root, a reserved key, an id it refuses).
    #[error("{0}")]
    InvalidValue(String),
    /// A unique index refused a document.
    #[error("{0}")]
    DuplicateKey(String),
    /// A guarded or versioned write lost a race.
    #[error("{0}")]
    ConcurrentModification(String),
    /// The store's configuration is wrong (unknown key, bad value, un-creatable directory).
    #[error("{0}")]
    Config(String),
    /// The filesystem or database failed. `raw_os_error` keeps the errno so the kind survives the pipe.
    #[error("{message}")]
    Io {
        /// What was being done, and the OS's words for what failed.
        message: String,
        /// The OS error number, when there was one.
        raw_os_error: Option<i32>,
    },
    /// The store does not implement this operation.
    #[error("{0}")]
    NotSupported(String),
    /// Anything else: a plugin that crashed mid-call, an answer of the wrong shape.
    #[error("{0}")]
    Internal(String),
}

/// Results of store operations.
pub type StoreResult<T> = Result<T, StoreError>;

impl StoreError {
    /// `No object at <url>.`
    pub fn object_not_found(url: &str) -> Self {
        StoreError::NotFound(format!("No object at {url}."))
    }

    /// `Object already exists at <location>.`
    pub fn object_exists(location: &str) -> Self {
        StoreError::AlreadyExists(format!("Object already exists at {location}."))
    }

    /// The error of a wire kind, with its message: how a store built on a library with its own error type
    /// (one that knows its [`ErrorKind`]) reports through this one. Kinds a store does not return (a
    /// protocol error, say) are [`StoreError::Internal`]; an I/O error made this way carries no errno (use
    /// [`StoreError::io`] when there is an `std::io::Error`).
    pub fn from_kind(kind: ErrorKind, message: impl Into<String>) -> Self {
        let message = message.into();
        match kind {
            ErrorKind::NotFound => StoreError::NotFound(message),
            ErrorKind::AlreadyExists => StoreError::AlreadyExists(message),
            ErrorKind::ForeignUrl => StoreError::ForeignUrl(message),
            ErrorKind::InvalidValue | ErrorKind::InvalidParams => StoreError::InvalidValue(message),
            ErrorKind::DuplicateKey => StoreError::DuplicateKey(message),
            ErrorKind::ConcurrentModification => StoreError::ConcurrentModification(message),
            ErrorKind::ConfigError => StoreError::Config(message),
            ErrorKind::IoError => StoreError::Io {
                message,
                raw_os_error: None,
            },
            ErrorKind::NotSupported | ErrorKind::MethodNotFound => {
                StoreError::NotSupported(message)
            }
            _ => StoreError::Internal(message),
        }
    }

    /// What a trait method a store leaves at its default answers: `this store does not implement <op>`.
    pub fn unimplemented(op: &str) -> Self {
        StoreError::NotSupported(format!("this store does not implement {op}"))
    }

    /// An I/O failure, with what was being done: `<context>: <os error>`.
    pub fn io(context: impl std::fmt::Display, err: &std::io::Error) -> Self {
        StoreError::Io {
            message: format!("{context}: {err}"),
            raw_os_error: err.raw_os_error(),
        }
    }

    /// The wire kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            StoreError::NotFound(_) => ErrorKind::NotFound,
            StoreError::AlreadyExists(_) => ErrorKind::AlreadyExists,
            StoreError::ForeignUrl(_) => ErrorKind::ForeignUrl,
            StoreError::InvalidValue(_) => ErrorKind::InvalidValue,
            StoreError::DuplicateKey(_) => ErrorKind::DuplicateKey,
            StoreError::ConcurrentModification(_) => ErrorKind::ConcurrentModification,
            StoreError::Config(_) => ErrorKind::ConfigError,
            StoreError::Io { .. } => ErrorKind::IoError,
            StoreError::NotSupported(_) => ErrorKind::NotSupported,
            StoreError::Internal(_) => ErrorKind::InternalError,
        }
    }

    /// Whether this is the Python original's `ValueError` family (a foreign URL or a bad argument).
    pub fn is_value_error(&self) -> bool {
        matches!(
            self,
            StoreError::ForeignUrl(_) | StoreError::InvalidValue(_) | StoreError::Config(_)
        )
    }

    /// The `std::io::ErrorKind` of an I/O failure, when the OS named one.
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            StoreError::Io {
                raw_os_error: Some(code),
                ..
            } => Some(std::io::Error::from_raw_os_error(*code).kind()),
            _ => None,
        }
    }

    /// The JSON-RPC error that carries this one across the pipe: `data.kind`, and for I/O `data.os_error`
    /// (the OS error's name) and `data.errno` (its number, from which the receiver rebuilds the kind).
    pub fn to_rpc_error(&self) -> RpcError {
        let err = RpcError::new(self.kind(), self.to_string());
        match self {
            StoreError::Io {
                raw_os_error: Some(code),
                ..
            } => {
                let name = std::io::Error::from_raw_os_error(*code).kind().to_string();
                err.with_data("os_error", Value::from(name))
                    .with_data("errno", Value::from(*code))
            }
            _ => err,
        }
    }
}

impl From<RpcError> for StoreError {
    fn from(err: RpcError) -> Self {
        let Some(kind) = err.kind() else {
            return StoreError::Internal(err.message);
        };
        match StoreError::from_kind(kind, err.message.clone()) {
            StoreError::Io { message, .. } => StoreError::Io {
                message,
                raw_os_error: err
                    .data
                    .as_ref()
                    .and_then(|d| d.get("errno"))
                    .and_then(Value::as_i64)
                    .and_then(|c| i32::try_from(c).ok()),
            },
            other => other,
        }
    }
}

impl From<StoreError> for RpcError {
    fn from(err: StoreError) -> Self {
        err.to_rpc_error()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_survives_the_wire() {
        let errors = [
            StoreError::object_not_found("file:///x"),
            StoreError::object_exists("/x"),
            StoreError::ForeignUrl("f".into()),
            StoreError::InvalidValue("v".into()),
            StoreError::DuplicateKey("d".into()),
            StoreError::ConcurrentModification("c".into()),
            StoreError::Config("cfg".into()),
            StoreError::io(
                "reading /x",
                &std::io::Error::from_raw_os_error(libc::EISDIR),
            ),
            StoreError::NotSupported("n".into()),
            StoreError::Internal("i".into()),
        ];
        for err in errors {
            let back = StoreError::from(err.to_rpc_error());
            assert_eq!(back.kind(), err.kind());
            assert_eq!(back.to_string(), err.to_string());
            assert_eq!(back.io_kind(), err.io_kind());
        }
    }

    #[test]
    fn object_messages_match_the_original() {
        assert_eq!(
            StoreError::object_not_found("file:///r/a").to_string(),
            "No object at file:///r/a."
        );
        assert_eq!(
            StoreError::object_exists("/r/a").to_string(),
            "Object already exists at /r/a."
        );
        assert_eq!(
            StoreError::io("x", &std::io::Error::from_raw_os_error(libc::EISDIR)).io_kind(),
            Some(std::io::ErrorKind::IsADirectory)
        );
    }
}
