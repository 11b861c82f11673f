//! The masked config as `agent-env config show | check` gives it, with the stores the explorer left
//! out; and health.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use crate::http::blocking::blocking;
use crate::http::problem::{ApiError, ApiResult};
use crate::state::Shared;
use agent_env::config::store_builder::StoresBuilder;
use agent_env::config::{installed_packages, show};
use agent_env_store::document::Filter;

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
        let installed = installed_packages(&session.manifests());
        let env = |name: &str| session.env().var(name);
        let mut report = show::show(
            session.config(),
            &installed,
            &env,
            &session.paths().state_root(),
        );
        // An XDG variable set to a relative path that the explorer's folders were looked up
        // through (said on stderr at start too): the page shows where the state went instead.
        report
            .warnings
            .extend(s.session.paths().ignored_relative_vars());
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

pub async fn health() -> Json<Value> {
    Json(json!({"status": "ok", "version": agent_env::VERSION}))
}
