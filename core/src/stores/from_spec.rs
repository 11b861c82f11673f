//! Building a store from its selection: an `impl` naming a built-in class (bare, or with the original's
//! module path, e.g. `agent_env.store.object_store:LocalFilesystemObjectStore`) or a plugin's
//! `"<package>:<Class>"`, and its config table (references already resolved).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

pub use agent_env_store::AnyStore;

use super::config_table::ConfigTable;
use super::local::{fs_object, registry_images, secrets, sqlite_docs};
use super::local::{
    LocalFilesystemObjectStore, LocalRegistryImageStore, LocalSecretStore, LocalSqliteDocumentStore,
};
use super::original_hosted;
use crate::environment::Environment;
use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::remote::{
    PluginDocumentStore, PluginImageStore, PluginObjectStore, PluginSecretStore, StoreTransport,
};
use agent_env_store::SettingsProblems;
use agent_env_store::StoreKind;

/// What a `[stores.<kind>]` section selects, with its config resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreSpec {
    pub kind: StoreKind,
    pub impl_name: String,
    pub config: ConfigTable,
    /// Where a setting of `config` was read from, by key, when the config file names it by a
    /// reference (`dsn` → `the environment variable TEAM_PG_DSN`): for what a store's messages tell
    /// the user to fix, never a value.
    pub read_from: BTreeMap<String, String>,
    /// The environment a built-in store reads: `~` and the state root for its default location, and
    /// the variables `LocalSecretStore` answers from.
    pub env: Arc<Environment>,
}

impl StoreSpec {
    /// What the `local` alias expands to: the built-in class with its default location spelled out.
    pub fn local(kind: StoreKind, env: Arc<Environment>) -> Self {
        let state_root = crate::paths::Paths::noted(&env).state_root();
        let config = local_settings(kind, &state_root)
            .into_iter()
            .map(|(key, value)| (key.to_string(), Value::String(value)))
            .collect();
        StoreSpec {
            kind,
            impl_name: builtin_impl(kind).to_string(),
            config,
            read_from: BTreeMap::new(),
            env,
        }
    }
}

/// The settings the `local` alias gives the built-in store of `kind`, its files under `state_root`:
/// the one list both the store it builds ([`StoreSpec::local`]) and what `config show | explain`
/// say of it are read from.
pub fn local_settings(kind: StoreKind, state_root: &Path) -> Vec<(&'static str, String)> {
    let path_text = |path: PathBuf| path.display().to_string();
    match kind {
        StoreKind::Object => vec![(
            "root",
            path_text(crate::paths::local_objects_root(state_root)),
        )],
        StoreKind::Document => vec![(
            "path",
            path_text(crate::paths::default_documents_db(state_root)),
        )],
        StoreKind::Image => vec![(
            "registry_host",
            registry_images::DEFAULT_REGISTRY_HOST.to_string(),
        )],
        StoreKind::Secret => Vec::new(),
    }
}

/// The original's impl path of each kind's built-in class.
pub fn builtin_impl(kind: StoreKind) -> &'static str {
    match kind {
        StoreKind::Object => fs_object::IMPL,
        StoreKind::Document => sqlite_docs::IMPL,
        StoreKind::Image => registry_images::IMPL,
        StoreKind::Secret => secrets::IMPL,
    }
}

/// The kind of each built-in class.
fn builtin_kind(class: &str) -> Option<StoreKind> {
    match class {
        fs_object::CLASS | agent_env_store_s3::CLASS => Some(StoreKind::Object),
        sqlite_docs::CLASS | agent_env_store_postgres::CLASS => Some(StoreKind::Document),
        registry_images::CLASS => Some(StoreKind::Image),
        secrets::CLASS => Some(StoreKind::Secret),
        _ => None,
    }
}

/// The base-class name the original's messages use.
fn interface_name(kind: StoreKind) -> &'static str {
    match kind {
        StoreKind::Object => "ObjectStore",
        StoreKind::Document => "DocumentStore",
        StoreKind::Image => "ImageStore",
        StoreKind::Secret => "SecretStore",
    }
}

/// Where an impl points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// One of agent-env's own classes, of this kind.
    Builtin(StoreKind),
    /// A class a plugin package's manifest lists under `[provides.stores]`.
    Plugin { package: String, class: String },
}

/// What an impl that is neither a built-in class nor `<package>:<Class>` says, with the table it is in
/// and the two forms it takes.
fn bad_impl_form(kind: StoreKind, impl_name: &str) -> StoreError {
    let classes = builtin_classes(kind);
    let class = impl_name.rsplit(':').next().unwrap_or(impl_name).trim();
    let near = crate::similar::best_match(class, classes.iter().copied(), 0.75)
        .or_else(|| {
            classes
                .iter()
                .copied()
                .find(|c| c.eq_ignore_ascii_case(class))
        })
        .map(|near| format!(" (did you mean '{near}'?)"))
        .unwrap_or_default();
    let write = match classes {
        [only] => format!("write impl = \"{only}\" for the built-in store"),
        _ => format!(
            "write impl = {} for a built-in store",
            classes
                .iter()
                .map(|c| format!("\"{c}\""))
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    };
    StoreError::Config(format!(
        "[stores.{kind}] impl '{impl_name}' is neither a built-in store's class nor a plugin's '<package>:<Class>'{near}; {write}, or \"<package>:<Class>\" for a plugin's"
    ))
}

/// The classes of the built-in stores of `kind`, the local one first.
fn builtin_classes(kind: StoreKind) -> &'static [&'static str] {
    match kind {
        StoreKind::Object => &[fs_object::CLASS, agent_env_store_s3::CLASS],
        StoreKind::Document => &[sqlite_docs::CLASS, agent_env_store_postgres::CLASS],
        StoreKind::Image => &[registry_images::CLASS],
        StoreKind::Secret => &[secrets::CLASS],
    }
}

/// The class of a built-in local store (one that keeps its files on this machine, and reaches no
/// server) that `impl_name` selects for `kind`; `None` for a hosted or a plugin's store.
pub fn local_builtin(kind: StoreKind, impl_name: &str) -> Option<&'static str> {
    if !matches!(classify(kind, impl_name), Ok(Target::Builtin(_))) {
        return None;
    }
    let class = impl_name.rsplit(':').next().unwrap_or(impl_name).trim();
    [
        fs_object::CLASS,
        sqlite_docs::CLASS,
        secrets::CLASS,
        registry_images::CLASS,
    ]
    .into_iter()
    .find(|local| *local == class)
}

/// Classifies an impl for a kind: built-in (bare class, or under the original's `agent_env…` modules) or
/// `<package>:<Class>` of a plugin.
pub fn classify(kind: StoreKind, impl_name: &str) -> StoreResult<Target> {
    let impl_name = impl_name.trim();
    let (module, class) = match impl_name.rsplit_once(':') {
        Some((module, class)) => (Some(module.trim()), class.trim()),
        None => (None, impl_name),
    };
    let builtin = builtin_kind(class);
    let target = match (module, builtin) {
        (None, Some(k)) => Target::Builtin(k),
        (None, None) => {
            return Err(original_hosted::refusal(impl_name, class)
                .map_or_else(|| bad_impl_form(kind, impl_name), StoreError::Config))
        }
        (Some(m), _) if m.is_empty() || class.is_empty() => {
            return Err(bad_impl_form(kind, impl_name))
        }
        (Some(m), Some(k)) if is_core_module(m) => Target::Builtin(k),
        (Some(m), None) if is_core_module(m) => {
            if let Some(refusal) = original_hosted::refusal(impl_name, class) {
                return Err(StoreError::Config(refusal));
            }
            return Err(StoreError::Config(format!(
                "Cannot import impl '{impl_name}': agent-env has no built-in store class '{class}' \
                 (its built-in stores are {}, {}, {}, {}, {} and {}); a plugin's store is named '<package>:<Class>'",
                fs_object::CLASS,
                agent_env_store_s3::CLASS,
                agent_env_store_postgres::CLASS,
                sqlite_docs::CLASS,
                registry_images::CLASS,
                secrets::CLASS
            )));
        }
        (Some(m), _) => Target::Plugin {
            package: m.to_string(),
            class: class.to_string(),
        },
    };
    if let Target::Builtin(k) = target {
        if k != kind {
            return Err(StoreError::Config(format!(
                "impl '{impl_name}' is not a subclass of {}: it is agent-env's {k} store, which goes under [stores.{k}]; [stores.{kind}]'s own is {}",
                interface_name(kind),
                builtin_impl(kind).rsplit(':').next().unwrap_or_default()
            )));
        }
    }
    Ok(target)
}

fn is_core_module(module: &str) -> bool {
    module == "agent_env" || module.starts_with("agent_env.")
}

/// Opens plugin stores. The host implements it: it checks that the package's manifest lists the class
/// under `[provides.stores]`, starts the plugin, sends `store.open`, and returns a transport that adds
/// the opened handle to every request.
pub trait PluginStoreFactory: Send + Sync {
    fn open(
        &self,
        kind: StoreKind,
        package: &str,
        class: &str,
        config: &ConfigTable,
    ) -> StoreResult<Arc<dyn StoreTransport>>;
}

/// Why a store could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildFailure {
    /// A built-in store's settings: every problem found in its config table, each on its own.
    #[error(transparent)]
    Settings(#[from] SettingsProblems),
    /// Anything else: an impl that names no class, a plugin that could not open its store (whose one
    /// error names what the plugin found).
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<BuildFailure> for StoreError {
    fn from(failure: BuildFailure) -> Self {
        match failure {
            BuildFailure::Settings(problems) => problems.into(),
            BuildFailure::Store(err) => err,
        }
    }
}

/// Builds the store a spec selects. A plugin impl needs `plugins`; without it, it is a config error.
pub fn build_store(
    spec: &StoreSpec,
    plugins: Option<&dyn PluginStoreFactory>,
) -> StoreResult<AnyStore> {
    try_build_store(spec, plugins).map_err(StoreError::from)
}

/// As [`build_store`], with a built-in store's setting problems kept apart (what `config check` lists
/// one by one).
pub fn try_build_store(
    spec: &StoreSpec,
    plugins: Option<&dyn PluginStoreFactory>,
) -> Result<AnyStore, BuildFailure> {
    let name = spec.impl_name.trim();
    match classify(spec.kind, name)? {
        Target::Builtin(kind) => Ok(build_builtin(kind, name, spec)?),
        Target::Plugin { package, class } => {
            let Some(factory) = plugins else {
                return Err(StoreError::Config(format!(
                    "impl '{name}' names a store of the plugin package '{package}', and plugin stores \
                     are not available here"
                ))
                .into());
            };
            let transport = factory.open(spec.kind, &package, &class, &spec.config)?;
            Ok(match spec.kind {
                StoreKind::Object => AnyStore::Object(Arc::new(PluginObjectStore::new(transport))),
                StoreKind::Document => {
                    AnyStore::Document(Arc::new(PluginDocumentStore::new(transport)))
                }
                StoreKind::Image => AnyStore::Image(Arc::new(PluginImageStore::new(transport))),
                StoreKind::Secret => AnyStore::Secret(Arc::new(PluginSecretStore::new(transport))),
            })
        }
    }
}

fn build_builtin(
    kind: StoreKind,
    impl_name: &str,
    spec: &StoreSpec,
) -> Result<AnyStore, SettingsProblems> {
    let (config, env) = (&spec.config, &spec.env);
    let class = impl_name.rsplit(':').next().unwrap_or(impl_name).trim();
    Ok(match kind {
        StoreKind::Object if class == agent_env_store_s3::CLASS => AnyStore::Object(Arc::new(
            super::hosted::s3_store(impl_name, config, env, &|key| {
                spec.read_from.get(key).cloned()
            })?,
        )),
        StoreKind::Object => AnyStore::Object(Arc::new(LocalFilesystemObjectStore::from_config(
            impl_name, config, env,
        )?)),
        StoreKind::Document if class == agent_env_store_postgres::CLASS => {
            AnyStore::Document(Arc::new(super::hosted::postgres_store(
                impl_name,
                config,
                spec.read_from.get("dsn").map(String::as_str),
            )?))
        }
        StoreKind::Document => AnyStore::Document(Arc::new(LocalSqliteDocumentStore::from_config(
            impl_name, config, env,
        )?)),
        StoreKind::Image => AnyStore::Image(Arc::new(LocalRegistryImageStore::from_config(
            impl_name, config,
        )?)),
        StoreKind::Secret => AnyStore::Secret(Arc::new(LocalSecretStore::from_config(
            impl_name, config, env,
        )?)),
    })
}

/// The settings the environment gives the store `impl_name` selects for `kind`, where its table
/// (`written`: whether it sets a key) leaves them out: the AWS variables, for the built-in
/// `S3ObjectStore` only (a plugin's class of the same name reads what it reads).
pub fn settings_from_environment(
    kind: StoreKind,
    impl_name: &str,
    written: &dyn Fn(&str) -> bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<super::hosted::FromEnvironment> {
    let class = impl_name.rsplit(':').next().unwrap_or(impl_name).trim();
    let builtin_object = matches!(
        classify(kind, impl_name),
        Ok(Target::Builtin(StoreKind::Object))
    );
    if !builtin_object || class != agent_env_store_s3::CLASS {
        return Vec::new();
    }
    super::hosted::s3_settings_from_environment(written, env)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_builtin_s3_store_takes_settings_from_the_environment() {
        let env = |name: &str| (name == "AWS_REGION").then(|| "eu-west-3".to_string());
        let said = |kind: StoreKind, impl_name: &str| {
            settings_from_environment(kind, impl_name, &|_| false, &env)
                .into_iter()
                .map(|f| f.variable)
                .collect::<Vec<_>>()
        };
        assert_eq!(said(StoreKind::Object, "S3ObjectStore"), ["AWS_REGION"]);
        assert_eq!(
            said(
                StoreKind::Object,
                "agent_env.store.object_store:S3ObjectStore"
            ),
            ["AWS_REGION"]
        );
        // Another class, a plugin's of the same name, or another kind's table says nothing.
        assert!(said(StoreKind::Object, "LocalFilesystemObjectStore").is_empty());
        assert!(said(StoreKind::Object, "acme:S3ObjectStore").is_empty());
        assert!(said(StoreKind::Document, "S3ObjectStore").is_empty());
    }

    #[test]
    fn impls_classify() {
        assert_eq!(
            classify(StoreKind::Object, "LocalFilesystemObjectStore").unwrap(),
            Target::Builtin(StoreKind::Object)
        );
        assert_eq!(
            classify(StoreKind::Object, fs_object::IMPL).unwrap(),
            Target::Builtin(StoreKind::Object)
        );
        assert_eq!(
            classify(
                StoreKind::Object,
                "agentenv-openciv3:ContentAddressedObjectStore"
            )
            .unwrap(),
            Target::Plugin {
                package: "agentenv-openciv3".into(),
                class: "ContentAddressedObjectStore".into()
            }
        );
        assert_eq!(
            classify(StoreKind::Object, "bogus")
                .unwrap_err()
                .to_string(),
            "[stores.object] impl 'bogus' is neither a built-in store's class nor a plugin's '<package>:<Class>'; write impl = \"LocalFilesystemObjectStore\" or \"S3ObjectStore\" for a built-in store, or \"<package>:<Class>\" for a plugin's"
        );
        // A near miss of a built-in class of the kind is named.
        assert_eq!(
            classify(StoreKind::Object, "S3ObjectStor")
                .unwrap_err()
                .to_string(),
            "[stores.object] impl 'S3ObjectStor' is neither a built-in store's class nor a plugin's '<package>:<Class>' (did you mean 'S3ObjectStore'?); write impl = \"LocalFilesystemObjectStore\" or \"S3ObjectStore\" for a built-in store, or \"<package>:<Class>\" for a plugin's"
        );
        assert!(classify(StoreKind::Document, "postgresdocumentstore")
            .unwrap_err()
            .to_string()
            .contains("(did you mean 'PostgresDocumentStore'?)"));
        assert_eq!(
            classify(StoreKind::Object, "LocalSecretStore")
                .unwrap_err()
                .to_string(),
            "impl 'LocalSecretStore' is not a subclass of ObjectStore: it is agent-env's secret store, which goes under [stores.secret]; [stores.object]'s own is LocalFilesystemObjectStore"
        );
        assert!(classify(StoreKind::Object, "agent_env.store:Nope").is_err());
    }

    #[test]
    fn builtins_check_their_config_tables() {
        let spec = StoreSpec {
            kind: StoreKind::Object,
            impl_name: fs_object::IMPL.into(),
            config: json!({"bucket": "x"}).as_object().cloned().unwrap(),
            read_from: BTreeMap::new(),
            env: Arc::default(),
        };
        let err = build_store(&spec, None).err().unwrap();
        assert_eq!(
            err.to_string(),
            "The config table for 'agent_env.store.object_store:LocalFilesystemObjectStore' has unknown key 'bucket'; it takes root, grants, grant_bind_host, grant_advertise_host, grant_lifetime_seconds"
        );
        let secret = StoreSpec {
            kind: StoreKind::Secret,
            impl_name: "LocalSecretStore".into(),
            config: json!({"bogus": 1}).as_object().cloned().unwrap(),
            read_from: BTreeMap::new(),
            env: Arc::default(),
        };
        assert_eq!(
            build_store(&secret, None).err().unwrap().to_string(),
            "The config table for 'LocalSecretStore' has unknown key 'bogus'; it takes values, file_path, use_env"
        );
        let plugin = StoreSpec {
            kind: StoreKind::Object,
            impl_name: "pkg:Cas".into(),
            config: ConfigTable::new(),
            read_from: BTreeMap::new(),
            env: Arc::default(),
        };
        assert!(matches!(
            build_store(&plugin, None),
            Err(StoreError::Config(_))
        ));
    }
}
