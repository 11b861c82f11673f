//! The bundle routes: every bundle `agent-env run` can name (`GET /bundles`), and a run of one
//! (`POST /bundles/{bundle}/run`), started as the explorer starts every run.

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use serde_json::Value;

use super::extract::{json_body, Ids, Q};
use super::tasks::{overrides, refuse_without_state};
use crate::http::blocking::blocking;
use crate::http::page::{Page, Window};
use crate::http::problem::{ApiError, ApiResult};
use crate::runs::bundles;
use crate::runs::manager::StartSpec;
use crate::state::Shared;

pub async fn list_bundles(State(s): State<Shared>, Q(q): Q) -> ApiResult<Json<Page>> {
    let window = Window::from_query(&q, 50)?;
    blocking(move || {
        let session = s.current.get();
        let home = session.paths().home_dir();
        let all: Vec<Value> = bundles::installed(&session)
            .iter()
            .map(|b| bundles::describe(b, home.as_deref()))
            .collect();
        Ok(Page::of_all(all, window))
    })
    .await
    .map(Json)
}

/// `POST /bundles/{bundle}/run`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleRunBody {
    #[serde(default)]
    pub tasks: Vec<String>,
    #[serde(default)]
    pub evals: Vec<String>,
    pub agent_model: Option<String>,
    pub user_model: Option<String>,
    pub judge_model: Option<String>,
    pub agent: Option<String>,
}

pub async fn run_bundle(State(s): State<Shared>, ids: Ids, body: Bytes) -> ApiResult<Json<Value>> {
    let name = ids.at(0)?.to_string();
    let body: BundleRunBody = json_body(&body)?;
    let st = s.clone();
    let (tasks, evals) = (body.tasks.clone(), body.evals.clone());
    let (bundle, whole_bundle_tasks) = blocking(move || {
        let session = st.current.get();
        let all = bundles::installed(&session);
        let found = bundles::find(&all, &name)?;
        // A bundle that does not parse is left to the run, which reports why in its lines.
        let mut every_task = Vec::new();
        if let Ok(parsed) = found.parse(session.paths().home_dir().as_deref()) {
            bundles::check_selection(&parsed, &found.run_name(), &tasks, &evals)?;
            every_task = parsed.tasks.iter().map(|t| t.name.clone()).collect();
        }
        Ok((found.run_name(), every_task))
    })
    .await?;
    refuse_without_state(&s).await?;
    let spec = StartSpec {
        bundle,
        tasks: body.tasks,
        evals: body.evals,
        user_overrides: overrides(
            &body.agent_model,
            &body.user_model,
            &body.judge_model,
            ("agent", &body.agent),
        )?,
        whole_bundle_tasks,
        ..StartSpec::default()
    };
    let workflow = s
        .runs
        .start(spec)
        .map_err(|e| ApiError::new(axum::http::StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
    Ok(Json(workflow.to_json()))
}
