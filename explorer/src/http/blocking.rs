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

/// How many whole-collection reads (lists of task instances) run at once. Each parses every matching
/// document, so two hundred at once held hundreds of MiB for no gain on a machine with a few cores;
/// the others wait their turn (the server keeps answering everything else meanwhile).
const HEAVY_READS_AT_ONCE: usize = 4;

static HEAVY_READS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(HEAVY_READS_AT_ONCE);

/// As [`blocking`], for a read that scans a whole collection: at most [`HEAVY_READS_AT_ONCE`] run at
/// once.
pub async fn blocking_scan<T, F>(work: F) -> ApiResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> ApiResult<T> + Send + 'static,
{
    let _permit = HEAVY_READS
        .acquire()
        .await
        .map_err(|e| ApiError::internal(format!("the read queue is closed: {e}")))?;
    blocking(work).await
}
