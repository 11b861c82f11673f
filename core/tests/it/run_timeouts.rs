//! How long a plugin step may take: its own `timeout_seconds` when it names one, else the host's call
//! timeout (`AGENT_ENV_PLUGIN_CALL_TIMEOUT`, 60 s by default). A hung step never holds a run for hours.
//!
//! The plugins here sleep 40 s in `execute` and then exit: a run that waited longer than the limit
//! under test would report a crash instead of a timeout.

use crate::run_plugins::shell_plugin;
use crate::support::run::Sandboxed;
use agent_env_test_support::Ran;

const DEPLOY: &str = r#"{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}"#;
const HANG: &str = "sleep 40; exit 3";

#[test]
fn a_step_without_timeout_seconds_gets_the_call_timeout_from_the_environment() {
    let s = Sandboxed::new();
    shell_plugin(&s, HANG);
    s.write(
        "hang/tasks/h.json",
        &format!(r#"[{DEPLOY}, {{"id": "wait", "type": "boom"}}]"#),
    );
    let r = Ran::from(
        s.command(&["run", "./hang"])
            .env("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "1")
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stdout_has("failed at step 'wait': PluginError: plugin agentenv-crashy (");
    r.assert_stdout_has("did not answer execute within 1 s; the call was cancelled (raise AGENT_ENV_PLUGIN_CALL_TIMEOUT");
    r.assert_stdout_has(
        "; a step that takes long by design can be given its own limit in the task (timeout_seconds)",
    );
    assert_eq!(s.docs("task_instances")[0]["status"], "failed");
    assert!(s.sandboxes_left().is_empty());
}

#[test]
fn a_steps_own_timeout_seconds_is_its_limit_and_its_message() {
    let s = Sandboxed::new();
    shell_plugin(&s, HANG);
    s.write(
        "hang/tasks/h.json",
        &format!(r#"[{DEPLOY}, {{"id": "wait", "type": "boom", "timeout_seconds": 0.5}}]"#),
    );
    // The step's limit wins over a longer call timeout.
    let r = Ran::from(
        s.command(&["run", "./hang"])
            .env("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "600")
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stdout_has(
        "failed at step 'wait': PluginError: the boom step of plugin agentenv-crashy did not finish within its timeout_seconds (0.5 s) and was cancelled; raise timeout_seconds in the task if it is just slow",
    );
    // One remedy: the host's call timeout, which did not apply, is not offered beside it.
    assert!(
        !r.both().contains("AGENT_ENV_PLUGIN_CALL_TIMEOUT"),
        "{}",
        r.both()
    );
    // What the plugin wrote to stderr before it was cancelled is kept beside the message, as its
    // process's: one process runs every task's steps.
    assert!(
        r.both().contains(
            "the stderr of plugin agentenv-crashy's process ends with these lines (one process runs the steps of every task in the run, so they may come from another task's step):\n    crashy: dying in the middle of execute"
        ),
        "{}",
        r.both()
    );
    assert_eq!(s.docs("task_instances")[0]["status"], "failed");
}

/// A step whose answer the host could not read (a cut-off JSON line) runs out its time as one that
/// did not answer, but the message names the line, the likelier cause.
#[test]
fn an_unreadable_answer_is_named_when_the_step_times_out() {
    let s = Sandboxed::new();
    shell_plugin(
        &s,
        r#"printf '{"jsonrpc":"2.0","id":%s,"resu\n' "$id"; sleep 40; exit 3"#,
    );
    s.write(
        "cut/tasks/c.json",
        &format!(r#"[{DEPLOY}, {{"id": "wait", "type": "boom", "timeout_seconds": 0.5}}]"#),
    );
    let r = s.run(&["run", "./cut"]);
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stdout_has("it wrote a line to stdout that is no protocol message, so an answer it meant may be lost: '{\"jsonrpc\":\"2.0\",\"id\":");
}

/// One process runs the plugin's steps for every task of a run, so its stderr holds other tasks'
/// lines: a step that times out keeps the process's stderr as such, naming the task whose step ran
/// beside it, not as its own traceback.
#[test]
fn a_timed_out_step_does_not_claim_another_tasks_stderr_as_its_own() {
    let s = Sandboxed::new();
    let spoke = s.dir.path().join("a-spoke");
    // Task a's step says a line and is answered once task b's arrives, which is never answered.
    shell_plugin(
        &s,
        &format!(
            r#"case "$line" in
      *'"mode":"slow"'*) printf '{{"jsonrpc":"2.0","id":%s,"result":{{"metadata":{{}}}}}}\n' "$a_id" ;;
      *) echo "a: only task a says this" >&2; a_id=$id; : > {spoke} ;;
    esac"#,
            spoke = spoke.display()
        ),
    );
    s.write(
        "two/tasks/a.json",
        &format!(r#"[{DEPLOY}, {{"id": "talk", "type": "boom"}}]"#),
    );
    // Task b's plugin step starts once task a's has said its line.
    s.write(
        "two/tasks/b.json",
        &format!(
            r#"[{DEPLOY},
               {{"id": "after_a", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "w",
                 "criteria": [{{"type": "bash_cmd_succeeds", "command": "until [ -e '{spoke}' ]; do sleep 0.05; done", "timeout_seconds": 60}}]}},
               {{"id": "wait", "type": "boom", "mode": "slow", "timeout_seconds": 0.5}}]"#,
            spoke = spoke.display()
        ),
    );
    let r = s.run(&["run", "./two"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let instances = s.docs("task_instances");
    let status_of = |status: &str| {
        instances
            .iter()
            .find(|i| i["status"] == status)
            .unwrap_or_else(|| panic!("no {status} instance: {instances:?}"))
    };
    assert!(status_of("completed")["context"]["metadata"]["failed_steps"].is_null());
    let failed = &status_of("failed")["context"]["metadata"]["failed_steps"][0];
    assert_eq!(failed["step_id"], "wait", "{failed}");
    let traceback = failed["traceback"].as_str().unwrap_or_default();
    assert!(
        traceback.starts_with(
            "the stderr of plugin agentenv-crashy's process ends with these lines (one process runs the steps of every task in the run, and it was running steps of tasks/a.json too, so they may come from one of those):\n"
        ),
        "{traceback}"
    );
    assert!(
        traceback.contains("\n    a: only task a says this"),
        "{traceback}"
    );
}
