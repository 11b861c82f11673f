//! From a selection to a built store: the `config` table's references are resolved (`secret:` through the
//! configured secret store, never inside `[stores.secret]` itself), then `stores::build_store` builds it.
//! An impl that names a missing class or package fails here, never falling back to the default.

use super::check::StoreBuilder;
use super::document::ConfigDocument;
use super::error::ConfigError;
use super::plugins::table_to_json;
use super::references::{resolve_table_at, SecretLookup};
use super::stores::{selection, StoreSelection};
use crate::environment::Environment;
use crate::stores::build::{classify, Target};
use crate::stores::{build_store, AnyStore, PluginStoreFactory, SecretStore, StoreKind, StoreSpec};
use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::names::canonical_name;
use std::sync::{Arc, OnceLock};
use toml::Table;

/// A built secret store answering `secret:` references.
pub struct StoreSecrets(pub Arc<dyn SecretStore>);

impl SecretLookup for StoreSecrets {
    fn get(&self, name: &str) -> Result<Option<String>, String> {
        self.0.get(name).map_err(|e| e.to_string())
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

fn store_kind(selection: &StoreSelection) -> Result<StoreKind, ConfigError> {
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
    let config = resolve_table_at(&selection.config, &table, env, lookup)?;
    Ok(spec_from(kind, selection, &config, env))
}

fn spec_from(
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
    }
}

fn store_error(e: crate::stores::StoreError) -> ConfigError {
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

/// Builds each configured store with the real constructors. A plugin's store is opened in the plugin when a
/// factory is given; without one it is noted as unchecked.
pub struct StoresBuilder<'a> {
    env: Arc<Environment>,
    secrets: Option<StoreSecrets>,
    plugins: Option<&'a dyn PluginStoreFactory>,
    manifests: Option<&'a [Manifest]>,
}

impl<'a> StoresBuilder<'a> {
    /// Builds the secret store first (a failure there is reported by the check itself).
    pub fn new(
        doc: &ConfigDocument,
        plugins: Option<&'a dyn PluginStoreFactory>,
    ) -> StoresBuilder<'a> {
        StoresBuilder {
            env: doc.env.clone(),
            secrets: configured_secrets(doc, plugins).ok(),
            plugins,
            manifests: None,
        }
    }

    /// Checks a plugin store's package and class against the installed manifests (when no factory opens
    /// it), so a misspelled package or class is found without starting anything.
    pub fn with_manifests(mut self, manifests: &'a [Manifest]) -> Self {
        self.manifests = Some(manifests);
        self
    }
}

/// `an object`, `a document`.
fn with_article(word: &str) -> String {
    let article = if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {word}")
}

/// Whether an installed manifest lists the class under `[provides.stores]` for this kind.
fn check_plugin_store(
    manifests: &[Manifest],
    kind: StoreKind,
    impl_name: &str,
    package: &str,
    class: &str,
) -> Result<(), ConfigError> {
    let wanted = canonical_name(package);
    let Some(manifest) = manifests.iter().find(|m| canonical_name(&m.name) == wanted) else {
        return Err(ConfigError::Store(format!(
            "Cannot import impl '{impl_name}': no installed plugin package named '{package}'; a plugin's store is named '<package>:<Class>', with the package as `agent-env plugin list` prints it"
        )));
    };
    match manifest.stores.get(class) {
        None => {
            let listed: Vec<&str> = manifest.stores.keys().map(String::as_str).collect();
            let listed = if listed.is_empty() {
                "none".to_string()
            } else {
                listed.join(", ")
            };
            Err(ConfigError::Store(format!(
                "Cannot import impl '{impl_name}': {} {} lists no store class '{class}' under [provides.stores] (it lists {listed})",
                manifest.name, manifest.version
            )))
        }
        Some(declared) if declared != kind.as_str() => Err(ConfigError::Store(format!(
            "impl '{impl_name}' is {} store ({} lists it so under [provides.stores]); [stores.{kind}] needs {} store",
            with_article(declared),
            manifest.name,
            with_article(kind.as_str())
        ))),
        Some(_) => Ok(()),
    }
}

impl StoreBuilder for StoresBuilder<'_> {
    fn build(
        &self,
        selection: &StoreSelection,
        config: &Table,
    ) -> Result<Option<String>, ConfigError> {
        let kind = store_kind(selection)?;
        let target = classify(kind, &selection.impl_name).map_err(store_error)?;
        if let (Target::Plugin { package, class }, None) = (&target, self.plugins) {
            if let Some(manifests) = self.manifests {
                check_plugin_store(manifests, kind, &selection.impl_name, package, class)?;
            }
            return Ok(Some(format!(
                "[stores.{}] '{}' is a plugin's store; its class and keys are checked when it is first built",
                selection.kind, selection.impl_name
            )));
        }
        build_store(&spec_from(kind, selection, config, &self.env), self.plugins)
            .map_err(store_error)?;
        Ok(None)
    }

    fn secrets(&self) -> Option<&dyn SecretLookup> {
        self.secrets.as_ref().map(|s| s as &dyn SecretLookup)
    }
}
