//! The README's example plugin, driven over its stdin/stdout as agent-env would.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    dir.join("examples").join("greet")
}

#[test]
fn run_by_hand_it_exits_2() {
    let out = Command::new(example())
        .env_remove("AGENT_ENV_PLUGIN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("agentenv-greet 0.1.0 is an agent-env plugin"));
}

#[test]
fn it_answers_initialize_and_execute_then_exits_on_eof() {
    let mut child = Command::new(example())
        .env("AGENT_ENV_PLUGIN", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |line: Value| -> Value {
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        let mut answer = String::new();
        stdout.read_line(&mut answer).unwrap();
        serde_json::from_str(&answer).unwrap()
    };
    let init = ask(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "host": {"name": "agent-env", "version": "0.1.0"}, "protocol": {"min": 1, "max": 1},
        "package": "agentenv-greet", "settings": {}}}),
    );
    assert_eq!(init["result"]["protocol"], 1);
    assert_eq!(
        init["result"]["contributions"][0],
        json!({"group": "task_steps", "name": "greet", "type": "greet", "class": "Greet",
               "methods": ["execute", "from_dict"]})
    );
    let run = ask(
        json!({"jsonrpc": "2.0", "id": 2, "method": "execute", "params": {
        "type": "greet", "step": {"id": "g", "type": "greet", "who": "Ada"}, "context": {}}}),
    );
    assert_eq!(run["result"]["metadata"]["greeting"], "hello, Ada");
    let bad = ask(
        json!({"jsonrpc": "2.0", "id": 3, "method": "execute", "params": {
        "type": "greet", "step": {"id": "g"}, "context": {}}}),
    );
    assert_eq!(bad["error"]["code"], -32020);
    assert_eq!(bad["error"]["data"]["error_type"], "ValueError");
    assert_eq!(
        bad["error"]["data"]["message"],
        "greet needs a string 'who'"
    );
    let done = ask(json!({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}));
    assert_eq!(done["result"], Value::Null);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("this goes to stderr"));
}

/// `testing::PluginProcess` drives the same plugin in a few lines: what a plugin's own tests use.
#[test]
fn the_testing_harness_drives_a_step_and_shuts_the_plugin_down() {
    use agent_env_plugin_sdk::testing::PluginProcess;
    let (mut plugin, init) = PluginProcess::start(example(), "agentenv-greet").unwrap();
    assert_eq!(init["result"]["contributions"][0]["type"], "greet");
    let run = plugin
        .execute(json!({"id": "g", "type": "greet", "who": "Ada"}))
        .unwrap();
    assert_eq!(run["result"]["metadata"]["greeting"], "hello, Ada", "{run}");
    let bad = plugin.execute(json!({"id": "g", "type": "greet"})).unwrap();
    assert_eq!(bad["error"]["data"]["error_type"], "ValueError", "{bad}");
    assert_eq!(plugin.shutdown().unwrap(), Some(0));
}
