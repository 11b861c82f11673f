//! How a run stops, as its caller chooses: by the process's signals, or by a cancel handle the caller
//! keeps; the cancel handle a run watches either way, and what a run cancelled before its first task
//! says.

use std::sync::Arc;

use super::cancel::{self, Cancel};
use super::RunError;

/// What a run cancelled before its first task says.
pub const CANCELLED_BEFORE_TASKS: &str =
    "Cancelled before any task ran; the next run goes on from what was written.";

/// How a run stops. There is no default: watching signals starts a thread and takes SIGINT, SIGTERM
/// and SIGHUP for the rest of the process, which only a command that is the run may do.
#[derive(Debug, Clone)]
pub enum Stopping {
    /// SIGINT, SIGTERM and SIGHUP cancel it, watched from its start for as long as the process
    /// lives (`agent-env run`: the process ends with the run). Each signal is told to the callback
    /// too: the first cancels the run, and the CLI exits at once on another; with none, the teardown
    /// goes on whatever comes.
    BySignals(Option<cancel::OnSignal>),
    /// The caller cancels it through this handle, and no signal is watched (the explorer, which
    /// runs many in one process, or a dry run that only asks what a run would record).
    ByHandle(Arc<Cancel>),
}

/// The cancel handle of a run that stops as `stopping` says; by signals, they are watched from now on.
pub fn cancel_of(stopping: &Stopping) -> Result<Arc<Cancel>, RunError> {
    match stopping {
        Stopping::ByHandle(cancel) => Ok(cancel.clone()),
        Stopping::BySignals(on_signal) => {
            let cancel = Cancel::new();
            cancel::watch_signals(cancel.clone(), *on_signal).map_err(RunError::WatchSignals)?;
            Ok(cancel)
        }
    }
}
