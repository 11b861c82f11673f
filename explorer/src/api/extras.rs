//! Routes the UI needs beyond the original's: bundles (list, run), the runs this explorer started
//! (workflows: state, printed lines, cancel), the plugin report, the masked config, and health.

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::extract::{json_body, Ids, Q};
use super::tasks::overrides;
use crate::data::instances;
use crate::http::blocking::blocking;
use crate::http::page::{Page, Window};
use crate::http::problem::{ApiError, ApiResult};
use crate::runs::bundles;
use crate::runs::manager::{self, StartSpec, WORKFLOW_KEY};
use crate::state::Shared;
use agent_env::config::store_builder::StoresBuilder;
use agent_env::config::{show, InstalledPackage};
use agent_env::report::{build_report, human, RowSource};
use agent_env::session::{RegistryLoad, Session};
use agent_env_store::document::{Filter, Predicate};

pub async fn health() -> Json<Value> {
    Json(json!({"status": "ok", "version": agent_env::VERSION}))
}

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
    let bundle = blocking(move || {
        let session = st.current.get();
        let all = bundles::installed(&session);
        let found = bundles::find(&all, &name)?;
        // A bundle that does not parse is left to the run, which reports why in its lines.
        if let Ok(parsed) = found.parse(session.paths().home_dir().as_deref()) {
            bundles::check_selection(&parsed, &found.run_name(), &tasks, &evals)?;
        }
        Ok(found.run_name())
    })
    .await?;
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
        ..StartSpec::default()
    };
    let workflow = s
        .runs
        .start(spec)
        .map_err(|e| ApiError::new(axum::http::StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
    Ok(Json(workflow.to_json()))
}

pub async fn list_workflows(State(s): State<Shared>, Q(q): Q) -> ApiResult<Json<Page>> {
    let window = Window::from_query(&q, 50)?;
    let all = s.runs.all().iter().map(|w| w.to_json()).collect();
    Ok(Json(Page::of_all(all, window)))
}

pub async fn get_workflow(State(s): State<Shared>, ids: Ids, Q(q): Q) -> ApiResult<Json<Value>> {
    let id = ids.at(0)?.to_string();
    let since = q.opt_int("since", 0)?.unwrap_or(0) as u64;
    let workflow = s.runs.get(&id).ok_or_else(|| {
        ApiError::not_found(format!(
            "Workflow '{id}' not found (the explorer knows the runs it started since it started)"
        ))
    })?;
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
        .ok_or_else(|| ApiError::not_found(format!("Workflow '{id}' not found")))?;
    let cancelled = manager::cancel(&workflow);
    Ok(Json(
        json!({"workflow_id": id, "cancelled": cancelled, "status": workflow.phase().word()}),
    ))
}

/// The plugin report from a session of its own, built now: plugins installed or fixed since `up`
/// started show as they are.
fn fresh_report(s: &Shared) -> (Session, Value) {
    let session = Session::new(s.session.env().clone());
    let value = {
        let registry = session.registry(RegistryLoad::All);
        let built = build_report(registry, &session.paths().plugins_dir());
        let mut warnings = agent_env::discovery::permissions::unsafe_paths(
            &session.paths().plugins_dir(),
            &registry.discovery,
        );
        warnings.extend(agent_env::report::noise::warnings(registry));
        warnings.extend(agent_env::report::unused::warnings(registry, None));
        let processes: serde_json::Map<String, Value> = built
            .report
            .plugins
            .iter()
            .zip(&built.sources)
            .filter_map(|(dist, source)| match source {
                RowSource::Plugin(i) => {
                    let probe = registry.probes.get(i)?;
                    Some((
                        dist.name.clone(),
                        serde_json::to_value(&probe.diagnosis).ok()?,
                    ))
                }
                _ => None,
            })
            .collect();
        json!({
            "report": built.report,
            "warnings": warnings,
            "processes": processes,
            "text": human::list(&built.report, &built.stores_by_row(registry)),
        })
    };
    (session, value)
}

/// The explorer plugins as the server mounted them (the middleware answers only after they loaded).
pub async fn explorer_plugins(State(s): State<Shared>) -> Json<Value> {
    Json(json!({"plugins": s.plugins.listings()}))
}

pub async fn plugin_report(State(s): State<Shared>) -> ApiResult<Json<Value>> {
    blocking(move || Ok(fresh_report(&s).1)).await.map(Json)
}

pub async fn plugin_show(State(s): State<Shared>, ids: Ids) -> ApiResult<Json<Value>> {
    let wanted = agent_env_protocol::names::canonical_name(ids.at(0)?);
    blocking(move || {
        let (_session, all) = fresh_report(&s);
        let plugins = all["report"]["plugins"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let names: Vec<String> = plugins
            .iter()
            .filter_map(|p| p["name"].as_str().map(String::from))
            .collect();
        let Some(found) = plugins.into_iter().find(|p| {
            p["name"]
                .as_str()
                .map(agent_env_protocol::names::canonical_name)
                == Some(wanted.clone())
        }) else {
            return Err(ApiError::not_found(format!(
                "no installed plugin package named '{wanted}' (installed: {})",
                names.join(", ")
            )));
        };
        let name = found["name"].as_str().unwrap_or("").to_string();
        Ok(json!({
            "plugin": found,
            "process": all["processes"].get(&name).cloned().unwrap_or(Value::Null),
            "warnings": all["warnings"],
        }))
    })
    .await
    .map(Json)
}

/// The configured stores the explorer leaves out now, each as the lists' `warnings` say it: one
/// that could not be used at start or failed since (the document store is asked once, as a list
/// asks it, so one that stopped answering since the last request is found), and one that is due is
/// tried again, as any read tries it.
fn stores_left_out(s: &Shared) -> Vec<String> {
    let documents = s.reading();
    // Only its failure matters here, which the reading keeps; any other error is a list's to say.
    let _ = documents
        .docs()
        .count(agent_env::run::recorder::INSTANCES, &Filter::all());
    let mut left_out = documents.warnings();
    left_out.extend(s.object_stores().warnings());
    left_out
}

/// `config show --json` (masked) and its text, read now, and the configured stores left out.
pub async fn config_show(State(s): State<Shared>) -> ApiResult<Json<Value>> {
    blocking(move || {
        // The session that knows the config as it is now (built again when it changed).
        let current = s.current.get();
        let session = current.as_ref();
        let installed: Vec<InstalledPackage> = session
            .manifests()
            .iter()
            .map(|m| InstalledPackage {
                is_plugin: m.provides.values().any(|group| !group.is_empty()),
                name: m.name.clone(),
                version: m.version.clone(),
            })
            .collect();
        let env = |name: &str| session.env().var(name);
        let report = show::show(
            session.config(),
            &installed,
            &env,
            &session.paths().state_root(),
        );
        let json_text = show::render_json(&report);
        let mut doc: Value = serde_json::from_str(&json_text).map_err(|e| {
            ApiError::internal(format!("config show gave JSON that does not parse: {e}"))
        })?;
        doc["text"] = json!(show::render_text(&report));
        // What `agent-env config check` finds, short of reaching a hosted store's server or starting
        // a plugin (a page load does neither; the stores on this disk are asked whether they can
        // serve): the page shows the problems above the settings.
        let manifests = session.manifests();
        let builder = StoresBuilder::new(session.config(), None)
            .with_manifests(&manifests)
            .probing_disk();
        let checked = agent_env::config::check::check(session.config(), &builder);
        doc["check"] = serde_json::to_value(&checked)
            .map_err(|e| ApiError::internal(format!("the config check does not serialize: {e}")))?;
        doc["stores_left_out"] = json!(stores_left_out(&s));
        Ok(doc)
    })
    .await
    .map(Json)
}
