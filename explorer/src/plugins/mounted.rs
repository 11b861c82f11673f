//! Finding the explorer plugins that took effect and asking each for its routes (`explorer.router`):
//! the table the server matches requests against, and what `/api/v1/explorer-plugins` lists.

use std::time::Duration;

use agent_env::config::plugin_settings;
use agent_env::registry::{validate, Registry, Resolved};
use agent_env::session::{RegistryLoad, Session};
use agent_env::stores::StoreSet;
use agent_env_host::{PluginHost, SpawnSpec};
use agent_env_protocol::explorer::{
    ExplorerRoute, ExplorerRouterParams, ExplorerRouterResult, EXPLORER_ROUTER,
};
use serde::Serialize;

use super::routes::RoutePattern;

/// The group whose classes serve routes.
pub const GROUP: &str = "explorer_plugins";

/// One explorer class of a plugin, with the routes it serves.
#[derive(Debug, Clone)]
pub struct Mounted {
    /// Its name under `[provides.explorer_plugins]`.
    pub name: String,
    pub class: String,
    pub package: String,
    pub spec: SpawnSpec,
    pub routes: Vec<RoutePattern>,
}

/// What the API lists of one explorer plugin: served, or why not.
#[derive(Debug, Clone, Serialize)]
pub struct Listing {
    pub name: String,
    pub package: Option<String>,
    pub class: Option<String>,
    /// The page the navigation links to.
    pub page: Option<String>,
    /// The link's text.
    pub title: Option<String>,
    /// The routes it serves.
    pub routes: Vec<ExplorerRoute>,
    /// Routes it declared that another explorer plugin serves first, or that cannot be served.
    pub not_served: Vec<String>,
    /// Why none of its routes are served (a failed or conflicting plugin, a router call that failed).
    pub error: Option<String>,
}

impl Listing {
    fn failed(name: &str, package: Option<&str>, class: Option<&str>, error: String) -> Listing {
        Listing {
            name: name.to_string(),
            package: package.map(str::to_string),
            class: class.map(str::to_string),
            page: None,
            title: None,
            routes: Vec::new(),
            not_served: Vec::new(),
            error: Some(error),
        }
    }
}

/// The routes table and its listing.
#[derive(Debug, Default)]
pub struct Table {
    /// In the order their requests are matched: by plugin name, then as each declared them.
    pub mounted: Vec<Mounted>,
    pub listings: Vec<Listing>,
}

impl Table {
    /// The methods the plugin routes at `path` take, whatever the request's (`HEAD` after `GET`,
    /// which serves it too); none when no plugin route has that path.
    pub fn methods_at(&self, path: &str) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        for route in self.mounted.iter().flat_map(|m| m.routes.iter()) {
            if route.matches(&route.method, path).is_some() && !found.contains(&route.method) {
                found.push(route.method.clone());
                if route.method == "GET" && !found.iter().any(|m| m == "HEAD") {
                    found.push("HEAD".into());
                }
            }
        }
        found
    }

    /// The first route matching `method` and `path`: the plugin's index, the route, its `{name}` values.
    pub fn find(
        &self,
        method: &str,
        path: &str,
    ) -> Option<(
        usize,
        &RoutePattern,
        std::collections::BTreeMap<String, String>,
    )> {
        self.mounted.iter().enumerate().find_map(|(i, mounted)| {
            mounted
                .routes
                .iter()
                .find_map(|route| route.matches(method, path).map(|params| (i, route, params)))
        })
    }
}

/// Whether anything could provide explorer routes: a manifest that lists one, or `[explorer.plugins]
/// impls` in the config. When nothing does, no registry is built and no plugin starts.
pub fn any_declared(session: &Session) -> bool {
    let in_manifests = session.discovery().plugins.iter().any(|p| {
        p.manifest
            .provides
            .get(GROUP)
            .is_some_and(|e| !e.is_empty())
    });
    in_manifests
        || agent_env::config::impls(session.config(), GROUP).is_ok_and(|impls| !impls.is_empty())
}

/// Every explorer plugin the manifests declare now, as `(name, package)`: what a session built now
/// would try to serve (read from the manifests alone; nothing is started).
pub fn declared(session: &Session) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = session
        .discovery()
        .plugins
        .iter()
        .flat_map(|p| {
            p.manifest
                .provides
                .get(GROUP)
                .into_iter()
                .flat_map(|entries| entries.keys())
                .map(|name| (name.clone(), p.manifest.name.clone()))
        })
        .collect();
    all.sort();
    all
}

/// Builds the table: every explorer plugin that took effect is started and asked for its routes
/// (in parallel, each within `timeout`); those that did not take effect are listed with the reason.
pub fn build(session: &Session, host: &PluginHost, timeout: Duration) -> Table {
    // Only the plugins config names are loaded to build it; an explorer plugin's own class is
    // checked from its handshake when it is asked for its routes, so `up` starts no other plugin.
    let registry = session.registry(RegistryLoad::ConfigNamed);
    let mut listings = not_in_effect(registry);
    let mut found = Vec::new();
    for name in registry.names(GROUP) {
        match registry.resolve(GROUP, &name) {
            Ok(Resolved::Plugin { package, class, .. }) => match spec_of(session, &package) {
                Ok(spec) => found.push((name, class, package, spec)),
                Err(error) => {
                    listings.push(Listing::failed(&name, Some(&package), Some(&class), error))
                }
            },
            Ok(Resolved::BuiltIn { .. }) => {}
            Err(e) => listings.push(Listing::failed(&name, None, None, e.to_string())),
        }
    }
    let answers: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = found
            .iter()
            .map(|(name, class, _, spec)| {
                scope.spawn(move || ask_routes(host, spec, name, class, timeout))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("the thread asking for its routes panicked".into()))
            })
            .collect()
    });
    let mut mounted: Vec<Mounted> = Vec::new();
    for ((name, class, package, spec), answer) in found.into_iter().zip(answers) {
        let answer = match answer {
            Ok(answer) => answer,
            Err(error) => {
                listings.push(Listing::failed(&name, Some(&package), Some(&class), error));
                continue;
            }
        };
        let mut routes = Vec::new();
        let mut served = Vec::new();
        let mut not_served = Vec::new();
        for route in &answer.routes {
            match RoutePattern::parse(route) {
                Err(e) => not_served.push(e.to_string()),
                Ok(pattern) => match first_owner(&mounted, &pattern).or_else(|| {
                    routes
                        .iter()
                        .any(|r: &RoutePattern| r.same_route(&pattern))
                        .then_some(name.as_str())
                }) {
                    Some(owner) => not_served.push(format!(
                        "route '{} {}': the explorer plugin '{owner}' serves it first",
                        pattern.method, pattern.path
                    )),
                    None => {
                        served.push(route.clone());
                        routes.push(pattern);
                    }
                },
            }
        }
        listings.push(Listing {
            name: name.clone(),
            package: Some(package.clone()),
            class: Some(class.clone()),
            page: answer.page.clone(),
            title: answer
                .title
                .clone()
                .or_else(|| answer.page.as_ref().map(|_| name.clone())),
            routes: served,
            not_served,
            error: None,
        });
        mounted.push(Mounted {
            name,
            class,
            package,
            spec,
            routes,
        });
    }
    listings.sort_by(|a, b| a.name.cmp(&b.name));
    Table { mounted, listings }
}

/// The explorer plugins whose claim did not take effect, each with the report's reason.
fn not_in_effect(registry: &Registry) -> Vec<Listing> {
    registry
        .claims
        .iter()
        .filter(|c| c.group == GROUP && c.outcome.status.is_problem())
        .map(|claim| {
            let package = &registry.discovery.plugins[claim.plugin].manifest.name;
            let reason = claim
                .outcome
                .reason
                .clone()
                .unwrap_or_else(|| claim.outcome.status.as_str().to_string());
            Listing::failed(
                &claim.name,
                Some(package),
                Some(&claim.class),
                format!("{}: {reason}", claim.outcome.status.as_str()),
            )
        })
        .collect()
}

/// How to start `package`'s plugin, with its `[plugins.<package>]` settings.
fn spec_of(session: &Session, package: &str) -> Result<SpawnSpec, String> {
    let found = session
        .discovery()
        .find(&agent_env_protocol::names::canonical_name(package))
        .ok_or_else(|| format!("no manifest of the plugin {package} was found"))?;
    let secrets: &StoreSet = session.stores();
    let settings = plugin_settings(session.config(), package, Some(secrets))
        .map_err(|e| format!("ConfigError: {e}"))?;
    Ok(SpawnSpec::from_manifest(&found.manifest, settings))
}

/// Starts the plugin and asks `class` for its routes.
fn ask_routes(
    host: &PluginHost,
    spec: &SpawnSpec,
    name: &str,
    class: &str,
    timeout: Duration,
) -> Result<ExplorerRouterResult, String> {
    let process = host.connect(spec).map_err(|e| e.to_string())?;
    // The registry's own checks and words, as `plugin list` reports the same plugin.
    validate::find_contribution(GROUP, name, class, process.handshake())
        .and_then(|info| {
            validate::check_class(GROUP, name, class, info)
                .map_err(|problem| validate::class_problem(GROUP, &problem))
        })
        .map_err(|problem| format!("failed to load: {problem}"))?;
    let params = ExplorerRouterParams {
        name: name.to_string(),
        class: class.to_string(),
    };
    let params = serde_json::to_value(params).map_err(|e| e.to_string())?;
    let answer = process
        .call_with_timeout(EXPLORER_ROUTER, params, timeout)
        .map_err(|e| e.to_string())?;
    serde_json::from_value(answer).map_err(|e| {
        format!("{} answered {EXPLORER_ROUTER} with a result of the wrong shape ({e}); expected {{\"routes\": [{{\"method\": \"GET\", \"path\": \"/ext/...\"}}]}}", spec.package)
    })
}

/// The name of the plugin already serving a route that `pattern` would also match.
fn first_owner<'a>(mounted: &'a [Mounted], pattern: &RoutePattern) -> Option<&'a str> {
    mounted
        .iter()
        .find(|m| m.routes.iter().any(|r| r.same_route(pattern)))
        .map(|m| m.name.as_str())
}
