//! The steps of an instance's task that it has no entry for in `completed_steps`: those its run
//! never started (`not run` once the run is over, as the explorer says), and while it runs, those
//! running now and those still to come. Read from the task's recorded version.

use serde_json::Value;

use crate::run::recorded::Steps;
use crate::stores::Document;

/// What became of a step the instance has no entry for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unended {
    /// Its run is over and never started it.
    NotRun,
    /// Running now.
    Running,
    /// Still to come.
    Pending,
    /// Its run stopped (its heartbeat did) while the step ran.
    Interrupted,
}

impl Unended {
    pub(super) fn words(self) -> &'static str {
        match self {
            Unended::NotRun => "not run",
            Unended::Running => "running",
            Unended::Pending => "pending",
            Unended::Interrupted => "interrupted",
        }
    }
}

/// The task's steps `doc` has no entry for, in the task's order, each with what became of it.
/// `run_stopped` is whether the instance shows `running` though its run stopped sending signs of
/// life (stale): nothing more will happen to it.
pub(super) fn unended_steps(
    doc: &Document,
    steps: &Steps,
    run_stopped: bool,
) -> Vec<(String, Unended)> {
    let ids_in = |key: &str| -> Vec<&str> {
        doc.get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|v| v.as_str().or_else(|| v.get("step_id")?.as_str()))
            .collect()
    };
    let ended = ids_in("completed_steps");
    let running = ids_in("running_steps");
    let over = !crate::run::heartbeat::shows_running(doc);
    steps
        .iter()
        .filter_map(|step| step.get("id").and_then(Value::as_str))
        .filter(|id| !ended.contains(id))
        .map(|id| {
            let runs = running.contains(&id);
            let state = match (over, run_stopped, runs) {
                (true, _, _) | (false, true, false) => Unended::NotRun,
                (false, true, true) => Unended::Interrupted,
                (false, false, true) => Unended::Running,
                (false, false, false) => Unended::Pending,
            };
            (id.to_string(), state)
        })
        .collect()
}

/// The ids of the steps an instance whose run is over never ran, in the task's order.
pub(super) fn not_run(unended: &[(String, Unended)]) -> Vec<&str> {
    unended
        .iter()
        .filter(|(_, state)| *state == Unended::NotRun)
        .map(|(id, _)| id.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map};

    use super::*;

    fn steps(ids: &[&str]) -> Steps {
        ids.iter()
            .map(|id| {
                let mut step = Map::new();
                step.insert("id".into(), json!(id));
                step
            })
            .collect()
    }

    fn doc(value: Value) -> Document {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn an_ended_instances_steps_with_no_entry_were_not_run() {
        let d = doc(json!({
            "status": "failed",
            "completed_steps": [{"step_id": "a", "status": "failure"}],
            "running_steps": [],
        }));
        let unended = unended_steps(&d, &steps(&["a", "b", "c"]), false);
        assert_eq!(
            unended,
            [
                ("b".to_string(), Unended::NotRun),
                ("c".to_string(), Unended::NotRun)
            ]
        );
        assert_eq!(not_run(&unended), ["b", "c"]);
    }

    #[test]
    fn a_running_instances_steps_are_running_or_pending_and_interrupted_once_its_run_stopped() {
        let d = doc(json!({
            "status": "running",
            "completed_steps": [{"step_id": "a", "status": "success"}],
            "running_steps": ["b"],
        }));
        let s = steps(&["a", "b", "c"]);
        assert_eq!(
            unended_steps(&d, &s, false),
            [
                ("b".to_string(), Unended::Running),
                ("c".to_string(), Unended::Pending)
            ]
        );
        let stopped = unended_steps(&d, &s, true);
        assert_eq!(
            stopped,
            [
                ("b".to_string(), Unended::Interrupted),
                ("c".to_string(), Unended::NotRun)
            ]
        );
        assert_eq!(not_run(&stopped), ["c"]);
    }
}
