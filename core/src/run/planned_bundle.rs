//! Running a planned bundle: its entities written (a dry run says what it would write and run, and
//! the tasks the run would fail, and stops there), then its tasks run as [`run_planned`] runs them.

use super::cancel_handle::CANCELLED_BEFORE_TASKS;
use super::events::RunEvent;
use super::executor::StepExecutor;
use super::materialize;
use super::options::RunOptions;
use super::plan::Plan;
use super::planned_tasks::{planned_infos, run_planned};
use super::run_stores::RunStores;
use super::skipped::{skipped_events, skipped_lines};
use super::status::RunStatus;
use super::task_notes::{
    say_dry_run_notes, say_task_notes, say_unfilled_seed_tokens, MachineFacts,
};
use super::RunError;
use crate::bundle::tree::Tree;
use crate::bundle::Bundle;
use crate::output::Output;

/// What a dry run says first, before what it would write and run.
const DRY_RUN_LINE: &str = "Dry run: nothing is written or run.";
/// What a dry run says last, under the plan it showed.
const DRY_RUN_DONE: &str = "Dry run: nothing was written or run.";

/// Writes, runs and reports what happened to `out`; says how the run ended.
pub fn execute(
    bundle: &Bundle,
    tree: Tree<'_>,
    plan: &Plan<'_>,
    stores: &RunStores,
    executor: &dyn StepExecutor,
    options: &RunOptions,
    out: &dyn Output,
) -> Result<RunStatus, RunError> {
    let planned = Planned { bundle, tree, plan };
    execute_knowing(
        planned,
        stores,
        executor,
        options,
        MachineFacts::default(),
        out,
    )
}

/// A bundle, its files and the plan made of it.
#[derive(Clone, Copy)]
pub(super) struct Planned<'p, 'b> {
    pub bundle: &'b Bundle,
    pub tree: Tree<'p>,
    pub plan: &'p Plan<'b>,
}

/// [`execute`], whose dry run knows `facts` of the machine too (and tells the tasks they would
/// fail).
pub(super) fn execute_knowing(
    planned: Planned<'_, '_>,
    stores: &RunStores,
    executor: &dyn StepExecutor,
    options: &RunOptions,
    facts: MachineFacts<'_>,
    out: &dyn Output,
) -> Result<RunStatus, RunError> {
    let Planned { bundle, tree, plan } = planned;
    if options.dry_run {
        out.line(DRY_RUN_LINE);
    }
    let cancel = options.cancel.clone();
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
        skipped_lines(&plan.skipped, true, out);
        let told = say_dry_run_notes(&plan.tasks, facts, options.observer.as_ref(), out);
        say_unfilled_seed_tokens(
            &plan.tasks,
            seed_of(options),
            options.observer.as_ref(),
            out,
        );
        options.observer.event(&RunEvent::RunPlanned {
            bundle: bundle.display_root.clone(),
            tasks: planned_infos(plan, &version_of),
        });
        for w in told.would_fail {
            options.observer.event(&RunEvent::TaskWouldFail {
                task_id: w.task_id,
                task_path: w.task_path,
                step_id: w.step_id,
                one_of: w.one_of,
                message: w.message,
            });
        }
        for w in told.would_score {
            options.observer.event(&RunEvent::TaskWouldScore {
                task_id: w.task_id,
                task_path: w.task_path,
                step_id: w.step_id,
                score: w.score,
            });
        }
        for w in told.would_be_unscored {
            options.observer.event(&RunEvent::TaskWouldBeUnscored {
                task_id: w.task_id,
                task_path: w.task_path,
            });
        }
        skipped_events(plan, true, options.observer.as_ref());
        out.line(DRY_RUN_DONE);
        return Ok(RunStatus::DryRun { versions });
    }
    // A typo'd field or criterion type is said on every run, not only a dry one: a task that
    // skips the criterion it meant to check would otherwise pass without a word.
    say_task_notes(&plan.tasks, false, options.observer.as_ref(), out);
    say_unfilled_seed_tokens(
        &plan.tasks,
        seed_of(options),
        options.observer.as_ref(),
        out,
    );
    run_planned(
        plan,
        &version_of,
        &bundle.display_root,
        stores,
        executor,
        options,
        out,
    )
}

/// The seed the run's tasks are given (the explorer's), when it has one with values.
fn seed_of(options: &RunOptions) -> Option<&serde_json::Map<String, serde_json::Value>> {
    options
        .context_metadata
        .get("seed")
        .and_then(serde_json::Value::as_object)
        .filter(|seed| !seed.is_empty())
}
