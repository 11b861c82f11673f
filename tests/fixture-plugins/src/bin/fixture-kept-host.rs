//! A plugin that makes a mistake on purpose: its step `keep_host` keeps the host handle of its call in
//! a static, and `use_kept_host`, a later step, puts an object through it. The cross-language suite
//! runs the two in a bundle and expects the second to fail without writing anything.

use std::sync::Mutex;

use agent_env_plugin_sdk::{
    json, ExecuteResult, HostHandle, Map, ObjectStore, Plugin, StepContext, StepError, TaskStep,
    Value,
};

/// The handle `keep_host` kept past its call.
static KEPT: Mutex<Option<HostHandle>> = Mutex::new(None);

struct KeepHost;

impl TaskStep for KeepHost {
    fn type_name(&self) -> &str {
        "keep_host"
    }
    fn class(&self) -> &str {
        "KeepHost"
    }
    fn execute(
        &self,
        ctx: &StepContext<'_>,
        _step: &Map<String, Value>,
        _context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        *KEPT.lock().unwrap_or_else(|e| e.into_inner()) = Some(ctx.host().clone());
        let url = ctx.host().objects().put(
            "kept/rust-during.txt",
            b"during its call",
            "text/plain",
            true,
        )?;
        let mut metadata = Map::new();
        metadata.insert("during".into(), json!(url));
        Ok(ExecuteResult { metadata })
    }
}

struct UseKeptHost;

impl TaskStep for UseKeptHost {
    fn type_name(&self) -> &str {
        "use_kept_host"
    }
    fn class(&self) -> &str {
        "UseKeptHost"
    }
    fn execute(
        &self,
        _ctx: &StepContext<'_>,
        _step: &Map<String, Value>,
        _context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let Some(host) = kept else {
            return Err(StepError::new(
                "LookupError",
                "keep_host has not run in this process",
            ));
        };
        host.objects()
            .put("kept/rust-after.txt", b"after its call", "text/plain", true)?;
        Ok(ExecuteResult {
            metadata: Map::new(),
        })
    }
}

fn main() {
    Plugin::new("agentenv-fixture-kept-host", "0.1.0")
        .task_step(KeepHost)
        .task_step(UseKeptHost)
        .serve()
}
