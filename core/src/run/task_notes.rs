//! Notes on the planned tasks' steps before they run: fields their built-in steps do not read,
//! criteria of types they do not know and, on a dry run, the sandboxes a task will not find.

use serde_json::Value;

use super::builtin_steps;
use super::events::{RunEvent, RunObserver};
use super::plan;
use crate::output::Output;

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
