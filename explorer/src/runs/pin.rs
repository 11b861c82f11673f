//! Holds a task run to the version its request was answered with: the bundle is read again when the
//! run starts, and if it changed since the answer, the run is stopped before any task starts (so it
//! records no instance) and the workflow says why.

use std::sync::{Arc, Mutex};

use agent_env::run::cancel::Cancel;
use agent_env::run::events::{RunEvent, RunObserver};

/// The task and version a run was promised to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub task_id: String,
    pub version: i64,
}

/// Watches a run's start: a planned version other than the pinned one cancels the run.
pub struct PinObserver {
    pin: Pin,
    cancel: Arc<Cancel>,
    signal: i32,
    found: Mutex<Option<i64>>,
}

impl PinObserver {
    pub fn new(pin: Pin, cancel: Arc<Cancel>, signal: i32) -> PinObserver {
        PinObserver {
            pin,
            cancel,
            signal,
            found: Mutex::new(None),
        }
    }

    /// Why the run was stopped, when the version it would have recorded was not the pinned one.
    pub fn refusal(&self) -> Option<String> {
        let found = (*self.found.lock().ok()?)?;
        Some(format!(
            "the task's bundle changed after the run was asked for: a run now records version {found} of '{}', not version {}; nothing ran. Ask again to run the bundle as it is now",
            self.pin.task_id, self.pin.version
        ))
    }
}

impl RunObserver for PinObserver {
    fn event(&self, event: &RunEvent) {
        let RunEvent::RunStarted { tasks, .. } = event else {
            return;
        };
        let planned = tasks
            .iter()
            .find(|t| t.task_id == self.pin.task_id)
            .map(|t| t.task_version);
        if let Some(version) = planned.filter(|v| *v != self.pin.version) {
            if let Ok(mut found) = self.found.lock() {
                *found = Some(version);
            }
            self.cancel.cancel(self.signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_env::run::events::PlannedTaskInfo;

    fn started(version: i64) -> RunEvent {
        RunEvent::RunStarted {
            run_group_id: "g".into(),
            bundle: "b".into(),
            tasks: vec![PlannedTaskInfo {
                task_id: "t".into(),
                task_path: "tasks/t.json".into(),
                task_version: version,
                total_steps: 1,
            }],
        }
    }

    #[test]
    fn another_version_cancels_the_run_and_says_why() {
        let pin = Pin {
            task_id: "t".into(),
            version: 2,
        };
        let same = PinObserver::new(pin.clone(), Cancel::new(), 2);
        same.event(&started(2));
        assert!(same.refusal().is_none());
        assert!(!same.cancel.is_cancelled());
        let other = PinObserver::new(pin, Cancel::new(), 2);
        other.event(&started(3));
        assert!(other.cancel.is_cancelled());
        assert!(other
            .refusal()
            .unwrap()
            .contains("records version 3 of 't', not version 2"));
    }
}
