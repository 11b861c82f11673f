//! What a task whose steps all ran, none failing it, came to: the outcome its scores give, and the
//! warnings on the way (a step that should have scored and did not, a score outside 0 to 1, a
//! grading step that failed without failing its task, what built-in steps and plugins noticed), each
//! said to the run's output and its observer. A task scored below full marks also shows what each
//! built-in grading step missed.

use serde_json::{Map, Value};

use crate::run::events::RunEvent;
use crate::run::outcome::{missing_scores, scores, TaskOutcome};
use crate::run::plan::{PlannedStep, PlannedTask, StepKind};
use crate::run::step_schedule::StepState;
use crate::run::task_shared::RunShared;

/// The outcome of `planned` run as the instance `instance_id`, whose steps came to `states` and
/// left the context's `metadata`.
pub(super) fn scored_outcome(
    planned: &PlannedTask<'_>,
    states: &[StepState],
    metadata: &Map<String, Value>,
    shared: &RunShared<'_>,
    instance_id: &str,
) -> TaskOutcome {
    // A step that failed without failing its task has said why already.
    let succeeded: Vec<&PlannedStep> = planned
        .steps
        .iter()
        .zip(states)
        .filter(|(_, state)| matches!(state, StepState::Succeeded))
        .map(|(step, _)| step)
        .collect();
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
        .zip(states)
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
    warnings.extend(shared.executor.warnings(instance_id));
    for warning in warnings {
        shared
            .out
            .note(&format!("[{}] Warning: {warning}", planned.task.path));
        shared.observer.event(&RunEvent::Warning {
            task_path: Some(planned.task.path.clone()),
            message: warning,
        });
    }
    let outcome = TaskOutcome::from_scores(scores(&planned.steps, metadata));
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
}
