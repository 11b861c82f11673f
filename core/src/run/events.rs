//! What happens during a run, as events for whoever watches it: the CLI's terminal view, the per-run
//! log, `run --json`, the explorer. The run engine sends every event to one [`RunObserver`]; the
//! observer decides what to show, and must never block the run for long nor fail it.
//!
//! Events are plain data and serialize as one JSON object each, tagged by `"event"`
//! (`{"event": "step_finished", ...}`); durations are seconds as floats.

use std::sync::{Arc, Mutex};

use serde::Serialize;

/// Watches a run. Called from the run's worker threads and from the threads that read plugins'
/// output, so implementations are `Send + Sync` and return quickly.
pub trait RunObserver: Send + Sync {
    /// One thing that happened.
    fn event(&self, event: &RunEvent);
}

/// An observer that ignores everything: a run nobody watches.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoObserver;

impl RunObserver for NoObserver {
    fn event(&self, _event: &RunEvent) {}
}

/// Sends each event to every observer in order.
pub struct Fanout(pub Vec<Arc<dyn RunObserver>>);

impl RunObserver for Fanout {
    fn event(&self, event: &RunEvent) {
        for o in &self.0 {
            o.event(event);
        }
    }
}

/// An observer that keeps every event, for tests and for callers that read them afterwards.
#[derive(Debug, Default)]
pub struct CollectedEvents {
    events: Mutex<Vec<RunEvent>>,
}

impl CollectedEvents {
    /// The events seen so far, in order.
    pub fn events(&self) -> Vec<RunEvent> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl RunObserver for CollectedEvents {
    fn event(&self, event: &RunEvent) {
        if let Ok(mut events) = self.events.lock() {
            events.push(event.clone());
        }
    }
}

/// Which step of which task run: enough to find its row in the instance record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepRef {
    pub instance_id: String,
    /// The task's path in its bundle (`tasks/hello.json`).
    pub task_path: String,
    pub step_id: String,
}

/// A task the run is going to run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedTaskInfo {
    pub task_id: String,
    pub task_path: String,
    pub task_version: i64,
    pub total_steps: usize,
}

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Succeeded,
    Failed,
    Cancelled,
}

/// Why a step failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepFailure {
    /// The error's type (`ValueError`, `PluginError`).
    pub error_type: String,
    pub message: String,
    /// More than the message, when there is more: a plugin's stderr tail after it crashed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Where it failed, as the plugin reports it: a Python traceback, a Rust panic's location, a
    /// Go error chain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traceback: Option<String>,
    /// Whether the step runs again (its retry policy allows another attempt).
    pub retrying: bool,
    /// Whether this failure fails the task.
    pub fails_task: bool,
}

/// A score a task run recorded: the verifying step's id and its score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskScore {
    pub step_id: String,
    pub score: f64,
}

/// How the tasks of an eval ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalTally {
    pub eval_id: String,
    pub eval_path: String,
    pub eval_version: i64,
    /// How many tasks it names (each one the run planned), and how they came out.
    pub tasks: usize,
    pub passed: usize,
    /// Ran, and scored below 1 or recorded no score: with the others they add up to `tasks`.
    pub scored_below_one: usize,
    pub unscored: usize,
    pub failed: usize,
    /// Cancelled, whether while running or before they started (`didnt_start` of them).
    pub cancelled: usize,
    /// Of the cancelled, those a signal stopped before they started: they never ran.
    pub didnt_start: usize,
}

/// Which of a plugin's two output channels a line came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "stream", rename_all = "snake_case")]
pub enum PluginStream {
    /// A line the plugin wrote to its stderr.
    Stderr,
    /// A `$/log` notification, with its level (`debug`, `info`, `warning`, `error`).
    Log { level: String },
}

impl PluginStream {
    /// A `$/log` notification at `level`.
    pub fn log(level: &str) -> PluginStream {
        PluginStream::Log {
            level: level.to_string(),
        }
    }
}

/// One thing that happened during a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent {
    /// An entity of the bundle is at this version for the run: written now, or found unchanged. A
    /// dry run decides the same and writes nothing.
    EntityDecided {
        /// `artifact`, `task` or `eval`.
        kind: String,
        /// Where it is in the bundle (`tasks/hello.json`).
        path: String,
        id: String,
        version: i64,
        /// Whether the version is new (a dry run would write it); else it was recorded already.
        written: bool,
        /// Why it is written (`new`, `files changed: hello.txt`); empty when unchanged.
        reasons: Vec<String>,
    },
    /// A dry run's plan: the tasks a run would run, at the versions it would run them.
    RunPlanned {
        bundle: String,
        tasks: Vec<PlannedTaskInfo>,
    },
    /// A dry run's plan: a task the run would fail, at the step whose failure fails it, and why (said
    /// after [`RunEvent::RunPlanned`], once per such step).
    TaskWouldFail {
        task_id: String,
        task_path: String,
        step_id: String,
        /// When which step fails it is left to which starts first: the steps one of which does
        /// (`step_id` is the last of them); else empty.
        one_of: Vec<String>,
        message: String,
    },
    /// A dry run's plan: a score a task's step would give whatever it finds (its weights add up to
    /// 0), said after [`RunEvent::RunPlanned`] for a step that fails its task on error.
    TaskWouldScore {
        task_id: String,
        task_path: String,
        step_id: String,
        score: f64,
    },
    /// A dry run's plan: a task that would end with no score whatever its steps find (none of them
    /// gives one), which `--fail-under` counts as below any score; said after
    /// [`RunEvent::RunPlanned`].
    TaskWouldBeUnscored { task_id: String, task_path: String },
    /// A task of the bundle that does not run, and why.
    TaskSkipped {
        task_id: String,
        task_path: String,
        reason: String,
    },
    /// Something the person watching should know, about a task when it names one.
    Warning {
        task_path: Option<String>,
        message: String,
    },
    /// A warning the run has said to the person already, as a note of its own (the cleanup after
    /// earlier runs): for the run's log and its document's warnings, not to be said again.
    Noted { message: String },
    /// The tasks of an eval have all ended.
    EvalFinished(EvalTally),
    /// The run begins: the bundle is planned and its plugins are started.
    RunStarted {
        run_group_id: String,
        /// The bundle as the run names it (`hello`, `~/my-bundle`).
        bundle: String,
        tasks: Vec<PlannedTaskInfo>,
    },
    /// A task run begins; its instance record exists from here on.
    TaskStarted {
        instance_id: String,
        task_id: String,
        task_path: String,
        task_version: i64,
        total_steps: usize,
    },
    /// A step begins (again, when retried).
    StepStarted {
        step: StepRef,
        step_type: String,
        /// 1-based position in the task.
        index: usize,
        total: usize,
        /// The plugin that runs it; none for a built-in step.
        #[serde(skip_serializing_if = "Option::is_none")]
        package: Option<String>,
    },
    /// A step ended.
    StepFinished {
        step: StepRef,
        index: usize,
        total: usize,
        status: StepStatus,
        duration_seconds: f64,
        #[serde(skip_serializing_if = "Option::is_none")]
        failure: Option<StepFailure>,
    },
    /// A task run ended.
    TaskFinished {
        /// None when it was cancelled before it started, or when the document store took no
        /// record of it (then `started_as` is the id it ran under).
        instance_id: Option<String>,
        /// The instance id it ran under, recorded or not (its `TaskStarted` named it); None when it
        /// did not start.
        started_as: Option<String>,
        task_id: String,
        task_path: String,
        task_version: i64,
        /// `passed`, `scored_below_one`, `unscored`, `failed`, `cancelled` or `didnt_start`.
        outcome: String,
        /// The outcome as the summary words it.
        summary: String,
        scores: Vec<TaskScore>,
        /// What each verifier found, by its id: the instance's `verifications` (its score and each
        /// criterion's result and justification); empty when no verifier ran.
        verifications: serde_json::Map<String, serde_json::Value>,
        duration_seconds: f64,
        /// The document store did not take the task's end: this machine's journal keeps it, and
        /// the next run here writes it.
        end_waiting_here: bool,
    },
    /// The run ended (before the `--keep` wait and the teardown report).
    RunFinished {
        run_group_id: String,
        /// Whether any task failed.
        failed: bool,
        /// Whether a signal cancelled it.
        cancelled: bool,
        duration_seconds: f64,
    },
    /// `--keep`: the run ended and holds these sandboxes up until it is signalled.
    SandboxesKept { sandboxes: Vec<KeptSandbox> },
    /// A plugin's `$/progress` during a step (the step, when exactly one of that plugin's steps is
    /// running).
    PluginProgress {
        package: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        step: Option<StepRef>,
        progress: Option<f64>,
        total: Option<f64>,
        message: Option<String>,
    },
    /// A line of a plugin's stderr or a `$/log` message, as it arrives. `step`: the step it is
    /// about, when that is known (a `$/log` naming its call, or one the plugin sent while it ran a
    /// single step; never a stderr line, which names no call).
    PluginOutput {
        package: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        step: Option<StepRef>,
        #[serde(flatten)]
        stream: PluginStream,
        line: String,
    },
}

/// A sandbox `--keep` holds up after the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeptSandbox {
    /// The task that deployed it.
    pub task_path: String,
    pub sandbox_id: String,
    /// Its name in the task (`deploy_sandbox`'s `sandbox_name`).
    pub name: String,
    pub provider: String,
    /// The host folder behind its `/app`.
    pub work_dir: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_serialize_tagged_with_their_kind() {
        let e = RunEvent::PluginOutput {
            package: "p".into(),
            step: None,
            stream: PluginStream::Log {
                level: "info".into(),
            },
            line: "hi".into(),
        };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"event": "plugin_output", "package": "p", "stream": "log", "level": "info", "line": "hi"})
        );
        let collected = CollectedEvents::default();
        Fanout(vec![Arc::new(NoObserver)]).event(&e);
        collected.event(&e);
        assert_eq!(collected.events(), vec![e]);
    }
}
