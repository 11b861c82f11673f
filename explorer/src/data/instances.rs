//! Task instances (`task_instances`, one document per run of a task, written by the run engine as it
//! goes) and the run groups they belong to (`context.metadata.run_group_id`).

use std::collections::BTreeMap;

use agent_env::run::recorded::{verifier_scores, InstanceScores};
use agent_env::run::recorder::{INSTANCES, RUN_GROUP_PATH};
use agent_env_store::document::{Document, DocumentStore, Filter, Predicate, Sort};
use serde_json::{json, Map, Value};

use crate::http::page::{Page, Window};
use crate::http::problem::{ApiError, ApiResult};

/// Which instances a list wants.
#[derive(Debug, Clone, Default)]
pub struct InstanceFilter {
    pub task_id: Option<String>,
    pub run_group_id: Option<String>,
    pub status: Vec<String>,
}

impl InstanceFilter {
    fn to_filter(&self) -> Filter {
        let mut filter = Filter::default();
        if let Some(task) = &self.task_id {
            filter = filter.and("task_id", Predicate::Eq(json!(task)));
        }
        if let Some(group) = &self.run_group_id {
            filter = filter.and(RUN_GROUP_PATH, Predicate::Eq(json!(group)));
        }
        if !self.status.is_empty() {
            let statuses = self.status.iter().map(|s| json!(s)).collect();
            filter = filter.and("status", Predicate::In(statuses));
        }
        filter
    }
}

/// Newest first: `created_at_utc` has minutes only, so runs of one minute are ordered by their
/// `started_at_utc`, then by id, so pages do not shuffle.
fn newest_first() -> Sort {
    Sort::by("created_at_utc", true)
        .then("started_at_utc", true)
        .then("instance_id", false)
}

/// A page of instance documents, newest first; with `summarize`, each as its [`summary`].
pub fn list(
    docs: &dyn DocumentStore,
    which: &InstanceFilter,
    w: Window,
    summarize: bool,
) -> ApiResult<Page> {
    let filter = which.to_filter();
    let total = docs.count(INSTANCES, &filter)?;
    let items = docs.query(
        INSTANCES,
        &filter,
        Some(&newest_first()),
        Some(w.limit as usize),
        w.offset as usize,
    )?;
    let scores = InstanceScores::new(docs);
    let items = items
        .into_iter()
        .map(|d| {
            if summarize {
                summary(&d, &scores)
            } else {
                Value::Object(d)
            }
        })
        .collect();
    Ok(Page::new(items, total, w))
}

/// One instance document; 404 when there is none (or it belongs to another task than `task_id`).
pub fn get(
    docs: &dyn DocumentStore,
    instance_id: &str,
    task_id: Option<&str>,
) -> ApiResult<Document> {
    let doc = docs.find_one(INSTANCES, &Filter::eq("instance_id", instance_id), None)?;
    match doc {
        Some(d) if task_id.is_none_or(|t| d.get("task_id").and_then(Value::as_str) == Some(t)) => {
            Ok(d)
        }
        _ => Err(ApiError::not_found(match task_id {
            Some(t) => format!("Task instance '{instance_id}' of task '{t}' not found"),
            None => format!("Task instance '{instance_id}' not found"),
        })),
    }
}

/// The scores an instance recorded, by verifier: `context.metadata.verifications.<verifier>.score`
/// (what its outcome is judged by; [`summary`] shows them keyed by the verifying step).
pub fn scores(doc: &Document) -> Map<String, Value> {
    let empty = Map::new();
    let metadata = doc
        .get("context")
        .and_then(|c| c.get("metadata"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    // Only numbers count as scores here.
    verifier_scores(metadata)
        .into_iter()
        .filter(|(_, score)| score.is_number())
        .map(|(id, score)| (id, json!(score.as_f64())))
        .collect()
}

/// How the run came out, in the words `agent-env run` uses: `running`, `passed`, `scored below 1`,
/// `unscored`, `failed`, `cancelled`.
pub fn outcome(doc: &Document) -> &'static str {
    match doc.get("status").and_then(Value::as_str) {
        Some("running") | Some("queued") => "running",
        Some("failed") => "failed",
        Some("cancelled") => "cancelled",
        _ => {
            let scores = scores(doc);
            if scores.is_empty() {
                "unscored"
            } else if scores
                .values()
                .all(|s| s.as_f64().is_some_and(|s| s >= 1.0))
            {
                "passed"
            } else {
                "scored below 1"
            }
        }
    }
}

/// The run group an instance belongs to.
pub fn run_group_of(doc: &Document) -> Option<&str> {
    doc.get("context")?
        .get("metadata")?
        .get("run_group_id")?
        .as_str()
}

/// What a list of runs shows of one instance; its scores are keyed by the verifying step's id, as
/// `agent-env run` and `task list` key them.
pub fn summary(doc: &Document, scores: &InstanceScores<'_>) -> Value {
    let field = |k: &str| doc.get(k).cloned().unwrap_or(Value::Null);
    json!({
        "instance_id": field("instance_id"),
        "task_id": field("task_id"),
        "task_version": field("task_version"),
        "status": field("status"),
        "outcome": outcome(doc),
        "scores": scores.of(doc),
        "error": field("error"),
        "created_at_utc": field("created_at_utc"),
        "started_at_utc": field("started_at_utc"),
        "completed_at_utc": field("completed_at_utc"),
        "ended_at_utc": field("ended_at_utc"),
        // Counted as the progress counts it (a step a cancel stopped is not done), so every view of
        // the instance says the same.
        "current_step": StepRecord::of(doc).steps_done(),
        "total_steps": field("total_steps"),
        "run_group_id": run_group_of(doc),
    })
}

/// What an instance records of its steps: the ones that ended (`completed_steps`), the failures
/// beside them, and whether it finished or was cancelled.
struct StepRecord<'d> {
    done: Vec<&'d Value>,
    failed: Vec<&'d Value>,
    finished: bool,
    cancelled: bool,
}

impl<'d> StepRecord<'d> {
    fn of(doc: &'d Document) -> StepRecord<'d> {
        let list = |v: Option<&'d Value>| -> Vec<&'d Value> {
            v.and_then(Value::as_array)
                .map(|a| a.iter().collect())
                .unwrap_or_default()
        };
        let status = doc.get("status").and_then(Value::as_str);
        StepRecord {
            // A retry marks the entries of the steps it runs again `superseded`.
            done: list(doc.get("completed_steps"))
                .into_iter()
                .filter(|d| d.get("superseded") != Some(&Value::Bool(true)))
                .collect(),
            failed: list(
                doc.get("context")
                    .and_then(|c| c.get("metadata"))
                    .and_then(|m| m.get("failed_steps")),
            ),
            finished: !matches!(status, Some("running") | Some("queued")),
            cancelled: status == Some("cancelled"),
        }
    }

    /// A step's state from its record. A step the cancel stopped is recorded as `cancelled`; an
    /// older record wrote `failure` with no failure recorded beside it.
    fn state_of(&self, completed: Option<&Value>, failure: Option<&Value>) -> &'static str {
        match completed
            .and_then(|c| c.get("status"))
            .and_then(Value::as_str)
        {
            Some("success") => "succeeded",
            Some("cancelled") => "cancelled",
            Some(_) if failure.is_none() && self.cancelled => "cancelled",
            Some(_) => "failed",
            None if self.cancelled => "cancelled",
            None if self.finished => "not run",
            None => "pending",
        }
    }

    /// The failure recorded for the step `id`, the latest when it ran more than once; a failure a
    /// retry answered is not the step's.
    fn failure_of(&self, id: Option<&str>) -> Option<&'d Value> {
        self.failed
            .iter()
            .rev()
            .filter(|f| f.get("retried") != Some(&Value::Bool(true)))
            .find(|f| f.get("step_id").and_then(Value::as_str) == id)
            .copied()
    }

    /// The steps done: those that ended, but for the ones a cancel stopped.
    fn steps_done(&self) -> usize {
        self.done
            .iter()
            .filter(|d| {
                let failure = self.failure_of(d.get("step_id").and_then(Value::as_str));
                self.state_of(Some(d), failure) != "cancelled"
            })
            .count()
    }
}

/// What an instance's progress is: steps done of all, and each step's state (`succeeded`, `failed`,
/// `cancelled`, `running`, `pending`, `not run`) with its error and how long it took.
pub fn progress(doc: &Document, task_steps: &[Value]) -> Value {
    let record = StepRecord::of(doc);
    let total = doc
        .get("total_steps")
        .and_then(Value::as_u64)
        .unwrap_or(task_steps.len() as u64);
    let finished = record.finished;
    // The steps running now, as the run records them (a record from before it did has none).
    let running: Vec<&str> = doc
        .get("running_steps")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let steps: Vec<Value> = task_steps
        .iter()
        .map(|step| {
            let id = step.get("id").and_then(Value::as_str).unwrap_or("");
            let completed = record
                .done
                .iter()
                .rev()
                .find(|d| d.get("step_id").and_then(Value::as_str) == Some(id))
                .copied();
            let failure = record.failure_of(Some(id));
            let duration = completed
                .and_then(|c| c.get("duration_seconds"))
                .or_else(|| failure.and_then(|f| f.get("duration_seconds")))
                .cloned()
                .unwrap_or(Value::Null);
            json!({
                "step_id": id,
                "type": step.get("type").cloned().unwrap_or(Value::Null),
                "state": if completed.is_none() && !finished && running.contains(&id) {
                    "running"
                } else {
                    record.state_of(completed, failure)
                },
                "error": failure.and_then(|f| f.get("error")).cloned().unwrap_or(Value::Null),
                "duration_seconds": duration,
            })
        })
        .collect();
    let ended = record.steps_done();
    let fraction = if total == 0 {
        if finished {
            1.0
        } else {
            0.0
        }
    } else {
        ended as f64 / total as f64
    };
    json!({
        "instance_id": doc.get("instance_id").cloned().unwrap_or(Value::Null),
        "status": doc.get("status").cloned().unwrap_or(Value::Null),
        "outcome": outcome(doc),
        "current_step": ended,
        "total_steps": total,
        "fraction": fraction.min(1.0),
        "finished": finished,
        "steps": steps,
    })
}

/// A run group's state from its instances: how many ran, how each came out.
pub fn group_state(
    run_group_id: &str,
    instances: &[Document],
    planned: Option<u64>,
    scores: &InstanceScores<'_>,
) -> Value {
    let mut outcomes: BTreeMap<&str, u64> = BTreeMap::new();
    for d in instances {
        *outcomes.entry(outcome(d)).or_default() += 1;
    }
    let running = outcomes.get("running").copied().unwrap_or(0);
    let recorded = instances.len() as u64;
    let total = planned.unwrap_or(recorded).max(recorded);
    let task_id = instances
        .first()
        .and_then(|d| d.get("task_id"))
        .cloned()
        .unwrap_or(Value::Null);
    let created = instances
        .iter()
        .filter_map(|d| d.get("created_at_utc").and_then(Value::as_str))
        .min()
        .map(String::from);
    json!({
        "run_group_id": run_group_id,
        "task_id": task_id,
        "total": total,
        "recorded": recorded,
        "running": running,
        "outcomes": outcomes,
        "created_at_utc": created,
        "complete": running == 0 && recorded >= total,
        "instances": instances.iter().map(|d| summary(d, scores)).collect::<Vec<_>>(),
    })
}

/// Every instance of one run group (of one task, when given), oldest first.
pub fn of_group(
    docs: &dyn DocumentStore,
    run_group_id: &str,
    task_id: Option<&str>,
) -> ApiResult<Vec<Document>> {
    let which = InstanceFilter {
        task_id: task_id.map(String::from),
        run_group_id: Some(run_group_id.to_string()),
        status: Vec::new(),
    };
    let sort = Sort::by("created_at_utc", false)
        .then("started_at_utc", false)
        .then("instance_id", false);
    Ok(docs.query(INSTANCES, &which.to_filter(), Some(&sort), None, 0)?)
}

/// The run groups of a task, newest first, each as its [`group_state`] without the instances.
pub fn groups_of_task(docs: &dyn DocumentStore, task_id: &str) -> ApiResult<Vec<Value>> {
    let all = docs.query(
        INSTANCES,
        &Filter::eq("task_id", task_id),
        Some(&newest_first()),
        None,
        0,
    )?;
    let mut order: Vec<String> = Vec::new();
    let mut members: BTreeMap<String, Vec<Document>> = BTreeMap::new();
    for d in all {
        let Some(group) = run_group_of(&d).map(String::from) else {
            continue;
        };
        if !members.contains_key(&group) {
            order.push(group.clone());
        }
        members.entry(group).or_default().push(d);
    }
    let scores = InstanceScores::new(docs);
    Ok(order
        .into_iter()
        .map(|g| {
            let mut state = group_state(&g, &members[&g], None, &scores);
            if let Value::Object(m) = &mut state {
                m.remove("instances");
            }
            state
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scores read with no task stored: keyed by verifier.
    fn none_stored() -> InstanceScores<'static> {
        let empty = agent_env::run::recorded::Recorded::of(Vec::new());
        InstanceScores::new(Box::leak(Box::new(empty)))
    }

    fn doc(v: Value) -> Document {
        match v {
            Value::Object(m) => m,
            _ => Document::new(),
        }
    }

    fn with_score(status: &str, score: Option<f64>) -> Document {
        let verifications = match score {
            Some(s) => json!({"v": {"score": s}}),
            None => json!({}),
        };
        doc(json!({
            "instance_id": "i", "status": status, "task_id": "t",
            "context": {"metadata": {"run_group_id": "g", "verifications": verifications}},
        }))
    }

    #[test]
    fn outcomes_use_the_runs_words() {
        assert_eq!(outcome(&with_score("completed", Some(1.0))), "passed");
        assert_eq!(
            outcome(&with_score("completed", Some(0.5))),
            "scored below 1"
        );
        assert_eq!(outcome(&with_score("completed", None)), "unscored");
        assert_eq!(outcome(&with_score("failed", Some(1.0))), "failed");
        assert_eq!(outcome(&with_score("running", None)), "running");
        assert_eq!(outcome(&with_score("cancelled", None)), "cancelled");
    }

    #[test]
    fn a_group_is_complete_when_every_planned_run_finished() {
        let done = with_score("completed", Some(1.0));
        let running = with_score("running", None);
        assert_eq!(
            group_state("g", std::slice::from_ref(&done), None, &none_stored())["complete"],
            true
        );
        assert_eq!(
            group_state("g", std::slice::from_ref(&done), Some(2), &none_stored())["complete"],
            false
        );
        assert_eq!(
            group_state("g", &[done, running], None, &none_stored())["complete"],
            false
        );
    }

    #[test]
    fn progress_marks_each_step() {
        let d = doc(json!({
            "instance_id": "i", "status": "running", "total_steps": 3,
            "completed_steps": [{"step_id": "a", "status": "success"}],
            "running_steps": ["b"],
        }));
        let steps = [
            json!({"id": "a", "type": "x"}),
            json!({"id": "b", "type": "y"}),
            json!({"id": "c", "type": "z"}),
        ];
        let p = progress(&d, &steps);
        assert_eq!(p["current_step"], 1);
        assert!((p["fraction"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(p["steps"][0]["state"], "succeeded");
        assert_eq!(p["steps"][1]["state"], "running");
        assert_eq!(p["steps"][2]["state"], "pending");
    }

    #[test]
    fn progress_gives_each_steps_duration_and_a_cancel_is_not_a_failure() {
        let d = doc(json!({
            "instance_id": "i", "status": "cancelled", "total_steps": 3,
            "completed_steps": [
                {"step_id": "a", "status": "success", "duration_seconds": 1.5},
                {"step_id": "b", "status": "failure", "duration_seconds": 0.25},
            ],
        }));
        let steps = [json!({"id": "a"}), json!({"id": "b"}), json!({"id": "c"})];
        let p = progress(&d, &steps);
        assert_eq!(p["status"], "cancelled");
        assert_eq!(p["steps"][0]["duration_seconds"], 1.5);
        assert_eq!(p["steps"][1]["state"], "cancelled");
        assert_eq!(p["steps"][1]["duration_seconds"], 0.25);
        assert_eq!(p["steps"][2]["state"], "cancelled");
        assert_eq!(p["current_step"], 1);
        assert!((p["fraction"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-9);
        // A list of runs counts the steps done as the progress does, whatever the record says.
        let mut recorded = d.clone();
        recorded.insert("current_step".into(), json!(2));
        assert_eq!(summary(&recorded, &none_stored())["current_step"], 1);

        let failed = doc(json!({
            "instance_id": "i", "status": "failed", "total_steps": 1,
            "completed_steps": [{"step_id": "a", "status": "failure", "duration_seconds": 2.0}],
            "context": {"metadata": {"failed_steps": [{"step_id": "a", "error": "boom", "duration_seconds": 2.0}]}},
        }));
        let p = progress(&failed, &[json!({"id": "a"})]);
        assert_eq!(p["steps"][0]["state"], "failed");
        assert_eq!(p["steps"][0]["error"], "boom");
        assert_eq!(p["fraction"], 1.0);
    }

    /// While a retry runs steps again, their first attempts (marked `superseded`) neither count as
    /// done nor decide their state, and the failure the retry answered is not shown as the step's.
    #[test]
    fn progress_during_a_retry_counts_each_step_once() {
        let d = doc(json!({
            "instance_id": "i", "status": "running", "total_steps": 3,
            "completed_steps": [
                {"step_id": "a", "status": "success", "superseded": true},
                {"step_id": "b", "status": "success", "superseded": true},
                {"step_id": "c", "status": "failure", "retried": true, "superseded": true},
                {"step_id": "a", "status": "success"},
            ],
            "running_steps": ["b"],
            "context": {"metadata": {"failed_steps": [{"step_id": "c", "error": "boom", "retried": true}]}},
        }));
        let steps = [json!({"id": "a"}), json!({"id": "b"}), json!({"id": "c"})];
        let p = progress(&d, &steps);
        assert_eq!(p["current_step"], 1);
        assert_eq!(p["steps"][0]["state"], "succeeded");
        assert_eq!(p["steps"][1]["state"], "running");
        assert_eq!(p["steps"][2]["state"], "pending");
        assert_eq!(p["steps"][2]["error"], Value::Null);
    }
}
