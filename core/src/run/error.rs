//! Why a run stopped before its tasks could run; the CLI shows it as `Error: <message>`.

use super::materialize::MaterializeError;
use crate::bundle::BundleError;
use crate::config::check::PreflightError;

/// A run that could not go on. Task and step failures are not errors: they are outcomes, recorded and
/// summarised, and a run with failed tasks still [finishes](super::RunStatus::Finished).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The bundle could not be found, parsed or planned, or a plugin step failed its preflight.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// A stored task, eval or artifact the command names is not in the configured document store;
    /// the message says which, and how to put one there.
    #[error("{0}")]
    NotStored(String),
    /// The config has problems; nothing was written or run.
    #[error(transparent)]
    Config(#[from] PreflightError),
    /// Writing the bundle's entities failed.
    #[error(transparent)]
    Materialize(#[from] MaterializeError),
    /// Ctrl-C could not be watched for, so a run could not be stopped cleanly.
    #[error("can't watch for Ctrl-C ({0}), so a run could not be stopped cleanly and was not started; this is the system refusing a signal handler or a thread: check the process's limits (ulimit -u) and try again")]
    WatchSignals(std::io::Error),
    /// A signal stopped the work between two of its steps; `what` says what it left.
    #[error("{what}")]
    Interrupted { signal: i32, what: String },
}

impl RunError {
    /// The exit code of a command this error ends: 128 + the signal for one a signal stopped, else 1.
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Interrupted { signal, .. } => 128 + signal,
            _ => 1,
        }
    }
}
