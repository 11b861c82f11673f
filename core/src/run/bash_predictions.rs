//! What a dry run can tell of a task's `bash_cmd_succeeds` commands on a machine where no bash is
//! on PATH: a `verify_sandbox` step with a command that surely runs in bash fails (the machine
//! cannot check anything, which fails the step rather than scoring the sandbox 0), and the task
//! with it unless the step says otherwise; one whose commands may start without bash (plain words
//! whose program may be found), or where only a relative PATH folder could hold bash, is a notice.

use super::builtin_steps::bash_command::{
    bash_on_path, no_bash_here, surely_needs_bash, BashOnPath,
};
use super::builtin_steps::verify_sandbox::command_criteria;
use super::plan::{PlannedStep, StepKind};
use super::sandbox_predictions::SandboxPrediction;

/// What to do about it, said after each prediction.
const FIX: &str = "install bash, or run agent-env with the folder that holds it on PATH";

/// What a dry run tells of the commands of a task of `steps`, in step order: nothing when bash is
/// on PATH.
pub(super) fn bash_predictions(steps: &[PlannedStep]) -> Vec<SandboxPrediction> {
    predictions(steps, bash_on_path(), surely_needs_bash)
}

fn predictions(
    steps: &[PlannedStep],
    bash: BashOnPath,
    needs_bash: impl Fn(&str) -> bool,
) -> Vec<SandboxPrediction> {
    if bash == BashOnPath::Found {
        return Vec::new();
    }
    let mut told = Vec::new();
    for step in steps {
        if !matches!(step.kind, StepKind::Builtin(b) if b.type_name() == "verify_sandbox") {
            continue;
        }
        // Each as its number (counted from 1, as people count) and its command.
        let commands: Vec<(usize, &str)> = command_criteria(&step.spec)
            .into_iter()
            .filter_map(|c| Some((c.index + 1, c.command?)))
            .collect();
        let Some(&(first, _)) = commands.first() else {
            continue;
        };
        let id = step.id();
        let sure = match bash {
            BashOnPath::Missing => commands
                .iter()
                .find(|(_, c)| needs_bash(c))
                .map(|(n, _)| *n),
            _ => None,
        };
        let head = format!("{} (step '{id}'", no_bash_here());
        told.push(match (sure, step.fail_task_on_error) {
            (Some(n), true) => SandboxPrediction {
                message: format!("{head}, criterion {n}): the step fails, and the task with it; {FIX}"),
                fails_task_at: Some(id.to_string()),
                one_of: Vec::new(),
            },
            (Some(n), false) => SandboxPrediction {
                message: format!(
                    "{head}, criterion {n}): the step fails, without failing the task (its fail_task_on_error is false); {FIX}"
                ),
                fails_task_at: None,
                one_of: Vec::new(),
            },
            (None, _) => {
                let unless = match bash {
                    BashOnPath::Unsure => "unless a relative folder of PATH, looked up from the sandbox's folder, holds bash",
                    _ => "if a command goes to bash (one of plain words whose program is found starts without it)",
                };
                SandboxPrediction {
                    message: format!("{head}, criterion {first}): the step fails {unless}; {FIX}"),
                    fails_task_at: None,
                    one_of: Vec::new(),
                }
            }
        });
    }
    told
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::builtin_steps;
    use serde_json::{json, Value};

    fn verify(id: &str, commands: &[&str], fatal: bool) -> PlannedStep {
        let mut criteria = vec![json!({"type": "probe_file_exists", "paths": ["x"]})];
        criteria.extend(
            commands
                .iter()
                .map(|c| json!({"type": "bash_cmd_succeeds", "command": c})),
        );
        let Value::Object(spec) = json!({"id": id, "type": "verify_sandbox", "sandbox_name": "box", "criteria": criteria})
        else {
            unreachable!()
        };
        PlannedStep {
            spec,
            kind: StepKind::Builtin(builtin_steps::builtin("verify_sandbox").unwrap()),
            deps: Vec::new(),
            fail_task_on_error: fatal,
            retry: None,
        }
    }

    /// Commands with a `;` surely need bash; others may start without it.
    fn needs(command: &str) -> bool {
        command.contains(';')
    }

    #[test]
    fn with_bash_on_path_nothing_is_said() {
        let steps = [verify("v", &["a; b"], true)];
        assert!(predictions(&steps, BashOnPath::Found, needs).is_empty());
    }

    #[test]
    fn a_command_that_surely_runs_in_bash_fails_its_step_and_task() {
        let steps = [
            verify("v", &["plain", "a; b"], true),
            verify("w", &["a; b"], false),
            verify("none", &[], true),
        ];
        let p = predictions(&steps, BashOnPath::Missing, needs);
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!(p[0].fails_task_at.as_deref(), Some("v"));
        assert!(
            p[0].message.contains(
                "(step 'v', criterion 3): the step fails, and the task with it; install bash"
            ),
            "{}",
            p[0].message
        );
        assert_eq!(p[1].fails_task_at, None);
        assert!(
            p[1].message.contains("without failing the task"),
            "{}",
            p[1].message
        );
    }

    #[test]
    fn a_command_that_may_start_without_bash_is_a_notice() {
        let steps = [verify("v", &["plain"], true)];
        let p = predictions(&steps, BashOnPath::Missing, needs);
        assert_eq!(p[0].fails_task_at, None);
        assert!(
            p[0].message
                .contains("criterion 2): the step fails if a command goes to bash"),
            "{}",
            p[0].message
        );
        let steps = [verify("v", &["a; b"], true)];
        let p = predictions(&steps, BashOnPath::Unsure, needs);
        assert_eq!(p[0].fails_task_at, None);
        assert!(
            p[0].message.contains("unless a relative folder of PATH"),
            "{}",
            p[0].message
        );
    }
}
