//! `LocalSecretStore`: environment variables first (when `use_env`), then a flat JSON or YAML file
//! merged with the `values` table (values win). An empty string is a present value.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::flat_yaml;
use crate::environment::Environment;
use crate::stores::config_table::{self, ConfigTable};
use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::secret::SecretStore;
use agent_env_store::SettingsProblems;

/// The class name, as `[stores.secret] impl` names it.
pub const CLASS: &str = "LocalSecretStore";
/// The original's full impl path, which the `local` alias expands to.
pub const IMPL: &str = "agent_env.store.secret_store:LocalSecretStore";
/// The keys its config table takes.
pub const CONFIG_KEYS: [&str; 3] = ["values", "file_path", "use_env"];

/// Secrets from the environment, a file and the config table.
#[derive(Debug, Clone)]
pub struct LocalSecretStore {
    values: HashMap<String, String>,
    /// The environment whose variables answer first (`use_env`), when it does.
    env: Option<Arc<Environment>>,
}

impl LocalSecretStore {
    /// A store over `values` and, when given, a flat JSON or YAML file (read now). A name in both takes its
    /// value from `values`; with an `env`, a variable of that name there wins over both.
    pub fn new(
        values: HashMap<String, String>,
        file_path: Option<&Path>,
        env: Option<Arc<Environment>>,
    ) -> StoreResult<Self> {
        let mut merged = match file_path {
            Some(path) => read_secret_file(path)?,
            None => HashMap::new(),
        };
        merged.extend(values);
        Ok(LocalSecretStore {
            values: merged,
            env,
        })
    }

    /// Builds the store from its config table (`values`, `file_path`, `use_env`). Each key is read on
    /// its own, so the error names every problem; the file is read once the keys are right.
    pub fn from_config(
        impl_name: &str,
        table: &ConfigTable,
        env: &Arc<Environment>,
    ) -> Result<Self, SettingsProblems> {
        let mut problems = config_table::key_problems(impl_name, table, &CONFIG_KEYS, &[]);
        let values = problems
            .keep(config_table::opt_table(impl_name, table, "values"))
            .flatten()
            .and_then(|map| {
                let flat = flat_strings(map);
                if flat.is_none() {
                    problems.push(format!(
                        "The config table for '{impl_name}' sets values to a table that is not a flat mapping of name -> value"
                    ));
                }
                flat
            })
            .unwrap_or_default();
        let file_path = problems
            .keep(config_table::opt_path(impl_name, table, "file_path"))
            .flatten()
            .map(|p| config_table::expand_home(&p, env));
        let use_env = problems
            .keep(config_table::opt_bool(impl_name, table, "use_env"))
            .flatten()
            .unwrap_or(true);
        if !problems.is_empty() {
            return Err(problems);
        }
        Self::new(values, file_path.as_deref(), use_env.then(|| env.clone()))
            .map_err(|e| SettingsProblems::from(format!("{CLASS}: file_path: {e}")))
    }
}

impl SecretStore for LocalSecretStore {
    fn get(&self, name: &str) -> StoreResult<Option<String>> {
        if let Some(value) = self.env.as_ref().and_then(|env| env.var_os(name)) {
            return Ok(Some(value.to_string_lossy().into_owned()));
        }
        Ok(self.values.get(name).cloned())
    }
}

/// Reads a flat mapping of name -> value: a JSON object when the file's text starts with `{` (the
/// original's YAML loader read JSON as YAML), else simple `name: value` lines (see [`flat_yaml`]).
fn read_secret_file(path: &Path) -> StoreResult<HashMap<String, String>> {
    let shown = path.display();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(StoreError::Config(format!(
                "Secret file '{shown}' does not exist."
            )))
        }
        Err(e) => return Err(StoreError::Config(format!("Secret file '{shown}': {e}"))),
    };
    let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if !body.trim_start().starts_with('{') {
        return flat_yaml::read(body).map_err(|e| {
            StoreError::Config(format!(
                "Secret file '{shown}' must be a flat mapping of name -> value ({e}); write it as a flat JSON object or as simple `name: value` lines"
            ))
        });
    }
    let value: Value = serde_json::from_str(body)
        .map_err(|e| StoreError::Config(format!("Secret file '{shown}' is not valid JSON: {e}")))?;
    value.as_object().and_then(flat_strings).ok_or_else(|| {
        StoreError::Config(format!(
            "Secret file '{shown}' must be a flat mapping of name -> value."
        ))
    })
}

/// A flat map with every scalar stringified as the original does (`True`, `1`, `None`); `None` when a
/// value is a table or a list.
fn flat_strings(map: &serde_json::Map<String, Value>) -> Option<HashMap<String, String>> {
    map.iter()
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Bool(true) => "True".to_string(),
                Value::Bool(false) => "False".to_string(),
                Value::Null => "None".to_string(),
                Value::Number(n) => n.to_string(),
                Value::Array(_) | Value::Object(_) => return None,
            };
            Some((k.clone(), text))
        })
        .collect()
}
