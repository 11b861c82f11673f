//! `HostPluginStores`: the [`PluginStoreFactory`] over the child-process host. It finds the package's
//! manifest, checks that `[provides.stores]` lists the class for this kind, starts (or reuses) the plugin,
//! sends `store.open`, and returns a transport that adds the opened handle to every request. Errors the
//! plugin answers keep their kind; a plugin that cannot start or crashes is an internal error naming it.

use std::sync::Arc;

use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::methods::{StoreOpenParams, StoreOpenResult, STORE_OPEN};
use agent_env_protocol::names::canonical_name;
use serde_json::{Map, Value};

use super::config_table::ConfigTable;
use super::from_spec::PluginStoreFactory;
use agent_env_host::{HostError, PluginHost, PluginProcess, SpawnSpec};
use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::remote::StoreTransport;
use agent_env_store::StoreKind;

/// One installed plugin package that may provide stores.
#[derive(Debug, Clone)]
pub struct PluginPackage {
    pub manifest: Manifest,
    /// Its `[plugins.<package>]` settings, references resolved, sent in `initialize`; or why they
    /// could not be read, which fails only this package's stores.
    pub settings: Result<Map<String, Value>, String>,
}

/// Opens plugin stores in child processes of one [`PluginHost`].
pub struct HostPluginStores {
    host: Arc<PluginHost>,
    packages: Vec<PluginPackage>,
}

impl HostPluginStores {
    pub fn new(host: Arc<PluginHost>, packages: Vec<PluginPackage>) -> Self {
        HostPluginStores { host, packages }
    }

    fn package(&self, name: &str) -> Option<&PluginPackage> {
        let wanted = canonical_name(name);
        self.packages
            .iter()
            .find(|p| canonical_name(&p.manifest.name) == wanted)
    }
}

/// A host failure as a store error: the plugin's own answer keeps its kind.
pub fn from_host_error(err: HostError) -> StoreError {
    match err {
        HostError::PluginError { error, .. } => StoreError::from(error),
        other => StoreError::Internal(other.to_string()),
    }
}

impl PluginStoreFactory for HostPluginStores {
    fn open(
        &self,
        kind: StoreKind,
        package: &str,
        class: &str,
        config: &ConfigTable,
    ) -> StoreResult<Arc<dyn StoreTransport>> {
        let impl_name = format!("{package}:{class}");
        let Some(found) = self.package(package) else {
            return Err(StoreError::Config(format!(
                "Cannot import impl '{impl_name}': no plugin package '{package}' is installed \
                 (agent-env plugin list shows the installed ones)"
            )));
        };
        match found.manifest.stores.get(class) {
            Some(k) if k == kind.as_str() => {}
            Some(other) => {
                return Err(StoreError::Config(format!(
                    "impl '{impl_name}' is not a subclass of {}: its manifest lists it as a {other} store",
                    interface(kind)
                )))
            }
            None => {
                let listed: Vec<&str> = found.manifest.stores.keys().map(String::as_str).collect();
                return Err(StoreError::Config(format!(
                    "Cannot import impl '{impl_name}': {package}'s manifest lists no store class '{class}' under [provides.stores]{}",
                    if listed.is_empty() {
                        String::new()
                    } else {
                        format!(" (it lists {})", listed.join(", "))
                    }
                )))
            }
        }
        let settings = found.settings.clone().map_err(StoreError::Config)?;
        let spec = SpawnSpec::from_manifest(&found.manifest, settings);
        let process = self.host.connect(&spec).map_err(from_host_error)?;
        let params = StoreOpenParams {
            kind: kind.as_str().to_string(),
            class: class.to_string(),
            config: config.clone(),
        };
        let params = serde_json::to_value(params)
            .map_err(|e| StoreError::Internal(format!("encoding store.open: {e}")))?;
        let answer = process.call(STORE_OPEN, params).map_err(from_host_error)?;
        let opened: StoreOpenResult = serde_json::from_value(answer).map_err(|e| {
            StoreError::Internal(format!(
                "plugin {package} answered store.open for {class} without a handle: {e}"
            ))
        })?;
        Ok(Arc::new(ProcessTransport {
            process,
            handle: opened.handle,
        }))
    }
}

fn interface(kind: StoreKind) -> &'static str {
    match kind {
        StoreKind::Object => "ObjectStore",
        StoreKind::Document => "DocumentStore",
        StoreKind::Image => "ImageStore",
        StoreKind::Secret => "SecretStore",
    }
}

/// Requests to one opened store in one plugin process.
struct ProcessTransport {
    process: Arc<PluginProcess>,
    handle: String,
}

impl StoreTransport for ProcessTransport {
    fn call(&self, method: &str, mut params: Value) -> StoreResult<Value> {
        if let Value::Object(map) = &mut params {
            map.insert("handle".into(), Value::String(self.handle.clone()));
        }
        self.process.call(method, params).map_err(from_host_error)
    }
}
