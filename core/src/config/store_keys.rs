//! What a built-in store's `config` table takes, for `config explain`: the keys its class reads, and
//! the value it uses for a key the table leaves unset, where the store exposes one. A plugin's store
//! reads what its plugin reads, so nothing is said of it here.

use super::store_selection::{class_of, section};
use super::warnings::HINT_CUTOFF;
use crate::stores::local::{fs_object, registry_images, secrets, sqlite_docs};
use crate::stores::{classify, StoreKind, Target};
use std::path::Path;
use toml::Value;

/// The value a built-in store uses for a key its table leaves unset.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyDefault {
    pub value: Value,
    /// When the default applies, beyond the table leaving the key unset (`None`: always).
    pub unless: Option<&'static str>,
}

/// The built-in class `impl_name` selects for the store section `kind`; `None` for a plugin's
/// store, an impl that is not one, or a section that is not a store's.
pub fn builtin_class(kind: &str, impl_name: &str) -> Option<&'static str> {
    let kind = StoreKind::parse(kind)?;
    if !matches!(classify(kind, impl_name), Ok(Target::Builtin(_))) {
        return None;
    }
    let class = class_of(impl_name.trim()).trim();
    BUILTIN_KEYS
        .iter()
        .find(|(name, _)| *name == class)
        .map(|(name, _)| *name)
}

/// Each built-in class and the keys its table takes.
const BUILTIN_KEYS: [(&str, &[&str]); 6] = [
    (fs_object::CLASS, &fs_object::CONFIG_KEYS),
    (sqlite_docs::CLASS, &sqlite_docs::CONFIG_KEYS),
    (registry_images::CLASS, &registry_images::CONFIG_KEYS),
    (secrets::CLASS, &secrets::CONFIG_KEYS),
    (agent_env_store_s3::CLASS, &agent_env_store_s3::CONFIG_KEYS),
    (
        agent_env_store_postgres::CLASS,
        &agent_env_store_postgres::CONFIG_KEYS,
    ),
];

/// The keys the built-in `class` takes (empty for a class that is not built in).
pub fn keys_taken(class: &str) -> &'static [&'static str] {
    BUILTIN_KEYS
        .iter()
        .find(|(name, _)| *name == class)
        .map(|(_, keys)| *keys)
        .unwrap_or_default()
}

/// Why `key` is not one the built-in `class` takes, with the key it may be a typo of (the hint
/// `config check` gives); `None` when the class takes it.
pub fn not_taken(class: &str, key: &str) -> Option<String> {
    let takes = keys_taken(class);
    if takes.contains(&key) {
        return None;
    }
    let list = takes.join(", ");
    Some(match crate::similar::best_match(key, takes.iter().copied(), HINT_CUTOFF) {
        Some(meant) => format!(
            "{class} reads no key '{key}' in its config table: did you mean '{meant}'? (it takes {list})"
        ),
        None => format!("{class} reads no key '{key}' in its config table (it takes {list})"),
    })
}

/// The value the built-in `class` of the store section `kind` uses when its table leaves `key`
/// unset, where the store exposes it; `state_root` places a local store's files.
pub fn default_of(kind: &str, class: &str, key: &str, state_root: &Path) -> Option<KeyDefault> {
    let always = |value: Value| {
        Some(KeyDefault {
            value,
            unless: None,
        })
    };
    let lifetime = || {
        let seconds = agent_env_store::grant::DEFAULT_GRANT_LIFETIME_SECONDS;
        always(Value::Integer(i64::try_from(seconds).ok()?))
    };
    match (class, key) {
        (agent_env_store_postgres::CLASS, "schema") => always(Value::String(
            agent_env_store_postgres::DEFAULT_SCHEMA.to_string(),
        )),
        (agent_env_store_s3::CLASS, "region") => Some(KeyDefault {
            value: Value::String(agent_env_store_s3::settings::DEFAULT_REGION.to_string()),
            unless: Some("neither AWS_REGION nor AWS_DEFAULT_REGION is set"),
        }),
        (agent_env_store_s3::CLASS, "timeout_seconds") => always(Value::Integer(
            i64::try_from(agent_env_store_s3::settings::DEFAULT_TIMEOUT_SECONDS).ok()?,
        )),
        (agent_env_store_s3::CLASS | fs_object::CLASS, "grant_lifetime_seconds") => lifetime(),
        (fs_object::CLASS, "grant_advertise_host") => {
            always(Value::String(fs_object::DEFAULT_ADVERTISE_HOST.to_string()))
        }
        (registry_images::CLASS, "registry_host") => always(Value::String(
            registry_images::DEFAULT_REGISTRY_HOST.to_string(),
        )),
        // A local store's files: where the `local` alias puts them, the store's own default.
        (fs_object::CLASS | sqlite_docs::CLASS, _) => {
            let local = section(kind)?;
            (local.local_class() == class)
                .then(|| local.local_config(state_root).remove(key))
                .flatten()
                .and_then(always)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::store_selection::STORE_SECTIONS;
    use crate::environment::Environment;
    use crate::paths::Paths;
    use crate::stores::config_table::ConfigTable;
    use crate::stores::{
        LocalFilesystemObjectStore, LocalRegistryImageStore, LocalSqliteDocumentStore, StoreSpec,
    };
    use std::sync::Arc;

    /// What the built-in local store of `kind` is built with for `key` when its table leaves the key
    /// unset (`None` for a key whose value the store does not expose).
    fn built_with(kind: StoreKind, key: &str, env: &Environment) -> Option<String> {
        let unset = ConfigTable::new();
        match (kind, key) {
            (StoreKind::Object, "root") => {
                let store = LocalFilesystemObjectStore::from_config(fs_object::IMPL, &unset, env);
                Some(store.unwrap().root().display().to_string())
            }
            (StoreKind::Document, "path") => {
                let store = LocalSqliteDocumentStore::from_config(sqlite_docs::IMPL, &unset, env);
                Some(store.unwrap().path().display().to_string())
            }
            (StoreKind::Image, "registry_host") => {
                let store = LocalRegistryImageStore::from_config(registry_images::IMPL, &unset);
                Some(store.unwrap().registry_host().to_string())
            }
            _ => None,
        }
    }

    #[test]
    fn explain_shows_the_defaults_the_local_stores_are_built_with() {
        // A state folder that exists and is spelled canonically, as the object store spells its root.
        let state = tempfile::tempdir().unwrap();
        let state_home = state.path().canonicalize().unwrap();
        let env = Arc::new(Environment::from_vars(
            [
                ("HOME", Path::new("/home/ada")),
                ("XDG_STATE_HOME", state_home.as_path()),
            ],
            Path::new("/work"),
        ));
        let state_root = Paths::new(&env).state_root();
        for section in STORE_SECTIONS {
            let kind = StoreKind::parse(section.name).unwrap();
            let class = section.local_class();
            let alias = StoreSpec::local(kind, env.clone());
            for key in alias.config.keys() {
                assert!(
                    built_with(kind, key, &env).is_some(),
                    "the local alias sets {class}'s '{key}': say here what the store reads it as"
                );
            }
            for key in keys_taken(class) {
                let Some(built) = built_with(kind, key, &env) else {
                    continue;
                };
                let explained =
                    default_of(section.name, class, key, &state_root).unwrap_or_else(|| {
                        panic!("config explain shows no default for {class}'s '{key}'")
                    });
                assert_eq!(
                    explained.value.as_str(),
                    Some(built.as_str()),
                    "{class}'s '{key}'"
                );
                assert_eq!(
                    alias.config.get(*key).and_then(|v| v.as_str()),
                    Some(built.as_str()),
                    "the local alias's {class} '{key}'"
                );
            }
        }
    }

    #[test]
    fn built_in_classes_are_told_by_their_impl() {
        assert_eq!(
            builtin_class("document", "PostgresDocumentStore"),
            Some("PostgresDocumentStore")
        );
        assert_eq!(
            builtin_class(
                "object",
                "agent_env.store.object_store:LocalFilesystemObjectStore"
            ),
            Some("LocalFilesystemObjectStore")
        );
        assert_eq!(builtin_class("document", "acme:Docs"), None);
        assert_eq!(builtin_class("runner", "local"), None);
    }

    #[test]
    fn a_key_the_class_does_not_take_names_the_one_it_may_be() {
        assert_eq!(
            not_taken("PostgresDocumentStore", "dsnn").as_deref(),
            Some("PostgresDocumentStore reads no key 'dsnn' in its config table: did you mean 'dsn'? (it takes dsn, schema)")
        );
        assert_eq!(not_taken("PostgresDocumentStore", "schema"), None);
    }

    #[test]
    fn defaults_are_the_ones_the_stores_expose() {
        let root = Path::new("/state");
        let schema = default_of("document", "PostgresDocumentStore", "schema", root).unwrap();
        assert_eq!(schema.value.as_str(), Some("public"));
        assert_eq!(
            default_of("document", "PostgresDocumentStore", "dsn", root),
            None
        );
        let objects = default_of("object", "LocalFilesystemObjectStore", "root", root).unwrap();
        assert_eq!(objects.value.as_str(), Some("/state/object_store"));
        assert!(default_of("object", "S3ObjectStore", "region", root)
            .unwrap()
            .unless
            .is_some());
        assert_eq!(
            default_of("object", "S3ObjectStore", "endpoint", root),
            None
        );
    }
}
