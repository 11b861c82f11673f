//! The built registries and what a name resolves to: [`Registry`] holds every claim's outcome and the
//! names that took effect, [`Registry::resolve`] answers for a name, and [`RegistryError`] says why one
//! does not resolve.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::PathBuf;

use agent_env_protocol::names::report_group;

use super::config_input::ConfigState;
use super::load::{Launch, Probe};
use super::outcome::{ClaimRecord, Claimant, Diagnostic, Status};
use crate::config::tables::py_list;
use crate::discovery::Discovery;

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

impl RegistryError {
    /// How a bundle's file names the problem, as the original words it: `'x' is not a known step
    /// type`, with the recorded reason in parentheses when a plugin claimed the name. `what` is the
    /// kind of type (`step`, `artifact`, `env`).
    pub fn not_known(&self, what: &str) -> String {
        match self {
            RegistryError::Unknown {
                name,
                detail,
                known,
                ..
            } => {
                // A name some plugin registers that did not take effect (a conflict, a failed
                // load) is known, and unusable for the reason given.
                if let Some(why) = detail {
                    return format!("the {what} type '{name}' can't be used: {why}");
                }
                // A step type only the Python agent-env runs is no answer to "which could I mean".
                let known: Vec<&String> = known
                    .iter()
                    .filter(|k| {
                        what != "step"
                            || !crate::builtin_names::TASK_STEPS.contains(&k.as_str())
                            || crate::builtin_names::RUNNABLE_TASK_STEPS.contains(&k.as_str())
                    })
                    .collect();
                // A near miss of one of them (`fil` for `file`) is named after them.
                let near = crate::similar::best_match(name, known.iter().map(|k| k.as_str()), 0.75)
                    .map(|n| format!("; did you mean '{n}'?"))
                    .unwrap_or_default();
                let known = match known.is_empty() {
                    true => String::new(),
                    false => format!(
                        "; the known ones are {}",
                        known
                            .iter()
                            .map(|k| k.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                format!("'{name}' is not a known {what} type{known}{near}")
            }
            other => other.to_string(),
        }
    }
}

fn unknown_message(group: &str, name: &str, detail: Option<&str>, known: &[String]) -> String {
    let detail = detail.map(|d| format!(" ({d})")).unwrap_or_default();
    match group {
        "envs" => format!("Unknown env type: {name}{detail}"),
        "artifacts" => format!("Unknown artifact type: {name}{detail}"),
        "task_steps" => format!("Unknown task step type: {name}{detail}"),
        "sandbox_providers" => format!(
            "Unknown sandbox backend: '{name}'{detail} (expected one of {})",
            py_list(known)
        ),
        "state_providers" => format!(
            "Unknown env state type: '{name}'{detail} (expected one of {})",
            py_list(known)
        ),
        "env_providers" => format!(
            "Unknown env_provider_type: '{name}' (expected one of {}){detail}",
            py_list(known)
        ),
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
    /// The home folder, which messages about bundle folders show as `~`.
    pub home: Option<PathBuf>,
    pub(crate) entries: HashMap<(&'static str, String), Entry>,
    /// (group, name) → `registered by … but …`, or a conflict's message.
    pub(crate) failures: HashMap<(&'static str, String), String>,
}

impl Registry {
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

    /// The names that took effect in `group` (the manifest spelling), sorted.
    pub fn names(&self, group: &str) -> Vec<String> {
        let group = intern_group(group);
        let mut names: Vec<String> = self
            .entries
            .keys()
            .filter(|(g, _)| *g == group)
            .map(|(_, n)| n.clone())
            .collect();
        names.sort();
        names
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
        env: manifest.env.clone(),
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

impl Registry {
    pub(crate) fn label(&self, claim: &ClaimRecord) -> String {
        let m = &self.discovery.plugins[claim.plugin].manifest;
        claim_label(&claim.name, &m.name, &m.version, &claim.class)
    }

    pub(crate) fn claimant(&self, claim: &ClaimRecord) -> Claimant {
        let m = &self.discovery.plugins[claim.plugin].manifest;
        Claimant {
            package: m.name.clone(),
            version: m.version.clone(),
            value: claim.class.clone(),
        }
    }

    pub(super) fn package_of(&self, claim: &ClaimRecord) -> (String, String) {
        let m = &self.discovery.plugins[claim.plugin].manifest;
        (m.canonical_name(), m.version.clone())
    }
}

/// Whether the name is left out because several claims compete for it.
pub(crate) fn conflicted(reg: &Registry, group: &str, name: &str) -> bool {
    reg.claims
        .iter()
        .any(|c| c.group == group && c.name == name && c.outcome.status == Status::Conflict)
}
