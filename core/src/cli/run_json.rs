//! `agent-env run --json`: the run's result as one JSON document on stdout, built from the run's
//! events. Its shape (`format_version` 1) is documented in docs/json-output.md; keys are only ever
//! added.

use std::sync::Mutex;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::run::events::{EvalTally, KeptSandbox, RunEvent, RunObserver, StepStatus};

/// The version of the document's shape.
pub const RUN_FORMAT_VERSION: u32 = 1;

/// The document `run --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct RunDocument {
    pub format_version: u32,
    /// The bundle as named on the command line.
    pub bundle: String,
    /// `passed` (every task passed), `failed` (a task failed), `below_fail_under` (a score is below
    /// `--fail-under`), `not_passed` (a task scored below 1 or was unscored), `cancelled`, `dry_run`
    /// (its `exit_code` 1 when it sees a task the run would fail: the tasks' `would_fail`; 3 when
    /// one would score below `--fail-under` whatever it finds: their `would_score`, or end with no
    /// score: their `would_be_unscored`), or
    /// `error` (the run could not start; see `error`).
    pub status: String,
    /// The exit code agent-env exits with.
    pub exit_code: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// With `error`, when the bundle was refused: each of its problems (what `error` joins); empty
    /// otherwise, and always there, so a script reads it without a check.
    pub problems: Vec<String>,
    pub run_group_id: Option<String>,
    pub duration_seconds: Option<f64>,
    /// The run's log file (every event, each plugin's stderr and `$/log` lines).
    pub log: Option<String>,
    pub fail_under: Option<f64>,
    /// How the run's tasks came out, counted as an eval's are: a script need not count `tasks`.
    pub counts: TaskCounts,
    /// The bundle's entities at the versions the run used (a dry run: would use), in the order the
    /// run decided them. A stored task's run writes none.
    pub entities: Vec<EntityDocument>,
    /// The tasks run (a dry run: the tasks it would run, each `planned`).
    pub tasks: Vec<TaskDocument>,
    /// Each eval the run ran, with how its tasks ended.
    pub evals: Vec<EvalTally>,
    /// The bundle's tasks that did not run, and why.
    pub skipped: Vec<SkippedDocument>,
    /// What the run warned about (also on stderr), in order.
    pub warnings: Vec<WarningDocument>,
    /// With `--keep`, the sandboxes held up after the run (the document is printed as the hold
    /// begins, so they are still up when a script reads it); else empty.
    pub kept_sandboxes: Vec<KeptSandbox>,
}

/// How many of a run's tasks came out each way, with the keys and meaning of an eval's tally
/// ([`EvalTally`]): `cancelled` holds `didnt_start`, and a task that has not ended (a dry run's) is
/// counted in `tasks` alone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TaskCounts {
    pub tasks: usize,
    pub passed: usize,
    pub scored_below_one: usize,
    pub unscored: usize,
    pub failed: usize,
    pub cancelled: usize,
    pub didnt_start: usize,
}

impl TaskCounts {
    /// The counts of `tasks` by their `outcome`.
    fn of(tasks: &[TaskDocument]) -> TaskCounts {
        let count = |outcomes: &[&str]| {
            tasks
                .iter()
                .filter(|t| outcomes.contains(&t.outcome.as_str()))
                .count()
        };
        TaskCounts {
            tasks: tasks.len(),
            passed: count(&["passed"]),
            scored_below_one: count(&["scored_below_one"]),
            unscored: count(&["unscored"]),
            failed: count(&["failed"]),
            cancelled: count(&["cancelled", "didnt_start"]),
            didnt_start: count(&["didnt_start"]),
        }
    }
}

/// One entity of the bundle.
#[derive(Debug, Clone, Serialize)]
pub struct EntityDocument {
    /// `artifact`, `task` or `eval`.
    pub kind: String,
    pub path: String,
    pub id: String,
    pub version: i64,
    /// Whether this version was written by this run (a dry run: would be).
    pub written: bool,
    /// Why it was written; empty when unchanged.
    pub reasons: Vec<String>,
}

/// A task that did not run.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedDocument {
    pub task_id: String,
    pub path: String,
    pub reason: String,
}

/// A warning the run gave.
#[derive(Debug, Clone, Serialize)]
pub struct WarningDocument {
    /// The task it is about, when it is about one.
    pub path: Option<String>,
    pub message: String,
}

/// One task run.
#[derive(Debug, Clone, Serialize)]
pub struct TaskDocument {
    pub task_id: String,
    pub path: String,
    pub version: i64,
    pub instance_id: Option<String>,
    /// `passed`, `scored_below_one`, `unscored`, `failed`, `cancelled`, `didnt_start`; `planned`
    /// while it has not ended.
    pub outcome: String,
    /// The outcome as the summary words it.
    pub summary: String,
    /// Verifying step id → score.
    pub scores: Map<String, Value>,
    /// Verifier id → what it found: its score and each criterion's result.
    pub verifications: Map<String, Value>,
    pub duration_seconds: Option<f64>,
    /// The document store did not take the task's end, which this machine's journal keeps for the
    /// next run here to write (the instance shows `running` elsewhere until then).
    pub end_waiting_here: bool,
    pub steps: Vec<StepDocument>,
    /// A dry run only: the steps whose failure would fail the task, each with why (empty when the
    /// dry run saw nothing that would fail it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_fail: Option<Vec<WouldFailDocument>>,
    /// A dry run only: verifying step id → the score it would give whatever it finds (its weights
    /// add up to 0), which `--fail-under` holds it to; empty when no step's score is fixed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_score: Option<Map<String, Value>>,
    /// A dry run only: whether the task would end with no score whatever its steps find (each is
    /// built in, and none gives one), which `--fail-under` counts as below any score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_be_unscored: Option<bool>,
}

/// A step a dry run tells would fail its task.
#[derive(Debug, Clone, Serialize)]
pub struct WouldFailDocument {
    pub step_id: String,
    /// Why it would fail, as the dry run's note says it.
    pub error: String,
    /// When which step fails the task is left to which starts first: the steps one of which does
    /// (`step_id` is the last of them); left out otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub one_of: Vec<String>,
}

/// One attempt of one step.
#[derive(Debug, Clone, Serialize)]
pub struct StepDocument {
    pub step_id: String,
    #[serde(rename = "type")]
    pub step_type: String,
    /// The plugin that ran it; none for a built-in step.
    pub package: Option<String>,
    /// `running`, `succeeded`, `failed` or `cancelled`.
    pub status: String,
    pub duration_seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traceback: Option<String>,
    /// Whether the step runs again after this failed attempt.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub retried: bool,
}

/// Builds a [`RunDocument`] from the events it sees.
pub struct RunCollector {
    doc: Mutex<RunDocument>,
    /// How the run ended, once it has (whether any task failed).
    finished_failed: Mutex<Option<bool>>,
}

impl RunCollector {
    pub fn new(bundle: &str, fail_under: Option<f64>) -> RunCollector {
        RunCollector {
            doc: Mutex::new(RunDocument {
                format_version: RUN_FORMAT_VERSION,
                bundle: bundle.to_string(),
                status: "error".into(),
                exit_code: 1,
                error: None,
                problems: Vec::new(),
                run_group_id: None,
                duration_seconds: None,
                log: None,
                fail_under,
                counts: TaskCounts::default(),
                entities: Vec::new(),
                tasks: Vec::new(),
                evals: Vec::new(),
                skipped: Vec::new(),
                warnings: Vec::new(),
                kept_sandboxes: Vec::new(),
            }),
            finished_failed: Mutex::new(None),
        }
    }

    /// Whether any task failed, once the run has ended; `None` before.
    pub fn finished_failed(&self) -> Option<bool> {
        match self.finished_failed.lock() {
            Ok(f) => *f,
            Err(p) => *p.into_inner(),
        }
    }

    /// The document so far, its `counts` those of its tasks.
    pub fn document(&self) -> RunDocument {
        let mut doc = match self.doc.lock() {
            Ok(d) => d.clone(),
            Err(p) => p.into_inner().clone(),
        };
        doc.counts = TaskCounts::of(&doc.tasks);
        doc
    }

    /// The scores of every task that ran; `None` for a task that ended without any.
    pub fn task_scores(&self) -> Vec<(String, Option<Vec<f64>>)> {
        self.document()
            .tasks
            .iter()
            .filter(|t| !matches!(t.outcome.as_str(), "cancelled" | "didnt_start" | "planned"))
            .map(|t| {
                let scores: Vec<f64> = t.scores.values().filter_map(Value::as_f64).collect();
                (t.path.clone(), (!scores.is_empty()).then_some(scores))
            })
            .collect()
    }
}

impl RunObserver for RunCollector {
    fn event(&self, event: &RunEvent) {
        let Ok(mut doc) = self.doc.lock() else {
            return;
        };
        match event {
            RunEvent::RunStarted {
                run_group_id,
                tasks,
                ..
            } => {
                doc.run_group_id = Some(run_group_id.clone());
                doc.tasks = tasks.iter().map(planned).collect();
            }
            RunEvent::RunPlanned { tasks, .. } => {
                doc.tasks = tasks
                    .iter()
                    .map(|t| TaskDocument {
                        would_fail: Some(Vec::new()),
                        would_score: Some(Map::new()),
                        would_be_unscored: Some(false),
                        ..planned(t)
                    })
                    .collect()
            }
            RunEvent::TaskWouldFail {
                task_path,
                step_id,
                one_of,
                message,
                ..
            } => {
                let task = doc.tasks.iter_mut().find(|t| &t.path == task_path);
                if let Some(would_fail) = task.and_then(|t| t.would_fail.as_mut()) {
                    would_fail.push(WouldFailDocument {
                        step_id: step_id.clone(),
                        error: message.clone(),
                        one_of: one_of.clone(),
                    });
                }
            }
            RunEvent::TaskWouldBeUnscored { task_path, .. } => {
                let task = doc.tasks.iter_mut().find(|t| &t.path == task_path);
                if let Some(unscored) = task.and_then(|t| t.would_be_unscored.as_mut()) {
                    *unscored = true;
                }
            }
            RunEvent::EntityDecided {
                kind,
                path,
                id,
                version,
                written,
                reasons,
            } => doc.entities.push(EntityDocument {
                kind: kind.clone(),
                path: path.clone(),
                id: id.clone(),
                version: *version,
                written: *written,
                reasons: reasons.clone(),
            }),
            RunEvent::TaskWouldScore {
                task_path,
                step_id,
                score,
                ..
            } => {
                let task = doc.tasks.iter_mut().find(|t| &t.path == task_path);
                if let Some(would_score) = task.and_then(|t| t.would_score.as_mut()) {
                    would_score.insert(step_id.clone(), serde_json::json!(score));
                }
            }
            RunEvent::TaskSkipped {
                task_id,
                task_path,
                reason,
            } => doc.skipped.push(SkippedDocument {
                task_id: task_id.clone(),
                path: task_path.clone(),
                reason: reason.clone(),
            }),
            RunEvent::Warning { task_path, message } => doc.warnings.push(WarningDocument {
                path: task_path.clone(),
                message: message.clone(),
            }),
            RunEvent::Noted { message } => doc.warnings.push(WarningDocument {
                path: None,
                message: message.clone(),
            }),
            RunEvent::EvalFinished(tally) => doc.evals.push(tally.clone()),
            // A task run is known by its instance from its start on: one task may run several times
            // (`task run --runs N`), each run under the same path.
            RunEvent::TaskStarted {
                instance_id,
                task_path,
                ..
            } => {
                if let Some(t) = not_started(&mut doc.tasks, task_path) {
                    t.instance_id = Some(instance_id.clone());
                }
            }
            RunEvent::StepStarted {
                step,
                step_type,
                package,
                ..
            } => {
                if let Some(t) = by_instance(&mut doc.tasks, &step.instance_id) {
                    t.steps.push(StepDocument {
                        step_id: step.step_id.clone(),
                        step_type: step_type.clone(),
                        package: package.clone(),
                        status: "running".into(),
                        duration_seconds: None,
                        error_type: None,
                        error: None,
                        traceback: None,
                        retried: false,
                    });
                }
            }
            RunEvent::StepFinished {
                step,
                status,
                duration_seconds,
                failure,
                ..
            } => {
                let Some(t) = by_instance(&mut doc.tasks, &step.instance_id) else {
                    return;
                };
                let Some(s) = t
                    .steps
                    .iter_mut()
                    .rev()
                    .find(|s| s.step_id == step.step_id && s.status == "running")
                else {
                    return;
                };
                s.status = match status {
                    StepStatus::Succeeded => "succeeded",
                    StepStatus::Failed => "failed",
                    StepStatus::Cancelled => "cancelled",
                }
                .into();
                s.duration_seconds = Some(*duration_seconds);
                if let Some(f) = failure {
                    s.error_type = Some(f.error_type.clone());
                    s.error = Some(f.message.clone());
                    s.traceback = f.traceback.clone().or_else(|| f.detail.clone());
                    s.retried = f.retrying;
                }
            }
            RunEvent::TaskFinished {
                instance_id,
                started_as,
                task_path,
                outcome,
                summary,
                scores,
                verifications,
                duration_seconds,
                end_waiting_here,
                ..
            } => {
                // Found by the id it started under: one the store took no record of is shown
                // with none.
                let run = match started_as {
                    Some(id) => by_instance(&mut doc.tasks, id),
                    // A task that did not start has no instance.
                    None => not_started(&mut doc.tasks, task_path),
                };
                if let Some(t) = run {
                    t.instance_id = instance_id.clone();
                    t.outcome = outcome.clone();
                    t.summary = summary.clone();
                    t.scores = scores
                        .iter()
                        .map(|s| (s.step_id.clone(), serde_json::json!(s.score)))
                        .collect();
                    t.verifications = verifications.clone();
                    t.duration_seconds = Some(*duration_seconds);
                    t.end_waiting_here = *end_waiting_here;
                }
            }
            RunEvent::RunFinished {
                duration_seconds,
                failed,
                ..
            } => {
                doc.duration_seconds = Some(*duration_seconds);
                if let Ok(mut f) = self.finished_failed.lock() {
                    *f = Some(*failed);
                }
            }
            RunEvent::SandboxesKept { sandboxes } => doc.kept_sandboxes = sandboxes.clone(),
            RunEvent::PluginProgress { .. } | RunEvent::PluginOutput { .. } => {}
        }
    }
}

/// A task the run is about to run, before anything happened to it.
fn planned(t: &crate::run::events::PlannedTaskInfo) -> TaskDocument {
    TaskDocument {
        task_id: t.task_id.clone(),
        path: t.task_path.clone(),
        version: t.task_version,
        instance_id: None,
        outcome: "planned".into(),
        summary: String::new(),
        scores: Map::new(),
        verifications: Map::new(),
        duration_seconds: None,
        end_waiting_here: false,
        steps: Vec::new(),
        would_fail: None,
        would_score: None,
        would_be_unscored: None,
    }
}

/// The task run of this instance.
fn by_instance<'d>(
    tasks: &'d mut [TaskDocument],
    instance_id: &str,
) -> Option<&'d mut TaskDocument> {
    tasks
        .iter_mut()
        .find(|t| t.instance_id.as_deref() == Some(instance_id))
}

/// The first run of the task at `path` that has not started yet.
fn not_started<'d>(tasks: &'d mut [TaskDocument], path: &str) -> Option<&'d mut TaskDocument> {
    tasks
        .iter_mut()
        .find(|t| t.path == path && t.instance_id.is_none() && t.outcome == "planned")
}

/// A document as a run prints it: pretty JSON (one that cannot be written says why, as JSON).
pub(crate) fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::events::PlannedTaskInfo;

    /// A task whose instance the document store took no record of ends as failed in the document,
    /// with no instance id to look up, as the run's text says it.
    #[test]
    fn a_task_the_store_took_no_record_of_ends_failed_with_no_instance() {
        let collector = RunCollector::new("b", None);
        collector.event(&RunEvent::RunStarted {
            run_group_id: "run-1".into(),
            bundle: "b".into(),
            tasks: vec![PlannedTaskInfo {
                task_id: "@local/b/t".into(),
                task_path: "tasks/t.json".into(),
                task_version: 1,
                total_steps: 1,
            }],
        });
        collector.event(&RunEvent::TaskStarted {
            instance_id: "@local/b/t-1".into(),
            task_id: "@local/b/t".into(),
            task_path: "tasks/t.json".into(),
            task_version: 1,
            total_steps: 1,
        });
        collector.event(&RunEvent::TaskFinished {
            instance_id: None,
            started_as: Some("@local/b/t-1".into()),
            task_id: "@local/b/t".into(),
            task_path: "tasks/t.json".into(),
            task_version: 1,
            outcome: "failed".into(),
            summary: "failed: StoreError: the document store did not take the task's instance"
                .into(),
            scores: Vec::new(),
            verifications: Map::new(),
            duration_seconds: 0.5,
            end_waiting_here: false,
        });
        let task = &collector.document().tasks[0];
        assert_eq!(task.outcome, "failed");
        assert_eq!(task.instance_id, None);
        assert!(task.summary.contains("StoreError"), "{}", task.summary);
        assert_eq!(task.duration_seconds, Some(0.5));
    }
}
