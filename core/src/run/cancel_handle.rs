//! The cancel handle a run watches (the caller's, or one that signals set), and what a run cancelled
//! before its first task says.

use std::sync::Arc;

use super::cancel::{self, Cancel};
use super::RunError;

/// What a run cancelled before its first task says.
pub const CANCELLED_BEFORE_TASKS: &str =
    "Cancelled before any task ran; the next run goes on from what was written.";

/// What cancels the run: the caller's, else one that SIGINT, SIGTERM and SIGHUP set from now on
/// (each signal is told to `on_signal` too).
pub fn cancel_of(
    given: Option<&Arc<Cancel>>,
    on_signal: Option<cancel::OnSignal>,
) -> Result<Arc<Cancel>, RunError> {
    match given {
        Some(cancel) => Ok(cancel.clone()),
        None => {
            let cancel = Cancel::new();
            cancel::watch_signals(cancel.clone(), on_signal).map_err(RunError::WatchSignals)?;
            Ok(cancel)
        }
    }
}
