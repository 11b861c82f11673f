//! Running planned tasks whose entities are written: the part of a run that a bundle run and a stored
//! task's run share. The sweep after runs that were killed, the journal that says this run is alive,
//! the tasks run at most [`MAX_CONCURRENT_TASKS`] at once, then the run's events, its summary and
//! what became of its sandboxes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::events::{PlannedTaskInfo, RunEvent};
use super::executor::StepExecutor;
use super::liveness;
use super::long_steps::LongSteps;
use super::options::RunOptions;
use super::plan::Plan;
use super::recorder::Flusher;
use super::run_stores::RunStores;
use super::skipped::skipped_events;
use super::status::RunStatus;
use super::summary::{eval_tallies, print_summary};
use super::task_run::{run_task, TaskRunResult};
use super::task_shared::{RunShared, Tally};
use super::teardown::hold_kept_then_report;
use super::RunError;
use crate::output::Output;

/// At most this many tasks run at once.
pub const MAX_CONCURRENT_TASKS: usize = 4;

/// Runs the planned tasks (their entities already written, at the versions `version_of` gives) and
/// reports what happened to `out`: the part of a run that a bundle run and a stored task's run share.
/// `label` names what runs in the run's events (the bundle's folder, or the stored task's id).
pub fn run_planned(
    plan: &Plan<'_>,
    version_of: &(dyn Fn(&str) -> i64 + Sync),
    label: &str,
    stores: &RunStores,
    executor: &dyn StepExecutor,
    options: &RunOptions,
    out: &dyn Output,
) -> Result<RunStatus, RunError> {
    let cancel = options.cancel.clone();
    let run_group_id = options
        .run_group_id
        .clone()
        .unwrap_or_else(|| format!("run-{}", crate::sandbox::random_suffix(12)));
    let run_started = std::time::Instant::now();
    let run_store = liveness::RunStore {
        instances_in: options.places.instances_in,
        identity: options.places.document_store.clone(),
    };
    let swept = liveness::sweep(
        &options.places.locks_dir,
        &options.places.sandbox_dir,
        stores.documents.as_ref(),
        run_store.clone(),
    );
    for sentence in swept.sentences() {
        out.note(&sentence);
        options.observer.event(&RunEvent::Noted {
            message: sentence
                .strip_prefix("note: ")
                .unwrap_or(&sentence)
                .to_string(),
        });
    }
    // Held, and so locked, until this function returns: the sign that this run is alive.
    let journal = liveness::RunJournal::begin(
        &options.places.locks_dir,
        &run_group_id,
        run_store,
        &options.places.sandbox_dir,
    )
    .map(std::sync::Arc::new)
    .map_err(|e| e.to_string());
    options.observer.event(&RunEvent::RunStarted {
        run_group_id: run_group_id.clone(),
        bundle: label.to_string(),
        tasks: planned_infos(plan, version_of),
    });
    skipped_events(plan, false, options.observer.as_ref());
    let provider_name = options.sandbox_provider.clone();
    let provider = move || -> Box<dyn crate::sandbox::SandboxProvider> {
        crate::sandbox::provider(&provider_name, &options.places.sandbox_dir).unwrap_or_else(|| {
            Box::new(crate::sandbox::LocalProvider::with_root(
                options.places.sandbox_dir.clone(),
            ))
        })
    };
    let shared = RunShared {
        stores,
        cancel: &cancel,
        executor,
        out,
        run_group_id: &run_group_id,
        user_overrides: &options.user_overrides,
        context_metadata: &options.context_metadata,
        provider: &provider,
        keep: options.keep,
        observer: options.observer.as_ref(),
        flusher: &Flusher::with_heartbeat(options.liveness.heartbeat),
        ended: &Tally::of(plan),
        journal: journal.clone(),
        instances_in: options.places.instances_in,
        liveness: options.liveness,
        long_steps: &LongSteps::new(options.liveness.step_progress),
    };
    let results = run_all(plan, version_of, &shared);
    options.observer.event(&RunEvent::RunFinished {
        run_group_id: run_group_id.clone(),
        failed: results.iter().any(|r| r.outcome.is_failure()),
        cancelled: results.iter().any(|r| r.outcome.is_cancelled()),
        duration_seconds: run_started.elapsed().as_secs_f64(),
    });
    for tally in eval_tallies(plan, &results, version_of) {
        options.observer.event(&RunEvent::EvalFinished(tally));
    }
    print_summary(plan, &results, version_of, out);
    hold_kept_then_report(&results, &cancel, options.observer.as_ref(), out);
    let cancelled_run = results.iter().any(|r| r.outcome.is_cancelled());
    if let (Some(signal), true) = (cancel.signal(), cancelled_run) {
        return Ok(RunStatus::Cancelled { signal });
    }
    Ok(RunStatus::Finished {
        failed: results.iter().any(|r| r.outcome.is_failure()),
    })
}

/// The tasks a plan runs, as the run's events name them.
pub(super) fn planned_infos(
    plan: &Plan<'_>,
    version_of: &dyn Fn(&str) -> i64,
) -> Vec<PlannedTaskInfo> {
    plan.tasks
        .iter()
        .map(|t| PlannedTaskInfo {
            task_id: t.task.id.clone(),
            task_path: t.task.path.clone(),
            task_version: version_of(&t.task.id),
            total_steps: t.steps.len(),
        })
        .collect()
}

/// Runs every planned task, at most [`MAX_CONCURRENT_TASKS`] at once, with the run's flusher writing
/// their instances behind them and its watcher saying the steps that run long; results in plan order.
fn run_all(
    plan: &Plan<'_>,
    version_of: &(dyn Fn(&str) -> i64 + Sync),
    shared: &RunShared<'_>,
) -> Vec<TaskRunResult> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<TaskRunResult>>> =
        plan.tasks.iter().map(|_| Mutex::new(None)).collect();
    let workers = plan.tasks.len().clamp(1, MAX_CONCURRENT_TASKS);
    let work = || loop {
        let i = next.fetch_add(1, Ordering::SeqCst);
        let Some(planned) = plan.tasks.get(i) else {
            break;
        };
        let result = run_task(planned, version_of(&planned.task.id), shared);
        if let Ok(mut slot) = slots[i].lock() {
            *slot = Some(result);
        }
    };
    std::thread::scope(|scope| {
        scope.spawn(|| shared.flusher.run());
        if shared.long_steps.enabled() {
            scope.spawn(|| shared.long_steps.run(shared.out, shared.cancel));
        }
        // Stop the flusher and the watcher once the tasks are done, or when one panics, so that
        // the scope ends.
        let _stop = shared.flusher.stopper();
        let _stop_watching = shared.long_steps.stopper();
        if workers == 1 {
            // One task (`run hello`) runs on this thread.
            work();
        } else {
            let running: Vec<_> = (0..workers).map(|_| scope.spawn(work)).collect();
            for worker in running {
                if let Err(panic) = worker.join() {
                    std::panic::resume_unwind(panic);
                }
            }
        }
    });
    slots
        .iter()
        .filter_map(|s| s.lock().ok().and_then(|mut s| s.take()))
        .collect()
}
