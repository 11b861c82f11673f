//! The registries of the ten contribution groups, built from discovered manifests, the plugins' handshakes
//! and the config, with the original's precedence: built-in name, then incompatible core, then conflict,
//! then load (spawn and handshake), then validate, then config.
//!
//! [`Registry::build`] records an [`Outcome`] for every claim (what `plugin list` reports) and keeps the
//! names that took effect, which [`Registry::resolve`] answers for.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use agent_env_protocol::names::report_group;

use crate::discovery::{Discovery, SearchPath};
use crate::report::model::{Claimant, Diagnostic, Replacement, Status};

mod build;
pub mod compat;
pub mod config_input;
mod config_merge;
pub mod host_prober;
pub mod load;
pub mod validate;

#[cfg(test)]
mod tests;

pub use build::root_flag;
pub use config_input::ConfigState;
pub use load::{Launch, LoadFailure, Probe, Prober, ProcessDiagnosis};

/// Which plugins a build starts.
#[derive(Clone, Copy)]
pub enum Loading<'a> {
    /// None: claims that need a process are `unloaded` (`--no-load`).
    None,
    /// Every plugin with a claim left to load, and every plugin config names (the report).
    All(&'a dyn Prober),
    /// Only the plugins config names, to learn their classes' types; other plugins' names are taken on
    /// trust from their manifests and checked when first used (a run).
    ConfigNamed(&'a dyn Prober),
}

/// What became of one claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub status: Status,
    pub code: Option<String>,
    pub reason: Option<String>,
    pub replaced_by: Option<Replacement>,
    pub conflicts_with: Vec<Claimant>,
}

impl Outcome {
    pub fn active() -> Outcome {
        Outcome {
            status: Status::Active,
            code: None,
            reason: None,
            replaced_by: None,
            conflicts_with: Vec::new(),
        }
    }

    pub fn with(status: Status, code: &str, reason: impl Into<String>) -> Outcome {
        Outcome {
            status,
            code: Some(code.to_string()),
            reason: Some(reason.into()),
            replaced_by: None,
            conflicts_with: Vec::new(),
        }
    }
}

/// One (group, name, class) a plugin's manifest declares, and its outcome.
#[derive(Debug, Clone)]
pub struct ClaimRecord {
    /// Index into `discovery.plugins`.
    pub plugin: usize,
    pub group: &'static str,
    pub name: String,
    /// The class label as the manifest writes it (the report's `value`).
    pub class: String,
    pub outcome: Outcome,
}

/// What a name resolves to.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    /// agent-env's own implementation; `config` is a config-only provider table's `config`.
    BuiltIn { config: Option<toml::Table> },
    /// A class in a plugin's child process.
    Plugin {
        package: String,
        version: String,
        class: String,
        launch: Box<Launch>,
        /// A provider table's `config`.
        config: Option<toml::Table>,
        /// `Some(file-and-table)` when config, not a manifest, put it there.
        from_config: Option<String>,
    },
}

/// Why a name does not resolve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Nothing registers the name; `detail` is the recorded reason when a plugin claimed it.
    #[error("{}", unknown_message(group, name, detail.as_deref(), known))]
    Unknown {
        group: String,
        name: String,
        detail: Option<String>,
        /// The names that do resolve (shown for sandbox backends).
        known: Vec<String>,
    },
    /// The group could not be built at all (its config is invalid, or the config file is unreadable).
    #[error("nothing in {} loads: {} [{}]", report_group(group), diagnostic.reason, diagnostic.code)]
    GroupFailed {
        group: String,
        diagnostic: Diagnostic,
    },
}

fn unknown_message(group: &str, name: &str, detail: Option<&str>, known: &[String]) -> String {
    let detail = detail.map(|d| format!(" ({d})")).unwrap_or_default();
    match group {
        "envs" => format!("Unknown env type: {name}{detail}"),
        "artifacts" => format!("Unknown artifact type: {name}{detail}"),
        "task_steps" => format!("Unknown task step type: {name}{detail}"),
        "sandbox_providers" => {
            let known: Vec<String> = known.iter().map(|k| format!("'{k}'")).collect();
            format!(
                "Unknown sandbox backend: '{name}'{detail} (expected one of [{}])",
                known.join(", ")
            )
        }
        "state_providers" => format!("Unknown env state type: {name}{detail}"),
        "env_providers" => format!("Unknown env_provider_type: {name}{detail}"),
        "explorer_plugins" => format!("Unknown explorer plugin: {name}{detail}"),
        "cli_plugins" => format!("Unknown command: {name}{detail}"),
        "cli_root_options" => format!("Unknown root option: {name}{detail}"),
        "bundles" => format!("Unknown bundle: {name}{detail}"),
        _ => format!("Unknown {group} name: {name}{detail}"),
    }
}

/// A registered name.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
    BuiltIn {
        config: Option<toml::Table>,
    },
    Plugin {
        plugin: usize,
        class: String,
        config: Option<toml::Table>,
        /// `None` when a manifest claim registered it; the config table that did otherwise.
        from_config: Option<String>,
    },
}

/// Every group's registry and the report of how each claim fared.
#[derive(Debug, Clone)]
pub struct Registry {
    pub discovery: Discovery,
    pub config: ConfigState,
    /// Whether plugins were started (`false` with `--no-load`).
    pub loaded: bool,
    /// Every claim, in manifest order per plugin.
    pub claims: Vec<ClaimRecord>,
    /// group (no prefix) → why nothing in it loads.
    pub group_errors: BTreeMap<&'static str, Diagnostic>,
    /// plugin index → how starting it went (only for plugins that were started).
    pub probes: HashMap<usize, Probe>,
    /// What the original logs as warnings (config impls replacing or refused, skipped plugins).
    pub warnings: Vec<String>,
    pub(crate) entries: HashMap<(&'static str, String), Entry>,
    /// (group, name) → `registered by … but …`, or a conflict's message.
    pub(crate) failures: HashMap<(&'static str, String), String>,
}

impl Registry {
    /// For the report: discovers plugins from the environment, reads the config, and (when `load`)
    /// starts every plugin through the host, in parallel, to check its handshake.
    pub fn from_env(load: bool) -> Registry {
        Registry::from_discovery(crate::discovery::discover(&SearchPath::from_env()), load)
    }

    /// Like [`Registry::from_env`], from manifests this invocation has already discovered.
    pub fn from_discovery(discovery: Discovery, load: bool) -> Registry {
        let config = ConfigState::from_env();
        if load {
            let prober = host_prober::HostProber::new();
            Registry::build(discovery, config, Loading::All(&prober))
        } else {
            Registry::build(discovery, config, Loading::None)
        }
    }

    /// For a run: like [`Registry::from_env`], but starts only the plugins that config names in an
    /// impl; every other plugin name resolves from its manifest and its process starts on first use.
    pub fn for_run() -> Registry {
        let discovery = crate::discovery::discover(&SearchPath::from_env());
        let config = ConfigState::from_env();
        let prober = host_prober::HostProber::new();
        Registry::build(discovery, config, Loading::ConfigNamed(&prober))
    }

    /// Builds every registry.
    pub fn build(discovery: Discovery, config: ConfigState, loading: Loading<'_>) -> Registry {
        build::build(discovery, config, loading)
    }

    /// What `name` in `group` (the manifest spelling, e.g. `task_steps`) resolves to.
    pub fn resolve(&self, group: &str, name: &str) -> Result<Resolved, RegistryError> {
        if let Some(diagnostic) = self.group_errors.get(group) {
            return Err(RegistryError::GroupFailed {
                group: group.to_string(),
                diagnostic: diagnostic.clone(),
            });
        }
        let key = (intern_group(group), name.to_string());
        match self.entries.get(&key) {
            Some(Entry::BuiltIn { config }) => Ok(Resolved::BuiltIn {
                config: config.clone(),
            }),
            Some(Entry::Plugin {
                plugin,
                class,
                config,
                from_config,
            }) => {
                let manifest = &self.discovery.plugins[*plugin].manifest;
                Ok(Resolved::Plugin {
                    package: manifest.name.clone(),
                    version: manifest.version.clone(),
                    class: class.clone(),
                    launch: Box::new(launch_of(manifest)),
                    config: config.clone(),
                    from_config: from_config.clone(),
                })
            }
            None => {
                let mut known: Vec<String> = self
                    .entries
                    .keys()
                    .filter(|(g, _)| *g == key.0)
                    .map(|(_, n)| n.clone())
                    .collect();
                known.sort();
                Err(RegistryError::Unknown {
                    group: group.to_string(),
                    name: name.to_string(),
                    detail: self.failures.get(&key).cloned(),
                    known,
                })
            }
        }
    }

    /// `{group: {name: reason}}` for every claim that did not take effect, as `load_failures()` lists them.
    pub fn load_failures(&self) -> BTreeMap<String, BTreeMap<String, String>> {
        let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for ((group, name), reason) in &self.failures {
            out.entry(report_group(group))
                .or_default()
                .insert(name.clone(), reason.clone());
        }
        out
    }

    /// The claims of one plugin.
    pub fn claims_of(&self, plugin: usize) -> impl Iterator<Item = &ClaimRecord> {
        self.claims.iter().filter(move |c| c.plugin == plugin)
    }
}

/// How to start a manifest's plugin.
pub fn launch_of(manifest: &agent_env_protocol::manifest::Manifest) -> Launch {
    Launch {
        package: manifest.name.clone(),
        version: manifest.version.clone(),
        argv: manifest.resolved_exec(),
        manifest_path: manifest.path.clone(),
        settings: serde_json::Map::new(),
    }
}

/// The `&'static` spelling of a group name (unknown groups map to an empty name, which holds nothing).
pub(crate) fn intern_group(group: &str) -> &'static str {
    agent_env_protocol::names::GROUPS
        .iter()
        .find(|g| **g == group)
        .copied()
        .unwrap_or("")
}

/// `'<name>' from <package> <version> (<value>)`: how messages name a claim.
pub fn claim_label(name: &str, package: &str, version: &str, value: &str) -> String {
    format!("'{name}' from {package} {version} ({value})")
}

impl fmt::Display for Resolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resolved::BuiltIn { .. } => f.write_str("built in"),
            Resolved::Plugin { package, class, .. } => write!(f, "{package}:{class}"),
        }
    }
}
