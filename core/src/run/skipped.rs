//! The tasks a plan leaves out (no eval names them): why each does not run, as the run's events say
//! it and as the summary's lines say it.

use super::events::{RunEvent, RunObserver};
use super::plan::Plan;
use crate::output::Output;

/// What became of a task the plan leaves out: it didn't run (a dry run: it would not).
fn did_not_run(dry_run: bool) -> &'static str {
    if dry_run {
        "would not run"
    } else {
        "didn't run"
    }
}

/// Why a task the plan leaves out does not run (a dry run: would not).
fn skipped_reason(task: &crate::bundle::Task, dry_run: bool) -> String {
    format!(
        "isn't named by any eval, so it {}; run it with --task {}",
        did_not_run(dry_run),
        task.name
    )
}

/// One event per task the plan leaves out.
pub(super) fn skipped_events(plan: &Plan<'_>, dry_run: bool, observer: &dyn RunObserver) {
    for t in &plan.skipped {
        observer.event(&RunEvent::TaskSkipped {
            task_id: t.id.clone(),
            task_path: t.path.clone(),
            reason: skipped_reason(t, dry_run),
        });
    }
}

/// The tasks no eval names, which did not run (a dry run: would not): a line each when there are a
/// few, else one line (a bundle of hundreds of tasks and one small eval buried its summary under them;
/// `--json` lists every one under `skipped`).
pub(super) fn skipped_lines(skipped: &[&crate::bundle::Task], dry_run: bool, out: &dyn Output) {
    const EACH_UP_TO: usize = 3;
    if skipped.len() <= EACH_UP_TO {
        for t in skipped {
            out.line(&format!("{} {}", t.path, skipped_reason(t, dry_run)));
        }
        return;
    }
    let first: Vec<&str> = skipped
        .iter()
        .take(EACH_UP_TO)
        .map(|t| t.path.as_str())
        .collect();
    out.line(&format!(
        "{} tasks no eval names {} ({}, and {} more); run one with --task NAME",
        skipped.len(),
        did_not_run(dry_run),
        first.join(", "),
        skipped.len() - EACH_UP_TO
    ));
}
