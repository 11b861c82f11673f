//! A minimal agent-env plugin: one task step, `greet`, that writes a greeting into the run's metadata
//! and stores it in the user's configured object store through the host.
//!
//! Run it by hand to see the guard (`cargo run -p agent-env-plugin-sdk --example greet` exits 2), or
//! install it as `plugin-sdk-rs/README.md` shows: the manifest below is built in, and
//! `--agent-env-manifest` prints it.

use agent_env_plugin_sdk::{
    json, ExecuteResult, Map, ObjectStore, Plugin, StepContext, StepError, TaskStep, Value,
};

struct Greet;

impl TaskStep for Greet {
    fn type_name(&self) -> &str {
        "greet"
    }

    fn class(&self) -> &str {
        "Greet"
    }

    fn execute(
        &self,
        ctx: &StepContext<'_>,
        step: &Map<String, Value>,
        _context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        let who = step
            .get("who")
            .and_then(Value::as_str)
            .ok_or_else(|| StepError::value("greet needs a string 'who'"))?;
        let greeting = format!("hello, {who}");
        println!("this goes to stderr: stdout belongs to the protocol");
        let mut metadata = Map::new();
        if step.get("store").and_then(Value::as_bool) == Some(true) {
            let url = ctx.host().objects().put(
                "greeting.txt",
                greeting.as_bytes(),
                "text/plain",
                true,
            )?;
            metadata.insert("greeting_url".into(), json!(url));
        }
        metadata.insert("greeting".into(), json!(greeting));
        Ok(ExecuteResult { metadata })
    }
}

const MANIFEST: &str = r#"[plugin]
name = "agentenv-greet"
version = "0.1.0"
exec = ["./agentenv-greet"]
protocol = [1, 1]

[provides.task_steps]
greet = "Greet"
"#;

fn main() {
    Plugin::new("agentenv-greet", "0.1.0")
        .manifest(MANIFEST)
        .task_step(Greet)
        .serve()
}
