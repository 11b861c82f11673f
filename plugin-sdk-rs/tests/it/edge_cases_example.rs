//! `examples/edge_cases.rs`, driven as agent-env drives it: each test takes one of the edges the
//! example shows.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

const PACKAGE: &str = "agentenv-edge-cases";

fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    dir.join("examples").join("edge_cases")
}

#[test]
fn a_panicking_step_fails_with_where_it_panicked_and_writes_nothing_to_stderr() {
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "host": {"name": "agent-env", "version": "0.1.0"}, "protocol": {"min": 1, "max": 1},
            "package": PACKAGE, "settings": {}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "execute", "params": {
            "type": "panics", "step": {"id": "p", "type": "panics"}, "context": {}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
    ];
    let mut child = Command::new(example())
        .env("AGENT_ENV_PLUGIN", "1")
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // One at a time: the plugin answers each request on a thread of its own.
    let answers: Vec<Value> = requests
        .iter()
        .map(|request| {
            writeln!(stdin, "{request}").unwrap();
            let mut answer = String::new();
            stdout.read_line(&mut answer).unwrap();
            serde_json::from_str(&answer).unwrap()
        })
        .collect();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let failed = answers.iter().find(|a| a["id"] == 2).unwrap();
    assert_eq!(failed["error"]["code"], -32020, "{failed}");
    assert_eq!(failed["error"]["data"]["error_type"], "panic", "{failed}");
    assert_eq!(
        failed["error"]["data"]["message"],
        "the panics step panicked, as it does"
    );
    let traceback = failed["error"]["data"]["traceback"].as_str().unwrap();
    assert!(
        traceback.starts_with("panicked at ") && traceback.contains("edge_cases.rs:"),
        "{traceback}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("the panics step panicked"),
        "the panic went to the host and to stderr too, so agent-env -v shows it twice:\n{stderr}"
    );
    assert_eq!(out.status.code(), Some(0));
}
