//! Config-side registrations: `[envs]` / `[task_steps]` / `[artifacts]` `impls`, and the
//! `[sandbox.providers.<name>]` / `[state.providers.<name>]` tables. Config may release a plugin's name
//! (the claim becomes `replaced`), is refused on a conflicted name (a warning), and a config problem fails
//! the group's build (`config-invalid`).
//!
//! An impl is `"<package>:<Class>"`: a class of an installed plugin package. Its type is the one the
//! package's `initialize` answer gives for that class in the group; the answer may list classes its
//! manifest does not claim a name for, exactly so that config can name them (docs/protocol.md §4.1).

use agent_env_protocol::methods::ContributionInfo;
use agent_env_protocol::names::canonical_name;

use super::config_input::{impls, provider_tables};
use super::outcome::{codes, Diagnostic, Replacement, Status};
use super::resolve::{conflicted, Entry, Registry};
use super::validate;
use crate::config::{split_impl, ConfigError, ProviderEntry, ProviderKind};
use crate::impl_spelling;

/// The impl tables: (group, table, what "another custom …" says).
const IMPL_TABLES: [(&str, &str, &str); 4] = [
    ("envs", "envs", "custom env"),
    ("task_steps", "task_steps", "custom step"),
    ("artifacts", "artifacts", "custom artifact"),
    (
        "explorer_plugins",
        "explorer.plugins",
        "custom explorer plugin",
    ),
];

/// The provider sections: (group, section).
const PROVIDER_SECTIONS: [(&str, ProviderKind); 2] = [
    ("sandbox_providers", ProviderKind::Sandbox),
    ("state_providers", ProviderKind::State),
];

/// Why a config table fails its group's build; the message follows `ConfigError: ` in the group's
/// `config-invalid` diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum ConfigMergeError {
    /// The table itself is wrong (its shape, a provider table missing its impl, a built-in's name).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The impl it names can't be loaded.
    #[error("[{table}] {source}")]
    Impl {
        table: String,
        source: ImplLoadError,
    },
    /// The class it names breaks its group's rules (a method it must implement).
    #[error("[{table}] impl '{spec}': {problem}")]
    BreaksGroupRules {
        table: String,
        spec: String,
        /// The group's rule, as the registry's validation words it.
        problem: String,
    },
    /// Its class's type is a name a built-in or another config table has.
    #[error("[{table}] impl '{spec}' type '{name}' is already registered (conflicts with a built-in or another {custom})")]
    AlreadyRegistered {
        table: String,
        spec: String,
        name: String,
        /// What the other table's entries are (`custom step`).
        custom: &'static str,
    },
    /// A state provider table whose impl answers with another type than the table's name.
    #[error("config.toml state provider '{name}' declares impl '{spec}' with type '{type_name}'; they must match — the name is the identity a store is reattached and torn down by")]
    StateProviderTypeMismatch {
        name: String,
        spec: String,
        type_name: String,
    },
}

/// Why the `"<package>:<Class>"` an impl names can't be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum ImplLoadError {
    /// It is not of the form `<package>:<Class>`.
    #[error(transparent)]
    Malformed(ConfigError),
    /// `instead` says how to spell it when an installed plugin provides the class (else empty).
    #[error("Cannot import impl '{spec}': no installed plugin package named '{package}'{instead}")]
    NoSuchPackage {
        spec: String,
        package: String,
        instead: String,
    },
    /// The plugin did not start or answer `initialize`; `reason` is its failure's message.
    #[error("Cannot import impl '{spec}': {reason}")]
    PluginFailed { spec: String, reason: String },
    #[error("Cannot import impl '{spec}': the plugin was not started")]
    PluginNotStarted { spec: String },
    /// The plugin's answer lists no such class in the group.
    #[error(
        "Cannot import impl '{spec}': the plugin {plugin} provides no class '{class}' in {group}"
    )]
    NoSuchClass {
        spec: String,
        plugin: String,
        class: String,
        group: String,
    },
}

/// Plugins that config names in an impl, so they are started with the others.
pub(super) fn plugins_named_by_config(reg: &Registry) -> Vec<usize> {
    let Some(doc) = reg.config.document.as_ref() else {
        return Vec::new();
    };
    let mut named: Vec<String> = Vec::new();
    for (group, _, _) in IMPL_TABLES {
        named.extend(impls(doc, group).unwrap_or_default());
    }
    for (_, kind) in PROVIDER_SECTIONS {
        for t in provider_tables(doc, kind).unwrap_or_default() {
            named.extend(t.impl_name);
        }
    }
    named
        .iter()
        .filter_map(|s| s.split_once(':'))
        .filter_map(|(package, _)| {
            let canonical = canonical_name(package.trim());
            reg.discovery
                .plugins
                .iter()
                .position(|p| p.manifest.canonical_name() == canonical)
        })
        .collect()
}

pub(super) fn merge(reg: &mut Registry) {
    let Some(doc) = reg.config.document.clone() else {
        return;
    };
    for (group, table, custom) in IMPL_TABLES {
        if reg.group_errors.contains_key(group) {
            continue;
        }
        let result = impls(&doc, group)
            .map_err(ConfigMergeError::from)
            .and_then(|list| {
                list.iter()
                    .try_for_each(|s| merge_impl(reg, group, table, custom, s))
            });
        fail_group(reg, group, result);
    }
    for (group, kind) in PROVIDER_SECTIONS {
        if reg.group_errors.contains_key(group) {
            continue;
        }
        let result = provider_tables(&doc, kind)
            .map_err(ConfigMergeError::from)
            .and_then(|tables| {
                tables
                    .iter()
                    .try_for_each(|t| merge_provider(reg, group, t))
            });
        fail_group(reg, group, result);
    }
}

fn fail_group(reg: &mut Registry, group: &'static str, result: Result<(), ConfigMergeError>) {
    if let Err(message) = result {
        reg.group_errors.insert(
            group,
            Diagnostic {
                code: codes::CONFIG_INVALID.into(),
                reason: format!("ConfigError: {message}"),
            },
        );
    }
}

/// The plugin and class an impl names, and its entry in that plugin's answer.
fn load_impl(
    reg: &Registry,
    group: &str,
    spec: &str,
) -> Result<(usize, String, ContributionInfo), ImplLoadError> {
    let (package, class) = split_impl(spec).map_err(ImplLoadError::Malformed)?;
    let (package, class) = (package.trim(), class.trim());
    let canonical = canonical_name(package);
    let Some(plugin) = reg
        .discovery
        .plugins
        .iter()
        .position(|p| p.manifest.canonical_name() == canonical)
    else {
        let manifests = reg.discovery.plugins.iter().map(|p| &p.manifest);
        let instead = impl_spelling::provider_in_group(manifests, group, class)
            .map(|m| impl_spelling::write_instead(m, class, ""))
            .unwrap_or_default();
        return Err(ImplLoadError::NoSuchPackage {
            spec: spec.to_string(),
            package: package.to_string(),
            instead,
        });
    };
    let answer = match reg.probes.get(&plugin).map(|p| &p.handshake) {
        Some(Ok(answer)) => answer,
        Some(Err(failure)) => {
            return Err(ImplLoadError::PluginFailed {
                spec: spec.to_string(),
                reason: failure.message.clone(),
            })
        }
        None => {
            return Err(ImplLoadError::PluginNotStarted {
                spec: spec.to_string(),
            })
        }
    };
    let Some(info) = answer
        .contributions
        .iter()
        .find(|c| c.group == group && c.class == class)
    else {
        return Err(ImplLoadError::NoSuchClass {
            spec: spec.to_string(),
            plugin: reg.discovery.plugins[plugin].manifest.name.clone(),
            class: class.to_string(),
            group: group.to_string(),
        });
    };
    Ok((plugin, class.to_string(), info.clone()))
}

fn replacement_reason(reg: &Registry, table: &str, spec: &str) -> (String, Replacement) {
    let file = reg.config.path_text();
    let reason = match &file {
        Some(f) => format!("config names '{spec}' in [{table}] of {f}"),
        None => format!("config names '{spec}' in [{table}]"),
    };
    (
        reason,
        Replacement {
            file,
            table: table.to_string(),
            impl_: spec.to_string(),
        },
    )
}

/// Marks the active claim on (group, name) replaced by config.
fn release(reg: &mut Registry, group: &str, name: &str, table: &str, spec: &str) -> Option<String> {
    let (reason, replaced_by) = replacement_reason(reg, table, spec);
    let i = reg
        .claims
        .iter()
        .position(|c| c.group == group && c.name == name && c.outcome.status == Status::Active)?;
    let label = reg.label(&reg.claims[i].clone());
    let outcome = &mut reg.claims[i].outcome;
    outcome.status = Status::Replaced;
    outcome.code = Some(codes::REPLACED_BY_CONFIG.into());
    outcome.reason = Some(reason);
    outcome.replaced_by = Some(replaced_by);
    Some(label)
}

fn conflict_reason(reg: &Registry, group: &'static str, name: &str) -> String {
    reg.failures
        .get(&(group, name.to_string()))
        .cloned()
        .unwrap_or_default()
}

fn merge_impl(
    reg: &mut Registry,
    group: &'static str,
    table: &str,
    custom: &'static str,
    spec: &str,
) -> Result<(), ConfigMergeError> {
    let (plugin, class, info) =
        load_impl(reg, group, spec).map_err(|source| ConfigMergeError::Impl {
            table: table.to_string(),
            source,
        })?;
    validate::check_methods(group, &class, &info.methods).map_err(|problem| {
        ConfigMergeError::BreaksGroupRules {
            table: table.to_string(),
            spec: spec.to_string(),
            problem,
        }
    })?;
    let name = info.type_name.clone();
    if conflicted(reg, group, &name) {
        let reason = conflict_reason(reg, group, &name);
        reg.warnings.push(format!(
            "[{table}] impl '{spec}' names '{name}' and was skipped: {reason}"
        ));
        return Ok(());
    }
    let key = (group, name.clone());
    match reg.entries.get(&key).cloned() {
        Some(Entry::Plugin {
            plugin: owner,
            class: owner_class,
            from_config: None,
            ..
        }) => {
            if owner == plugin && owner_class == class {
                return Ok(());
            }
            if let Some(label) = release(reg, group, &name, table, spec) {
                reg.warnings.push(format!(
                    "[{table}] impl '{spec}' replaces the class registered by plugin {label}"
                ));
            }
        }
        Some(_) => {
            return Err(ConfigMergeError::AlreadyRegistered {
                table: table.to_string(),
                spec: spec.to_string(),
                name,
                custom,
            })
        }
        None => {}
    }
    reg.entries.insert(
        key,
        Entry::Plugin {
            plugin,
            class,
            config: None,
            from_config: Some(format!("[{table}]")),
        },
    );
    Ok(())
}

fn merge_provider(
    reg: &mut Registry,
    group: &'static str,
    t: &ProviderEntry,
) -> Result<(), ConfigMergeError> {
    let name = t.name.clone();
    let table = t.table_name();
    let where_ = format!("[{table}]");
    let key = (group, name.clone());
    let entry = reg.entries.get(&key).cloned();
    let Some(spec) = t.impl_name.clone() else {
        // A config-only table configures a built-in's or a plugin's provider.
        if conflicted(reg, group, &name) {
            let reason = conflict_reason(reg, group, &name);
            reg.warnings.push(format!(
                "{where_} configures '{name}' and was skipped: {reason}"
            ));
            return Ok(());
        }
        let Some(entry) = entry else {
            if reg.failures.contains_key(&key) {
                reg.warnings.push(format!(
                    "{where_} configures a plugin that failed to load; skipped"
                ));
                return Ok(());
            }
            return Err(ConfigError::ProviderMissingImpl {
                kind: t.kind.as_str(),
                name,
            }
            .into());
        };
        let owner = match &entry {
            Entry::BuiltIn { .. } => "a built-in backend".to_string(),
            Entry::Plugin { plugin, class, .. } => {
                let m = &reg.discovery.plugins[*plugin].manifest;
                format!(
                    "plugin {}",
                    super::resolve::claim_label(&name, &m.name, &m.version, class)
                )
            }
        };
        if let Some(violation) = t.config_only_violation(&owner) {
            return Err(violation.into());
        }
        let merged = match entry {
            Entry::BuiltIn { .. } => Entry::BuiltIn {
                config: t.config.clone(),
            },
            Entry::Plugin {
                plugin,
                class,
                from_config,
                ..
            } => Entry::Plugin {
                plugin,
                class,
                config: t.config.clone(),
                from_config,
            },
        };
        reg.entries.insert(key, merged);
        return Ok(());
    };
    if matches!(entry, Some(Entry::BuiltIn { .. })) {
        let error = match t.kind.as_str() {
            "state" => ConfigError::StateProviderIsBuiltin { name },
            _ => ConfigError::SandboxProviderIsBuiltin { name },
        };
        return Err(error.into());
    }
    let (plugin, class, info) =
        load_impl(reg, group, &spec).map_err(|source| ConfigMergeError::Impl {
            table: table.clone(),
            source,
        })?;
    validate::check_methods(group, &class, &info.methods).map_err(|problem| {
        ConfigMergeError::BreaksGroupRules {
            table: table.clone(),
            spec: spec.clone(),
            problem,
        }
    })?;
    if t.kind == ProviderKind::State {
        if info.type_name != name {
            return Err(ConfigMergeError::StateProviderTypeMismatch {
                name,
                spec,
                type_name: info.type_name,
            });
        }
        reg.warnings.extend(t.extra_key_warnings());
    }
    if conflicted(reg, group, &name) {
        let reason = conflict_reason(reg, group, &name);
        reg.warnings.push(format!(
            "{where_} impl '{spec}' names '{name}' and was skipped: {reason}"
        ));
        return Ok(());
    }
    if let Some(Entry::Plugin {
        plugin: owner,
        class: owner_class,
        from_config: None,
        ..
    }) = &entry
    {
        if !(*owner == plugin && *owner_class == class) {
            if let Some(label) = release(reg, group, &name, &table, &spec) {
                reg.warnings.push(format!(
                    "{where_} impl '{spec}' replaces the class registered by plugin {label}"
                ));
            }
        }
    }
    reg.entries.insert(
        key,
        Entry::Plugin {
            plugin,
            class,
            config: t.config.clone(),
            from_config: Some(where_),
        },
    );
    Ok(())
}
