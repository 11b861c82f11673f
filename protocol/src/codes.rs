//! Error codes on the wire. Each has a stable kebab-case `kind` that travels in `error.data.kind`.

use serde::{Deserialize, Serialize};

/// The kinds of error a request can end in. The numeric codes are JSON-RPC `error.code` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// The line was not JSON (-32700).
    ParseError,
    /// JSON, but not a JSON-RPC 2.0 request (-32600).
    InvalidRequest,
    /// No such method (-32601).
    MethodNotFound,
    /// Params missing or of the wrong type (-32602).
    InvalidParams,
    /// The receiver failed unexpectedly (-32603).
    InternalError,
    /// The request was cancelled (-32800).
    Cancelled,
    /// No object, document or secret at that address (-32000).
    NotFound,
    /// A write-once object exists already (-32001).
    AlreadyExists,
    /// A URL that is not this store's (-32002).
    ForeignUrl,
    /// The config given is wrong: an unknown key, an unresolved reference (-32003).
    ConfigError,
    /// An argument is wrong, e.g. a key that leads out of the store (-32004).
    InvalidValue,
    /// A unique index refused a document (-32005).
    DuplicateKey,
    /// A guarded write lost a race (-32006).
    ConcurrentModification,
    /// The filesystem failed; `data.errno` may give its number (-32007).
    IoError,
    /// The receiver does not implement this operation (-32008).
    NotSupported,
    /// A line was over the maximum message size (-32009).
    MessageTooLarge,
    /// No protocol version in common (-32010).
    ProtocolMismatch,
    /// A task step raised; `data.error_type` and `data.message` say what (-32020).
    StepFailed,
}

impl ErrorKind {
    /// Every kind, in code order.
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

    /// The kind of a numeric `error.code`, if it is one of the protocol's.
    pub fn from_code(code: i64) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// The kind of a kebab-case name (`not-found`), if it is one of the protocol's.
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
