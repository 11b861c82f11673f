//! The host's side of the connection: answers the `host.*` requests a plugin sends during a call.

use std::sync::Arc;

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::{ProgressParams, HOST_SETTINGS, LOG, PROGRESS};
use agent_env_protocol::peer::{Handler, RequestContext};
use serde_json::{Map, Value};

use super::routing::CallRouter;
use super::stderr::StderrTail;

pub(crate) struct HostHandler {
    pub package: String,
    pub settings: Map<String, Value>,
    /// Whose services answer: those of the call a request names (see [`CallRouter`]).
    pub router: Arc<CallRouter>,
    /// `$/log` lines are kept with the stderr tail, so diagnoses show them in order (each a whole
    /// line, never inside one the plugin is still writing to stderr).
    pub log: Option<StderrTail>,
}

impl Handler for HostHandler {
    fn request(
        &self,
        _ctx: &RequestContext,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        if method == HOST_SETTINGS {
            return Ok(Value::Object(self.settings.clone()));
        }
        if !method.starts_with("host.") {
            return Err(RpcError::new(
                ErrorKind::MethodNotFound,
                format!("agent-env answers only host.* methods; '{method}' is not one"),
            ));
        }
        let (services, params) = self.router.for_params(params)?;
        let _serving = self.router.serving(method);
        services.handle(&self.package, method, params)
    }

    fn notification(&self, method: &str, params: Value) {
        match method {
            PROGRESS => {
                // Progress about a call not in flight is nobody's to show.
                if let Ok(p) = serde_json::from_value::<ProgressParams>(params) {
                    if let Ok(services) = self.router.for_call(Some(&p.id)) {
                        services.progress(&self.package, &p);
                    }
                }
            }
            LOG => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .unwrap_or("info");
                let message = params.get("message").and_then(Value::as_str).unwrap_or("");
                if let Some(tail) = &self.log {
                    tail.push_whole_line(&format!("[{level}] {message}"));
                }
                self.router
                    .for_notification(&params)
                    .log(&self.package, level, message);
            }
            _ => {}
        }
    }
}
