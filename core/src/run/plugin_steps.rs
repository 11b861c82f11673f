//! Plugin task steps: each runs in its plugin's child process through `execute` (docs/protocol.md §4.3),
//! started on first use and reused for every step of the run. While a step runs, the plugin may call the
//! host's stores (`host.store.*`); in a bundle run those are the @local stores (documents in `local.db`,
//! objects in the local object store), and the configured secret and image stores, built as every
//! configured store is (`secret:` references resolved, a plugin's store opened in its plugin).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::{
    ExecuteParams, ExecuteResult, ValidateParams, EXECUTE, TASK_STEP_VALIDATE,
};
use agent_env_protocol::names::canonical_name;
use serde_json::{Map, Value};

use crate::config::configured_store::SetSecrets;
use crate::config::ConfigError;
use crate::run::builtin_steps::StepError;
use crate::run::cancel::Cancel;
use crate::run::executor::StepExecutor;
use crate::run::local_stores::LocalStores;
use crate::session::Session;
use crate::stores::{AnyStore, HostStoreDispatcher, StoreKind, StoreSet};
use agent_env_host::{HostError, HostServices, PluginHost, SpawnSpec};

/// How long one `execute` may take when the step names no `timeout_seconds`.
pub const DEFAULT_STEP_TIMEOUT: Duration = Duration::from_secs(6 * 3600);

/// What the host answers a plugin during a run.
struct RunServices {
    stores: HostStoreDispatcher,
}

impl HostServices for RunServices {
    fn handle(&self, package: &str, method: &str, params: Value) -> Result<Value, RpcError> {
        if HostStoreDispatcher::handles(method) {
            return self.stores.dispatch(method, &params);
        }
        Err(RpcError::new(
            ErrorKind::MethodNotFound,
            format!("agent-env offers no method '{method}' to plugin {package} during a run"),
        ))
    }
}

/// The plugin processes of one run and the steps they execute.
pub struct PluginSteps {
    host: PluginHost,
    specs: Mutex<HashMap<String, SpawnSpec>>,
}

impl PluginSteps {
    /// A host whose plugins reach the run's stores: the @local object and document stores, and the
    /// session's configured secret and image stores (each built on first use).
    pub fn new(stores: &LocalStores, session: &Session) -> Result<Arc<PluginSteps>, String> {
        let objects = stores.objects.clone();
        let documents = stores.documents.clone();
        let configured = session.stores().clone();
        let set = StoreSet::new(move |kind| match kind {
            StoreKind::Object => Ok(AnyStore::Object(objects.clone())),
            StoreKind::Document => Ok(AnyStore::Document(documents.clone())),
            other => configured.get(other),
        });
        let services = Arc::new(RunServices {
            stores: HostStoreDispatcher::new(Arc::new(set)),
        });
        Ok(Arc::new(PluginSteps {
            host: session.plugin_host(services).map_err(|e| e.to_string())?,
            specs: Mutex::new(HashMap::new()),
        }))
    }

    /// `package`'s `[plugins.<package>]` settings, `secret:` references resolved through the
    /// session's configured secret store (built only when a reference needs it; a plugin's store
    /// opens in its plugin).
    pub fn settings(
        &self,
        session: &Session,
        package: &str,
    ) -> Result<Map<String, Value>, ConfigError> {
        let secrets = SetSecrets(session.stores());
        crate::config::plugins::plugin_settings(session.config(), package, Some(&secrets))
    }

    /// Makes `manifest`'s plugin startable, with its `[plugins.<package>]` settings.
    pub fn add(&self, manifest: &Manifest, settings: Map<String, Value>) {
        if let Ok(mut specs) = self.specs.lock() {
            specs
                .entry(manifest.canonical_name())
                .or_insert_with(|| SpawnSpec::from_manifest(manifest, settings));
        }
    }

    fn spec(&self, package: &str) -> Result<SpawnSpec, StepError> {
        self.specs
            .lock()
            .ok()
            .and_then(|s| s.get(&canonical_name(package)).cloned())
            .ok_or_else(|| {
                StepError::runtime(format!("no manifest of the plugin {package} was found"))
            })
    }

    /// Starts the plugin (before any step runs), checks that its handshake provides `type_name`, and
    /// asks it to validate the step when it says it can. The error is the problem to report.
    pub fn preflight(
        &self,
        package: &str,
        type_name: &str,
        step: &Map<String, Value>,
    ) -> Result<(), String> {
        let spec = self.spec(package).map_err(|e| e.message)?;
        let process = self
            .host
            .connect(&spec)
            .map_err(|e| first_line(&e.to_string()))?;
        let contribution = process
            .handshake()
            .contributions
            .iter()
            .find(|c| c.group == "task_steps" && c.name == type_name)
            .cloned();
        let Some(contribution) = contribution else {
            return Err(format!(
                "the plugin {package} lists the step type '{type_name}' in its manifest, but its process does not provide it"
            ));
        };
        if contribution.methods.iter().any(|m| m == "validate") {
            let params = ValidateParams {
                type_name: type_name.to_string(),
                step: step.clone(),
            };
            let params = serde_json::to_value(params).map_err(|e| e.to_string())?;
            process
                .call(TASK_STEP_VALIDATE, params)
                .map_err(|e| match e.rpc_error() {
                    Some(rpc) => rpc.message.clone(),
                    None => first_line(&e.to_string()),
                })?;
        }
        Ok(())
    }

    /// Stops every plugin process (shutdown, then signals), in parallel.
    pub fn shutdown(&self) {
        self.host.shutdown_all();
    }
}

impl StepExecutor for PluginSteps {
    fn execute(
        &self,
        package: &str,
        type_name: &str,
        step: &Map<String, Value>,
        context: &Value,
        cancel: &Cancel,
    ) -> Result<Map<String, Value>, StepError> {
        let spec = self.spec(package)?;
        let process = self.host.connect(&spec).map_err(|e| host_failure(&e))?;
        let timeout = step
            .get("timeout_seconds")
            .and_then(Value::as_f64)
            .filter(|s| *s > 0.0)
            .map(|s| Duration::from_secs_f64(s + 30.0))
            .unwrap_or(DEFAULT_STEP_TIMEOUT);
        let params = ExecuteParams {
            type_name: type_name.to_string(),
            step: step.clone(),
            context: context.clone(),
        };
        let params = serde_json::to_value(params).map_err(|e| StepError::runtime(e.to_string()))?;
        // Ctrl-C stops the plugin (its whole process group), which ends the call at once.
        let running = process.clone();
        cancel.on_cancel(move || {
            let running = running.clone();
            std::thread::spawn(move || {
                running.stop();
            });
        });
        match process.call_with_timeout(EXECUTE, params, timeout) {
            Ok(answer) => {
                let result: ExecuteResult = serde_json::from_value(answer).map_err(|e| {
                    StepError::new(
                        "PluginError",
                        format!("plugin {package} answered execute with a result of the wrong shape: {e}"),
                    )
                })?;
                Ok(result.metadata)
            }
            Err(_) if cancel.is_cancelled() => Err(StepError::cancelled()),
            Err(error) => {
                self.host.note_failure(package, &error);
                Err(host_failure(&error))
            }
        }
    }
}

/// A step failure from a host error: a `step-failed` answer keeps the plugin's own error type and
/// message; anything else (a crash, a timeout) is a `PluginError` naming what happened.
fn host_failure(error: &HostError) -> StepError {
    if let Some(rpc) = error.rpc_error() {
        if rpc.kind() == Some(ErrorKind::StepFailed) {
            let error_type = rpc.data_str("error_type").unwrap_or("StepError");
            let message = rpc.data_str("message").unwrap_or(&rpc.message);
            return StepError::new(error_type, message);
        }
        return StepError::new("PluginError", rpc.message.clone());
    }
    let mut e = StepError::new("PluginError", first_line(&error.to_string()));
    let full = error.to_string();
    if full.lines().count() > 1 {
        e.detail = Some(full);
    }
    e
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}
