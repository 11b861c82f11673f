//! Why a call failed, and how a connection ended.

use std::time::Duration;

use super::malformed::Defect;
use crate::codes::ErrorKind;
use crate::message::RpcError;

/// Why a call did not return a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// The other side answered with an error.
    #[error("{0}")]
    Rpc(RpcError),
    /// No answer in time; `$/cancelRequest` was sent.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The connection ended before the answer came.
    #[error("the connection closed: {0}")]
    Closed(CloseReason),
    /// The message would exceed the maximum message size, so it was not sent.
    #[error("the message is {size} bytes, over the {max}-byte maximum message size")]
    TooLarge {
        /// The encoded message's size in bytes.
        size: usize,
        /// The maximum, in bytes.
        max: usize,
    },
    /// The answer came as a line meant as a message that is none (its id null, no
    /// `"jsonrpc":"2.0"`, a batch...): the call fails at once, saying what is wrong with it.
    #[error("{}", malformed_answer(.defect, .line.as_deref()))]
    Malformed {
        /// What is wrong with the line.
        defect: Defect,
        /// Its first bytes (none for a valid message answering under the wrong id).
        line: Option<String>,
    },
}

impl CallError {
    /// The kind the failure maps to on the wire, if any.
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            CallError::Rpc(e) => e.kind(),
            CallError::Timeout(_) => Some(ErrorKind::Cancelled),
            CallError::Closed(_) => None,
            CallError::TooLarge { .. } => Some(ErrorKind::MessageTooLarge),
            CallError::Malformed { .. } => None,
        }
    }
}

/// How the incoming stream ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CloseReason {
    /// The other side closed its end.
    #[error("end of stream")]
    Eof,
    /// Reading failed.
    #[error("read failed: {0}")]
    ReadFailed(String),
    /// Writing failed.
    #[error("write failed: {0}")]
    WriteFailed(String),
    /// This side closed the connection.
    #[error("closed by this side")]
    Local,
    /// Closed on purpose by this side's owner, e.g. the host saw the child exit while a grandchild
    /// still holds the stream open.
    #[error("{0}")]
    Aborted(String),
}

/// How a malformed answer reads: the line, when there is one to show, and its defect.
fn malformed_answer(defect: &Defect, line: Option<&str>) -> String {
    match line {
        Some(line) => format!("its answer '{line}' is no valid message: {defect}"),
        None => defect.to_string(),
    }
}
