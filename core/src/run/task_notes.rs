//! Notes on the planned tasks' steps before they run: fields their built-in steps do not read,
//! criteria of types they do not know, a plugin step's `timeout_seconds` it cannot be given and, on a dry run, the sandboxes a task will not find (with
//! the tasks the run would fail for it) and the commands that need a bash the machine lacks, the scores its steps would give whatever they find, and the
//! tasks that would end with no score; and on every run, the seed tokens (`<key>`) the run has no
//! seed value for that stand bare in a command bash runs, which bash would read as a redirection.

use super::bash_predictions::bash_predictions;
use super::builtin_steps;
use super::events::{RunEvent, RunObserver};
use super::plan;
use super::sandbox_predictions::{root_predictions, sandbox_predictions, UnmakeableRoot};
use crate::output::Output;
use agent_env_host::{HostConfig, CALL_TIMEOUT_VAR};

/// What a dry run tells of its tasks beyond its notes: those the run would fail, the scores their
/// steps would give whatever they find, and those that would end with no score.
#[derive(Debug, Default)]
pub(super) struct Predictions {
    pub would_fail: Vec<WouldFail>,
    pub would_score: Vec<WouldScore>,
    pub would_be_unscored: Vec<WouldBeUnscored>,
}

/// A task that would end with no score whatever its steps find: each is built in, and none of
/// them gives one (a plugin's step may give one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct WouldBeUnscored {
    pub task_id: String,
    pub task_path: String,
}

/// A score a task's step gives whatever it finds, when the step fails the task on error (one that
/// may fail without failing it may give no score at all).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct WouldScore {
    pub task_id: String,
    pub task_path: String,
    pub step_id: String,
    pub score: f64,
}

/// A task a dry run tells the run would fail, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct WouldFail {
    pub task_id: String,
    pub task_path: String,
    /// The step whose failure fails it.
    pub step_id: String,
    /// When which step fails is left to which starts first: the steps one of which fails it (the
    /// last of them is `step_id`); else empty.
    pub one_of: Vec<String>,
    pub message: String,
}

/// What the planned tasks' built-in steps hold that they do not read (a field close to one they
/// do, a criterion of a type they do not know) and, with `predictions` (a dry run, which runs
/// nothing that would fail), what will not run as written; as `note:` lines and warnings (a script
/// reads them in the document's `warnings`). Returns what the predictions tell of the tasks
/// (nothing without them).
pub(super) fn say_task_notes(
    tasks: &[plan::PlannedTask<'_>],
    predictions: bool,
    observer: &dyn RunObserver,
    out: &dyn Output,
) -> Predictions {
    say_notes(
        tasks,
        predictions.then(MachineFacts::default),
        observer,
        out,
    )
}

/// What a dry run knows of the machine beyond what [`say_task_notes`] looks at.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct MachineFacts<'a> {
    /// Why no sandbox can be made under the `local` provider's folder, when none can.
    pub unmakeable_root: Option<&'a UnmakeableRoot>,
}

/// [`say_task_notes`] for a dry run, which knows `facts` too: each task that would fail for them
/// is told.
pub(super) fn say_dry_run_notes(
    tasks: &[plan::PlannedTask<'_>],
    facts: MachineFacts<'_>,
    observer: &dyn RunObserver,
    out: &dyn Output,
) -> Predictions {
    say_notes(tasks, Some(facts), observer, out)
}

fn say_notes(
    tasks: &[plan::PlannedTask<'_>],
    predicting: Option<MachineFacts<'_>>,
    observer: &dyn RunObserver,
    out: &dyn Output,
) -> Predictions {
    let predictions = predicting.is_some();
    let mut told = Predictions::default();
    for t in tasks {
        let sandboxes = match predicting {
            Some(facts) => facts
                .unmakeable_root
                .map(|root| root_predictions(&t.steps, root))
                .unwrap_or_default()
                .into_iter()
                .chain(sandbox_predictions(&t.steps))
                .chain(bash_predictions(&t.steps))
                .collect(),
            None => Vec::new(),
        };
        let mut notes = Vec::new();
        for p in sandboxes {
            if let Some(step_id) = p.fails_task_at {
                told.would_fail.push(WouldFail {
                    task_id: t.task.id.clone(),
                    task_path: t.task.path.clone(),
                    step_id,
                    one_of: p.one_of,
                    message: p.message.clone(),
                });
            }
            notes.push(p.message);
        }
        for step in &t.steps {
            let builtin = match step.kind {
                plan::StepKind::Builtin(builtin) => Some(builtin),
                plan::StepKind::Plugin { .. } => None,
            };
            notes.extend(builtin_steps::step_notes(step.id(), &step.spec, builtin));
            if builtin.is_none() {
                notes.extend(plugin_timeout_note(step.id(), &step.spec));
            }
            if let Some(builtin) = builtin {
                notes.extend(builtin.check_notes(&step.spec));
                let score = builtin.fixed_score(&step.spec);
                if let Some(score) = score.filter(|_| predictions && step.fail_task_on_error) {
                    told.would_score.push(WouldScore {
                        task_id: t.task.id.clone(),
                        task_path: t.task.path.clone(),
                        step_id: step.id().to_string(),
                        score,
                    });
                }
            }
        }
        if predictions && unscored(&t.steps) {
            told.would_be_unscored.push(WouldBeUnscored {
                task_id: t.task.id.clone(),
                task_path: t.task.path.clone(),
            });
        }
        for note in notes {
            out.note(&format!("note: {}: {note}", t.task.path));
            observer.event(&RunEvent::Warning {
                task_path: Some(t.task.path.clone()),
                message: note,
            });
        }
    }
    told
}

/// The `<key>` tokens the planned tasks' steps hold that `seed` (the run's, when it has one) does
/// not fill, where bash would read them as redirections (bare in a criterion's command; see
/// [`plan::seed_tokens::unfilled_note`]), so the steps run with them as written; as `note:` lines
/// and warnings, on every run and dry run (only a run the explorer starts with a seed fills them).
pub(super) fn say_unfilled_seed_tokens(
    tasks: &[plan::PlannedTask<'_>],
    seed: Option<&serde_json::Map<String, serde_json::Value>>,
    observer: &dyn RunObserver,
    out: &dyn Output,
) {
    for t in tasks {
        for step in &t.steps {
            let Some(note) = plan::seed_tokens::unfilled_note(&step.spec, seed) else {
                continue;
            };
            out.note(&format!("note: {}: {note}", t.task.path));
            observer.event(&RunEvent::Warning {
                task_path: Some(t.task.path.clone()),
                message: note,
            });
        }
    }
}

/// A plugin step's `timeout_seconds` that is not a number of seconds it can be given (a string, 0,
/// below 0, too large): the host's call timeout limits the step instead, which is said before it runs.
fn plugin_timeout_note(
    step_id: &str,
    spec: &serde_json::Map<String, serde_json::Value>,
) -> Option<String> {
    let value = spec.get("timeout_seconds").filter(|v| !v.is_null())?;
    if super::plugin_steps::step_timeout(spec).is_some() {
        return None;
    }
    Some(format!(
        "step '{step_id}': 'timeout_seconds' must be a number of seconds above 0 and below {}, got {value}: the step gets the host's call timeout instead ({CALL_TIMEOUT_VAR}, {} s unless set)",
        agent_env_host::MAX_SECONDS,
        HostConfig::new("").call_timeout.as_secs()
    ))
}

/// Whether a task of `steps` surely ends with no score: each step is built in, and none gives one.
fn unscored(steps: &[plan::PlannedStep]) -> bool {
    steps.iter().all(|s| match s.kind {
        plan::StepKind::Builtin(b) => !b.gives_score(),
        plan::StepKind::Plugin { .. } => false,
    })
}
