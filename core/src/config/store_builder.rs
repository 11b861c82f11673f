//! What builds stores for `config check` and the run's preflight: the [`StoreBuilder`] seam the check
//! calls, and [`StoresBuilder`], which builds each configured store with the real constructors.

use super::configured_store::{
    configured_secrets, spec_from, store_error, store_kind, StoreSecrets,
};
use super::document::ConfigDocument;
use super::error::ConfigError;
use super::references::SecretLookup;
use super::store_selection::{selection, StoreSelection, STORE_SECTIONS};
use crate::impl_spelling;
use crate::stores::from_spec::{classify, Target};
use crate::stores::{try_build_store, BuildFailure, PluginStoreFactory, StoreKind};
use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::names::canonical_name;
use std::sync::Arc;
use toml::Table;

use crate::environment::Environment;

/// What builds stores for the check: [`StoresBuilder`] uses the real constructors (and opens
/// a plugin's store in the plugin when it has a factory).
pub trait StoreBuilder {
    /// Builds (then drops) the store a selection names, given its config with references resolved.
    /// `Ok(Some(note))` says what could not be checked; the error lists every problem found (a
    /// built-in store's settings each on its own).
    fn build(
        &self,
        selection: &StoreSelection,
        config: &Table,
    ) -> Result<Option<String>, Vec<ConfigError>>;

    /// The configured secret store, for `secret:` references outside `[stores.secret]`. `None` means
    /// secret references are not resolved (each is noted instead).
    fn secrets(&self) -> Option<&dyn SecretLookup>;

    /// Why there is no secret store to resolve `secret:` references with, when that is known.
    fn secrets_unavailable(&self) -> Option<String> {
        None
    }

    /// The installed plugin packages (canonical names), when the check was given the manifests.
    fn installed_packages(&self) -> Option<Vec<String>> {
        None
    }

    /// The installed plugins' manifests, when the check was given them (else none).
    fn manifests(&self) -> &[Manifest] {
        &[]
    }
}

/// Builds each configured store with the real constructors. A plugin's store is checked against the
/// installed manifests when they are given, then opened in the plugin when a factory is given; without
/// one it is noted as unchecked.
pub struct StoresBuilder<'a> {
    env: Arc<Environment>,
    secrets: Result<StoreSecrets, String>,
    plugins: Option<&'a dyn PluginStoreFactory>,
    manifests: Option<&'a [Manifest]>,
    /// Which built stores are asked whether they can serve requests: every one (`config check`, a
    /// hosted one reaching its server), the built-in stores on this machine's disk only (the
    /// explorer's Config page, which waits on no server), or none (a run's preflight, so a bundle run
    /// never waits on a hosted store it does not use).
    probe: Probe,
}

/// Which stores a [`StoresBuilder`] asks whether they can serve requests.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Probe {
    None,
    OnDisk,
    All,
}

impl<'a> StoresBuilder<'a> {
    /// Builds the secret store first (a failure there is reported by the check itself).
    pub fn new(
        doc: &ConfigDocument,
        plugins: Option<&'a dyn PluginStoreFactory>,
    ) -> StoresBuilder<'a> {
        StoresBuilder {
            env: doc.env.clone(),
            secrets: configured_secrets(doc, plugins).map_err(|e| e.to_string()),
            plugins,
            manifests: None,
            probe: Probe::None,
        }
    }

    /// Checks a plugin store's package and class against the installed manifests (when no factory opens
    /// it), so a misspelled package or class is found without starting anything.
    pub fn with_manifests(mut self, manifests: &'a [Manifest]) -> Self {
        self.manifests = Some(manifests);
        self
    }

    /// Also asks each store to reach its server (a hosted store's endpoint, bucket, DSN, credentials).
    pub fn probing(mut self) -> Self {
        self.probe = Probe::All;
        self
    }

    /// Also asks the built-in stores on this machine's disk (objects, documents, secrets) whether
    /// they can serve requests (a path that is a folder, a file it may not write), reaching no
    /// server.
    pub fn probing_disk(mut self) -> Self {
        self.probe = Probe::OnDisk;
        self
    }
}

/// Whether any configured store is a plugin's (`impl = "<package>:<Class>"`): what decides whether
/// `config check` starts plugins at all. A section that does not read is the check's to report.
pub fn names_a_plugin_store(doc: &ConfigDocument) -> bool {
    STORE_SECTIONS.iter().any(|section| {
        selection(doc, section.name).is_ok_and(|selection| {
            store_kind(&selection).is_ok_and(|kind| {
                matches!(
                    classify(kind, &selection.impl_name),
                    Ok(Target::Plugin { .. })
                )
            })
        })
    })
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
        return Err(ConfigError::Store(
            impl_spelling::store_package_not_installed(manifests, kind.as_str(), package, class),
        ));
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
            crate::words::with_article(declared),
            manifest.name,
            crate::words::with_article(kind.as_str())
        ))),
        Some(_) => Ok(()),
    }
}

/// Each problem of a store that failed to build, as the check reports them: a built-in store's
/// settings one by one, anything else as its one sentence.
fn build_problems(failure: BuildFailure) -> Vec<ConfigError> {
    match failure {
        BuildFailure::Settings(problems) => problems
            .iter()
            .map(|problem| ConfigError::Store(problem.to_string()))
            .collect(),
        BuildFailure::Store(err) => vec![store_error(err)],
    }
}

impl StoreBuilder for StoresBuilder<'_> {
    fn build(
        &self,
        selection: &StoreSelection,
        config: &Table,
    ) -> Result<Option<String>, Vec<ConfigError>> {
        let kind = store_kind(selection).map_err(|e| vec![e])?;
        let target = classify(kind, &selection.impl_name).map_err(|e| vec![store_error(e)])?;
        if let Target::Plugin { package, class } = &target {
            if let Some(manifests) = self.manifests {
                check_plugin_store(manifests, kind, &selection.impl_name, package, class)
                    .map_err(|e| vec![e])?;
            }
            if self.plugins.is_none() {
                return Ok(Some(format!(
                    "[stores.{}] '{}' is a plugin's store; its class and keys are checked when it is first built",
                    selection.kind, selection.impl_name
                )));
            }
        }
        // A plugin that failed to answer (it crashed, timed out, or could not start) is said under
        // the section that chose it, which its own words do not name; what the plugin said of its
        // settings is the config's problem as it stands.
        let in_section = |e: crate::stores::StoreError| match (&target, e) {
            (Target::Plugin { .. }, crate::stores::StoreError::Internal(why)) => {
                ConfigError::Store(format!("[stores.{}] {why}", selection.kind))
            }
            (_, e) => store_error(e),
        };
        let store = try_build_store(&spec_from(kind, selection, config, &self.env), self.plugins)
            .map_err(|f| match f {
            BuildFailure::Store(e) => vec![in_section(e)],
            settings => build_problems(settings),
        })?;
        let on_disk = kind != StoreKind::Image
            && crate::stores::local_builtin(kind, &selection.impl_name).is_some();
        if self.probe == Probe::All || (self.probe == Probe::OnDisk && on_disk) {
            // A built-in store off this machine that failed to reach its server is down or out of
            // reach, which its settings may not be to blame for; what it refused is its settings'.
            let hosted = !on_disk && !matches!(target, Target::Plugin { .. });
            store.probe().map_err(|e| match e {
                crate::stores::StoreError::Io { message, .. } if hosted => {
                    vec![ConfigError::StoreUnreachable(message)]
                }
                e => vec![in_section(e)],
            })?;
        }
        Ok(None)
    }

    fn secrets(&self) -> Option<&dyn SecretLookup> {
        self.secrets.as_ref().ok().map(|s| s as &dyn SecretLookup)
    }

    fn secrets_unavailable(&self) -> Option<String> {
        self.secrets.as_ref().err().cloned()
    }

    fn installed_packages(&self) -> Option<Vec<String>> {
        self.manifests
            .map(|manifests| manifests.iter().map(Manifest::canonical_name).collect())
    }

    fn manifests(&self) -> &[Manifest] {
        self.manifests.unwrap_or(&[])
    }
}
