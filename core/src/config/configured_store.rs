//! From a selection to a built store: the `config` table's references are resolved (`secret:` through the
//! configured secret store, never inside `[stores.secret]` itself), then `stores::build_store` builds it.
//! An impl that names a missing class or package fails here, never falling back to the default.

use super::document::ConfigDocument;
use super::error::ConfigError;
use super::plugins::table_to_json;
use super::references::{parse_reference, resolve_table_at, SecretLookup};
use super::store_selection::{selection, StoreSelection};
use crate::environment::Environment;
use crate::stores::{
    build_store, AnyStore, PluginStoreFactory, SecretStore, StoreKind, StoreSet, StoreSpec,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use toml::Table;

/// A built secret store answering `secret:` references.
pub struct StoreSecrets(pub Arc<dyn SecretStore>);

impl SecretLookup for StoreSecrets {
    fn get(&self, name: &str) -> Result<Option<String>, String> {
        self.0.get(name).map_err(|e| e.to_string())
    }
}

/// A store set's secret store, built on the set's first lookup (a plugin's store opens in its
/// plugin): what a run's and the registry's plugin settings resolve `secret:` through.
impl SecretLookup for StoreSet {
    fn get(&self, name: &str) -> Result<Option<String>, String> {
        let store = self
            .secret()
            .map_err(|e| format!("[stores.secret] could not be built: {e}"))?;
        store.get(name).map_err(|e| e.to_string())
    }
}

/// The configured secret store, built on the first `secret:` lookup only (most configs have none), and
/// reused after that. A store that fails to build makes each lookup fail with its reason.
pub struct LazySecrets<'a> {
    doc: &'a ConfigDocument,
    plugins: Option<&'a dyn PluginStoreFactory>,
    built: OnceLock<Result<StoreSecrets, ConfigError>>,
}

impl<'a> LazySecrets<'a> {
    pub fn new(doc: &'a ConfigDocument, plugins: Option<&'a dyn PluginStoreFactory>) -> Self {
        LazySecrets {
            doc,
            plugins,
            built: OnceLock::new(),
        }
    }
}

impl SecretLookup for LazySecrets<'_> {
    fn get(&self, name: &str) -> Result<Option<String>, String> {
        match self
            .built
            .get_or_init(|| configured_secrets(self.doc, self.plugins))
        {
            Ok(store) => store.get(name),
            Err(e) => Err(format!("[stores.secret] could not be built: {e}")),
        }
    }
}

pub(super) fn store_kind(selection: &StoreSelection) -> Result<StoreKind, ConfigError> {
    StoreKind::parse(selection.kind).ok_or_else(|| {
        ConfigError::Store(format!(
            "[{}] is not a store section; it cannot be built as a store",
            selection.kind
        ))
    })
}

/// The spec `build_store` takes: the selection with its config's references resolved.
pub fn store_spec(
    selection: &StoreSelection,
    env: &Arc<Environment>,
    secrets: Option<&dyn SecretLookup>,
) -> Result<StoreSpec, ConfigError> {
    let kind = store_kind(selection)?;
    // The secret store is built before any secret store exists.
    let lookup = if kind == StoreKind::Secret {
        None
    } else {
        secrets
    };
    let table = format!("stores.{}.config", selection.kind);
    let mut config = resolve_table_at(&selection.config, &table, env, lookup)?;
    anchor_relative_path(&mut config, selection);
    if kind == StoreKind::Secret {
        remember_literal_secrets(&config);
    }
    Ok(spec_from(kind, selection, &config, env))
}

/// A built-in store's relative path written in a config file is taken from the project's folder
/// (`paths_base`), not from wherever agent-env runs: otherwise each subfolder would get a store of
/// its own. `~` is expanded by the store; a plugin's store gets its config as written.
fn anchor_relative_path(config: &mut Table, selection: &StoreSelection) {
    let Some((key, base)) = relative_path_setting(selection) else {
        return;
    };
    if let Some(toml::Value::String(path)) = config.get_mut(key) {
        if let Some(anchored) = anchored_path(path, base) {
            *path = anchored.display().to_string();
        }
    }
}

/// The setting of the selected built-in store that holds its path (`root`, `path`, `file_path`),
/// with the folder a relative one is taken from, when there is one: the config file chose the
/// store (the `local` alias and the default give absolute paths).
pub(super) fn relative_path_setting(selection: &StoreSelection) -> Option<(&'static str, &Path)> {
    let base = selection.relative_to.as_deref()?;
    let kind = StoreKind::parse(selection.kind)?;
    let key = crate::stores::local_builtin(kind, &selection.impl_name)
        .and_then(crate::stores::local::path_key)?;
    Some((key, base))
}

/// `path` taken from `base` when it is relative, as the store gets it; `None` when it is absolute,
/// empty or starts with `~` (which the store expands).
pub(super) fn anchored_path(path: &str, base: &Path) -> Option<PathBuf> {
    let relative = !path.is_empty() && !path.starts_with('~') && Path::new(path).is_relative();
    relative.then(|| base.join(path))
}

/// The secret store's `values` are secrets whatever their names (as `config show` masks them): each is
/// masked in text agent-env did not write from now on.
fn remember_literal_secrets(config: &Table) {
    if let Some(toml::Value::Table(values)) = config.get(super::mask::SECRET_STORE_VALUES) {
        for value in values.values().filter_map(toml::Value::as_str) {
            crate::redaction::remember(value);
        }
    }
}

pub(super) fn spec_from(
    kind: StoreKind,
    selection: &StoreSelection,
    config: &Table,
    env: &Arc<Environment>,
) -> StoreSpec {
    StoreSpec {
        env: env.clone(),
        kind,
        impl_name: selection.impl_name.clone(),
        config: table_to_json(config),
        read_from: read_from(&selection.config),
    }
}

/// Where each setting of a config table written as a reference is read from, by key, as messages
/// name it: `the environment variable TEAM_PG_DSN`, `the secret team-pg-dsn`. Names, never values.
fn read_from(written: &Table) -> BTreeMap<String, String> {
    written
        .iter()
        .filter_map(|(key, value)| {
            let reference = parse_reference(value.as_str()?)?;
            let place = match reference.scheme {
                "env" => format!("the environment variable {}", reference.name),
                _ => format!("the secret {} of [stores.secret]", reference.name),
            };
            Some((key.clone(), place))
        })
        .collect()
}

pub(super) fn store_error(e: crate::stores::StoreError) -> ConfigError {
    ConfigError::Store(e.to_string())
}

/// Builds the configured secret store and wraps it for `secret:` references.
pub fn configured_secrets(
    doc: &ConfigDocument,
    plugins: Option<&dyn PluginStoreFactory>,
) -> Result<StoreSecrets, ConfigError> {
    let spec = store_spec(&selection(doc, "secret")?, &doc.env, None)?;
    match build_store(&spec, plugins).map_err(store_error)? {
        AnyStore::Secret(store) => Ok(StoreSecrets(store)),
        other => Err(ConfigError::Store(format!(
            "[stores.secret] built a {} store",
            other.kind()
        ))),
    }
}

/// Builds the store configured for `kind`, resolving `secret:` references through `secrets`.
pub fn build_configured(
    doc: &ConfigDocument,
    kind: StoreKind,
    secrets: Option<&dyn SecretLookup>,
    plugins: Option<&dyn PluginStoreFactory>,
) -> Result<AnyStore, ConfigError> {
    let spec = store_spec(&selection(doc, kind.as_str())?, &doc.env, secrets)?;
    build_store(&spec, plugins).map_err(store_error)
}
