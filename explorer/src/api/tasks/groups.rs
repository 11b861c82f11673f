//! Run groups: a task's, a page at a time, and one group (of a task, or of whatever it ran), each
//! told from the stores and from this explorer's own runs, which may not have recorded anything yet.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use super::known_workflow::known_workflow_id;
use super::task_lookup::require_task;
use crate::api::extract::{Ids, TaskIds, Q};
use crate::api::group_runs::RunsPage;
use crate::data::instances::{self, Judge};
use crate::data::records::{DocumentStores, Reading};
use crate::data::runs_here::workflow_of;
use crate::http::blocking::blocking;
use crate::http::page::{Page, Window};
use crate::http::problem::{ApiError, ApiResult};
use crate::http::shown::shown;
use crate::runs::manager::{Phase, Workflow};
use crate::state::{AppState, Shared};
use agent_env_store::document::DocumentStore;

pub async fn list_groups(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
    Q(q): Q,
) -> ApiResult<Json<Page>> {
    let task_id = ids.at(0)?.to_string();
    let window = Window::from_query(&q, 50)?;
    require_task(&s, &task_id).await?;
    blocking(move || {
        let r = s.reading();
        r.page(groups_of_task(&s, r.docs(), &task_id, window))
    })
    .await
    .map(Json)
}

/// The run groups of `task_id`: the ones recorded, and the explorer's own that recorded nothing.
fn groups_of_task(
    s: &AppState,
    docs: &dyn DocumentStore,
    task_id: &str,
    window: Window,
) -> ApiResult<Page> {
    let judge = s.judge(docs);
    let mut groups = instances::groups_of_task(docs, task_id, &judge)?;
    // A recorded group the explorer started is told as its own snapshot tells it: its planned
    // total, and the runs still waiting their turn (the store knows only those that began).
    for group in groups.iter_mut() {
        let Some(id) = group["run_group_id"].as_str().map(String::from) else {
            continue;
        };
        if s.runs.of_group(&id).is_empty() {
            continue;
        }
        if let Some(mut state) = group_snapshot(s, docs, &id, Some(task_id), &judge)? {
            if let Value::Object(m) = &mut state {
                m.remove("instances");
                m.remove("workflows");
            }
            *group = state;
        }
    }
    // The explorer's own groups of this task that recorded nothing (their runs are waiting, or
    // stopped with an error) come first: they are the newest.
    let mut own: Vec<Value> = Vec::new();
    for w in s.runs.all() {
        let group = w.run_group_id.as_str();
        let listed = |g: &Value| g["run_group_id"].as_str() == Some(group);
        if w.spec.task_id.as_deref() != Some(task_id)
            || groups.iter().any(listed)
            || own.iter().any(listed)
        {
            continue;
        }
        if let Some(mut state) = group_snapshot(s, docs, group, Some(task_id), &judge)? {
            if let Value::Object(m) = &mut state {
                m.remove("instances");
                m.remove("workflows");
            }
            own.push(state);
        }
    }
    own.append(&mut groups);
    // One shape whoever started a group: `errors`, as a group's own route answers it.
    for group in own.iter_mut() {
        if group.get("errors").is_none() {
            group["errors"] = json!([]);
        }
    }
    Ok(Page::of_all(own, window))
}

/// A run group's state from the store and the explorer's own workflows; `None` when neither knows it.
pub(super) fn group_snapshot(
    s: &AppState,
    docs: &dyn DocumentStore,
    group: &str,
    task_id: Option<&str>,
    judge: &Judge<'_>,
) -> ApiResult<Option<Value>> {
    let found = instances::of_group(docs, group, task_id)?;
    let workflows: Vec<_> = s
        .runs
        .of_group(group)
        .into_iter()
        .filter(|w| task_id.is_none() || w.spec.task_id.as_deref() == task_id)
        .collect();
    if found.is_empty() && workflows.is_empty() {
        return Ok(None);
    }
    let planned = (!workflows.is_empty()).then_some(workflows.len() as u64);
    let mut state = instances::group_state(group, &found, planned, judge);
    // Each run says which of the explorer's runs recorded it (null for one it did not start), as
    // a task's list of runs does, so a page can put it beside that run's place in the group.
    if let Some(summaries) = state["instances"].as_array_mut() {
        for (summary, doc) in summaries.iter_mut().zip(&found) {
            summary["workflow_id"] = known_workflow_id(s, doc);
        }
    }
    let all_done = !workflows.is_empty() && workflows.iter().all(|w| w.phase().is_done());
    if all_done {
        let running = state["running"].as_u64().unwrap_or(0);
        state["complete"] = json!(running == 0);
    } else if !workflows.is_empty() {
        state["complete"] = json!(false);
    }
    // Runs that stopped with an error before recording an instance count as `error`, with why.
    let recorded_by = |w: &Workflow| found.iter().any(|d| workflow_of(d) == Some(w.id.as_str()));
    // Runs cancelled while queued never recorded one either: they count as `cancelled`.
    let mut errors: Vec<String> = Vec::new();
    let mut errored = 0u64;
    let mut cancelled_unrecorded = 0u64;
    for w in &workflows {
        match w.phase() {
            Phase::Errored(e) if !recorded_by(w) => {
                errored += 1;
                if !errors.contains(&e) {
                    errors.push(e);
                }
            }
            Phase::Finished("cancelled") if !recorded_by(w) => cancelled_unrecorded += 1,
            _ => {}
        }
    }
    if errored > 0 {
        state["outcomes"]["error"] = json!(errored);
    }
    if cancelled_unrecorded > 0 {
        let recorded = state["outcomes"]["cancelled"].as_u64().unwrap_or(0);
        state["outcomes"]["cancelled"] = json!(recorded + cancelled_unrecorded);
    }
    state["errors"] = json!(errors);
    // Runs that recorded nothing yet are of the task they were asked for.
    instances::set_task_ids(
        &mut state,
        workflows.iter().filter_map(|w| w.spec.task_id.as_deref()),
    );
    state["workflows"] = json!(workflows.iter().map(|w| w.to_json()).collect::<Vec<_>>());
    Ok(Some(state))
}

fn group_not_found(group: &str, task_id: Option<&str>) -> ApiError {
    ApiError::not_found(match task_id {
        Some(t) => format!(
            "Run group '{}' of task '{}' not found",
            shown(group),
            shown(t)
        ),
        None => format!("Run group '{}' not found", shown(group)),
    })
}

/// A run group's answer as reading `r` gives it: its state over the whole group with `page` of its
/// runs, and `warnings` when a store was left out; a 404 for a group neither the stores nor the
/// explorer know (a 503 when the configured store failed while it was looked up).
pub fn group_answer(
    s: &AppState,
    r: &Reading<DocumentStores>,
    group: &str,
    task_id: Option<&str>,
    page: &RunsPage,
) -> ApiResult<Value> {
    let snapshot = group_snapshot(s, r.docs(), group, task_id, &s.judge(r.docs()));
    let found = snapshot.and_then(|g| g.ok_or_else(|| group_not_found(group, task_id)));
    r.object(found.map(|g| page.apply(g)))
}

pub async fn get_group(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
    Q(q): Q,
) -> ApiResult<Json<Value>> {
    let (task, group) = (ids.at(0)?.to_string(), ids.at(1)?.to_string());
    let page = RunsPage::from_query(&q)?;
    blocking(move || group_answer(&s, &s.reading(), &group, Some(&task), &page))
        .await
        .map(Json)
}

pub async fn get_any_group(State(s): State<Shared>, ids: Ids, Q(q): Q) -> ApiResult<Json<Value>> {
    let group = ids.at(0)?.to_string();
    let page = RunsPage::from_query(&q)?;
    blocking(move || group_answer(&s, &s.reading(), &group, None, &page))
        .await
        .map(Json)
}
