//! A plugin for the SDK's own tests, not a model to copy (`greet.rs` and `count_words.rs` are): each
//! thing it provides is there to show what the SDK does at an edge.
//!
//! - `panics`: a step that panics; the host gets the panic, nothing goes to stderr.
//! - `hangs`: a step that never answers, for the test harness's call limit.
//! - `checked`: a step that implements `validate` and nothing more; the handshake lists `validate`.
//! - `waits`: a step that says on stderr when it starts and when it sees its call cancelled (the host's
//!   `$/cancelRequest`, `shutdown` or the end of stdin), then fails as cancelled.
//! - `stubborn`: a step that says on stderr when it starts, then ignores its cancel and sleeps 10
//!   minutes, for the shutdown grace.
//! - `logs`: a step that sends a `$/log` line at each level, and one with a level given by name.
//! - `deadline`: a step that answers the time it has left (`remaining_ms`, `null` when the host gave
//!   it no `timeout_ms`).
//! - `reads`: a step that reads the file at its `path`, with `?` alone or, when `"context": true`,
//!   naming the file with `with_context`.
//! - `agent-env where OUT`: a command that writes what its invocation held (argv, cwd, interactive) to
//!   the file OUT, as JSON.

use std::time::Duration;

use agent_env_plugin_sdk::{
    json, CliCommand, ExecuteResult, Invocation, LogLevel, Map, Plugin, StepContext, StepError,
    StepResultExt, TaskStep, Value,
};

/// A step of type `name` whose `execute` is `run`.
struct Step {
    name: &'static str,
    run: fn(&StepContext<'_>) -> Result<ExecuteResult, StepError>,
}

impl TaskStep for Step {
    fn type_name(&self) -> &str {
        self.name
    }

    fn class(&self) -> &str {
        self.name
    }

    fn execute(
        &self,
        ctx: &StepContext<'_>,
        _step: &Map<String, Value>,
        _context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        (self.run)(ctx)
    }
}

fn panics(_ctx: &StepContext<'_>) -> Result<ExecuteResult, StepError> {
    panic!("the panics step panicked, as it does")
}

fn hangs(ctx: &StepContext<'_>) -> Result<ExecuteResult, StepError> {
    while !ctx.is_cancelled() {
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(StepError::new("Cancelled", "the host gave up"))
}

fn waits(ctx: &StepContext<'_>) -> Result<ExecuteResult, StepError> {
    eprintln!("waits: started");
    while !ctx.is_cancelled() {
        std::thread::sleep(Duration::from_millis(10));
    }
    eprintln!("waits: saw the cancel");
    Err(StepError::new("Cancelled", "the call was cancelled"))
}

fn stubborn(_ctx: &StepContext<'_>) -> Result<ExecuteResult, StepError> {
    eprintln!("stubborn: started");
    std::thread::sleep(Duration::from_secs(600));
    Ok(ExecuteResult::default())
}

fn logs(ctx: &StepContext<'_>) -> Result<ExecuteResult, StepError> {
    for level in LogLevel::ALL {
        ctx.host().log(level, &format!("a line at {level}"));
    }
    ctx.host().log("warnign", "a level given by name, misspelt");
    Ok(ExecuteResult::default())
}

fn deadline(ctx: &StepContext<'_>) -> Result<ExecuteResult, StepError> {
    let remaining = ctx
        .remaining()
        .map(|left| u64::try_from(left.as_millis()).unwrap_or(u64::MAX));
    let mut metadata = Map::new();
    metadata.insert("remaining_ms".into(), json!(remaining));
    Ok(ExecuteResult { metadata })
}

/// A step that needs a string `path`, and says so while the run is planned.
struct Checked;

impl TaskStep for Checked {
    fn type_name(&self) -> &str {
        "checked"
    }

    fn class(&self) -> &str {
        "Checked"
    }

    fn validate(&self, step: &Map<String, Value>) -> Result<(), StepError> {
        match step.get("path") {
            Some(Value::String(_)) => Ok(()),
            _ => Err(StepError::value("checked needs a string 'path'")),
        }
    }

    fn execute(
        &self,
        _ctx: &StepContext<'_>,
        _step: &Map<String, Value>,
        _context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        Ok(ExecuteResult::default())
    }
}

/// A step that reads the file at its `path`.
struct Reads;

impl TaskStep for Reads {
    fn type_name(&self) -> &str {
        "reads"
    }

    fn class(&self) -> &str {
        "Reads"
    }

    fn execute(
        &self,
        _ctx: &StepContext<'_>,
        step: &Map<String, Value>,
        _context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        let path = step.get("path").and_then(Value::as_str).unwrap_or("");
        let bytes = if step.get("context") == Some(&Value::Bool(true)) {
            std::fs::read(path).with_context(|| format!("reading {path}"))?
        } else {
            std::fs::read(path)?
        };
        let mut metadata = Map::new();
        metadata.insert("bytes".into(), json!(bytes.len()));
        Ok(ExecuteResult { metadata })
    }
}

/// `agent-env where OUT`.
struct Where;

impl CliCommand for Where {
    fn name(&self) -> &str {
        "where"
    }

    fn invoke(&self, invocation: &Invocation<'_>) -> i32 {
        let Some(out) = invocation.argv().first() else {
            eprintln!("usage: agent-env where OUT");
            return 2;
        };
        let held = json!({
            "argv": invocation.argv(),
            "cwd": invocation.cwd().map(|c| c.display().to_string()),
            "interactive": invocation.is_interactive(),
        });
        match std::fs::write(out, held.to_string()) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("can't write {out}: {e}");
                1
            }
        }
    }
}

/// A command that implements neither `run` nor `invoke`.
struct Unfinished;

impl CliCommand for Unfinished {
    fn name(&self) -> &str {
        "unfinished"
    }
}

fn main() {
    Plugin::new("agentenv-edge-cases", "0.1.0")
        .task_step(Step {
            name: "panics",
            run: panics,
        })
        .task_step(Step {
            name: "hangs",
            run: hangs,
        })
        .task_step(Step {
            name: "waits",
            run: waits,
        })
        .task_step(Step {
            name: "stubborn",
            run: stubborn,
        })
        .task_step(Step {
            name: "logs",
            run: logs,
        })
        .task_step(Step {
            name: "deadline",
            run: deadline,
        })
        .task_step(Checked)
        .task_step(Reads)
        .cli_command(Where)
        .cli_command(Unfinished)
        .serve()
}
