//! Error codes on the wire. Each has a stable kebab-case `kind` that travels in `error.data.kind`.

use serde::{Deserialize, Serialize};

/// The kinds of error a request can end in. The numeric codes are JSON-RPC `error.code` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    ParseError,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    InternalError,
    Cancelled,
    NotFound,
    AlreadyExists,
    ForeignUrl,
    ConfigError,
    InvalidValue,
    DuplicateKey,
    ConcurrentModification,
    IoError,
    NotSupported,
    MessageTooLarge,
    ProtocolMismatch,
    StepFailed,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 18] = [
        ErrorKind::ParseError,
        ErrorKind::InvalidRequest,
        ErrorKind::MethodNotFound,
        ErrorKind::InvalidParams,
        ErrorKind::InternalError,
        ErrorKind::Cancelled,
        ErrorKind::NotFound,
        ErrorKind::AlreadyExists,
        ErrorKind::ForeignUrl,
        ErrorKind::ConfigError,
        ErrorKind::InvalidValue,
        ErrorKind::DuplicateKey,
        ErrorKind::ConcurrentModification,
        ErrorKind::IoError,
        ErrorKind::NotSupported,
        ErrorKind::MessageTooLarge,
        ErrorKind::ProtocolMismatch,
        ErrorKind::StepFailed,
    ];

    /// The JSON-RPC `error.code`.
    pub const fn code(self) -> i64 {
        match self {
            ErrorKind::ParseError => -32700,
            ErrorKind::InvalidRequest => -32600,
            ErrorKind::MethodNotFound => -32601,
            ErrorKind::InvalidParams => -32602,
            ErrorKind::InternalError => -32603,
            ErrorKind::Cancelled => -32800,
            ErrorKind::NotFound => -32000,
            ErrorKind::AlreadyExists => -32001,
            ErrorKind::ForeignUrl => -32002,
            ErrorKind::ConfigError => -32003,
            ErrorKind::InvalidValue => -32004,
            ErrorKind::DuplicateKey => -32005,
            ErrorKind::ConcurrentModification => -32006,
            ErrorKind::IoError => -32007,
            ErrorKind::NotSupported => -32008,
            ErrorKind::MessageTooLarge => -32009,
            ErrorKind::ProtocolMismatch => -32010,
            ErrorKind::StepFailed => -32020,
        }
    }

    /// The stable name carried in `error.data.kind`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::ParseError => "parse-error",
            ErrorKind::InvalidRequest => "invalid-request",
            ErrorKind::MethodNotFound => "method-not-found",
            ErrorKind::InvalidParams => "invalid-params",
            ErrorKind::InternalError => "internal-error",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::NotFound => "not-found",
            ErrorKind::AlreadyExists => "already-exists",
            ErrorKind::ForeignUrl => "foreign-url",
            ErrorKind::ConfigError => "config-error",
            ErrorKind::InvalidValue => "invalid-value",
            ErrorKind::DuplicateKey => "duplicate-key",
            ErrorKind::ConcurrentModification => "concurrent-modification",
            ErrorKind::IoError => "io-error",
            ErrorKind::NotSupported => "not-supported",
            ErrorKind::MessageTooLarge => "message-too-large",
            ErrorKind::ProtocolMismatch => "protocol-mismatch",
            ErrorKind::StepFailed => "step-failed",
        }
    }

    pub fn from_code(code: i64) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.code() == code)
    }

    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_are_unique_and_invert() {
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_code(kind.code()), Some(kind));
            assert_eq!(ErrorKind::from_name(kind.as_str()), Some(kind));
        }
    }
}
