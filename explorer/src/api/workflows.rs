//! The runs this explorer started (workflows): their list, one with its state and printed lines, and
//! cancelling one.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use super::extract::{Ids, Q};
use crate::data::instances;
use crate::http::blocking::blocking;
use crate::http::page::{Page, Window};
use crate::http::problem::{ApiError, ApiResult};
use crate::runs::manager::{self, Cancelled, WORKFLOW_KEY};
use crate::state::Shared;
use agent_env_store::document::{Filter, Predicate};

pub async fn list_workflows(State(s): State<Shared>, Q(q): Q) -> ApiResult<Json<Page>> {
    let window = Window::from_query(&q, 50)?;
    let all = s.runs.all().iter().map(|w| w.to_json()).collect();
    Ok(Json(Page::of_all(all, window)))
}

pub async fn get_workflow(State(s): State<Shared>, ids: Ids, Q(q): Q) -> ApiResult<Json<Value>> {
    let id = ids.at(0)?.to_string();
    let since = q.opt_int("since", 0)?.unwrap_or(0) as u64;
    let workflow = s.runs.get(&id).ok_or_else(|| workflow_not_found(&id))?;
    let st = s.clone();
    let wid = id.clone();
    let instances = blocking(move || {
        let filter = Filter::default().and(
            &format!("context.metadata.{WORKFLOW_KEY}"),
            Predicate::Eq(json!(wid)),
        );
        let r = st.reading();
        let docs = r.docs().query(
            agent_env::run::recorder::INSTANCES,
            &filter,
            Some(
                &agent_env_store::document::Sort::by("created_at_utc", false)
                    .then("instance_id", false),
            ),
            None,
            0,
        )?;
        let judge = st.judge(r.docs());
        Ok(docs
            .iter()
            .map(|d| instances::summary(d, &judge))
            .collect::<Vec<_>>())
    });
    let mut doc = workflow.with_instances(instances).await?;
    doc["lines"] = json!(workflow.log.since(since));
    Ok(Json(doc))
}

pub async fn cancel_workflow(State(s): State<Shared>, ids: Ids) -> ApiResult<Json<Value>> {
    let id = ids.at(0)?.to_string();
    let workflow = s.runs.get(&id).ok_or_else(|| workflow_not_found(&id))?;
    let done = manager::cancel(&workflow);
    Ok(Json(json!({
        "workflow_id": id,
        "cancelled": done == Cancelled::Now,
        "already_stopping": done == Cancelled::AlreadyStopping,
        "status": workflow.phase().word(),
    })))
}

/// The 404 for a workflow id this explorer does not know.
fn workflow_not_found(id: &str) -> ApiError {
    ApiError::not_found(format!(
        "Workflow '{id}' not found (the explorer knows the runs it started since it started)"
    ))
}
