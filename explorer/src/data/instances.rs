//! Task instances (`task_instances`, one document per run of a task, written by the run engine as it
//! goes) and the run groups they belong to (`context.metadata.run_group_id`).

use std::collections::BTreeMap;

use agent_env::run::outcome::TaskOutcome;
use agent_env::run::recorded::InstanceScores;
use agent_env::run::recorder::INSTANCES;
use agent_env_store::document::{Document, DocumentStore, Filter, Sort};
use serde_json::{json, Map, Value};

use super::runs_here::{run_group_of, Interrupted, RunsHere};
use super::short_ids;
use crate::http::page::{Page, Window};
use crate::http::problem::{ApiError, ApiResult};
use crate::http::query::Query;
use crate::http::shown::shown;

pub use super::filter::InstanceFilter;
pub use cursor::Cursor;

mod cursor;

/// Newest first: `created_at_utc` has minutes only, so runs of one minute are ordered by their
/// `started_at_utc`, then by id, so pages do not shuffle.
fn newest_first() -> Sort {
    Sort::by("created_at_utc", true)
        .then("started_at_utc", true)
        .then("instance_id", false)
}

/// How a list gives each instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Its document, as recorded.
    Documents,
    /// Its [`summary`].
    Summaries,
}

/// Which page of instances a request asks for: `limit` of them from an `offset`, or right after
/// the place a `cursor` names (see [`cursor`]); the two are not given together.
pub struct Paging {
    pub limit: u64,
    pub start: Start,
}

/// Where a page starts.
pub enum Start {
    /// This many instances in.
    Offset(u64),
    /// Right after the place a page before ended.
    After(Cursor),
}

impl Paging {
    /// `limit` (1..=500, default `default_limit`) and `offset` or `cursor` from the query.
    pub fn from_query(query: &Query, default_limit: i64) -> ApiResult<Paging> {
        let window = Window::from_query(query, default_limit)?;
        let start = match query.get("cursor") {
            None => Start::Offset(window.offset),
            Some(_) if query.get("offset").is_some() => {
                return Err(ApiError::invalid(
                    &["query", "cursor"],
                    "give cursor or offset, not both: a cursor says where the page starts",
                    "value_error",
                ))
            }
            Some(text) => Start::After(Cursor::decode(text, &newest_first())?),
        };
        Ok(Paging {
            limit: window.limit,
            start,
        })
    }
}

/// A page of instances, and the cursor of the place it ended when more follow.
pub struct Listed {
    pub page: Page,
    pub next_cursor: Option<String>,
}

/// A page of instances, newest first, in `shape`: only the page's own instances are read whole
/// (and judged) unless a filter of outcomes asks for every instance it may want to be judged
/// (those of the statuses the outcomes are recorded with) before they are paged.
pub fn list(
    docs: &dyn DocumentStore,
    which: &InstanceFilter,
    paging: &Paging,
    judge: &Judge<'_>,
    shape: Shape,
) -> ApiResult<Listed> {
    let filter = which.to_filter();
    let sort = newest_first();
    let limit = paging.limit;
    let (total, start, items) = if which.judges() {
        let all = docs.query(INSTANCES, &filter, Some(&sort), None, 0)?;
        let kept: Vec<Document> = all
            .into_iter()
            .filter(|d| which.keeps(d, judge.verdict(d).outcome))
            .collect();
        let start = match &paging.start {
            Start::Offset(offset) => *offset,
            Start::After(cursor) => kept.partition_point(|d| cursor.holds(d, &sort)) as u64,
        };
        let total = kept.len() as u64;
        let items = kept
            .into_iter()
            .skip(start as usize)
            .take(limit as usize)
            .collect();
        (total, start, items)
    } else {
        let total = docs.count(INSTANCES, &filter)?;
        let (start, items) = match &paging.start {
            Start::Offset(offset) => (
                *offset,
                docs.query(
                    INSTANCES,
                    &filter,
                    Some(&sort),
                    Some(limit as usize),
                    *offset as usize,
                )?,
            ),
            Start::After(cursor) => cursor::page_after(docs, &filter, &sort, cursor, limit)?,
        };
        (total, start, items)
    };
    let end = start + items.len() as u64;
    let next_cursor = items
        .last()
        .filter(|_| end < total)
        .map(|last| Cursor::after(last, &sort, end).encode());
    let give = |d: Document| match shape {
        Shape::Summaries => summary(&d, judge),
        Shape::Documents => Value::Object(d),
    };
    let window = Window {
        limit,
        offset: start,
    };
    Ok(Listed {
        page: Page::new(items.into_iter().map(give).collect(), total, window),
        next_cursor,
    })
}

/// One instance document, by its whole id or its short one (see [`short_ids`]); 404 when there is
/// none (or it belongs to another task than `task_id`), 409 when a short id ends several ids.
pub fn get(
    docs: &dyn DocumentStore,
    instance_id: &str,
    task_id: Option<&str>,
) -> ApiResult<Document> {
    let of_task =
        |d: &Document| task_id.is_none_or(|t| d.get("task_id").and_then(Value::as_str) == Some(t));
    let exact = docs.find_one(INSTANCES, &Filter::eq("instance_id", instance_id), None)?;
    let mut found = match exact {
        Some(d) => vec![d],
        None if short_ids::is_short(instance_id) => {
            short_ids::ending_in(docs, instance_id, task_id)?
        }
        None => Vec::new(),
    };
    found.retain(of_task);
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(ApiError::not_found(match task_id {
            Some(t) => format!(
                "Task instance '{}' of task '{}' not found",
                shown(instance_id),
                shown(t)
            ),
            None => format!(
                "Task instance '{}' not found; {}",
                shown(instance_id),
                short_ids::HOW_IDS_ARE_WRITTEN
            ),
        })),
        _ => Err(short_ids::ambiguous(instance_id, &found)),
    }
}

/// What an instance's outcome is judged by besides its own record: its task's verifiers (the
/// scores `agent-env run` and `task list` count) and the runs live on this machine (an instance
/// recorded `running` whose run ended without finishing it is `interrupted`).
pub struct Judge<'a> {
    docs: &'a dyn DocumentStore,
    scores: InstanceScores<'a>,
    runs: RunsHere,
}

/// How one instance came out, as the explorer shows it.
pub struct Verdict {
    /// `running`, `interrupted`, `passed`, `scored below 1`, `unscored`, `failed` or `cancelled`.
    pub outcome: &'static str,
    /// Its scores, keyed by the verifying step's id.
    pub scores: Map<String, Value>,
    /// Why an `interrupted` instance is not running.
    pub interrupted: Option<Interrupted>,
}

impl<'a> Judge<'a> {
    pub fn new(docs: &'a dyn DocumentStore, runs: RunsHere) -> Judge<'a> {
        Judge {
            docs,
            scores: InstanceScores::new(docs),
            runs,
        }
    }

    /// The runs live on this machine, as this judge sees them.
    pub fn runs(&self) -> &RunsHere {
        &self.runs
    }

    /// How `doc` came out: `running` while it runs (`interrupted` when its run ended without
    /// finishing it), `failed`, `cancelled`, else its scores' outcome as `agent-env run` words it,
    /// from the scores of the task's verifiers only.
    pub fn verdict(&self, doc: &Document) -> Verdict {
        let scores = self.scores.of(doc);
        let (outcome, interrupted) = match doc.get("status").and_then(Value::as_str) {
            Some("running") | Some("queued") => match self.interrupted(doc) {
                Some(why) => ("interrupted", Some(why)),
                None => ("running", None),
            },
            // A failed mark another machine left, over an end that waits in a journal here.
            Some("failed") => ("failed", self.runs.end_waiting_here(doc)),
            Some("cancelled") => ("cancelled", None),
            _ => (scored(&scores), None),
        };
        Verdict {
            outcome,
            scores,
            interrupted,
        }
    }

    /// Why `doc` (recorded `running`) is not running. An instance with no journal of its run here
    /// is read again first: a run writes its instances' ends before it removes its journal, so one
    /// still `running` after the journal went was left so; one that ended meanwhile was not.
    fn interrupted(&self, doc: &Document) -> Option<Interrupted> {
        let why = self.runs.interrupted(doc)?;
        if why != Interrupted::NoRun {
            return Some(why);
        }
        let id = doc.get("instance_id").and_then(Value::as_str)?;
        let again = self
            .docs
            .find_one(INSTANCES, &Filter::eq("instance_id", id), None)
            .ok()??;
        self.runs.interrupted(&again)
    }
}

/// A finished run's outcome from its scores, as [`TaskOutcome::from_scores`] decides it (only numbers
/// count).
fn scored(scores: &Map<String, Value>) -> &'static str {
    let numbers = scores
        .iter()
        .filter_map(|(id, score)| Some((id.clone(), score.as_f64()?)))
        .collect();
    TaskOutcome::from_scores(numbers).word()
}

/// What a list of runs shows of one instance; its scores are keyed by the verifying step's id, as
/// `agent-env run` and `task list` key them. `warning` says why an `interrupted` one is not running.
pub fn summary(doc: &Document, judge: &Judge<'_>) -> Value {
    summary_of(doc, &judge.verdict(doc))
}

/// [`summary`] of an instance already judged: an answer that shows its summary and its progress
/// judges it once, so both say the same.
pub fn summary_of(doc: &Document, verdict: &Verdict) -> Value {
    let field = |k: &str| doc.get(k).cloned().unwrap_or(Value::Null);
    json!({
        "instance_id": field("instance_id"),
        "task_id": field("task_id"),
        "task_version": field("task_version"),
        "status": field("status"),
        "outcome": verdict.outcome,
        "warning": verdict.interrupted.as_ref().map(Interrupted::warning),
        "scores": verdict.scores,
        "error": field("error"),
        "created_at_utc": field("created_at_utc"),
        "started_at_utc": field("started_at_utc"),
        "completed_at_utc": field("completed_at_utc"),
        "ended_at_utc": field("ended_at_utc"),
        // Counted as the progress counts it (a step a cancel stopped is not done), so every view of
        // the instance says the same.
        "current_step": StepRecord::of(doc, false).steps_done(),
        "total_steps": field("total_steps"),
        "run_group_id": run_group_of(doc),
    })
}

/// What an instance records of its steps: the ones that ended (`completed_steps`), the ones running
/// (`running_steps`), the failures beside them, and whether it finished, was cancelled, or was left
/// `running` by a run that ended without finishing it (interrupted: nothing more will happen to it).
struct StepRecord<'d> {
    done: Vec<&'d Value>,
    running: Vec<&'d str>,
    failed: Vec<&'d Value>,
    finished: bool,
    cancelled: bool,
    interrupted: bool,
}

impl<'d> StepRecord<'d> {
    fn of(doc: &'d Document, interrupted: bool) -> StepRecord<'d> {
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
            // The steps running now, as the run records them (a record from before it did has none).
            running: list(doc.get("running_steps"))
                .into_iter()
                .filter_map(Value::as_str)
                .collect(),
            failed: list(
                doc.get("context")
                    .and_then(|c| c.get("metadata"))
                    .and_then(|m| m.get("failed_steps")),
            ),
            finished: !matches!(status, Some("running") | Some("queued")),
            cancelled: status == Some("cancelled"),
            interrupted,
        }
    }

    /// A step's state from its record. A step the cancel stopped is recorded as `cancelled` (an
    /// older record wrote `failure` with no failure recorded beside it, or left it in
    /// `running_steps`); one that never started is `not run` once the instance ended, and one its
    /// run left running when it ended without finishing is `interrupted`.
    fn state_of(
        &self,
        id: &str,
        completed: Option<&Value>,
        failure: Option<&Value>,
    ) -> &'static str {
        let running = self.running.contains(&id);
        match completed
            .and_then(|c| c.get("status"))
            .and_then(Value::as_str)
        {
            Some("success") => "succeeded",
            Some("cancelled") => "cancelled",
            // A step a killed run was running, ended by the run that marked its instance failed.
            Some(_) if completed.and_then(|c| c.get("interrupted")) == Some(&Value::Bool(true)) => {
                "interrupted"
            }
            Some(_) if failure.is_none() && self.cancelled => "cancelled",
            Some(_) => "failed",
            None if running && self.cancelled => "cancelled",
            None if running && self.interrupted => "interrupted",
            None if self.finished || self.interrupted => "not run",
            None if running => "running",
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
                let id = d.get("step_id").and_then(Value::as_str);
                let failure = self.failure_of(id);
                self.state_of(id.unwrap_or(""), Some(d), failure) != "cancelled"
            })
            .count()
    }
}

/// What an instance's progress is: steps done of all, and each step's state (`succeeded`, `failed`,
/// `cancelled`, `running`, `pending`, `not run`, `interrupted`) with its error and how long it took.
/// `finished` is true once nothing more will happen to it (an `interrupted` one included).
pub fn progress(doc: &Document, task_steps: &[Value], judge: &Judge<'_>) -> Value {
    progress_of(doc, task_steps, &judge.verdict(doc))
}

/// [`progress`] of an instance already judged (see [`summary_of`]).
pub fn progress_of(doc: &Document, task_steps: &[Value], verdict: &Verdict) -> Value {
    let record = StepRecord::of(doc, verdict.interrupted.is_some());
    let total = doc
        .get("total_steps")
        .and_then(Value::as_u64)
        .unwrap_or(task_steps.len() as u64);
    let finished = record.finished || record.interrupted;
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
                "state": record.state_of(id, completed, failure),
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
        "outcome": verdict.outcome,
        "current_step": ended,
        "total_steps": total,
        "fraction": fraction.min(1.0),
        "finished": finished,
        "steps": steps,
    })
}

/// A run group's state from its instances: how many ran, how each came out. While its run is live
/// on this machine (`run_live`: an `agent-env run` under way, between two tasks even) it is not
/// complete, and with no runs `planned` its `total` is not known yet: `null`.
pub fn group_state(
    run_group_id: &str,
    instances: &[Document],
    planned: Option<u64>,
    judge: &Judge<'_>,
) -> Value {
    let verdicts: Vec<Verdict> = instances.iter().map(|d| judge.verdict(d)).collect();
    let mut outcomes: BTreeMap<&str, u64> = BTreeMap::new();
    for verdict in &verdicts {
        *outcomes.entry(verdict.outcome).or_default() += 1;
    }
    let summaries: Vec<Value> = instances
        .iter()
        .zip(&verdicts)
        .map(|(d, v)| summary_of(d, v))
        .collect();
    let running = outcomes.get("running").copied().unwrap_or(0);
    let recorded = instances.len() as u64;
    let live = judge.runs().is_live(run_group_id);
    let total = match planned {
        Some(planned) => Some(planned.max(recorded)),
        None if live => None,
        None => Some(recorded),
    };
    let created = instances
        .iter()
        .filter_map(|d| d.get("created_at_utc").and_then(Value::as_str))
        .min()
        .map(String::from);
    let mut state = json!({
        "run_group_id": run_group_id,
        "total": total,
        "recorded": recorded,
        "running": running,
        "run_live": live,
        "outcomes": outcomes,
        "created_at_utc": created,
        "complete": !live && running == 0 && total.is_some_and(|t| recorded >= t),
        "score_spread_by_task": score_spread_by_task(instances, &verdicts),
        "instances": summaries,
    });
    let tasks = instances
        .iter()
        .filter_map(|d| d.get("task_id").and_then(Value::as_str));
    set_task_ids(&mut state, tasks);
    state
}

/// How a group's scores spread, task by task: for each task its runs are of, each of its scores
/// (keyed as an instance's `scores` are, by the verifying step's id) over that task's runs that
/// record a number for it, whatever their outcome: `{"runs", "mean", "min", "max"}`. Two tasks'
/// scores under the same step id are two tasks' verifiers, so they are never counted together. A
/// score no run records yet is left out, so a group with no scores answers `{}`; an instance that
/// names no task has no place in it.
pub fn score_spread_by_task(instances: &[Document], verdicts: &[Verdict]) -> Value {
    let mut by_task: BTreeMap<&str, BTreeMap<&str, Vec<f64>>> = BTreeMap::new();
    for (doc, verdict) in instances.iter().zip(verdicts) {
        let Some(task) = doc.get("task_id").and_then(Value::as_str) else {
            continue;
        };
        for (key, score) in &verdict.scores {
            if let Some(n) = score.as_f64().filter(|n| n.is_finite()) {
                by_task
                    .entry(task)
                    .or_default()
                    .entry(key.as_str())
                    .or_default()
                    .push(n);
            }
        }
    }
    let spread: Map<String, Value> = by_task
        .into_iter()
        .map(|(task, scores)| (task.to_string(), spread_of(scores)))
        .collect();
    Value::Object(spread)
}

/// Each score's numbers as `{"runs", "mean", "min", "max"}`, keyed as given.
fn spread_of(scores: BTreeMap<&str, Vec<f64>>) -> Value {
    let spread: Map<String, Value> = scores
        .into_iter()
        .map(|(key, numbers)| {
            let runs = numbers.len();
            let min = numbers.iter().copied().fold(f64::INFINITY, f64::min);
            let max = numbers.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mean = numbers.iter().sum::<f64>() / runs as f64;
            (
                key.to_string(),
                json!({"runs": runs, "mean": mean, "min": min, "max": max}),
            )
        })
        .collect();
    Value::Object(spread)
}

/// A group's `task_ids` (every task its runs are of, sorted, once each: those already in `state`
/// and `more`), its `task_id`: the one task when there is one, else null, and its `score_spread`:
/// the one task's entry of `score_spread_by_task` (`{}` while it has none, and for a group of no
/// task yet), null for a group of several, whose step ids may be shared by unrelated tasks.
pub fn set_task_ids<'t>(state: &mut Value, more: impl Iterator<Item = &'t str>) {
    let mut ids: std::collections::BTreeSet<String> = state["task_ids"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect();
    ids.extend(more.map(String::from));
    let one_task = match ids.len() {
        1 => ids.first().cloned(),
        _ => None,
    };
    state["score_spread"] = match &one_task {
        Some(task) => match state["score_spread_by_task"].get(task) {
            Some(spread) => spread.clone(),
            None => json!({}),
        },
        None if ids.is_empty() => json!({}),
        None => Value::Null,
    };
    state["task_id"] = json!(one_task);
    state["task_ids"] = json!(ids);
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
        ..InstanceFilter::default()
    };
    let sort = Sort::by("created_at_utc", false)
        .then("started_at_utc", false)
        .then("instance_id", false);
    Ok(docs.query(INSTANCES, &which.to_filter(), Some(&sort), None, 0)?)
}

/// The run groups of a task, newest first, each as its [`group_state`] without the instances.
pub fn groups_of_task(
    docs: &dyn DocumentStore,
    task_id: &str,
    judge: &Judge<'_>,
) -> ApiResult<Vec<Value>> {
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
    Ok(order
        .into_iter()
        .map(|g| {
            let mut state = group_state(&g, &members[&g], None, judge);
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
    use agent_env::stores::local::LocalSqliteDocumentStore;
    use agent_env_test_support::{CountedQueries, Forwarding};
    use std::sync::Arc;

    /// A deep page of instances merged from two stores reads whole, and sums up, its own instances
    /// and a few single ones that find where it starts in each store: none of those it skips.
    #[test]
    fn a_deep_page_reads_none_of_the_instances_it_skips() {
        let tmp = tempfile::tempdir().unwrap();
        let handed_out = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let store = |name: &str, parity: u32| -> Arc<dyn DocumentStore> {
            let inner = LocalSqliteDocumentStore::new(tmp.path().join(name));
            for n in (0..1200u32).filter(|n| n % 2 == parity) {
                let d = doc(json!({
                    "instance_id": format!("i-{n:05}"), "task_id": "t", "status": "completed",
                    "created_at_utc": "2026-12-07 01:00 UTC",
                    "started_at_utc": format!("2026-12-07T01:00:00.{n:06}+00:00"),
                }));
                inner.insert(INSTANCES, &d).unwrap();
            }
            Arc::new(Forwarding::new(
                Arc::new(inner),
                CountedQueries(handed_out.clone()),
            ))
        };
        let both = agent_env::run::recorded::Recorded::of(vec![store("a.db", 0), store("b.db", 1)]);
        let judge = Judge::new(&both, RunsHere::unknown());
        handed_out.store(0, std::sync::atomic::Ordering::SeqCst);
        let paging = Paging {
            limit: 10,
            start: Start::Offset(1150),
        };
        let listed = list(
            &both,
            &InstanceFilter::default(),
            &paging,
            &judge,
            Shape::Summaries,
        )
        .unwrap();
        let ids: Vec<&str> = listed
            .page
            .items
            .iter()
            .map(|i| i["instance_id"].as_str().unwrap())
            .collect();
        let expected: Vec<String> = (40..50).rev().map(|n| format!("i-{n:05}")).collect();
        assert_eq!(ids, expected);
        assert_eq!((listed.page.total, listed.page.has_more), (1200, true));
        let read = handed_out.load(std::sync::atomic::Ordering::SeqCst);
        // Each store's share of the page, and two single documents per step of the search for where
        // it starts (log2 1150 < 11).
        assert!(
            read <= 2 * 10 + 2 * 2 * 13,
            "{read} instances read for a page of 10"
        );
        assert!(listed.next_cursor.is_some());
    }

    /// An instance is found by its whole id or by the end `task list` prints; an end several ids
    /// share is a 409 naming them, and one of another task is not found under that task.
    #[test]
    fn an_instance_is_got_by_its_whole_or_short_id() {
        let tmp = tempfile::tempdir().unwrap();
        let store = LocalSqliteDocumentStore::new(tmp.path().join("d.db"));
        for (id, task) in [
            ("@local/a/t-x1", "@local/a/t"),
            ("@local/b/t-x1", "@local/b/t"),
            ("@local/a/t-y2", "@local/a/t"),
        ] {
            let d = doc(json!({"instance_id": id, "task_id": task, "status": "completed"}));
            store.insert(INSTANCES, &d).unwrap();
        }
        let id_of = |d: Document| d["instance_id"].as_str().unwrap().to_string();
        assert_eq!(
            id_of(get(&store, "@local/a/t-x1", None).unwrap()),
            "@local/a/t-x1"
        );
        assert_eq!(id_of(get(&store, "t-y2", None).unwrap()), "@local/a/t-y2");
        let both = get(&store, "t-x1", None).unwrap_err();
        assert_eq!(both.status, axum::http::StatusCode::CONFLICT);
        let detail = both.detail.as_str().unwrap();
        assert!(detail.contains("@local/a/t-x1, @local/b/t-x1"), "{detail}");
        // Under one task, the end is that task's instance only.
        assert_eq!(
            id_of(get(&store, "t-x1", Some("@local/b/t")).unwrap()),
            "@local/b/t-x1"
        );
        let none = get(&store, "t-y2", Some("@local/b/t")).unwrap_err();
        assert_eq!(none.status, axum::http::StatusCode::NOT_FOUND);
        let missing = get(&store, "t-zz", None).unwrap_err();
        assert!(missing
            .detail
            .as_str()
            .unwrap()
            .contains("give its whole id"));
    }

    /// A judge with no task stored (scores keyed by verifier) and no machine's runs known.
    fn none_stored() -> Judge<'static> {
        let empty = agent_env::run::recorded::Recorded::of(Vec::new());
        Judge::new(Box::leak(Box::new(empty)), RunsHere::unknown())
    }

    fn outcome(d: &Document) -> &'static str {
        none_stored().verdict(d).outcome
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

    /// A store holding the task `t` v1 of two steps: `a` verified by `a`, and `b`, which names no
    /// verifier.
    fn with_task(dir: &std::path::Path) -> Arc<dyn DocumentStore> {
        let store = LocalSqliteDocumentStore::new(dir.join("d.db"));
        let task = doc(json!({"id": "t", "version": 1, "steps": [
            {"id": "a", "type": "x", "verifier_id": "a"},
            {"id": "b", "type": "y"},
        ]}));
        store
            .insert(agent_env::run::stored_task::TASKS, &task)
            .unwrap();
        Arc::new(store)
    }

    /// The outcome counts the task's verifiers only, as `agent-env run` does: a score a step wrote
    /// under a key no step verifies by changes neither the outcome nor the scores.
    #[test]
    fn the_outcome_counts_the_scores_of_the_tasks_verifiers_only() {
        let tmp = tempfile::tempdir().unwrap();
        let store = with_task(tmp.path());
        let judge = Judge::new(store.as_ref(), RunsHere::unknown());
        let instance = |verifications: Value| {
            doc(
                json!({"instance_id": "i", "status": "completed", "task_id": "t",
                "task_version": 1, "context": {"metadata": {"verifications": verifications}}}),
            )
        };
        let stray = instance(json!({"a": {"score": 1}, "zzz": {"score": 0}}));
        let s = summary(&stray, &judge);
        assert_eq!(
            (s["outcome"].clone(), s["scores"].clone()),
            (json!("passed"), json!({"a": 1.0}))
        );
        let only_stray = instance(json!({"zzz": {"score": 0}}));
        let s = summary(&only_stray, &judge);
        assert_eq!(
            (s["outcome"].clone(), s["scores"].clone()),
            (json!("unscored"), json!({}))
        );
        let below = instance(json!({"a": {"score": 1}, "b": {"score": 0.5}}));
        assert_eq!(judge.verdict(&below).outcome, "scored below 1");
        assert_eq!(progress(&only_stray, &[], &judge)["outcome"], "unscored");
        let group = group_state("g", &[stray, only_stray], None, &judge);
        assert_eq!(group["outcomes"], json!({"passed": 1, "unscored": 1}));
    }

    #[test]
    fn a_group_is_complete_when_every_planned_run_finished() {
        let done = with_score("completed", Some(1.0));
        let running = with_score("running", None);
        let judge = none_stored();
        assert_eq!(
            group_state("g", std::slice::from_ref(&done), None, &judge)["complete"],
            true
        );
        assert_eq!(
            group_state("g", std::slice::from_ref(&done), Some(2), &judge)["complete"],
            false
        );
        assert_eq!(
            group_state("g", &[done, running], None, &judge)["complete"],
            false
        );
    }

    /// A group's scores spread over the runs that record them (a failed run's score included), and
    /// a run with no score yet is not counted as a zero.
    #[test]
    fn a_groups_score_spread_counts_the_runs_that_record_a_score() {
        let runs = [
            with_score("completed", Some(1.0)),
            with_score("completed", Some(0.5)),
            with_score("failed", Some(0.0)),
            with_score("running", None),
        ];
        let state = group_state("g", &runs, None, &none_stored());
        let spread = json!({"v": {"runs": 3, "mean": 0.5, "min": 0.0, "max": 1.0}});
        assert_eq!(state["score_spread"], spread, "{state}");
        assert_eq!(
            state["score_spread_by_task"],
            json!({"t": spread}),
            "{state}"
        );
        let none = group_state("g", &runs[3..], None, &none_stored());
        assert_eq!(none["score_spread"], json!({}));
        assert_eq!(none["score_spread_by_task"], json!({}));
    }

    /// Two tasks whose verifying steps share an id are spread apart, each over its own runs; the
    /// group's one-task `score_spread` is null, as its `task_id` is.
    #[test]
    fn a_groups_score_spread_keeps_tasks_sharing_a_step_id_apart() {
        let mut other = with_score("completed", Some(0.5));
        other.insert("task_id".into(), json!("u"));
        let runs = [with_score("completed", Some(1.0)), other];
        let state = group_state("g", &runs, None, &none_stored());
        assert_eq!(
            state["score_spread_by_task"],
            json!({
                "t": {"v": {"runs": 1, "mean": 1.0, "min": 1.0, "max": 1.0}},
                "u": {"v": {"runs": 1, "mean": 0.5, "min": 0.5, "max": 0.5}},
            }),
            "{state}"
        );
        assert_eq!(state["score_spread"], Value::Null, "{state}");
    }

    /// While its run is live on this machine (between two tasks, say) a group is not complete, and
    /// its total is not known.
    #[test]
    fn a_group_whose_run_is_live_is_not_complete() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let journal = agent_env::run::liveness::RunJournal::begin(
            &locks,
            "g",
            agent_env::run::liveness::InstancesIn::Local,
            &locks,
        )
        .unwrap();
        let empty = agent_env::run::recorded::Recorded::of(Vec::new());
        let done = [with_score("completed", Some(1.0))];
        let live = Judge::new(&empty, RunsHere::new(locks.clone(), Default::default()));
        let state = group_state("g", &done, None, &live);
        assert_eq!(state["complete"], false, "{state}");
        assert_eq!(state["total"], Value::Null);
        assert_eq!(state["run_live"], true);
        drop(journal);
        let ended = Judge::new(&empty, RunsHere::new(locks, Default::default()));
        let state = group_state("g", &done, None, &ended);
        assert_eq!(state["complete"], true, "{state}");
        assert_eq!(state["total"], 1);
        assert_eq!(state["run_live"], false);
    }

    /// An instance whose run left no journal is read again before it is called interrupted: one that
    /// ended since the list was read is not, one still `running` in the store is.
    #[test]
    fn an_instance_with_no_run_is_read_again_before_it_is_called_interrupted() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        std::fs::create_dir_all(&locks).unwrap();
        let store = LocalSqliteDocumentStore::new(tmp.path().join("d.db"));
        let read_before = doc(json!({
            "instance_id": "@local/b/t-1", "status": "running",
            "context": {"metadata": {"run_group_id": "g"}},
        }));
        let mut ended = read_before.clone();
        ended.insert("status".into(), json!("completed"));
        store.insert(INSTANCES, &ended).unwrap();
        let judge = Judge::new(&store, RunsHere::new(locks.clone(), Default::default()));
        let verdict = judge.verdict(&read_before);
        assert_eq!((verdict.outcome, verdict.interrupted), ("running", None));

        store.drop_collection(INSTANCES).unwrap();
        store.insert(INSTANCES, &read_before).unwrap();
        let judge = Judge::new(&store, RunsHere::new(locks, Default::default()));
        let verdict = judge.verdict(&read_before);
        assert_eq!(
            (verdict.outcome, verdict.interrupted),
            ("interrupted", Some(Interrupted::NoRun))
        );
    }

    /// An instance left `running` by a run that was killed is `interrupted`, says why, and nothing
    /// more happens to its steps.
    #[test]
    fn an_instance_a_killed_run_left_running_is_interrupted() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        std::fs::create_dir_all(locks.join("runs")).unwrap();
        std::fs::write(locks.join("runs/g.journal"), "instances\tlocal\n").unwrap();
        let empty = agent_env::run::recorded::Recorded::of(Vec::new());
        let judge = Judge::new(&empty, RunsHere::new(locks, Default::default()));
        let d = doc(json!({
            "instance_id": "@local/b/t-1", "status": "running", "total_steps": 3,
            "completed_steps": [{"step_id": "a", "status": "success"}],
            "running_steps": ["b"],
            "context": {"metadata": {"run_group_id": "g"}},
        }));
        let s = summary(&d, &judge);
        assert_eq!(s["outcome"], "interrupted");
        assert!(
            s["warning"]
                .as_str()
                .is_some_and(|w| w.contains("ended without finishing")),
            "{s}"
        );
        let steps = [json!({"id": "a"}), json!({"id": "b"}), json!({"id": "c"})];
        let p = progress(&d, &steps, &judge);
        assert_eq!(p["finished"], true);
        assert_eq!(p["steps"][1]["state"], "interrupted");
        assert_eq!(p["steps"][2]["state"], "not run");
        let group = group_state("g", &[d], None, &judge);
        assert_eq!(group["complete"], true, "{group}");
        assert_eq!(group["outcomes"], json!({"interrupted": 1}));
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
        let p = progress(&d, &steps, &none_stored());
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
        let p = progress(&d, &steps, &none_stored());
        assert_eq!(p["status"], "cancelled");
        assert_eq!(p["steps"][0]["duration_seconds"], 1.5);
        assert_eq!(p["steps"][1]["state"], "cancelled");
        assert_eq!(p["steps"][1]["duration_seconds"], 0.25);
        // The cancel came before it started: it never ran.
        assert_eq!(p["steps"][2]["state"], "not run");
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
        let p = progress(&failed, &[json!({"id": "a"})], &none_stored());
        assert_eq!(p["steps"][0]["state"], "failed");
        assert_eq!(p["steps"][0]["error"], "boom");
        assert_eq!(p["fraction"], 1.0);
    }

    /// In a cancelled instance, a step recorded `cancelled` (or, in an older record, left running)
    /// is `cancelled`; a step with no record never ran.
    #[test]
    fn a_cancelled_instances_steps_that_never_started_are_not_run() {
        let d = doc(json!({
            "instance_id": "i", "status": "cancelled", "total_steps": 4,
            "completed_steps": [
                {"step_id": "a", "status": "success"},
                {"step_id": "b", "status": "cancelled"},
            ],
            "running_steps": ["c"],
        }));
        let steps = [
            json!({"id": "a"}),
            json!({"id": "b"}),
            json!({"id": "c"}),
            json!({"id": "d"}),
        ];
        let p = progress(&d, &steps, &none_stored());
        let states: Vec<&str> = p["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["state"].as_str().unwrap())
            .collect();
        assert_eq!(states, ["succeeded", "cancelled", "cancelled", "not run"]);
        assert_eq!(p["current_step"], 1);
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
        let p = progress(&d, &steps, &none_stored());
        assert_eq!(p["current_step"], 1);
        assert_eq!(p["steps"][0]["state"], "succeeded");
        assert_eq!(p["steps"][1]["state"], "running");
        assert_eq!(p["steps"][2]["state"], "pending");
        assert_eq!(p["steps"][2]["error"], Value::Null);
    }

    /// A step a killed run was running, ended by the run that marked the instance failed.
    #[test]
    fn a_step_a_killed_run_was_running_is_interrupted() {
        let d = doc(json!({
            "instance_id": "i", "status": "failed", "total_steps": 3,
            "completed_steps": [
                {"step_id": "a", "status": "success"},
                {"step_id": "b", "status": "failure", "interrupted": true},
            ],
            "running_steps": [],
        }));
        let steps = [json!({"id": "a"}), json!({"id": "b"}), json!({"id": "c"})];
        let p = progress(&d, &steps, &none_stored());
        assert_eq!(p["steps"][1]["state"], "interrupted");
        assert_eq!(p["steps"][2]["state"], "not run");
    }
}
