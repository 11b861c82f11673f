//! Store classes a plugin provides (`[provides.stores]`): a class name, its kind, the config keys it takes,
//! and how to open a store from a checked config table. The stores themselves implement the store API's
//! traits ([`ObjectStore`], [`DocumentStore`], [`ImageStore`], [`SecretStore`] from `agent_env_store`), the
//! same ones the host's own stores implement; the SDK answers `store.<kind>.<op>` with the API's
//! [`agent_env_store::serve`].

use std::sync::Arc;

use agent_env_protocol::methods::StoreInfo;
use agent_env_store::{
    AnyStore, DocumentStore, ImageStore, ObjectStore, SecretStore, StoreError, StoreKind,
};
use serde_json::{Map, Value};

type Opener = Box<dyn Fn(&Map<String, Value>) -> Result<AnyStore, StoreError> + Send + Sync>;

/// A store of any kind is the store API's trait implemented on a type of yours; the class says how to
/// open it from the `config` table of the user's `[stores.<kind>]`:
///
/// ```
/// use std::collections::BTreeMap;
/// use agent_env_plugin_sdk::{Plugin, SecretStore, StoreClass, StoreError, StoreResult, Value};
///
/// /// Secrets from the store's own `values` table.
/// struct TableSecrets(BTreeMap<String, String>);
///
/// impl SecretStore for TableSecrets {
///     fn get(&self, name: &str) -> StoreResult<Option<String>> {
///         Ok(self.0.get(name).cloned())
///     }
/// }
///
/// let class = StoreClass::secret("TableSecrets", &["values"], |config| {
///     let values = config.get("values").and_then(Value::as_object)
///         .ok_or_else(|| StoreError::Config("TableSecrets needs a 'values' table".into()))?;
///     Ok(TableSecrets(values.iter()
///         .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
///         .collect()))
/// });
/// // [provides.stores] TableSecrets = "secret"; the config: [stores.secret] impl = "agentenv-vault:TableSecrets"
/// let plugin = Plugin::new("agentenv-vault", "0.1.0").store(class);
/// let answer = plugin.initialize_result(1);
/// assert_eq!((answer.stores[0].class.as_str(), answer.stores[0].kind.as_str()), ("TableSecrets", "secret"));
/// ```
///
/// [`crate::testing`] runs the conformance kit of the store's kind against it from `cargo test`.
/// A store class the plugin can build: its name, kind, the config keys it takes, and its factory.
pub struct StoreClass {
    pub(crate) info: StoreInfo,
    pub(crate) open: Opener,
}

impl StoreClass {
    fn new(class: &str, kind: StoreKind, config_keys: &[&str], open: Opener) -> Self {
        StoreClass {
            info: StoreInfo {
                class: class.into(),
                kind: kind.as_str().into(),
                config_keys: config_keys.iter().map(|k| k.to_string()).collect(),
                required_keys: Vec::new(),
            },
            open,
        }
    }

    /// An object store class; `open` gets the checked config table.
    pub fn object<S: ObjectStore + 'static>(
        class: &str,
        config_keys: &[&str],
        open: impl Fn(&Map<String, Value>) -> Result<S, StoreError> + Send + Sync + 'static,
    ) -> Self {
        let opener: Opener = Box::new(move |c| Ok(AnyStore::Object(Arc::new(open(c)?))));
        StoreClass::new(class, StoreKind::Object, config_keys, opener)
    }

    /// A document store class; `open` gets the checked config table.
    pub fn document<S: DocumentStore + 'static>(
        class: &str,
        config_keys: &[&str],
        open: impl Fn(&Map<String, Value>) -> Result<S, StoreError> + Send + Sync + 'static,
    ) -> Self {
        let opener: Opener = Box::new(move |c| Ok(AnyStore::Document(Arc::new(open(c)?))));
        StoreClass::new(class, StoreKind::Document, config_keys, opener)
    }

    /// An image store class; `open` gets the checked config table.
    pub fn image<S: ImageStore + 'static>(
        class: &str,
        config_keys: &[&str],
        open: impl Fn(&Map<String, Value>) -> Result<S, StoreError> + Send + Sync + 'static,
    ) -> Self {
        let opener: Opener = Box::new(move |c| Ok(AnyStore::Image(Arc::new(open(c)?))));
        StoreClass::new(class, StoreKind::Image, config_keys, opener)
    }

    /// A secret store class; `open` gets the checked config table.
    pub fn secret<S: SecretStore + 'static>(
        class: &str,
        config_keys: &[&str],
        open: impl Fn(&Map<String, Value>) -> Result<S, StoreError> + Send + Sync + 'static,
    ) -> Self {
        let opener: Opener = Box::new(move |c| Ok(AnyStore::Secret(Arc::new(open(c)?))));
        StoreClass::new(class, StoreKind::Secret, config_keys, opener)
    }

    /// Keys that must be present (a subset of the config keys).
    pub fn required(mut self, keys: &[&str]) -> Self {
        self.info.required_keys = keys.iter().map(|k| k.to_string()).collect();
        self
    }

    /// Checks `config` against the keys this class takes, then opens the store.
    pub(crate) fn open_checked(
        &self,
        package: &str,
        config: &Map<String, Value>,
    ) -> Result<AnyStore, StoreError> {
        let class = &self.info.class;
        let takes = self.info.config_keys.join(", ");
        let mut unknown: Vec<&String> = config
            .keys()
            .filter(|k| !self.info.config_keys.contains(k))
            .collect();
        unknown.sort();
        if let Some(key) = unknown.first() {
            let takes = if takes.is_empty() {
                "it takes no keys".to_string()
            } else {
                format!("it takes {takes}")
            };
            let meant = agent_env_store::similar::best_match(
                key,
                self.info.config_keys.iter().map(String::as_str),
                0.75,
            )
            .map(|close| format!("; did you mean '{close}' for '{key}'?"))
            .unwrap_or_default();
            return Err(StoreError::Config(format!(
                "The config table for '{package}:{class}' has unknown key '{key}'; {takes}{meant}"
            )));
        }
        if let Some(missing) = self
            .info
            .required_keys
            .iter()
            .find(|k| !config.contains_key(*k))
        {
            return Err(StoreError::Config(format!(
                "The config table for '{package}:{class}' lacks the required key '{missing}'; it takes {takes}"
            )));
        }
        (self.open)(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_env_store::StoreResult;
    use serde_json::json;

    struct Nothing;
    impl SecretStore for Nothing {
        fn get(&self, _name: &str) -> StoreResult<Option<String>> {
            Ok(None)
        }
    }

    fn class() -> StoreClass {
        StoreClass::secret("Vault", &["root", "bucket"], |_| Ok(Nothing)).required(&["root"])
    }

    fn config(v: serde_json::Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn unknown_and_missing_keys_are_config_errors_in_the_original_wording() {
        let Err(e) =
            class().open_checked("agentenv-x", &config(json!({"root": "/r", "compress": 1})))
        else {
            panic!("an unknown key was accepted")
        };
        assert_eq!(e.kind(), agent_env_protocol::ErrorKind::ConfigError);
        assert_eq!(
            e.to_string(),
            "The config table for 'agentenv-x:Vault' has unknown key 'compress'; it takes root, bucket"
        );
        let Err(e) = class().open_checked("agentenv-x", &config(json!({"bucket": "b"}))) else {
            panic!("a missing required key was accepted")
        };
        assert!(
            e.to_string().contains("lacks the required key 'root'"),
            "{}",
            e
        );
        assert!(class()
            .open_checked("agentenv-x", &config(json!({"root": "/r"})))
            .is_ok());
        let Err(e) = class().open_checked("agentenv-x", &config(json!({"rooot": "/r"}))) else {
            panic!("a misspelled key was accepted")
        };
        assert_eq!(
            e.to_string(),
            "The config table for 'agentenv-x:Vault' has unknown key 'rooot'; it takes root, bucket; did you mean 'root' for 'rooot'?"
        );
    }
}
