//! An API failure as the original answers it: a status and `{"detail": …}` (a sentence, or for a
//! request that does not validate, FastAPI's list of `{loc, msg, type}`).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use agent_env_store::error::StoreError;

/// A request that failed: its status and its `detail`.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: StatusCode,
    pub detail: Value,
}

impl ApiError {
    pub fn new(status: StatusCode, detail: impl Into<String>) -> ApiError {
        ApiError {
            status,
            detail: Value::String(detail.into()),
        }
    }

    /// 404 with the sentence.
    pub fn not_found(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, detail)
    }

    /// 400 with the sentence.
    pub fn bad_request(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, detail)
    }

    /// 422 with one validation problem at `loc` (`["query", "limit"]`, `["body", "count"]`).
    pub fn invalid(loc: &[&str], msg: impl Into<String>, kind: &str) -> ApiError {
        ApiError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            detail: json!([{"loc": loc, "msg": msg.into(), "type": kind}]),
        }
    }

    /// 409 with a sentence: a request that is valid but that things as they are now stop (a task
    /// whose bundle no longer has it, a stored task the explorer does not run). Every 422 is a list of
    /// problems; this is never one.
    pub fn conflict(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, detail)
    }

    /// 500: something on the server's side failed (a store that does not answer, a thread that died).
    pub fn internal(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, detail)
    }
}

impl From<StoreError> for ApiError {
    /// A store's "not found" is the user's 404 (as the original's middleware does); a value the
    /// store refuses is the user's 400; anything else is the server's.
    fn from(e: StoreError) -> ApiError {
        match &e {
            StoreError::NotFound(_) => ApiError::not_found(e.to_string()),
            _ if e.is_value_error() => ApiError::bad_request(e.to_string()),
            _ => ApiError::internal(format!("the store failed: {e}")),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({"detail": self.detail}))).into_response()
    }
}

/// A handler's result.
pub type ApiResult<T> = Result<T, ApiError>;
