//! Ending a plugin process, once: the first caller stops it (through [`super::child::Child::stop`]:
//! `shutdown`, stdin closed, then signals to its group), and keeps its final diagnosis.
//!
//! Invariants: a process is stopped at most once. A caller that comes while another stops it
//! waits for that stop to end and gets the same diagnosis; one that comes after gets it at once.
//! From the moment a stop begins, new calls fail with `shut-down`.

use super::{lock, PluginProcess};
use crate::descendants::ProcessTable;
use crate::diagnosis::Diagnosis;

impl PluginProcess {
    /// Ends the process gracefully (see [`PluginProcess::stop`]) and returns its final diagnosis.
    pub fn shutdown(self) -> Diagnosis {
        self.stop()
    }

    /// Ends the process: `shutdown` request, close stdin, grace, SIGTERM to the group, grace, SIGKILL
    /// to the group; always reaped, leftover group members killed. Idempotent: a caller that comes
    /// while another stops it waits for that stop to end, and gets its diagnosis.
    pub fn stop(&self) -> Diagnosis {
        self.stop_seeing(None)
    }

    /// Whether it was stopped already: [`PluginProcess::stop`] gives its final diagnosis at once.
    pub(crate) fn was_stopped(&self) -> bool {
        lock(&self.status).stopped.is_some()
    }

    /// [`PluginProcess::stop`], finding the descendants to sweep in `table` (read once for many
    /// processes stopped together) instead of reading `/proc` again.
    pub(crate) fn stop_with_table(&self, table: &ProcessTable) -> Diagnosis {
        self.stop_seeing(Some(table))
    }

    fn stop_seeing(&self, table: Option<&ProcessTable>) -> Diagnosis {
        {
            let mut status = lock(&self.status);
            // Stopped by another caller, or being stopped: its diagnosis, once that stop ends.
            while status.stopping && status.stopped.is_none() {
                status = self
                    .stopped_signal
                    .wait(status)
                    .unwrap_or_else(|p| p.into_inner());
            }
            if let Some(stopped) = &status.stopped {
                return stopped.clone();
            }
            status.stopping = true;
        }
        let ended_by_itself = self.child.exit.ended().is_some();
        self.child.stop(self.config.grace, true, table);
        let mut d = self.diagnosis_while_stopping();
        d.stopped_by_host = !ended_by_itself;
        let mut status = lock(&self.status);
        d.failure = status.failure.clone();
        status.stopped = Some(d.clone());
        self.stopped_signal.notify_all();
        d
    }

    fn diagnosis_while_stopping(&self) -> Diagnosis {
        let calls = lock(&self.status).calls;
        self.describe_with(calls)
    }
}
