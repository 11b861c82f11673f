//! A plugin step is told how long it has (`execute`'s `timeout_ms`): its own `timeout_seconds` when
//! the task gives one, else the host's call timeout (`AGENT_ENV_PLUGIN_CALL_TIMEOUT`), so a long step
//! can stop cleanly before the host cancels it.
//!
//! The plugin here answers every `execute` with the `timeout_ms` it was sent (`null` when none), as
//! the step's metadata, which the task's instance keeps. `plugin verify --step` tells a step the same.

use crate::run_plugins::shell_plugin;
use crate::support::run::Sandboxed;
use agent_env_test_support::Ran;
use serde_json::Value;

const DEPLOY: &str = r#"{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}"#;

/// Answers `execute` with `{"metadata": {"timeout_ms": <what the request said, or null>}}`.
const REPORT_TIMEOUT: &str = r#"case "$line" in
      *'"timeout_ms":'*) t=${line#*\"timeout_ms\":}; t=${t%%[!0-9]*} ;;
      *) t=null ;;
    esac
    printf '{"jsonrpc":"2.0","id":%s,"result":{"metadata":{"timeout_ms":%s}}}\n' "$id" "$t""#;

/// Runs a one-task bundle whose plugin step is `step` (its fields beside `id` and `type`), with the
/// host's call timeout set to `call_timeout` seconds, and returns the `timeout_ms` the step was sent.
fn timeout_sent(step_fields: &str, call_timeout: &str) -> Value {
    let s = Sandboxed::new();
    shell_plugin(&s, REPORT_TIMEOUT);
    s.write(
        "told/tasks/t.json",
        &format!(r#"[{DEPLOY}, {{"id": "wait", "type": "boom"{step_fields}}}]"#),
    );
    let r = Ran::from(
        s.command(&["run", "./told"])
            .env("AGENT_ENV_PLUGIN_CALL_TIMEOUT", call_timeout)
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.both());
    let instance = &s.docs("task_instances")[0];
    assert_eq!(instance["status"], "completed", "{instance}");
    instance["context"]["metadata"]["timeout_ms"].clone()
}

#[test]
fn a_step_with_timeout_seconds_is_told_that_limit() {
    let told = timeout_sent(r#", "timeout_seconds": 5"#, "600");
    // Its own limit, not the call timeout, and without the grace the host adds for its answer: the
    // time is relative, so it is the limit itself, however long the run took to get there.
    assert_eq!(told, 5_000);
}

#[test]
fn a_step_without_timeout_seconds_is_told_the_call_timeout() {
    let told = timeout_sent("", "7");
    assert_eq!(told, 7_000);
}

#[test]
fn a_fractional_timeout_seconds_is_told_in_milliseconds() {
    let told = timeout_sent(r#", "timeout_seconds": 2.5"#, "600");
    assert_eq!(told, 2_500);
}

/// `plugin verify --step` tells the step its time as a run does.
#[test]
fn plugin_verify_tells_a_step_its_time_as_a_run_does() {
    let s = Sandboxed::new();
    // Answers execute with an error that says the timeout_ms it was sent, which the kit's finding
    // on the step (step-executes, a warning) quotes.
    shell_plugin(
        &s,
        r#"case "$line" in
      *'"timeout_ms":'*) t=${line#*\"timeout_ms\":}; t=${t%%[!0-9]*} ;;
      *) t=none ;;
    esac
    printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32020,"message":"told %s ms"}}\n' "$id" "$t""#,
    );
    let told = |step: &str| {
        let r = Ran::from(
            s.command(&[
                "plugin",
                "verify",
                "agentenv-crashy",
                "--step",
                step,
                "--json",
            ])
            .env("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "9")
            .output()
            .unwrap(),
        );
        let doc: Value =
            serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.both()));
        let finding = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["check"] == "step-executes")
            .unwrap_or_else(|| panic!("{doc:#}"))["message"]
            .as_str()
            .unwrap()
            .to_string();
        finding
    };
    let own = told(r#"{"id": "w", "type": "boom", "timeout_seconds": 5}"#);
    assert!(own.contains("(told 5000 ms)"), "{own}");
    let host = told(r#"{"id": "w", "type": "boom"}"#);
    assert!(host.contains("(told 9000 ms)"), "{host}");
}
