//! The shapes of the config-side registration tables: `[envs]`, `[task_steps]`, `[artifacts]` and
//! `[explorer.plugins]` `impls`, and `[sandbox.providers.<name>]` / `[state.providers.<name>]`. Only the form is
//! checked here; what a registration does to a plugin's status is the report's business.

use super::document::ConfigDocument;
use super::error::ConfigError;
use super::tables::{py_repr, table_at, type_name};
use toml::{Table, Value};

/// The tables that take `impls`, by the group they register into.
pub const IMPL_TABLES: [(&str, &[&str]); 4] = [
    ("envs", &["envs"]),
    ("task_steps", &["task_steps"]),
    ("artifacts", &["artifacts"]),
    ("explorer_plugins", &["explorer", "plugins"]),
];

/// The `impls` list of a group's table (`envs`, `task_steps`, `artifacts`, or `explorer_plugins` for
/// `[explorer.plugins]`); empty when the table or the key is absent.
pub fn impls(doc: &ConfigDocument, group: &str) -> Result<Vec<String>, ConfigError> {
    let path: &[&str] = IMPL_TABLES
        .iter()
        .find(|(g, _)| *g == group)
        .map(|(_, p)| *p)
        .unwrap_or(&[]);
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let table_name = path.join(".");
    let Some(table) = table_at(doc.require()?, path)? else {
        return Ok(Vec::new());
    };
    let Some(value) = table.get("impls") else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = value else {
        return Err(ConfigError::ImplsNotList {
            table: table_name,
            got: type_name(value),
        });
    };
    items
        .iter()
        .map(|item| match item {
            Value::String(s) => Ok(s.clone()),
            other => Err(ConfigError::ImplNotString {
                table: table_name.clone(),
                got: type_name(other),
                value: py_repr(&super::mask::mask_value(other, false)),
            }),
        })
        .collect()
}

/// Splits `<package>:<Class>` (or the original's `module:Class`); `impl must be a plugin's
/// '<package>:<Class>', got 'x'` otherwise.
pub fn split_impl(impl_name: &str) -> Result<(&str, &str), ConfigError> {
    match impl_name.split_once(':') {
        Some((module, class))
            if !module.trim().is_empty()
                && !class.trim().is_empty()
                && !class.contains(':')
                && !module.contains(char::is_whitespace)
                && !class.contains(char::is_whitespace) =>
        {
            Ok((module, class))
        }
        _ => Err(ConfigError::BadImplForm {
            value: impl_name.to_string(),
        }),
    }
}

/// The provider tables: `sandbox` or `state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    Sandbox,
    State,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Sandbox => "sandbox",
            ProviderKind::State => "state",
        }
    }

    /// The group whose names the table configures.
    pub fn group(self) -> &'static str {
        match self {
            ProviderKind::Sandbox => "sandbox_providers",
            ProviderKind::State => "state_providers",
        }
    }
}

/// One `[<kind>.providers.<name>]` entry, read for its form.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderEntry {
    pub kind: ProviderKind,
    pub name: String,
    /// The `impl` (a bare string entry is an impl).
    pub impl_name: Option<String>,
    /// The `config` table, references unresolved.
    pub config: Option<Table>,
    /// Keys beside `impl` and `config`.
    pub extra_keys: Vec<String>,
}

impl ProviderEntry {
    /// `sandbox.providers.vercel`.
    pub fn table_name(&self) -> String {
        format!("{}.providers.{}", self.kind.as_str(), self.name)
    }

    /// A config-only table (no impl).
    pub fn is_config_only(&self) -> bool {
        self.impl_name.is_none()
    }

    /// The error for a table that may only hold `config` (it configures a built-in backend or a plugin's
    /// provider, named by `owner`: `a built-in backend` or `plugin <claim>`), when it holds more.
    pub fn config_only_violation(&self, owner: &str) -> Option<ConfigError> {
        let mut keys: Vec<String> = self.extra_keys.clone();
        if self.impl_name.is_some() {
            keys.insert(0, "impl".to_string());
        }
        if keys.is_empty() {
            return None;
        }
        if self.config.is_some() {
            keys.push("config".to_string());
        }
        Some(ConfigError::ProviderConfigOnly {
            table: self.table_name(),
            owner: owner.to_string(),
            keys,
        })
    }

    /// `[state.providers.x] has key 'k' beside 'impl', which is ignored (expected 'impl'/'config')`.
    pub fn extra_key_warnings(&self) -> Vec<String> {
        self.extra_keys
            .iter()
            .map(|k| {
                format!(
                    "[{}] has key '{k}' beside 'impl', which is ignored (expected 'impl'/'config')",
                    self.table_name()
                )
            })
            .collect()
    }
}

/// Every entry of `[sandbox.providers]` or `[state.providers]`, in file order.
pub fn provider_entries(
    doc: &ConfigDocument,
    kind: ProviderKind,
) -> Result<Vec<ProviderEntry>, ConfigError> {
    let Some(providers) = table_at(doc.require()?, &[kind.as_str(), "providers"])? else {
        return Ok(Vec::new());
    };
    providers
        .iter()
        .map(|(name, value)| provider_entry(kind, name, value))
        .collect()
}

fn provider_entry(
    kind: ProviderKind,
    name: &str,
    value: &Value,
) -> Result<ProviderEntry, ConfigError> {
    let table_name = format!("{}.providers.{name}", kind.as_str());
    let mut entry = ProviderEntry {
        kind,
        name: name.to_string(),
        impl_name: None,
        config: None,
        extra_keys: Vec::new(),
    };
    match value {
        Value::String(s) => entry.impl_name = Some(s.clone()),
        Value::Table(t) => {
            for (key, v) in t {
                match (key.as_str(), v) {
                    ("impl", Value::String(s)) => entry.impl_name = Some(s.clone()),
                    ("impl", other) => {
                        return Err(ConfigError::ImplNotString {
                            table: table_name,
                            got: type_name(other),
                            value: py_repr(&super::mask::mask_value(other, false)),
                        })
                    }
                    ("config", Value::Table(c)) => entry.config = Some(c.clone()),
                    ("config", other) => {
                        return Err(ConfigError::NotATable {
                            path: format!("{table_name}.config"),
                            got: type_name(other),
                        })
                    }
                    (other, _) => entry.extra_keys.push(other.to_string()),
                }
            }
        }
        other => {
            return Err(ConfigError::ProviderNotStringOrTable {
                kind: kind.as_str(),
                name: name.to_string(),
                got: type_name(other),
            })
        }
    }
    Ok(entry)
}

/// `[agents]` takes only `default_a2a_agent_id`.
pub fn check_agents(doc: &ConfigDocument) -> Result<(), ConfigError> {
    let Some(agents) = table_at(doc.require()?, &["agents"])? else {
        return Ok(());
    };
    let unknown: Vec<String> = agents
        .keys()
        .filter(|k| *k != "default_a2a_agent_id")
        .cloned()
        .collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(ConfigError::AgentsUnknownKeys {
            table: "agents".into(),
            keys: unknown,
        })
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
    fn impls_shapes() {
        assert_eq!(
            impls(&doc("[task_steps]\nimpls = 'x'"), "task_steps")
                .unwrap_err()
                .to_string(),
            "[task_steps] impls must be a list of 'module:Class' strings, got str"
        );
        assert_eq!(
            impls(&doc("[envs]\nimpls = [5]"), "envs")
                .unwrap_err()
                .to_string(),
            "[envs] impl must be a 'module:Class' string, got int: 5"
        );
        assert_eq!(
            impls(&doc("[envs]\nimpls = ['a:B', 'c:D']"), "envs").unwrap(),
            ["a:B", "c:D"]
        );
        assert!(impls(&doc(""), "artifacts").unwrap().is_empty());
        assert_eq!(
            impls(
                &doc("[explorer.plugins]\nimpls = ['m:P']"),
                "explorer_plugins"
            )
            .unwrap(),
            ["m:P"]
        );
    }

    #[test]
    fn impl_form() {
        assert!(split_impl("pkg.mod:Other").is_ok());
        assert_eq!(
            split_impl("fakestore.Store").unwrap_err().to_string(),
            "impl must be a plugin's '<package>:<Class>', got 'fakestore.Store'"
        );
    }

    #[test]
    fn provider_entries_shapes() {
        let d = doc("[sandbox.providers.vercel]\nconfig = { region = 'iad1' }\n[sandbox.providers]\nfly = 'pkg:Fly'\n");
        let entries = provider_entries(&d, ProviderKind::Sandbox).unwrap();
        assert_eq!(entries.len(), 2);
        assert!(entries[0].is_config_only());
        assert_eq!(entries[1].impl_name.as_deref(), Some("pkg:Fly"));
        let d = doc("[sandbox.providers]\nfly = 'pkg:Fly'\nbad = 3\n");
        assert_eq!(
            provider_entries(&d, ProviderKind::Sandbox).unwrap_err().to_string(),
            "config.toml sandbox provider 'bad' must be a 'module:Class' string or a table with 'impl' and/or 'config', got int"
        );
        let d = doc("[state.providers.x]\nimpl = 'p:X'\nzone = 1\n[sandbox.providers.v]\nconfig = { region = 'iad1' }\nextra = 2\n");
        let state = provider_entries(&d, ProviderKind::State).unwrap();
        assert_eq!(state[0].impl_name.as_deref(), Some("p:X"));
        assert_eq!(state[0].extra_key_warnings().len(), 1);
        let sandbox = provider_entries(&d, ProviderKind::Sandbox).unwrap();
        assert!(sandbox[0].is_config_only());
        assert_eq!(
            sandbox[0].config_only_violation("a built-in backend").unwrap().to_string(),
            "[sandbox.providers.v] configures a built-in backend and accepts only a 'config' table; got ['extra', 'config']"
        );
    }

    #[test]
    fn agents_takes_one_key() {
        assert_eq!(
            check_agents(&doc("[agents]\nx = 1\ndefault_a2a_agent_id = 'a'"))
                .unwrap_err()
                .to_string(),
            "[agents] has unknown keys ['x']; allowed: ['default_a2a_agent_id']"
        );
    }
}
