//! `[plugins.<package>]`: each plugin's own settings. agent-env checks none of a table's keys (the plugin
//! does); it finds the table by canonical name, resolves its references and hands it to the plugin as it
//! starts it. A table it cannot read or resolve is that plugin's failure to load (`load-failed`).

use super::document::ConfigDocument;
use super::error::ConfigError;
use super::references::{resolve_table, resolve_table_fully, SecretLookup};
use super::tables::{table_at, toml_key, type_name};
use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::names::canonical_name;
use std::collections::HashMap;
use toml::{Table, Value};

/// One package's table as the file spells it.
#[derive(Debug, Clone)]
pub struct PluginTable<'a> {
    /// The canonical package name.
    pub package: String,
    /// Every key under `[plugins]` that names this package, in file order.
    pub spellings: Vec<&'a str>,
    /// The value of the first spelling.
    pub value: &'a Value,
}

impl PluginTable<'_> {
    /// `[plugins.acme_browser], [plugins."acme.browser"]`.
    pub fn spelled_tables(&self) -> String {
        self.spellings
            .iter()
            .map(|s| format!("[plugins.{}]", toml_key(s)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The table with references still as written, or why it cannot be read.
    pub fn table(&self) -> Result<&Table, ConfigError> {
        if self.spellings.len() > 1 {
            return Err(ConfigError::DuplicatePluginTable {
                package: self.package.clone(),
                spellings: self.spelled_tables(),
            });
        }
        match self.value {
            Value::Table(t) => Ok(t),
            other => {
                let place = format!("plugins.{}", toml_key(self.spellings[0]));
                Err(ConfigError::NotATable {
                    path: place.clone(),
                    got: type_name(other),
                }
                .at(format!("[{place}]")))
            }
        }
    }
}

/// The `[plugins]` table, or an empty one; `config.toml [plugins] must be a table, got int` when it is not one.
fn plugins_root(doc: &ConfigDocument) -> Result<Option<&Table>, ConfigError> {
    let table = doc.require()?;
    table_at(table, &["plugins"])
}

/// Every plugin table in the file, grouped by canonical name, in the order of first appearance. Each
/// key is placed by a lookup, so a file of many tables is read in time linear in their number.
pub fn plugin_tables(doc: &ConfigDocument) -> Result<Vec<PluginTable<'_>>, ConfigError> {
    let Some(root) = plugins_root(doc)? else {
        return Ok(Vec::new());
    };
    let mut tables: Vec<PluginTable<'_>> = Vec::new();
    let mut place_of: HashMap<String, usize> = HashMap::new();
    for (key, value) in root {
        let package = canonical_name(key);
        match place_of.get(&package) {
            Some(&place) => tables[place].spellings.push(key),
            None => {
                place_of.insert(package.clone(), tables.len());
                tables.push(PluginTable {
                    package,
                    spellings: vec![key],
                    value,
                });
            }
        }
    }
    Ok(tables)
}

/// The settings a plugin receives in `initialize`: its `[plugins.<package>]` table (matched by canonical name)
/// with references resolved, as JSON; empty when there is no table.
pub fn plugin_settings(
    doc: &ConfigDocument,
    package: &str,
    secrets: Option<&dyn SecretLookup>,
) -> Result<serde_json::Map<String, serde_json::Value>, ConfigError> {
    let wanted = canonical_name(package);
    let tables = plugin_tables(doc)?;
    let Some(entry) = tables.into_iter().find(|t| t.package == wanted) else {
        return Ok(serde_json::Map::new());
    };
    let table = entry.table()?;
    let place = format!("[plugins.{}]", toml_key(entry.spellings[0]));
    let resolved = resolve_table(table, &doc.env, secrets).map_err(|f| f.error.at(place))?;
    Ok(table_to_json(&resolved))
}

impl PluginTable<'_> {
    /// Every problem [`plugin_settings`] stops at for this table's package, for `config check`: each
    /// reference of its table that does not resolve, not only the first.
    pub fn settings_problems(
        &self,
        doc: &ConfigDocument,
        secrets: Option<&dyn SecretLookup>,
    ) -> Vec<ConfigError> {
        let table = match self.table() {
            Ok(table) => table,
            Err(e) => return vec![e],
        };
        let place = format!("[plugins.{}]", toml_key(self.spellings[0]));
        match resolve_table_fully(table, &doc.env, secrets) {
            Ok(_) => Vec::new(),
            Err(failures) => failures
                .into_iter()
                .map(|f| f.error.at(place.clone()))
                .collect(),
        }
    }
}

/// A TOML table as JSON (datetimes become their RFC 3339 text).
pub fn table_to_json(table: &Table) -> serde_json::Map<String, serde_json::Value> {
    table
        .iter()
        .map(|(k, v)| (k.clone(), value_to_json(v)))
        .collect()
}

/// A TOML value as JSON (datetimes become their RFC 3339 text; a non-finite float becomes null).
pub fn value_to_json(value: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        Value::String(s) => J::String(s.clone()),
        Value::Integer(i) => J::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(J::Number)
            .unwrap_or(J::Null),
        Value::Boolean(b) => J::Bool(*b),
        Value::Datetime(d) => J::String(d.to_string()),
        Value::Array(items) => J::Array(items.iter().map(value_to_json).collect()),
        Value::Table(t) => J::Object(table_to_json(t)),
    }
}

/// An installed package, as discovery knows it: `config show` labels each plugin table with its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledPackage {
    pub name: String,
    pub version: String,
    /// Whether it provides anything: a contribution or a store (an installed package that provides
    /// neither is not a plugin).
    pub is_plugin: bool,
}

impl InstalledPackage {
    /// The package a manifest describes (nothing is run): a plugin when its manifest provides a
    /// contribution (`[provides.<group>]`) or a store (`[provides.stores]`).
    pub fn from_manifest(manifest: &Manifest) -> InstalledPackage {
        let contributes = manifest.provides.values().any(|group| !group.is_empty());
        InstalledPackage {
            is_plugin: contributes || !manifest.stores.is_empty(),
            name: manifest.name.clone(),
            version: manifest.version.clone(),
        }
    }
}

/// The installed packages that may own `[plugins.<package>]` tables, from their manifests, as
/// `config show | explain` and the explorer's config page label them.
pub fn installed_packages(manifests: &[Manifest]) -> Vec<InstalledPackage> {
    manifests
        .iter()
        .map(InstalledPackage::from_manifest)
        .collect()
}

/// Who owns a `[plugins.<package>]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// An installed plugin.
    Plugin {
        name: String,
        version: String,
    },
    /// Installed, but providing neither a contribution nor a store.
    NotAPlugin {
        name: String,
        version: String,
    },
    /// agent-env itself (`agentenv-framework`).
    Core {
        version: String,
    },
    NotInstalled {
        name: String,
    },
}

impl Owner {
    /// Finds the owner of a canonical package name among the installed packages.
    pub fn of(package: &str, installed: &[InstalledPackage]) -> Owner {
        if package == canonical_name(agent_env_protocol::names::CORE_PACKAGE) {
            return Owner::Core {
                version: crate::VERSION.to_string(),
            };
        }
        match installed
            .iter()
            .find(|p| canonical_name(&p.name) == package)
        {
            Some(p) if p.is_plugin => Owner::Plugin {
                name: p.name.clone(),
                version: p.version.clone(),
            },
            Some(p) => Owner::NotAPlugin {
                name: p.name.clone(),
                version: p.version.clone(),
            },
            None => Owner::NotInstalled {
                name: package.to_string(),
            },
        }
    }

    /// `agentenv-browser 2.1.0`, `… (provides nothing)`, `agentenv-framework 0.1.0 (agent-env
    /// itself)`, `agentenv-browser (not installed)`.
    pub fn label(&self) -> String {
        match self {
            Owner::Plugin { name, version } => format!("{name} {version}"),
            Owner::NotAPlugin { name, version } => {
                format!("{name} {version} (provides nothing: no contributions, no stores)")
            }
            Owner::Core { version } => {
                format!(
                    "{} {version} (agent-env itself)",
                    agent_env_protocol::names::CORE_PACKAGE
                )
            }
            Owner::NotInstalled { name } => format!("{name} (not installed)"),
        }
    }

    /// The ownership note `config explain` ends with.
    pub fn explain_note(&self) -> String {
        match self {
            Owner::Plugin { name, version } => {
                format!("in the table of the plugin {name} {version}, which gets it when it starts: agent-env resolves its env: and secret: references but leaves its keys to the plugin, and a table it cannot read or resolve stops the plugin from loading (load-failed)")
            }
            Owner::NotAPlugin { name, version } => format!(
                "in the table of {name} {version}, which is installed but provides nothing (its manifest declares no contributions and no stores), so it is not a plugin; agent-env does not read it"
            ),
            Owner::Core { version } => format!(
                "in the table of {} {version}, which is agent-env itself, not a plugin; agent-env does not read it",
                agent_env_protocol::names::CORE_PACKAGE
            ),
            Owner::NotInstalled { name } => {
                format!("in the table of {name}, which is not installed; agent-env does not read it")
            }
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Owner::Plugin { name, .. }
            | Owner::NotAPlugin { name, .. }
            | Owner::NotInstalled { name } => name,
            Owner::Core { .. } => agent_env_protocol::names::CORE_PACKAGE,
        }
    }

    pub fn version(&self) -> Option<&str> {
        match self {
            Owner::Plugin { version, .. }
            | Owner::NotAPlugin { version, .. }
            | Owner::Core { version } => Some(version),
            Owner::NotInstalled { .. } => None,
        }
    }

    pub fn is_installed(&self) -> bool {
        !matches!(self, Owner::NotInstalled { .. })
    }

    pub fn is_plugin(&self) -> bool {
        matches!(self, Owner::Plugin { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn doc(text: &str) -> ConfigDocument {
        ConfigDocument::from_text(text, Path::new("/p/.agentenv/config.toml"))
    }

    #[test]
    fn tables_match_by_canonical_name() {
        let d = doc("[plugins.agentenv_browser]\ntimeout = 30\nurl = 'env:AGENT_ENV_TEST_UNSET_U?http://h'\n");
        let s = plugin_settings(&d, "AgentEnv.Browser", None).unwrap();
        assert_eq!(s["timeout"], 30);
        assert_eq!(s["url"], "http://h");
        assert!(plugin_settings(&d, "other", None).unwrap().is_empty());
    }

    #[test]
    fn two_spellings_of_one_package_are_an_error() {
        let d = doc("[plugins.acme_browser]\na = 1\n[plugins.\"acme.browser\"]\nb = 2\n");
        assert_eq!(
            plugin_settings(&d, "acme-browser", None).unwrap_err().to_string(),
            "config.toml sets acme-browser's settings more than once, as [plugins.acme_browser], [plugins.\"acme.browser\"]; keep one"
        );
    }

    #[test]
    fn non_tables_and_unresolved_references_name_the_table() {
        assert_eq!(
            plugin_settings(&doc("plugins = 5"), "x", None)
                .unwrap_err()
                .to_string(),
            "config.toml [plugins] must be a table, got int"
        );
        assert_eq!(
            plugin_settings(&doc("[plugins]\nfoo = 5"), "foo", None)
                .unwrap_err()
                .to_string(),
            "[plugins.foo]: config.toml [plugins.foo] must be a table, got int"
        );
        assert_eq!(
            plugin_settings(&doc("[plugins.bar]\nx = 'env:AGENT_ENV_TEST_UNSET_NOPE'"), "bar", None)
                .unwrap_err()
                .to_string(),
            "[plugins.bar]: Unresolved env:AGENT_ENV_TEST_UNSET_NOPE reference (no value and no default); set the environment variable AGENT_ENV_TEST_UNSET_NOPE, or give a default: env:AGENT_ENV_TEST_UNSET_NOPE?DEFAULT"
        );
        // A broken table fails only its own plugin's read.
        assert!(plugin_settings(&doc("[plugins]\nfoo = 5\n[plugins.ok]\na=1"), "ok", None).is_ok());
    }
}
