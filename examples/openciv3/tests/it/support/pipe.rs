//! Starting the installed plugin with the core's own host code, and opening its store as the host does.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use agent_env::stores::{PluginObjectStore, StoreError, StoreResult, StoreTransport};
use agent_env_host::{HostConfig, HostServices, NoServices, PluginProcess, SpawnSpec};
use agent_env_protocol::manifest::Manifest;
use serde_json::{json, Map, Value};

pub const BINARY: &str = env!("CARGO_BIN_EXE_agentenv-openciv3");

/// Installs the plugin with its own `install` command; returns its manifest.
pub fn install(plugins: &Path) -> Manifest {
    let output = Command::new(BINARY)
        .args(["install", "--plugins-dir"])
        .arg(plugins)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Manifest::load(
        &plugins
            .join("agentenv-openciv3")
            .join("agent-env-plugin.toml"),
    )
    .expect("installed manifest")
}

pub fn start(plugins: &Path) -> Arc<PluginProcess> {
    let manifest = install(plugins);
    let spec = SpawnSpec::from_manifest(&manifest, Map::new());
    Arc::new(
        PluginProcess::start(
            spec,
            &HostConfig::new(agent_env::VERSION),
            Arc::new(NoServices),
        )
        .expect("plugin starts"),
    )
}

/// The transport a plugin store uses: every request carries the opened store's handle.
pub struct Handle {
    process: Arc<PluginProcess>,
    handle: String,
}

impl StoreTransport for Handle {
    fn call(&self, method: &str, mut params: Value) -> StoreResult<Value> {
        if let Value::Object(map) = &mut params {
            map.insert("handle".into(), json!(self.handle));
        }
        self.process
            .call(method, params)
            .map_err(|err| match err.rpc_error() {
                Some(rpc) => StoreError::from(rpc.clone()),
                None => StoreError::Internal(err.to_string()),
            })
    }
}

pub fn open_store(
    process: &Arc<PluginProcess>,
    config: Value,
) -> Result<PluginObjectStore, agent_env_host::HostError> {
    let opened = process.call(
        "store.open",
        json!({"kind": "object", "class": "ContentAddressedObjectStore", "config": config}),
    )?;
    let handle = opened["handle"].as_str().unwrap().to_string();
    Ok(PluginObjectStore::new(Arc::new(Handle {
        process: process.clone(),
        handle,
    })))
}

pub fn root_config(root: &Path) -> Value {
    json!({"root": root, "bucket": "openciv3"})
}

/// Starts the plugin in command mode (the terminal's stdio, the protocol on fds 3 and 4) with `services`
/// answering its `host.*` calls.
pub fn start_command_mode(manifest: &Manifest, services: Arc<dyn HostServices>) -> PluginProcess {
    let spec = SpawnSpec::from_manifest(manifest, Map::new()).in_command_mode();
    PluginProcess::start(spec, &HostConfig::new(agent_env::VERSION), services)
        .expect("plugin starts in command mode")
}
