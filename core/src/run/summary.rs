//! What a run says of its tasks at its end: a line per task, the tally of how they came out (in a
//! run of many tasks, followed by the tasks that did not pass, so the few are not looked for among
//! hundreds of lines), and how each eval's tasks ended (which the run's events carry too).

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
/// `300 tasks: 299 passed, 1 failed`; `noun` counts them (`runs` when they are runs of one task).
fn tally_line(results: &[TaskRunResult], noun: &str) -> String {
    let order = [
        ("passed", "passed"),
        ("scored_below_one", "scored below 1"),
        ("unscored", "unscored"),
        ("failed", "failed"),
        ("cancelled", "cancelled"),
        ("didnt_start", "didn't start"),
    ];
    let counts: Vec<String> = order
        .iter()
        .filter_map(|(key, words)| {
            let n = results.iter().filter(|r| r.outcome.key() == *key).count();
            (n > 0).then(|| format!("{n} {words}"))
        })
        .collect();
    format!("  {} {noun}: {}", results.len(), counts.join(", "))
}

/// The run's summary on `out`: a line per task (how it ended, its time and instance; in a run of more
/// than [`LISTED_IN_FULL`] tasks these are detail, which `-q` leaves out, and the tasks that did not
/// pass are named after the tally), the tally when there are several, and a line per eval with the
/// tasks no eval names.
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
            (Some(id), _) => format!(
                ", {}, instance {}",
                seconds(r.duration),
                crate::quote::id(id)
            ),
            (None, _) => format!(", {}, no instance recorded", seconds(r.duration)),
        };
        // A failure of several lines (a plugin's last stderr lines) keeps the time and instance on
        // its first, where they are read, not between its lines.
        let text = r.outcome.text();
        let (first, rest) = match text.split_once('\n') {
            Some((first, rest)) => (first, format!("\n{rest}")),
            None => (text.as_str(), String::new()),
        };
        let line = format!("  {}: {first}{instance}{rest}", named(r));
        // In a long run the tally and the tasks that did not pass after it say what needs reading,
        // so a quiet view (`-q`) leaves this list out.
        if results.len() > LISTED_IN_FULL {
            out.detail(&line);
        } else {
            out.line(&line);
        }
    }
    if results.len() > 1 {
        out.line(&tally_line(results, counted_as(plan)));
    }
    if results.len() > LISTED_IN_FULL {
        for line in not_passed_lines(results) {
            out.line(&line);
        }
    }
    if !plan.evals.is_empty() {
        out.line("Evals:");
        for tally in eval_tallies(plan, results, version_of) {
            out.line(&eval_line(&tally));
        }
        skipped_lines(&plan.skipped, false, out);
    }
}

/// A task run as its summary line names it: its path and version (`tasks/hello.json v1`), and which
/// run it was when one task ran several times (`team/x v1, run 2 of 3`).
fn named(r: &TaskRunResult) -> String {
    match &r.run {
        Some(run) => format!(
            "{} v{}, run {} of {}",
            run.task_path, r.version, run.number, run.of
        ),
        None => format!("{} v{}", r.path, r.version),
    }
}

/// What the tally counts: `runs` when every planned task is one task run again (`task run ID --runs
/// N`), else `tasks`.
fn counted_as(plan: &Plan<'_>) -> &'static str {
    let mut ids = plan.tasks.iter().map(|t| &t.task.id);
    let first = ids.next();
    match first.is_some() && ids.all(|id| Some(id) == first) {
        true => "runs",
        false => "tasks",
    }
}

/// A run of up to this many tasks has its summary's lines read at a glance: the tasks that did not
/// pass are not named again after the tally.
const LISTED_IN_FULL: usize = 10;

/// How many of the tasks that did not pass are named after the tally.
const NOT_PASSED_NAMED: usize = 20;

/// After the tally of a long run, the tasks that did not pass, one line each (path, version and the
/// first line of how it ended), at most [`NOT_PASSED_NAMED`] of them and a line saying where the rest
/// are; nothing when every task passed.
fn not_passed_lines(results: &[TaskRunResult]) -> Vec<String> {
    let mut not_passed: Vec<&TaskRunResult> = results
        .iter()
        .filter(|r| !matches!(r.outcome, TaskOutcome::Passed(_)))
        .collect();
    // The worst first, so a cut list never hides a failure behind low scores; in run order within.
    not_passed.sort_by_key(|r| match r.outcome {
        TaskOutcome::FailedAtSteps(_) | TaskOutcome::Failed(..) => 0,
        TaskOutcome::Unscored => 1,
        TaskOutcome::ScoredBelowOne(_) => 2,
        TaskOutcome::Cancelled => 3,
        TaskOutcome::DidntStart | TaskOutcome::Passed(_) => 4,
    });
    if not_passed.is_empty() {
        return Vec::new();
    }
    let mut lines = vec!["  Not passed:".to_string()];
    for r in not_passed.iter().take(NOT_PASSED_NAMED) {
        let text = r.outcome.text();
        let first = text.lines().next().unwrap_or_default();
        // The instance too: a quiet run's summary names the task nowhere else.
        let instance = r
            .instance_id
            .as_deref()
            .map(|id| format!(", instance {}", crate::quote::id(id)))
            .unwrap_or_default();
        lines.push(format!("    {}: {first}{instance}", named(r)));
    }
    let more = not_passed.len().saturating_sub(NOT_PASSED_NAMED);
    if more > 0 {
        lines.push(format!(
            "    and {more} more: the lines above, the run's log and `--json` name every task"
        ));
    }
    lines
}

/// `  evals/all.toml v1: 10 of 300 passed, 4 cancelled, 282 didn't start`.
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
        line.push_str(&format!(", {} didn't start", tally.didnt_start));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(path: &str, outcome: TaskOutcome) -> TaskRunResult {
        TaskRunResult {
            path: path.into(),
            version: 1,
            run: None,
            outcome,
            duration: std::time::Duration::ZERO,
            instance_id: None,
            kept: None,
            torn_down: 0,
            replaced: 0,
            still_up: Vec::new(),
            verifications: serde_json::Map::new(),
            end_waiting_here: false,
        }
    }

    #[test]
    fn the_tasks_that_did_not_pass_are_named_up_to_a_limit() {
        let passed = || TaskOutcome::Passed(vec![("v".into(), 1.0)]);
        let mut results: Vec<TaskRunResult> = (0..30)
            .map(|i| result(&format!("tasks/ok{i}.json"), passed()))
            .collect();
        results.push(result(
            "tasks/low.json",
            TaskOutcome::ScoredBelowOne(vec![("v".into(), 0.5)]),
        ));
        results.push(result(
            "tasks/bad.json",
            TaskOutcome::Failed("StepError".into(), "it broke\nand said more".into()),
        ));
        assert_eq!(
            not_passed_lines(&results),
            [
                "  Not passed:",
                "    tasks/bad.json v1: failed: StepError: it broke",
                "    tasks/low.json v1: scored below 1 (v: 0.5)",
            ]
        );
        results.extend(
            (0..NOT_PASSED_NAMED)
                .map(|i| result(&format!("tasks/late{i}.json"), TaskOutcome::DidntStart)),
        );
        let lines = not_passed_lines(&results);
        assert_eq!(lines.len(), 1 + NOT_PASSED_NAMED + 1, "{lines:#?}");
        // The failure leads, though 20 tasks that did not start came after it.
        assert_eq!(
            lines[1],
            "    tasks/bad.json v1: failed: StepError: it broke"
        );
        assert_eq!(
            lines.last().map(String::as_str),
            Some("    and 2 more: the lines above, the run's log and `--json` name every task")
        );
        assert!(not_passed_lines(&results[..30]).is_empty());
    }

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
            "  evals/all.toml v1: 10 of 300 passed, 2 scored below 1, 1 unscored, 1 failed, 4 cancelled, 282 didn't start"
        );
    }

    /// Several runs of one task are named after its version, each with how many there were; a task
    /// run once keeps its path and version.
    #[test]
    fn a_run_of_several_is_named_after_the_version() {
        let mut again = result("team/x, run 2", TaskOutcome::Unscored);
        again.run = Some(crate::run::plan::RunOfMany {
            task_path: "team/x".into(),
            number: 2,
            of: 3,
        });
        assert_eq!(named(&again), "team/x v1, run 2 of 3");
        assert_eq!(
            not_passed_lines(&[again])[1],
            "    team/x v1, run 2 of 3: unscored"
        );
        let once = result("tasks/hello.json", TaskOutcome::Unscored);
        assert_eq!(named(&once), "tasks/hello.json v1");
    }
}
