//! One run of one task: a fresh context, its steps run ([`super::step_schedule`]) and judged
//! ([`super::task_verdict`]), the instance recorded in `task_instances` (waiting for the store to take
//! its end, or keeping the end for a later run), its sandboxes torn down at the end.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use crate::run::builtin_steps::StepEnv;
use crate::run::context::TaskStepContext;
use crate::run::events::{RunEvent, RunObserver, TaskScore};
use crate::run::outcome::{seconds, TaskOutcome};
use crate::run::plan::{PlannedTask, RunOfMany};
use crate::run::recorder::{FinalWait, NewInstance, RecordError, Recorder};
use crate::run::step_schedule::{run_steps, StepState};
use crate::run::task_shared::RunShared;
use crate::run::task_verdict;
use crate::sandbox::Deployed;

/// What one task run did.
pub struct TaskRunResult {
    pub path: String,
    pub version: i64,
    /// Which run it was, when one task ran several times.
    pub run: Option<RunOfMany>,
    pub outcome: TaskOutcome,
    pub duration: Duration,
    pub instance_id: Option<String>,
    /// Its sandboxes, when `--keep` left them up (else empty: they were torn down).
    pub kept: Option<Deployed>,
    pub torn_down: usize,
    /// How many of `torn_down` a retry replaced.
    pub replaced: usize,
    pub still_up: Vec<(crate::sandbox::Sandbox, String)>,
    /// The instance's `verifications`: what each verifier found.
    pub verifications: Map<String, Value>,
    /// The store did not take the task's end, which this machine's journal keeps for the next run
    /// here to write.
    pub end_waiting_here: bool,
}

/// Runs `planned` once.
pub fn run_task(planned: &PlannedTask<'_>, version: i64, shared: &RunShared<'_>) -> TaskRunResult {
    let task = planned.task;
    let started = Instant::now();
    let mut result = TaskRunResult {
        path: task.path.clone(),
        version,
        run: planned.run.clone(),
        outcome: TaskOutcome::DidntStart,
        duration: Duration::ZERO,
        instance_id: None,
        kept: None,
        torn_down: 0,
        replaced: 0,
        still_up: Vec::new(),
        verifications: Map::new(),
        end_waiting_here: false,
    };
    if shared.cancel.is_cancelled() {
        task_finished(planned, &result, None, shared.observer);
        return result;
    }
    let instance_id = format!("{}-{}", task.id, crate::sandbox::random_suffix(8));
    result.instance_id = Some(instance_id.clone());
    let context = starting_context(task, &instance_id, shared);
    let recorder = Recorder::start(
        shared.stores.documents.clone(),
        shared.flusher,
        NewInstance {
            instance_id: &instance_id,
            task_id: &task.id,
            version,
            total_steps: planned.steps.len(),
            context: &context,
        },
    );
    shared.observer.event(&RunEvent::TaskStarted {
        instance_id: instance_id.clone(),
        task_id: task.id.clone(),
        task_path: task.path.clone(),
        task_version: version,
        total_steps: planned.steps.len(),
    });
    let context = Mutex::new(context);
    let deployed = Deployed::new((shared.provider)()).logged(
        shared
            .journal
            .clone()
            .ok()
            .map(|j| j as std::sync::Arc<dyn crate::sandbox::DeployLog>),
    );
    let env = StepEnv {
        context: &context,
        stores: shared.stores,
        sandboxes: &deployed,
        cancel: shared.cancel,
        instance_id: &instance_id,
    };
    let states = run_steps(planned, &env, shared, &recorder);
    let failures = failures(planned, &states, &context);
    let cancelled =
        shared.cancel.is_cancelled() || states.iter().any(|s| matches!(s, StepState::Cancelled));
    let final_context = context.lock().map(|c| c.clone()).unwrap_or_default();
    result.outcome = if cancelled {
        TaskOutcome::Cancelled
    } else if !failures.is_empty() {
        TaskOutcome::FailedAtSteps(failures)
    } else {
        task_verdict::scored_outcome(
            planned,
            &states,
            &final_context.metadata,
            shared,
            &instance_id,
        )
    };
    let mut final_context = final_context;
    if let Some(Value::Object(found)) = final_context.metadata.get("verifications") {
        result.verifications = found.clone();
    }
    if shared.keep && !cancelled {
        result.kept = Some(deployed);
    } else {
        let report = deployed.teardown_all();
        let ids: Vec<Value> = report.torn_down.iter().map(|s| json!(s.id)).collect();
        final_context
            .metadata
            .insert("torn_down_sandbox_ids".into(), Value::Array(ids));
        result.torn_down = report.torn_down.len();
        result.replaced = report.replaced;
        result.still_up = report.still_up;
    }
    result.duration = started.elapsed();
    let objects = shared.executor.objects_written(&instance_id);
    let waiting = |why: &str| {
        shared.out.waiting(&format!(
            "[{}] waiting for the document store to take the task's end ({why}); trying for up to {} s in all (Ctrl-C stops waiting)",
            task.path,
            crate::run::outcome::format_g(shared.liveness.record_wait.as_secs_f64())
        ));
    };
    let wait = FinalWait {
        patience: shared.liveness.record_wait,
        cancel: shared.cancel,
        waiting: &waiting,
    };
    match recorder.finish(&result.outcome, &final_context, &objects, &wait) {
        Ok(()) => {}
        // Nothing of the task run is stored: that fails it, whatever its steps did.
        Err(RecordError::NotRecorded(e)) => {
            // Nothing was stored under the id: pointing at it would send the user to nothing.
            result.instance_id = None;
            if !cancelled {
                result.outcome = TaskOutcome::Failed(
                    "StoreError".into(),
                    format!(
                        "the document store did not take the task's instance, so none is recorded: {e}"
                    ),
                );
            }
        }
        // The task came out as its steps said; only its record waits, in the run's journal.
        Err(RecordError::Deferred {
            why,
            document,
            stored,
        }) => match keep_for_a_later_run(shared, &instance_id, &document) {
            Ok(()) => {
                result.end_waiting_here = true;
                let warning = format!(
                    "the document store did not take the task's end ({why}), so its record is not written yet; it is kept in this machine's state folder, and the next {} on this machine writes it as the task left it",
                    shared.instances_in.marked_by()
                );
                warn(shared, &task.path, warning);
            }
            // Neither the store nor this machine keeps the task's end: what its steps gave is lost,
            // which fails it as a task the store took no record of.
            Err(not_kept) => {
                let lost = format!(
                    "the document store did not take the task's end ({why}), and this machine's state folder could not keep it for a later run ({not_kept}), so the task's result ({}) is not saved: {}",
                    result.outcome.word(),
                    if stored {
                        "the store shows the task as it last took it, running, until a later run marks it failed once its heartbeat is seen to have stopped"
                    } else {
                        "nothing of this run of the task is recorded"
                    }
                );
                if !stored {
                    // Nothing was stored under the id: pointing at it would send the user to nothing.
                    result.instance_id = None;
                }
                if cancelled {
                    warn(shared, &task.path, lost);
                } else {
                    result.outcome = TaskOutcome::Failed("StoreError".into(), lost);
                }
            }
        },
    }
    shared.out.line(&format!(
        "[{}] {} in {}{}",
        task.path,
        result.outcome.word(),
        seconds(result.duration),
        shared.ended.one_more()
    ));
    task_finished(planned, &result, Some(&instance_id), shared.observer);
    result
}

/// Keeps `document`, the final document of `instance_id` that the store did not take, in the run's
/// journal, for a later run to write; why it cannot.
fn keep_for_a_later_run(
    shared: &RunShared<'_>,
    instance_id: &str,
    document: &crate::stores::Document,
) -> Result<(), String> {
    match &shared.journal {
        Ok(journal) => journal
            .end_unrecorded(instance_id, document)
            .map_err(|e| e.to_string()),
        Err(why) => Err(why.clone()),
    }
}

/// Warns of the task at `task_path`, on stderr and to the run's watchers.
fn warn(shared: &RunShared<'_>, task_path: &str, warning: String) {
    shared
        .out
        .note(&format!("[{task_path}] Warning: {warning}"));
    shared.observer.event(&RunEvent::Warning {
        task_path: Some(task_path.to_string()),
        message: warning,
    });
}

/// The context a run of `task` starts with, as the instance `instance_id`.
fn starting_context(
    task: &crate::bundle::Task,
    instance_id: &str,
    shared: &RunShared<'_>,
) -> TaskStepContext {
    let mut context = TaskStepContext {
        instance_id: Some(instance_id.to_string()),
        // `--model`: the model a step that runs an agent uses, where every step looks for it.
        agent_model: shared
            .user_overrides
            .get("agent_model")
            .and_then(Value::as_str)
            .map(str::to_string),
        ..TaskStepContext::default()
    };
    for (key, value) in shared.context_metadata {
        context.metadata.insert(key.clone(), value.clone());
    }
    context
        .metadata
        .insert("run_group_id".into(), json!(shared.run_group_id));
    context.metadata.insert("task_id".into(), json!(task.id));
    if !shared.user_overrides.is_empty() {
        context.metadata.insert(
            "user_overrides".into(),
            Value::Object(shared.user_overrides.clone()),
        );
    }
    context
}

/// Tells the run's watchers how the task ended; `started_as` is the instance id it ran under.
fn task_finished(
    planned: &PlannedTask<'_>,
    result: &TaskRunResult,
    started_as: Option<&str>,
    observer: &dyn RunObserver,
) {
    observer.event(&RunEvent::TaskFinished {
        instance_id: result.instance_id.clone(),
        started_as: started_as.map(str::to_string),
        task_id: planned.task.id.clone(),
        task_path: result.path.clone(),
        task_version: result.version,
        outcome: result.outcome.key().to_string(),
        summary: result.outcome.text(),
        scores: result
            .outcome
            .scores()
            .iter()
            .map(|(step_id, score)| TaskScore {
                step_id: step_id.clone(),
                score: *score,
            })
            .collect(),
        verifications: result.verifications.clone(),
        duration_seconds: result.duration.as_secs_f64(),
        end_waiting_here: result.end_waiting_here,
    });
}

/// The failures that fail the task, in step order.
fn failures(
    planned: &PlannedTask<'_>,
    states: &[StepState],
    context: &Mutex<TaskStepContext>,
) -> Vec<(String, String, String)> {
    let failed = context
        .lock()
        .ok()
        .and_then(|c| c.metadata.get("failed_steps").cloned())
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    planned
        .steps
        .iter()
        .zip(states)
        .filter(|(_, s)| matches!(s, StepState::Failed(true)))
        .filter_map(|(step, _)| {
            let row = failed
                .iter()
                .rev()
                .find(|f| f.get("step_id").and_then(Value::as_str) == Some(step.id()))?;
            Some((
                step.id().to_string(),
                row.get("error_type")?.as_str()?.to_string(),
                row.get("error")?.as_str()?.to_string(),
            ))
        })
        .collect()
}
