//! The config the registries read: which file, whether it parsed, and the few tables a registry takes
//! (`[envs]`, `[task_steps]`, `[artifacts]` `impls`; `[sandbox.providers]`, `[state.providers]`).
//!
//! This is the one place the registry reads config, so moving it onto the config module is one swap.

use std::path::{Path, PathBuf};

use crate::report::model::{codes, Diagnostic};

/// The config document as the registries see it.
#[derive(Debug, Clone, Default)]
pub struct ConfigState {
    /// The file, when one was found (kept even when it does not parse).
    pub path: Option<PathBuf>,
    /// `config-not-found` or `config-unreadable`, with the message.
    pub error: Option<Diagnostic>,
    /// The parsed document; `None` when there is no file or it did not parse.
    pub document: Option<toml::Table>,
}

impl ConfigState {
    /// `$AGENT_ENV_CONFIG`, else the nearest `.agentenv/config.toml` from the working directory up.
    pub fn from_env() -> ConfigState {
        if let Some(value) = std::env::var_os("AGENT_ENV_CONFIG").filter(|v| !v.is_empty()) {
            let path = PathBuf::from(&value);
            if !path.is_file() {
                return ConfigState {
                    path: None,
                    error: Some(Diagnostic {
                        code: codes::CONFIG_NOT_FOUND.into(),
                        reason: format!(
                            "AGENT_ENV_CONFIG='{}' does not point to an existing file",
                            path.display()
                        ),
                    }),
                    document: None,
                };
            }
            return ConfigState::read(path);
        }
        let Ok(cwd) = std::env::current_dir() else {
            return ConfigState::default();
        };
        let cwd = cwd.canonicalize().unwrap_or(cwd);
        match walk_up(&cwd) {
            Some(path) => ConfigState::read(path),
            None => ConfigState::default(),
        }
    }

    /// Reads and parses one file.
    pub fn read(path: PathBuf) -> ConfigState {
        let unreadable = |reason: String| Diagnostic {
            code: codes::CONFIG_UNREADABLE.into(),
            reason,
        };
        let parsed = match std::fs::read(&path) {
            Err(e) => Err(unreadable(format!(
                "config.toml at {} cannot be read: {e}",
                path.display()
            ))),
            Ok(bytes) => match String::from_utf8(bytes) {
                Err(e) => Err(unreadable(format!(
                    "config.toml at {} is not valid UTF-8: {e}",
                    path.display()
                ))),
                Ok(text) => {
                    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
                    text.parse::<toml::Table>().map_err(|e| {
                        unreadable(format!(
                            "Malformed config.toml at {}: {}",
                            path.display(),
                            e.to_string().trim()
                        ))
                    })
                }
            },
        };
        match parsed {
            Ok(document) => ConfigState {
                path: Some(path),
                error: None,
                document: Some(document),
            },
            Err(error) => ConfigState {
                path: Some(path),
                error: Some(error),
                document: None,
            },
        }
    }

    pub fn path_text(&self) -> Option<String> {
        self.path.as_ref().map(|p| p.display().to_string())
    }
}

fn walk_up(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join(".agentenv").join("config.toml"))
        .find(|candidate| candidate.is_file())
}

/// The type name the original's messages use for a TOML value.
pub fn type_name(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "str",
        toml::Value::Integer(_) => "int",
        toml::Value::Float(_) => "float",
        toml::Value::Boolean(_) => "bool",
        toml::Value::Datetime(_) => "datetime",
        toml::Value::Array(_) => "list",
        toml::Value::Table(_) => "dict",
    }
}

/// The table at a dotted path; absent reads as none, a non-table is an error.
pub fn table_at<'a>(
    doc: &'a toml::Table,
    path: &[&str],
) -> Result<Option<&'a toml::Table>, String> {
    let mut current = doc;
    for (i, key) in path.iter().enumerate() {
        match current.get(*key) {
            None => return Ok(None),
            Some(toml::Value::Table(t)) => current = t,
            Some(other) => {
                return Err(format!(
                    "config.toml [{}] must be a table, got {}",
                    path[..=i].join("."),
                    type_name(other)
                ))
            }
        }
    }
    Ok(Some(current))
}

/// `[<table>] impls`: each `"<package>:<Class>"` as written. Messages are ConfigError texts.
pub fn impls(doc: &toml::Table, table: &str) -> Result<Vec<String>, String> {
    let Some(section) = table_at(doc, &[table])? else {
        return Ok(Vec::new());
    };
    let Some(value) = section.get("impls") else {
        return Ok(Vec::new());
    };
    let toml::Value::Array(items) = value else {
        return Err(format!(
            "[{table}] impls must be a list of '<package>:<Class>' strings, got {}",
            type_name(value)
        ));
    };
    items
        .iter()
        .map(|item| match item {
            toml::Value::String(s) => Ok(s.clone()),
            other => Err(format!(
                "[{table}] impl must be a '<package>:<Class>' string, got {}: {other}",
                type_name(other)
            )),
        })
        .collect()
}

/// One `[sandbox.providers.<name>]` / `[state.providers.<name>]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderTable {
    pub name: String,
    /// `impl`, when given (a bare string entry is its impl).
    pub impl_: Option<String>,
    /// `config`, when given.
    pub config: Option<toml::Table>,
    /// Keys beside `impl` and `config`, sorted.
    pub other_keys: Vec<String>,
}

/// The entries of `[<section>.providers]` (`section` is `sandbox` or `state`), in file order.
pub fn provider_tables(doc: &toml::Table, section: &str) -> Result<Vec<ProviderTable>, String> {
    let Some(providers) = table_at(doc, &[section, "providers"])? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (name, value) in providers {
        let where_ = format!("[{section}.providers.{name}]");
        let entry = match value {
            toml::Value::String(s) => ProviderTable {
                name: name.clone(),
                impl_: Some(s.clone()),
                config: None,
                other_keys: Vec::new(),
            },
            toml::Value::Table(t) => {
                let impl_ = match t.get("impl") {
                    None => None,
                    Some(toml::Value::String(s)) => Some(s.clone()),
                    Some(other) => {
                        return Err(format!(
                            "{where_} impl must be a '<package>:<Class>' string, got {}",
                            type_name(other)
                        ))
                    }
                };
                let config = match t.get("config") {
                    None => None,
                    Some(toml::Value::Table(c)) => Some(c.clone()),
                    Some(other) => {
                        return Err(format!(
                            "{where_} config must be a table, got {}",
                            type_name(other)
                        ))
                    }
                };
                let mut other_keys: Vec<String> = t
                    .keys()
                    .filter(|k| *k != "impl" && *k != "config")
                    .cloned()
                    .collect();
                other_keys.sort();
                ProviderTable {
                    name: name.clone(),
                    impl_,
                    config,
                    other_keys,
                }
            }
            other => {
                return Err(format!(
                    "{where_} must be a '<package>:<Class>' string or a table, got {}",
                    type_name(other)
                ))
            }
        };
        out.push(entry);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impls_messages_match_the_original() {
        let doc: toml::Table =
            "[task_steps]\nimpls = \"x\"\n[envs]\nimpls = [5]\n[artifacts]\nimpls = [\"a:B\"]\n"
                .parse()
                .unwrap();
        assert_eq!(
            impls(&doc, "task_steps").unwrap_err(),
            "[task_steps] impls must be a list of '<package>:<Class>' strings, got str"
        );
        assert_eq!(
            impls(&doc, "envs").unwrap_err(),
            "[envs] impl must be a '<package>:<Class>' string, got int: 5"
        );
        assert_eq!(impls(&doc, "artifacts").unwrap(), vec!["a:B".to_string()]);
        let doc: toml::Table = "sandbox = 3\n".parse().unwrap();
        assert_eq!(
            provider_tables(&doc, "sandbox").unwrap_err(),
            "config.toml [sandbox] must be a table, got int"
        );
    }
}
