//! A task's steps, run by their dependencies: every step whose dependencies succeeded (or failed
//! without failing the task) starts as soon as it is ready, on its own thread when others may run
//! beside it; after a failure that fails the task, or a cancel, nothing new starts. A step that fails
//! with retries left sends itself and every step after it that depends on it back to pending.
//!
//! Each step's start and end are told three ways, always together: a progress line to the run's
//! output, an event to the run's observer, and the instance's record (its running and completed
//! steps, and the context as the step left it). While it runs, the run's watcher of long steps
//! has it (`long_steps`), and says it again when it runs long.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::clock;
use crate::run::builtin_steps::{StepEnv, StepError};
use crate::run::events::{RunEvent, StepFailure, StepRef, StepStatus};
use crate::run::outcome::seconds;
use crate::run::plan::{substitute_seed, PlannedStep, PlannedTask, Retry, StepKind};
use crate::run::recorder::{Recorder, StepEnd};
use crate::run::task_shared::RunShared;

/// Where a step of the task run stands.
#[derive(Clone, Debug)]
pub(super) enum StepState {
    Pending,
    Running,
    Succeeded,
    /// Failed; `true` when it fails the task.
    Failed(bool),
    Cancelled,
}

/// A step's run as its thread hands it back.
struct Ran {
    index: usize,
    outcome: Result<(), StepError>,
    took: Duration,
    started_at: String,
}

/// What the schedule works with: the task, its steps' environment, the whole run's, the record.
struct Schedule<'s, 'a> {
    planned: &'s PlannedTask<'a>,
    env: &'s StepEnv<'s>,
    shared: &'s RunShared<'s>,
    recorder: &'s Recorder<'s>,
}

/// Runs the task's steps (see the module's doc); where each came to.
pub(super) fn run_steps(
    planned: &PlannedTask<'_>,
    env: &StepEnv<'_>,
    shared: &RunShared<'_>,
    recorder: &Recorder<'_>,
) -> Vec<StepState> {
    let schedule = Schedule {
        planned,
        env,
        shared,
        recorder,
    };
    schedule.run()
}

impl Schedule<'_, '_> {
    fn run(&self) -> Vec<StepState> {
        let total = self.planned.steps.len();
        let mut states = vec![StepState::Pending; total];
        let mut retries_used = vec![0u32; total];
        let (tx, rx) = mpsc::channel::<Ran>();
        std::thread::scope(|scope| {
            let mut running = 0usize;
            loop {
                if !self.stopping(&states) {
                    let ready = self.ready(&states);
                    // A lone step with nothing else running runs on this thread: no other step can
                    // finish meanwhile, so nothing waits for the loop (a chain of steps starts no
                    // thread).
                    let inline = ready.len() == 1 && running == 0;
                    for index in ready {
                        states[index] = StepState::Running;
                        running += 1;
                        let step = &self.planned.steps[index];
                        self.started(index, step);
                        let tx = tx.clone();
                        let at = self.step_ref(step);
                        let (env, shared) = (self.env, self.shared);
                        let path = &self.planned.task.path;
                        let total = self.planned.steps.len();
                        let work = move || {
                            let started_at = clock::iso_now();
                            let t0 = Instant::now();
                            let watched = shared.long_steps.begin(|| {
                                format!("[{path}] step {}/{total} {}", index + 1, step.id())
                            });
                            let outcome = run_step(step, env, shared, &at);
                            drop(watched);
                            let _ = tx.send(Ran {
                                index,
                                outcome,
                                took: t0.elapsed(),
                                started_at,
                            });
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
                let Ok(ran) = rx.recv() else {
                    break;
                };
                running -= 1;
                let index = ran.index;
                let took = ran.took;
                states[index] = self.ended(ran, &mut states, &mut retries_used);
                let ended = match states[index] {
                    // Sent back to run again: its end is recorded once it has one.
                    StepState::Pending => continue,
                    StepState::Succeeded => StepEnd::Success,
                    StepState::Cancelled => StepEnd::Cancelled,
                    // A step that failed is recorded so, whether or not its failure failed the task.
                    _ => StepEnd::Failure,
                };
                let snapshot = self.env.with_context(|c| c.clone()).unwrap_or_default();
                self.recorder
                    .step_done(self.planned.steps[index].id(), ended, took, &snapshot);
            }
        });
        states
    }

    /// Whether nothing new may start: the run was cancelled, or a step failed the task.
    fn stopping(&self, states: &[StepState]) -> bool {
        self.shared.cancel.is_cancelled()
            || states
                .iter()
                .any(|s| matches!(s, StepState::Failed(true) | StepState::Cancelled))
    }

    /// The pending steps whose dependencies all succeeded or failed without failing the task.
    fn ready(&self, states: &[StepState]) -> Vec<usize> {
        (0..states.len())
            .filter(|&i| {
                matches!(states[i], StepState::Pending)
                    && self.planned.steps[i].deps.iter().all(|d| {
                        matches!(states[*d], StepState::Succeeded | StepState::Failed(false))
                    })
            })
            .collect()
    }

    /// Tells of the step at `index` starting.
    fn started(&self, index: usize, step: &PlannedStep) {
        let total = self.planned.steps.len();
        self.shared.out.detail(&format!(
            "[{}] step {}/{total} {} ({})",
            self.planned.task.path,
            index + 1,
            step.id(),
            step.type_name()
        ));
        self.shared.observer.event(&RunEvent::StepStarted {
            step: self.step_ref(step),
            step_type: step.type_name().to_string(),
            index: index + 1,
            total,
            package: match &step.kind {
                StepKind::Plugin { package, .. } => Some(package.clone()),
                StepKind::Builtin(_) => None,
            },
        });
        self.recorder.step_started(step.id());
    }

    /// Where the step `ran` came to, told as it ended; a failure with retries left sends it, and
    /// the steps that depend on it, back to pending (`states`, `retries_used`).
    fn ended(&self, ran: Ran, states: &mut [StepState], retries_used: &mut [u32]) -> StepState {
        let step = &self.planned.steps[ran.index];
        let n = ran.index + 1;
        let total = self.planned.steps.len();
        let path = &self.planned.task.path;
        let cancelled = self.shared.cancel.is_cancelled();
        match &ran.outcome {
            Ok(()) if cancelled => {
                self.finished(step, n, &ran.took, StepStatus::Cancelled, None);
                StepState::Cancelled
            }
            Ok(()) => {
                self.finished(step, n, &ran.took, StepStatus::Succeeded, None);
                self.shared.out.detail(&format!(
                    "[{path}] step {n}/{total} {} done in {}",
                    step.id(),
                    seconds(ran.took)
                ));
                StepState::Succeeded
            }
            Err(_) if cancelled => {
                self.finished(step, n, &ran.took, StepStatus::Cancelled, None);
                self.shared.out.line(&format!(
                    "[{path}] step {n}/{total} {} cancelled",
                    step.id()
                ));
                StepState::Cancelled
            }
            Err(e) => {
                let retry = step
                    .retry
                    .filter(|r| retries_used[ran.index] < r.max_retries);
                self.failed(step, n, e, &ran, retry);
                match retry {
                    Some(r) => {
                        retries_used[ran.index] += 1;
                        self.send_back(step, r, ran.took, states);
                        StepState::Pending
                    }
                    None => StepState::Failed(step.fail_task_on_error),
                }
            }
        }
    }

    /// Tells of the step `step` (number `n`) failing with `e`, and adds it to the context's
    /// `failed_steps`; `retry` is the retry it gets, if any.
    fn failed(&self, step: &PlannedStep, n: usize, e: &StepError, ran: &Ran, retry: Option<Retry>) {
        let total = self.planned.steps.len();
        let retry_note = match retry {
            Some(r) => format!("; retrying from step '{}'", self.planned.steps[r.from].id()),
            None => String::new(),
        };
        self.shared.out.line(&format!(
            "[{}] step {n}/{total} {} failed in {}: {e}{retry_note}",
            self.planned.task.path,
            step.id(),
            seconds(ran.took)
        ));
        if let Some(detail) = &e.detail {
            self.shared.out.note(detail);
        }
        let fatal = step.fail_task_on_error && retry.is_none();
        self.finished(
            step,
            n,
            &ran.took,
            StepStatus::Failed,
            Some(StepFailure {
                error_type: e.error_type.clone(),
                message: e.message.clone(),
                detail: e.detail.clone(),
                traceback: e.traceback.clone(),
                retrying: retry.is_some(),
                fails_task: fatal,
            }),
        );
        let mut row = json!({
            "step_id": step.id(),
            "step_type": step.type_name(),
            "error": e.message,
            "error_type": e.error_type,
            "started_at_utc": ran.started_at,
            "duration_seconds": ran.took.as_secs_f64(),
            "is_fatal": fatal,
        });
        if retry.is_some() {
            row["retried"] = json!(true);
        }
        // Where it failed: the plugin's traceback, else what else it said (its stderr).
        if let Some(traceback) = e.traceback.as_ref().or(e.detail.as_ref()) {
            row["traceback"] = json!(traceback);
        }
        let _ = self.env.with_context(|c| {
            let list = c
                .metadata
                .entry("failed_steps")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(items) = list {
                items.push(row);
            }
        });
    }

    /// Sends the steps a retry of `step` runs again back to pending (a running one finishes first),
    /// letting each built-in step that had succeeded undo what a rerun must not find.
    fn send_back(
        &self,
        step: &PlannedStep,
        retry: Retry,
        took: Duration,
        states: &mut [StepState],
    ) {
        let again = rerun_set(self.planned, retry.from);
        let ids: Vec<&str> = again.iter().map(|&j| self.planned.steps[j].id()).collect();
        let snapshot = self.env.with_context(|c| c.clone()).unwrap_or_default();
        self.recorder.step_retried(step.id(), took, &ids, &snapshot);
        for j in again {
            if let (StepState::Succeeded, StepKind::Builtin(b)) =
                (&states[j], &self.planned.steps[j].kind)
            {
                b.before_rerun(&self.planned.steps[j].spec, self.env);
            }
            if !matches!(states[j], StepState::Running) {
                states[j] = StepState::Pending;
            }
        }
    }

    /// Tells the run's observer that the step `step` (number `n`) ended.
    fn finished(
        &self,
        step: &PlannedStep,
        n: usize,
        took: &Duration,
        status: StepStatus,
        failure: Option<StepFailure>,
    ) {
        self.shared.observer.event(&RunEvent::StepFinished {
            step: self.step_ref(step),
            index: n,
            total: self.planned.steps.len(),
            status,
            duration_seconds: took.as_secs_f64(),
            failure,
        });
    }

    /// Which step of this task run.
    fn step_ref(&self, step: &PlannedStep) -> StepRef {
        StepRef {
            instance_id: self.env.instance_id.to_string(),
            task_path: self.planned.task.path.clone(),
            step_id: step.id().to_string(),
        }
    }
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
