//! The runs this explorer started (workflows): their list, one with its state and printed lines, its
//! run log's text, and cancelling one.

use std::path::Path;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::{json, Value};

use super::extract::{Ids, Q};
use crate::data::instances;
use crate::http::blocking::blocking;
use crate::http::page::{Page, Window};
use crate::http::problem::{ApiError, ApiResult};
use crate::http::shown::shown;
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
    let workflow = s
        .runs
        .get(&id)
        .ok_or_else(|| workflow_not_found(&id, s.runs.kept_runs()))?;
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
    let workflow = s
        .runs
        .get(&id)
        .ok_or_else(|| workflow_not_found(&id, s.runs.kept_runs()))?;
    let done = manager::cancel(&workflow);
    Ok(Json(json!({
        "workflow_id": id,
        "cancelled": done == Cancelled::Now,
        "already_stopping": done == Cancelled::AlreadyStopping,
        "status": workflow.phase().word(),
    })))
}

/// The text of a run's log, the file `agent-env run` writes too, as `text/plain` (masked on its way
/// out as every text answer is). Only a file in the state folder's logs folder is read: the path is
/// the one the run was given, held to that folder so no other file can ever be served from here.
pub async fn workflow_log(State(s): State<Shared>, ids: Ids) -> ApiResult<impl IntoResponse> {
    let id = ids.at(0)?.to_string();
    let workflow = s
        .runs
        .get(&id)
        .ok_or_else(|| workflow_not_found(&id, s.runs.kept_runs()))?;
    let logs_dir = s.session.paths().run_logs_dir();
    let path = workflow.run_log().ok_or_else(|| no_log(&id))?;
    let text = blocking(move || read_log(&path, &logs_dir).ok_or_else(|| no_log(&id))).await?;
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text))
}

/// The log at `path` when it is a file inside `logs_dir` (both resolved, so no link leads out of it).
fn read_log(path: &Path, logs_dir: &Path) -> Option<String> {
    let dir = logs_dir.canonicalize().ok()?;
    let file = path.canonicalize().ok()?;
    if !file.starts_with(&dir) || !file.is_file() {
        return None;
    }
    let bytes = std::fs::read(&file).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The 404 for a run with no log to serve.
fn no_log(id: &str) -> ApiError {
    ApiError::not_found(format!(
        "Workflow '{id}' has no run log: it has written none yet (a run refused before anything \
         happened writes none), or its file is gone (the logs folder keeps the newest 200)"
    ))
}

/// The 404 for a workflow id this explorer does not know: one it never started, one an explorer
/// before a restart started, or one that finished and was let go (the newest `kept` finished are
/// kept).
fn workflow_not_found(id: &str, kept: usize) -> ApiError {
    ApiError::not_found(format!(
        "Workflow '{}' not found (the explorer knows the runs it started since it started, and \
         lets a finished one go once {kept} newer have finished; the task instances a run \
         recorded stay in the store: GET /api/v1/task-instances lists them)",
        shown(id)
    ))
}

#[cfg(test)]
mod tests {
    use super::read_log;

    #[test]
    fn a_log_is_read_only_from_inside_the_logs_folder() {
        let root = tempfile::tempdir().unwrap();
        let logs = root.path().join("logs");
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::write(logs.join("a.log"), "line\n").unwrap();
        std::fs::write(root.path().join("outside.log"), "secret\n").unwrap();
        assert_eq!(
            read_log(&logs.join("a.log"), &logs).as_deref(),
            Some("line\n")
        );
        assert_eq!(read_log(&root.path().join("outside.log"), &logs), None);
        assert_eq!(read_log(&logs.join("../outside.log"), &logs), None);
        assert_eq!(read_log(&logs.join("gone.log"), &logs), None);
        assert_eq!(read_log(&logs, &logs), None);
    }
}
