//! A working plugin whose package name is its first argument (`fixture-named agentenv-bench-7`), so one
//! binary can stand for many packages: it provides the env `<suffix>_env` and the task step `<suffix>_step`,
//! where `<suffix>` is the name after its last `-`, with `_` for other separators. The step answers with
//! the settings the plugin was started with (`{"settings": {...}}` in its metadata).
//! Used by the report bench (`plugin list` with 20 plugins), the report tests and the run tests.

use agent_env_plugin_sdk::{
    Contribution, ExecuteResult, Map, Plugin, StepContext, StepError, TaskStep, Value,
};

/// `<suffix>_step`: returns the plugin's settings.
struct SettingsStep {
    type_name: String,
}

impl TaskStep for SettingsStep {
    fn type_name(&self) -> &str {
        &self.type_name
    }
    fn class(&self) -> &str {
        "NamedStep"
    }
    fn execute(
        &self,
        ctx: &StepContext<'_>,
        _step: &Map<String, Value>,
        _context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        let mut metadata = Map::new();
        metadata.insert("settings".into(), Value::Object(ctx.settings().clone()));
        Ok(ExecuteResult { metadata })
    }
}

fn main() {
    let package = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "agentenv-fixture-named".into());
    let suffix: String = package
        .rsplit('-')
        .next()
        .unwrap_or("named")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    Plugin::new(&package, "0.1.0")
        .contribution(
            Contribution::new("envs", &format!("{suffix}_env"), "NamedEnv").methods(&["from_dict"]),
        )
        .task_step(SettingsStep {
            type_name: format!("{suffix}_step"),
        })
        .serve()
}
