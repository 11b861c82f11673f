//! How a run that got as far as running ended, which the CLI turns into an exit code.

use super::materialize;

/// How a run that got as far as running ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunStatus {
    /// A dry run: nothing was written or run. `versions` is the version of each planned entity (by
    /// id) a run would record now: its stored version, or the next one when the bundle changed.
    DryRun { versions: materialize::Versions },
    /// Every task ran; `failed` when any of them failed.
    Finished { failed: bool },
    /// A signal (Ctrl-C: `SIGINT`) cancelled tasks that were running.
    Cancelled { signal: i32 },
}
