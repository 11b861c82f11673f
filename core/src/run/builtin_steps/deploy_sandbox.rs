//! `deploy_sandbox`: brings up a bare sandbox by name and records it in `context.deployed_sandboxes`.

use serde_json::{json, Map, Value};

use super::{require_str, str_field, BuiltinStep, StepEnv, StepError};

pub struct DeploySandbox;

impl BuiltinStep for DeploySandbox {
    fn type_name(&self) -> &'static str {
        "deploy_sandbox"
    }

    fn fields(&self) -> &'static [&'static str] {
        &["sandbox_name", "sandbox_mode", "sandbox_type"]
    }

    fn check(&self, step: &Map<String, Value>) -> Vec<String> {
        let mut problems = Vec::new();
        require_str(step, "sandbox_name", &mut problems);
        if let Some(mode) = step.get("sandbox_mode") {
            if !matches!(mode.as_str(), Some("vm" | "container")) {
                let got = match mode.as_str() {
                    Some(text) => crate::config::tables::py_str(text),
                    None => mode.to_string(),
                };
                problems.push(format!(
                    "'sandbox_mode' is {got}; it takes 'container' or 'vm'"
                ));
            }
        }
        match step.get("sandbox_type").map(Value::as_str) {
            None => {}
            Some(None) => problems
                .push("sandbox_type must be a string naming a sandbox provider".to_string()),
            // A sandbox of another kind than the task asks for would run its checks somewhere else.
            Some(Some(name)) if name != crate::sandbox::LOCAL => problems.push(format!(
                "sandbox_type '{name}' names no sandbox provider a run can use; the built-in one is '{local}': write \"sandbox_type\": \"{local}\", or leave the key out",
                local = crate::sandbox::LOCAL
            )),
            Some(Some(_)) => {}
        }
        problems
    }

    fn run(&self, step: &Map<String, Value>, env: &StepEnv<'_>) -> Result<(), StepError> {
        let name = str_field(step, "sandbox_name").unwrap_or("box");
        let mode = str_field(step, "sandbox_mode").unwrap_or("vm");
        let by = crate::bundle::step_fields::step_id(step);
        let sandbox = env
            .sandboxes
            .deploy(name, mode, by)
            .map_err(|e| StepError::runtime(e.to_string()))?;
        let record = json!({
            "sandbox_name": sandbox.name,
            "sandbox_id": sandbox.id,
            "sandbox_mode": sandbox.mode,
            "sandbox_type": sandbox.provider,
            "tunnel_urls": {},
            "vnc_url": null,
            "instance_id": env.instance_id,
            "created_at_utc": crate::clock::iso_now(),
            "expires_at_utc": null,
            "network_policy": null,
            "work_dir": sandbox.work_dir.display().to_string(),
        });
        env.with_context(|c| c.deployed_sandboxes.push(record))
    }

    /// A retry that runs this step again gets a fresh sandbox: the one it deployed is torn down, and
    /// its record leaves `context.deployed_sandboxes` (its id is in `torn_down_sandbox_ids` at the end).
    fn before_rerun(&self, step: &Map<String, Value>, env: &StepEnv<'_>) {
        let name = str_field(step, "sandbox_name").unwrap_or("box");
        if let Some(old) = env.sandboxes.retire(name) {
            let _ = env.with_context(|c| {
                c.deployed_sandboxes
                    .retain(|r| r.get("sandbox_id").and_then(Value::as_str) != Some(&old.id))
            });
        }
    }
}
