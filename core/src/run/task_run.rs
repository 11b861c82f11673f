//! One run of one task: a fresh context, its steps scheduled by their dependencies (independent ready
//! steps run at once), the instance recorded in `task_instances`, its sandboxes torn down at the end.

use std::sync::mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use crate::clock;
use crate::output::Output;
use crate::run::builtin_steps::{StepEnv, StepError};
use crate::run::cancel::Cancel;
use crate::run::context::TaskStepContext;
use crate::run::events::{RunEvent, RunObserver, StepFailure, StepRef, StepStatus, TaskScore};
use crate::run::executor::StepExecutor;
use crate::run::heartbeat::Liveness;
use crate::run::liveness::InstancesIn;
use crate::run::liveness::RunJournal;
use crate::run::outcome::{missing_scores, scores, seconds, TaskOutcome};
use crate::run::plan::{substitute_seed, PlannedStep, PlannedTask, StepKind};
use crate::run::recorder::{FinalWait, Flusher, NewInstance, RecordError, Recorder, StepEnd};
use crate::run::run_stores::RunStores;
use crate::sandbox::{Deployed, SandboxProvider};

/// What one task run needs from the whole run.
pub struct RunShared<'a> {
    pub stores: &'a RunStores,
    pub cancel: &'a Cancel,
    pub executor: &'a dyn StepExecutor,
    /// Where the run's progress lines go.
    pub out: &'a dyn Output,
    pub run_group_id: &'a str,
    pub user_overrides: &'a Map<String, Value>,
    /// Entries every context's metadata starts with.
    pub context_metadata: &'a Map<String, Value>,
    pub provider: &'a (dyn Fn() -> Box<dyn SandboxProvider> + Sync),
    pub keep: bool,
    /// Who watches the run's events.
    pub observer: &'a dyn RunObserver,
    /// Writes the running tasks' instance documents behind them.
    pub flusher: &'a Flusher,
    /// How many of the run's tasks have ended, of how many: what a task's last line counts.
    pub ended: &'a Tally,
    /// The run's journal, told of each sandbox deployed and of each task end the document store
    /// did not take (none when the state folder holds none).
    pub journal: Option<std::sync::Arc<RunJournal>>,
    /// Which document store the instances go to.
    pub instances_in: InstancesIn,
    /// How long a task's end waits for the store (and the heartbeat the flusher writes).
    pub liveness: Liveness,
}

/// Counts the run's tasks as they end.
#[derive(Debug, Default)]
pub struct Tally {
    ended: std::sync::atomic::AtomicUsize,
    total: usize,
}

impl Tally {
    pub fn of(total: usize) -> Tally {
        Tally {
            ended: Default::default(),
            total,
        }
    }

    /// One more task ended; what its last line adds: ` (3 of 30 tasks ended)`, nothing for a lone task.
    fn one_more(&self) -> String {
        let ended = self.ended.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        match self.total {
            0 | 1 => String::new(),
            total => format!(" ({ended} of {total} tasks ended)"),
        }
    }
}

/// What one task run did.
pub struct TaskRunResult {
    pub path: String,
    pub version: i64,
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
}

#[derive(Clone, Debug)]
enum StepState {
    Pending,
    Running,
    Succeeded,
    /// Failed; `true` when it fails the task.
    Failed(bool),
    Cancelled,
}

/// Runs `planned` once.
pub fn run_task(planned: &PlannedTask<'_>, version: i64, shared: &RunShared<'_>) -> TaskRunResult {
    let task = planned.task;
    let started = Instant::now();
    let mut result = TaskRunResult {
        path: task.path.clone(),
        version,
        outcome: TaskOutcome::DidntStart,
        duration: Duration::ZERO,
        instance_id: None,
        kept: None,
        torn_down: 0,
        replaced: 0,
        still_up: Vec::new(),
        verifications: Map::new(),
    };
    if shared.cancel.is_cancelled() {
        task_finished(planned, &result, None, shared.observer);
        return result;
    }
    let instance_id = format!("{}-{}", task.id, crate::sandbox::random_suffix(8));
    result.instance_id = Some(instance_id.clone());
    let mut context = TaskStepContext {
        instance_id: Some(instance_id.clone()),
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
        // A step that failed without failing its task has said why already.
        let succeeded: Vec<&PlannedStep> = planned
            .steps
            .iter()
            .zip(&states)
            .filter(|(_, state)| matches!(state, StepState::Succeeded))
            .map(|(step, _)| step)
            .collect();
        let metadata = &final_context.metadata;
        let mut warnings = missing_scores(succeeded.iter().copied(), metadata);
        // 1 is full marks and 0 none: a score past either end passes or fails the task by a margin
        // its grader likely did not mean.
        for (step_id, score) in scores(&planned.steps, metadata) {
            if !(0.0..=1.0).contains(&score) {
                warnings.push(format!(
                    "step '{step_id}' scored {}, outside 0 to 1 (1 is full marks); the task is judged by it as it is",
                    crate::run::outcome::format_g(score)
                ));
            }
        }
        // A grading step that failed without failing its task scores nothing: said, since the
        // task's score then leaves out what it was to check.
        for (step, _) in planned
            .steps
            .iter()
            .zip(&states)
            .filter(|(_, state)| matches!(state, StepState::Failed(false)))
        {
            if let Some(verifier) = step.spec.get("verifier_id").and_then(Value::as_str) {
                warnings.push(format!(
                    "step '{}' failed without failing the task (fail_task_on_error is false), so verifier '{verifier}' gave no score and the task's score leaves it out",
                    step.id()
                ));
            }
        }
        for step in &succeeded {
            if let StepKind::Builtin(b) = &step.kind {
                warnings.extend(b.warnings(&step.spec, metadata));
            }
        }
        warnings.extend(shared.executor.warnings(&instance_id));
        for warning in warnings {
            shared
                .out
                .note(&format!("[{}] Warning: {warning}", planned.task.path));
            shared.observer.event(&RunEvent::Warning {
                task_path: Some(planned.task.path.clone()),
                message: warning,
            });
        }
        let outcome = TaskOutcome::from_scores(scores(&planned.steps, &final_context.metadata));
        if matches!(outcome, TaskOutcome::ScoredBelowOne(_)) {
            for step in &succeeded {
                if let StepKind::Builtin(b) = &step.kind {
                    for miss in b.misses(&step.spec, metadata) {
                        shared.out.line(&format!("[{}] {miss}", planned.task.path));
                    }
                }
            }
        }
        outcome
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
        shared.out.note(&format!(
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
        // The task came out as its steps said; only its record waits.
        Err(RecordError::Deferred { why, document }) => {
            let warning = match &shared.journal {
                Some(journal) => {
                    journal.end_unrecorded(&instance_id, &document);
                    format!(
                        "the document store did not take the task's end ({why}), so its record is not written yet; it is kept in this machine's state folder, and the next {} on this machine writes it as the task left it",
                        shared.instances_in.marked_by()
                    )
                }
                None => format!(
                    "the document store did not take the task's end ({why}), and this machine's state folder cannot keep it: the store keeps what it last took of the task, which a later run marks failed once its heartbeat is seen to have stopped"
                ),
            };
            shared
                .out
                .note(&format!("[{}] Warning: {warning}", task.path));
            shared.observer.event(&RunEvent::Warning {
                task_path: Some(task.path.clone()),
                message: warning,
            });
        }
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
    });
}

/// Which step of this task run.
fn step_ref(planned: &PlannedTask<'_>, env: &StepEnv<'_>, step: &PlannedStep) -> StepRef {
    StepRef {
        instance_id: env.instance_id.to_string(),
        task_path: planned.task.path.clone(),
        step_id: step.id().to_string(),
    }
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

/// Runs the steps: every step whose dependencies succeeded (or failed without failing the task) starts
/// as soon as it is ready; after a failure that fails the task, or a cancel, nothing new starts.
fn run_steps(
    planned: &PlannedTask<'_>,
    env: &StepEnv<'_>,
    shared: &RunShared<'_>,
    recorder: &Recorder<'_>,
) -> Vec<StepState> {
    let total = planned.steps.len();
    let mut states = vec![StepState::Pending; total];
    let mut retries_used = vec![0u32; total];
    let (tx, rx) = mpsc::channel::<(usize, Result<(), StepError>, Duration, String)>();
    std::thread::scope(|scope| {
        let mut running = 0usize;
        loop {
            let stop = shared.cancel.is_cancelled()
                || states
                    .iter()
                    .any(|s| matches!(s, StepState::Failed(true) | StepState::Cancelled));
            if !stop {
                let ready: Vec<usize> = (0..total)
                    .filter(|&i| {
                        matches!(states[i], StepState::Pending)
                            && planned.steps[i].deps.iter().all(|d| {
                                matches!(
                                    states[*d],
                                    StepState::Succeeded | StepState::Failed(false)
                                )
                            })
                    })
                    .collect();
                // A lone step with nothing else running runs on this thread: no other step can
                // finish meanwhile, so nothing waits for the loop (a chain of steps starts no thread).
                let inline = ready.len() == 1 && running == 0;
                for i in ready {
                    states[i] = StepState::Running;
                    running += 1;
                    let step = &planned.steps[i];
                    shared.out.detail(&format!(
                        "[{}] step {}/{total} {} ({})",
                        planned.task.path,
                        i + 1,
                        step.id(),
                        step.type_name()
                    ));
                    shared.observer.event(&RunEvent::StepStarted {
                        step: step_ref(planned, env, step),
                        step_type: step.type_name().to_string(),
                        index: i + 1,
                        total,
                        package: match &step.kind {
                            StepKind::Plugin { package, .. } => Some(package.clone()),
                            StepKind::Builtin(_) => None,
                        },
                    });
                    recorder.step_started(step.id());
                    let tx = tx.clone();
                    let at = step_ref(planned, env, step);
                    let work = move || {
                        let started_at = clock::iso_now();
                        let t0 = Instant::now();
                        let outcome = run_step(step, env, shared, &at);
                        let _ = tx.send((i, outcome, t0.elapsed(), started_at));
                    };
                    if inline {
                        work();
                    } else {
                        scope.spawn(work);
                    }
                }
            }
            if running == 0 {
                break;
            }
            let Ok((i, outcome, took, started_at)) = rx.recv() else {
                break;
            };
            running -= 1;
            let step = &planned.steps[i];
            let n = i + 1;
            let finished = |status: StepStatus, failure: Option<StepFailure>| {
                shared.observer.event(&RunEvent::StepFinished {
                    step: step_ref(planned, env, step),
                    index: n,
                    total,
                    status,
                    duration_seconds: took.as_secs_f64(),
                    failure,
                });
            };
            states[i] = match outcome {
                Ok(()) if shared.cancel.is_cancelled() => {
                    finished(StepStatus::Cancelled, None);
                    StepState::Cancelled
                }
                Ok(()) => {
                    finished(StepStatus::Succeeded, None);
                    shared.out.detail(&format!(
                        "[{}] step {n}/{total} {} done in {}",
                        planned.task.path,
                        step.id(),
                        seconds(took)
                    ));
                    StepState::Succeeded
                }
                Err(_) if shared.cancel.is_cancelled() => {
                    finished(StepStatus::Cancelled, None);
                    shared.out.line(&format!(
                        "[{}] step {n}/{total} {} cancelled",
                        planned.task.path,
                        step.id()
                    ));
                    StepState::Cancelled
                }
                Err(e) => {
                    let retry = step.retry.filter(|r| retries_used[i] < r.max_retries);
                    let retry_note = match retry {
                        Some(r) => format!("; retrying from step '{}'", planned.steps[r.from].id()),
                        None => String::new(),
                    };
                    shared.out.line(&format!(
                        "[{}] step {n}/{total} {} failed in {}: {e}{retry_note}",
                        planned.task.path,
                        step.id(),
                        seconds(took)
                    ));
                    if let Some(detail) = &e.detail {
                        shared.out.note(detail);
                    }
                    finished(
                        StepStatus::Failed,
                        Some(StepFailure {
                            error_type: e.error_type.clone(),
                            message: e.message.clone(),
                            detail: e.detail.clone(),
                            traceback: e.traceback.clone(),
                            retrying: retry.is_some(),
                            fails_task: step.fail_task_on_error && retry.is_none(),
                        }),
                    );
                    let mut row = json!({
                        "step_id": step.id(),
                        "step_type": step.type_name(),
                        "error": e.message,
                        "error_type": e.error_type,
                        "started_at_utc": started_at,
                        "duration_seconds": took.as_secs_f64(),
                        "is_fatal": step.fail_task_on_error && retry.is_none(),
                    });
                    if retry.is_some() {
                        row["retried"] = json!(true);
                    }
                    // Where it failed: the plugin's traceback, else what else it said (its stderr).
                    if let Some(traceback) = e.traceback.as_ref().or(e.detail.as_ref()) {
                        row["traceback"] = json!(traceback);
                    }
                    let _ = env.with_context(|c| {
                        let list = c
                            .metadata
                            .entry("failed_steps")
                            .or_insert_with(|| Value::Array(Vec::new()));
                        if let Value::Array(items) = list {
                            items.push(row);
                        }
                    });
                    match retry {
                        Some(r) => {
                            retries_used[i] += 1;
                            let again = rerun_set(planned, r.from);
                            let ids: Vec<&str> =
                                again.iter().map(|&j| planned.steps[j].id()).collect();
                            let snapshot = env.with_context(|c| c.clone()).unwrap_or_default();
                            recorder.step_retried(step.id(), took, &ids, &snapshot);
                            for j in again {
                                if let (StepState::Succeeded, StepKind::Builtin(b)) =
                                    (&states[j], &planned.steps[j].kind)
                                {
                                    b.before_rerun(&planned.steps[j].spec, env);
                                }
                                if !matches!(states[j], StepState::Running) {
                                    states[j] = StepState::Pending;
                                }
                            }
                            StepState::Pending
                        }
                        None => StepState::Failed(step.fail_task_on_error),
                    }
                }
            };
            if matches!(states[i], StepState::Pending) {
                continue;
            }
            let ended = match states[i] {
                StepState::Succeeded => StepEnd::Success,
                // A step that failed is recorded so, whether or not its failure failed the task.
                StepState::Cancelled => StepEnd::Cancelled,
                _ => StepEnd::Failure,
            };
            let snapshot = env.with_context(|c| c.clone()).unwrap_or_default();
            recorder.step_done(step.id(), ended, took, &snapshot);
        }
    });
    states
}

/// `from` and every step that depends on it, directly or not: what a retry runs again.
fn rerun_set(planned: &PlannedTask<'_>, from: usize) -> Vec<usize> {
    let mut set = vec![from];
    for j in from + 1..planned.steps.len() {
        if planned.steps[j].deps.iter().any(|d| set.contains(d)) {
            set.push(j);
        }
    }
    set
}

/// Runs one step by its kind.
fn run_step(
    step: &PlannedStep,
    env: &StepEnv<'_>,
    shared: &RunShared<'_>,
    at: &StepRef,
) -> Result<(), StepError> {
    if shared.cancel.is_cancelled() {
        return Err(StepError::cancelled());
    }
    let seed = env
        .with_context(|c| c.metadata.get("seed").and_then(Value::as_object).cloned())?
        .filter(|s| !s.is_empty());
    let mut spec = step.spec.clone();
    if let Some(seed) = &seed {
        substitute_seed(&mut spec, seed);
    }
    match &step.kind {
        StepKind::Builtin(b) => b.run(&spec, env),
        StepKind::Plugin { package, .. } => {
            let context = env.with_context(|c| c.to_dict())?;
            let metadata = shared.executor.execute(
                package,
                step.type_name(),
                &spec,
                &context,
                shared.cancel,
                at,
            )?;
            env.with_context(|c| c.merge_metadata(metadata))
        }
    }
}
