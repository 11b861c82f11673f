//! The plugin report as `agent-env plugin list | show` gives it, from a session built per request so a
//! plugin installed or fixed since `up` started shows as it is, and the explorer plugins in effect.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use super::extract::Ids;
use crate::http::blocking::blocking;
use crate::http::problem::{ApiError, ApiResult};
use crate::state::Shared;
use agent_env::report::{build_report, human, RowSource};
use agent_env::session::{RegistryLoad, Session};

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

/// What the answer says of explorer plugins the manifests declare now that the server did not load.
pub const ADDED_SINCE_START: &str =
    "started when agent-env up started; restart it to serve plugins added since";

/// The explorer plugins as the server mounted them (the middleware answers only after they loaded),
/// and those the manifests declare now that it did not load: their routes are bound as `up` starts,
/// so a plugin added since is not served until it starts again.
pub async fn explorer_plugins(State(s): State<Shared>) -> ApiResult<Json<Value>> {
    let listings = s.plugins.listings();
    let known: Vec<String> = listings.iter().map(|l| l.name.clone()).collect();
    let st = s.clone();
    let added = blocking(move || {
        let session = st.current.get();
        Ok(crate::plugins::mounted::declared(&session)
            .into_iter()
            .filter(|(name, _)| !known.contains(name))
            .map(|(name, package)| json!({"name": name, "package": package}))
            .collect::<Vec<Value>>())
    })
    .await?;
    let note = (!added.is_empty()).then_some(ADDED_SINCE_START);
    Ok(Json(json!({
        "plugins": listings,
        "added_since_start": added,
        "note": note,
    })))
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
