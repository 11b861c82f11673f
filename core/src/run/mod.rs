//! Running a planned bundle (§10.6 steps 3–5): write its entities, run each selected task once (at
//! most four at a time, all in one run group), send the summary and the teardown report to the caller's
//! [`Output`], and say how the run ended ([`RunStatus`]); the CLI turns that into an exit code.

pub mod artifact_objects;
pub mod builtin_steps;
pub mod bundle_run;
pub mod cancel;
pub mod context;
pub mod error;
pub mod events;
pub mod executor;
pub mod ledger;
pub mod liveness;
pub mod local_stores;
pub mod materialize;
pub mod outcome;
pub mod plan;
mod plugin_cancel;
pub mod plugin_steps;
pub mod recorded;
pub mod recorder;
pub mod run_log;
pub mod short_ids;
pub mod stored_artifact;
pub mod stored_task;
pub mod task_run;

use crate::words::plural;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use crate::bundle::tree::Tree;
use crate::bundle::Bundle;
use crate::output::Output;
use crate::run::plan::Plan;
pub use bundle_run::{run_bundle, run_bundle_observed, run_bundle_pinned, RunRequest};
use cancel::Cancel;
pub use error::RunError;
use events::{EvalTally, KeptSandbox, PlannedTaskInfo, RunEvent, RunObserver};
use executor::StepExecutor;
use local_stores::LocalStores;
use outcome::{seconds, Outcome};
use recorder::Flusher;
use task_run::{run_task, RunShared, Tally, TaskRunResult};

/// At most this many tasks run at once.
pub const MAX_CONCURRENT_TASKS: usize = 4;

/// How to run.
#[derive(Clone)]
pub struct RunOptions {
    pub dry_run: bool,
    pub keep: bool,
    /// `user_overrides` for every context (models, sandbox).
    pub user_overrides: Map<String, Value>,
    /// The sandbox provider deploy steps use.
    pub sandbox_provider: String,
    /// Where the run writes: the per-id locks folder and the artifacts' object key prefix.
    pub places: materialize::Places,
    /// Told of each SIGINT, SIGTERM or SIGHUP (the first cancels the run); the caller decides what
    /// else happens.
    pub on_signal: Option<cancel::OnSignal>,
    /// A cancel handle the caller keeps; with one, no signal is watched (see [`RunRequest::cancel`]).
    pub cancel: Option<Arc<Cancel>>,
    /// The run group id; with none, a fresh `run-<suffix>`.
    pub run_group_id: Option<String>,
    /// Entries every task's `context.metadata` starts with (see [`RunRequest::context_metadata`]).
    pub context_metadata: Map<String, Value>,
    /// Who watches the run's events.
    pub observer: Arc<dyn RunObserver>,
    /// Task versions the run must record, by task id (see [`materialize::Writing::pinned`]).
    pub pinned: materialize::Versions,
}

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

/// What a dry run says first, before what it would write and run.
const DRY_RUN_LINE: &str = "Dry run: nothing is written or run.";
/// What a dry run says last, under the plan it showed.
const DRY_RUN_DONE: &str = "Dry run: nothing was written or run.";

/// Writes, runs and reports what happened to `out`; says how the run ended.
pub fn execute(
    bundle: &Bundle,
    tree: Tree<'_>,
    plan: &Plan<'_>,
    stores: &LocalStores,
    executor: &dyn StepExecutor,
    options: &RunOptions,
    out: &dyn Output,
) -> Result<RunStatus, RunError> {
    if options.dry_run {
        out.line(DRY_RUN_LINE);
    }
    let cancel = cancel_of(options.cancel.as_ref(), options.on_signal)?;
    let versions = match materialize::materialize(
        bundle,
        tree,
        plan,
        stores,
        materialize::Writing {
            dry_run: options.dry_run,
            places: &options.places,
            cancel: &cancel,
            observer: options.observer.as_ref(),
            pinned: &options.pinned,
        },
        out,
    ) {
        Err(materialize::MaterializeError::Cancelled) => {
            out.line(CANCELLED_BEFORE_TASKS);
            return Ok(RunStatus::Cancelled {
                signal: cancel.signal().unwrap_or(libc::SIGINT),
            });
        }
        other => other?,
    };

    let version_of = |id: &str| versions.get(id).copied().unwrap_or(0);
    if options.dry_run {
        out.line("Would run:");
        for t in &plan.tasks {
            out.line(&format!("  {} v{}", t.task.path, version_of(&t.task.id)));
        }
        say_task_notes(&plan.tasks, true, options.observer.as_ref(), out);
        options.observer.event(&RunEvent::RunPlanned {
            bundle: bundle.display_root.clone(),
            tasks: planned_infos(plan, &version_of),
        });
        skipped_events(plan, true, options.observer.as_ref());
        out.line(DRY_RUN_DONE);
        return Ok(RunStatus::DryRun { versions });
    }
    // A typo'd field or criterion type is said on every run, not only a dry one: a task that
    // skips the criterion it meant to check would otherwise pass without a word.
    say_task_notes(&plan.tasks, false, options.observer.as_ref(), out);
    let options = RunOptions {
        cancel: Some(cancel),
        ..options.clone()
    };
    run_planned(
        plan,
        &version_of,
        &bundle.display_root,
        stores,
        executor,
        &options,
        out,
    )
}

/// What the planned tasks' built-in steps hold that they do not read (a field close to one they
/// do, a criterion of a type they do not know) and, with `predictions` (a dry run, which runs
/// nothing that would fail), what will not run as written; as `note:` lines and warnings (a script
/// reads them in the document's `warnings`).
pub(super) fn say_task_notes(
    tasks: &[plan::PlannedTask<'_>],
    predictions: bool,
    observer: &dyn RunObserver,
    out: &dyn Output,
) {
    for t in tasks {
        let mut notes = match predictions {
            true => sandbox_notes(&t.steps),
            false => Vec::new(),
        };
        for step in &t.steps {
            let builtin = match step.kind {
                plan::StepKind::Builtin(builtin) => Some(builtin),
                plan::StepKind::Plugin { .. } => None,
            };
            notes.extend(builtin_steps::step_notes(step.id(), &step.spec, builtin));
            if let Some(builtin) = builtin {
                notes.extend(builtin.check_notes(&step.spec, predictions));
            }
        }
        for note in notes {
            out.note(&format!("note: {}: {note}", t.task.path));
            observer.event(&RunEvent::Warning {
                task_path: Some(t.task.path.clone()),
                message: note,
            });
        }
    }
}

/// What a run cancelled before its first task says.
pub const CANCELLED_BEFORE_TASKS: &str =
    "Cancelled before any task ran; the next run goes on from what was written.";

/// What cancels the run: the caller's, else one that SIGINT, SIGTERM and SIGHUP set from now on
/// (each signal is told to `on_signal` too).
pub fn cancel_of(
    given: Option<&Arc<Cancel>>,
    on_signal: Option<cancel::OnSignal>,
) -> Result<Arc<Cancel>, RunError> {
    match given {
        Some(cancel) => Ok(cancel.clone()),
        None => {
            let cancel = Cancel::new();
            cancel::watch_signals(cancel.clone(), on_signal).map_err(RunError::WatchSignals)?;
            Ok(cancel)
        }
    }
}

/// Runs the planned tasks (their entities already written, at the versions `version_of` gives) and
/// reports what happened to `out`: the part of a run that a bundle run and a stored task's run share.
/// `label` names what runs in the run's events (the bundle's folder, or the stored task's id).
pub fn run_planned(
    plan: &Plan<'_>,
    version_of: &(dyn Fn(&str) -> i64 + Sync),
    label: &str,
    stores: &LocalStores,
    executor: &dyn StepExecutor,
    options: &RunOptions,
    out: &dyn Output,
) -> Result<RunStatus, RunError> {
    let cancel = cancel_of(options.cancel.as_ref(), options.on_signal)?;
    let run_group_id = options
        .run_group_id
        .clone()
        .unwrap_or_else(|| format!("run-{}", crate::sandbox::random_suffix(12)));
    let run_started = std::time::Instant::now();
    let swept = liveness::sweep(
        &options.places.locks_dir,
        &options.places.sandbox_dir,
        stores.documents.as_ref(),
        options.places.instances_in,
    );
    for sentence in swept.sentences() {
        out.note(&sentence);
    }
    // Held, and so locked, until this function returns: the sign that this run is alive.
    let journal = liveness::RunJournal::begin(
        &options.places.locks_dir,
        &run_group_id,
        options.places.instances_in,
        &options.places.sandbox_dir,
    )
    .map(std::sync::Arc::new);
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
        flusher: &Flusher::new(),
        ended: &Tally::of(plan.tasks.len()),
        journal: journal.clone(),
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
    let mut torn: usize = results.iter().map(|r| r.torn_down).sum();
    let mut replaced: usize = results.iter().map(|r| r.replaced).sum();
    let mut still_up: Vec<(crate::sandbox::Sandbox, String)> =
        results.iter().flat_map(|r| r.still_up.clone()).collect();
    let kept: Vec<(&str, &crate::sandbox::Deployed)> = results
        .iter()
        .filter_map(|r| r.kept.as_ref().map(|d| (r.path.as_str(), d)))
        .collect();
    let kept_count: usize = kept.iter().map(|(_, d)| d.all().len()).sum();
    if kept_count > 0 {
        out.line("");
        out.line("Kept up:");
        for (task, d) in &kept {
            for s in d.all() {
                out.line(&format!(
                    "  {}  {} sandbox  {}  [{task}]",
                    s.id,
                    d.provider().name(),
                    d.provider().describe(&s)
                ));
            }
        }
        out.line(&format!(
            "Holding {kept_count} {} up; Ctrl-C tears {} down.",
            plural(kept_count, "sandbox", "sandboxes"),
            if kept_count == 1 { "it" } else { "them" }
        ));
        options.observer.event(&RunEvent::SandboxesKept {
            sandboxes: kept_sandboxes(&results),
        });
        while !cancel.is_cancelled() {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        for (_, d) in &kept {
            let report = d.teardown_all();
            torn += report.torn_down.len();
            replaced += report.replaced;
            still_up.extend(report.still_up);
        }
    }
    if torn > 0 {
        out.line("");
        // Those a retry replaced were torn down while their task ran: said, so that the count
        // agrees with what "Holding" said was up.
        let by_retries = match replaced {
            0 => String::new(),
            n => format!(", {n} of them replaced by retries"),
        };
        out.line(&format!(
            "Tore down {torn} {}{by_retries}.",
            plural(torn, "sandbox", "sandboxes")
        ));
    }
    if !still_up.is_empty() {
        out.line("");
        out.line(&format!(
            "Still up, {} {}:",
            still_up.len(),
            plural(still_up.len(), "sandbox", "sandboxes")
        ));
        for (s, why) in &still_up {
            out.line(&format!("  {}  {}: {why}", s.id, s.work_dir.display()));
        }
    }
    let cancelled_run = results.iter().any(|r| r.outcome.is_cancelled());
    if let (Some(signal), true) = (cancel.signal(), cancelled_run) {
        return Ok(RunStatus::Cancelled { signal });
    }
    Ok(RunStatus::Finished {
        failed: results.iter().any(|r| r.outcome.is_failure()),
    })
}

/// The sandboxes `--keep` holds up, as the run's events name them.
fn kept_sandboxes(results: &[TaskRunResult]) -> Vec<KeptSandbox> {
    results
        .iter()
        .filter_map(|r| r.kept.as_ref().map(|d| (r, d)))
        .flat_map(|(r, d)| {
            d.all().into_iter().map(|s| KeptSandbox {
                task_path: r.path.clone(),
                sandbox_id: s.id.clone(),
                name: s.name.clone(),
                provider: s.provider.clone(),
                work_dir: s.work_dir.display().to_string(),
            })
        })
        .collect()
}

/// The tasks a plan runs, as the run's events name them.
fn planned_infos(plan: &Plan<'_>, version_of: &dyn Fn(&str) -> i64) -> Vec<PlannedTaskInfo> {
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

/// Why a task the plan leaves out does not run (a dry run: would not).
fn skipped_reason(task: &crate::bundle::Task, dry_run: bool) -> String {
    let did = if dry_run {
        "would not run"
    } else {
        "didn't run"
    };
    format!(
        "isn't named by any eval, so it {did}; run it with --task {}",
        task.name
    )
}

/// One event per task the plan leaves out.
fn skipped_events(plan: &Plan<'_>, dry_run: bool, observer: &dyn RunObserver) {
    for t in &plan.skipped {
        observer.event(&RunEvent::TaskSkipped {
            task_id: t.id.clone(),
            task_path: t.path.clone(),
            reason: skipped_reason(t, dry_run),
        });
    }
}

/// Runs every planned task, at most [`MAX_CONCURRENT_TASKS`] at once, with the run's flusher writing
/// their instances behind them; results in plan order.
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
        // Stops the flusher once the tasks are done, or when one panics, so that the scope ends.
        let _stop = shared.flusher.stopper();
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

/// How each eval's tasks ended.
fn eval_tallies(
    plan: &Plan<'_>,
    results: &[TaskRunResult],
    version_of: &dyn Fn(&str) -> i64,
) -> Vec<EvalTally> {
    plan.evals
        .iter()
        .map(|pe| {
            let runs: Vec<&TaskRunResult> = pe
                .task_ids
                .iter()
                .filter_map(|id| {
                    let t = plan.tasks.iter().position(|t| &t.task.id == id)?;
                    results.get(t)
                })
                .collect();
            let count =
                |pick: fn(&Outcome) -> bool| runs.iter().filter(|r| pick(&r.outcome)).count();
            EvalTally {
                eval_id: pe.eval.id.clone(),
                eval_path: pe.eval.path.clone(),
                eval_version: version_of(&pe.eval.id),
                tasks: runs.len(),
                passed: count(|o| matches!(o, Outcome::Passed(_))),
                scored_below_one: count(|o| matches!(o, Outcome::ScoredBelowOne(_))),
                unscored: count(|o| matches!(o, Outcome::Unscored)),
                failed: count(Outcome::is_failure),
                cancelled: count(Outcome::is_cancelled),
                didnt_start: count(|o| matches!(o, Outcome::DidntStart)),
            }
        })
        .collect()
}

/// How many tasks came out each way, so the one failure among hundreds is not left to a search:
/// `300 tasks: 299 passed, 1 failed`.
fn tally_line(results: &[TaskRunResult]) -> String {
    let order = [
        ("passed", "passed"),
        ("scored_below_one", "scored below 1"),
        ("unscored", "unscored"),
        ("failed", "failed"),
        ("cancelled", "cancelled"),
        ("didnt_start", "did not start"),
    ];
    let counts: Vec<String> = order
        .iter()
        .filter_map(|(key, words)| {
            let n = results.iter().filter(|r| r.outcome.key() == *key).count();
            (n > 0).then(|| format!("{n} {words}"))
        })
        .collect();
    format!("  {} tasks: {}", results.len(), counts.join(", "))
}

/// What a dry run can tell of a task's sandboxes when all its steps are built in (a plugin's step
/// may deploy one of its own): a sandbox no `deploy_sandbox` step deploys, or one deployed twice,
/// each of which the run fails on.
fn sandbox_notes(steps: &[plan::PlannedStep]) -> Vec<String> {
    let builtin = |s: &plan::PlannedStep| match s.kind {
        plan::StepKind::Builtin(b) => Some(b.type_name()),
        plan::StepKind::Plugin { .. } => None,
    };
    if steps.iter().any(|s| builtin(s).is_none()) {
        return Vec::new();
    }
    fn name_of(s: &plan::PlannedStep) -> Option<&str> {
        s.spec.get("sandbox_name").and_then(Value::as_str)
    }
    let mut notes = Vec::new();
    let mut deployed: Vec<&str> = Vec::new();
    for step in steps
        .iter()
        .filter(|s| builtin(s) == Some("deploy_sandbox"))
    {
        let Some(name) = name_of(step) else { continue };
        if deployed.contains(&name) {
            notes.push(format!(
                "two deploy_sandbox steps deploy the sandbox '{name}': the second fails, as a task deploys each sandbox once"
            ));
        } else {
            deployed.push(name);
        }
    }
    for step in steps
        .iter()
        .filter(|s| builtin(s) != Some("deploy_sandbox"))
    {
        let Some(name) = name_of(step) else { continue };
        if !deployed.contains(&name) {
            notes.push(format!(
                "step '{}' names the sandbox '{name}', which no deploy_sandbox step of the task deploys: the step fails",
                step.id()
            ));
        }
    }
    notes
}

fn print_summary(
    plan: &Plan<'_>,
    results: &[TaskRunResult],
    version_of: &dyn Fn(&str) -> i64,
    out: &dyn Output,
) {
    out.line("");
    out.line("Tasks:");
    for r in results {
        let instance = match (&r.instance_id, &r.outcome) {
            (_, Outcome::DidntStart) => String::new(),
            (Some(id), _) => format!(", {}, instance {id}", seconds(r.duration)),
            (None, _) => format!(", {}, no instance recorded", seconds(r.duration)),
        };
        // A failure of several lines (a plugin's last stderr lines) keeps the time and instance on
        // its first, where they are read, not between its lines.
        let text = r.outcome.text();
        let (first, rest) = match text.split_once('\n') {
            Some((first, rest)) => (first, format!("\n{rest}")),
            None => (text.as_str(), String::new()),
        };
        out.line(&format!(
            "  {} v{}: {first}{instance}{rest}",
            r.path, r.version
        ));
    }
    if results.len() > 1 {
        out.line(&tally_line(results));
    }
    if !plan.evals.is_empty() {
        out.line("Evals:");
        for tally in eval_tallies(plan, results, version_of) {
            out.line(&eval_line(&tally));
        }
        skipped_lines(&plan.skipped, out);
    }
}

/// `  evals/all.toml v1: 10 of 300 passed, 4 cancelled, 282 did not start`.
fn eval_line(tally: &EvalTally) -> String {
    let mut line = format!(
        "  {} v{}: {} of {} passed",
        tally.eval_path, tally.eval_version, tally.passed, tally.tasks
    );
    if tally.scored_below_one > 0 {
        line.push_str(&format!(", {} scored below 1", tally.scored_below_one));
    }
    if tally.unscored > 0 {
        line.push_str(&format!(", {} unscored", tally.unscored));
    }
    if tally.failed > 0 {
        line.push_str(&format!(", {} failed", tally.failed));
    }
    let stopped_running = tally.cancelled - tally.didnt_start.min(tally.cancelled);
    if stopped_running > 0 {
        line.push_str(&format!(", {stopped_running} cancelled"));
    }
    if tally.didnt_start > 0 {
        line.push_str(&format!(", {} did not start", tally.didnt_start));
    }
    line
}

/// The tasks no eval names, which did not run: a line each when there are a few, else one line
/// (a bundle of hundreds of tasks and one small eval buried its summary under them; `--json` lists
/// every one under `skipped`).
fn skipped_lines(skipped: &[&crate::bundle::Task], out: &dyn Output) {
    const EACH_UP_TO: usize = 3;
    if skipped.len() <= EACH_UP_TO {
        for t in skipped {
            out.line(&format!("{} {}", t.path, skipped_reason(t, false)));
        }
        return;
    }
    let first: Vec<&str> = skipped
        .iter()
        .take(EACH_UP_TO)
        .map(|t| t.path.as_str())
        .collect();
    out.line(&format!(
        "{} tasks no eval names didn't run ({}, and {} more); run one with --task NAME",
        skipped.len(),
        first.join(", "),
        skipped.len() - EACH_UP_TO
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eval_line_tells_cancelled_from_never_started() {
        let tally = EvalTally {
            eval_id: "@local/b/all".into(),
            eval_path: "evals/all.toml".into(),
            eval_version: 1,
            tasks: 300,
            passed: 10,
            scored_below_one: 2,
            unscored: 1,
            failed: 1,
            cancelled: 286,
            didnt_start: 282,
        };
        assert_eq!(
            eval_line(&tally),
            "  evals/all.toml v1: 10 of 300 passed, 2 scored below 1, 1 unscored, 1 failed, 4 cancelled, 282 did not start"
        );
    }
}
