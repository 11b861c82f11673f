//! The Rust SDK's duties, seen from outside the plugin process: the run-by-hand guard, the printed
//! manifest, exit on stdin EOF, command mode over fds 3 and 4.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::*;
use agent_env_host::{NoServices, PluginProcess};
use serde_json::{json, Value};

#[test]
fn run_by_hand_it_says_what_it_is_and_exits_2() {
    let out = Command::new(fixture("fixture-works"))
        .env_remove("AGENT_ENV_PLUGIN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr,
        "agentenv-fixture-works 0.3.0 is an agent-env plugin; agent-env starts it (try agent-env plugin show agentenv-fixture-works)\n"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn asked_for_its_manifest_it_prints_it() {
    let out = Command::new(fixture("fixture-works"))
        .arg("--agent-env-manifest")
        .env_remove("AGENT_ENV_PLUGIN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let manifest = agent_env_protocol::manifest::Manifest::parse(
        std::path::Path::new("/x/agent-env-plugin.toml"),
        &text,
    )
    .unwrap();
    assert_eq!(manifest.name, "agentenv-fixture-works");
    let none = Command::new(fixture("fixture-crash"))
        .arg("--agent-env-manifest")
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(2));
}

#[test]
fn it_exits_0_when_stdin_reaches_end_of_file() {
    let mut child = Command::new(fixture("fixture-works"))
        .env("AGENT_ENV_PLUGIN", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":{\"k\":1}}\n")
        .unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["result"], json!({"k": 1}));
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert_eq!(status.code(), Some(0));
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the plugin did not exit on stdin EOF");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_protocol_mismatch_answer_carries_both_ranges() {
    let mut child = Command::new(fixture("fixture-protocol99"))
        .env("AGENT_ENV_PLUGIN", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"host":{"name":"agent-env","version":"0.1.0"},"protocol":{"min":1,"max":1},"package":"agentenv-fixture-protocol99","settings":{}}}"#)
        .unwrap();
    stdin.write_all(b"\n").unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["error"]["code"], -32010);
    assert_eq!(answer["error"]["data"]["kind"], "protocol-mismatch");
    assert_eq!(
        answer["error"]["data"]["supported"],
        json!({"min": 99, "max": 99})
    );
    assert_eq!(
        answer["error"]["data"]["requested"],
        json!({"min": 1, "max": 1})
    );
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn command_mode_runs_the_protocol_on_fds_3_and_4() {
    let mut s = spec("fixture-works", "agentenv-fixture-works").in_command_mode();
    s.settings.insert("mode".into(), json!("command"));
    let p = PluginProcess::start(s, &quick_config(), Arc::new(NoServices)).unwrap();
    let out = p
        .call(
            "cli.run",
            json!({"command": "works", "argv": ["5", "x"], "cwd": "/", "interactive": false}),
        )
        .unwrap();
    assert_eq!(out, json!({"exit_code": 5}));
    let out = p
        .call("cli.run", json!({"command": "works", "argv": ["settings"]}))
        .unwrap();
    assert_eq!(out, json!({"exit_code": 0}));
    let pid = p.pid();
    let d = p.shutdown();
    assert!(d.command_mode);
    assert!(!d.stderr_captured);
    assert_eq!(d.exit_code, Some(0));
    assert_gone(pid);
}
