//! What a run says of its tasks at its end: a line per task, the tally of how they came out, and how
//! each eval's tasks ended (which the run's events carry too).

use super::events::EvalTally;
use super::outcome::{seconds, TaskOutcome};
use super::plan::Plan;
use super::skipped::skipped_lines;
use super::task_run::TaskRunResult;
use crate::output::Output;

/// How each eval's tasks ended.
pub(super) fn eval_tallies(
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
                |pick: fn(&TaskOutcome) -> bool| runs.iter().filter(|r| pick(&r.outcome)).count();
            EvalTally {
                eval_id: pe.eval.id.clone(),
                eval_path: pe.eval.path.clone(),
                eval_version: version_of(&pe.eval.id),
                tasks: runs.len(),
                passed: count(|o| matches!(o, TaskOutcome::Passed(_))),
                scored_below_one: count(|o| matches!(o, TaskOutcome::ScoredBelowOne(_))),
                unscored: count(|o| matches!(o, TaskOutcome::Unscored)),
                failed: count(TaskOutcome::is_failure),
                cancelled: count(TaskOutcome::is_cancelled),
                didnt_start: count(|o| matches!(o, TaskOutcome::DidntStart)),
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

/// The run's summary on `out`: a line per task (how it ended, its time and instance), the tally when
/// there are several, and a line per eval with the tasks no eval names.
pub(super) fn print_summary(
    plan: &Plan<'_>,
    results: &[TaskRunResult],
    version_of: &dyn Fn(&str) -> i64,
    out: &dyn Output,
) {
    out.line("");
    out.line("Tasks:");
    for r in results {
        let instance = match (&r.instance_id, &r.outcome) {
            (_, TaskOutcome::DidntStart) => String::new(),
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
