//! Store calls and the run engine block (SQLite, files, child processes): they run on tokio's blocking
//! pool so a slow store never stalls the server's other requests.

use super::problem::{ApiError, ApiResult};

/// Runs `work` on the blocking pool and hands back its answer.
pub async fn blocking<T, F>(work: F) -> ApiResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> ApiResult<T> + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) => Err(ApiError::internal(format!(
            "the request's worker stopped before answering: {e}"
        ))),
    }
}
