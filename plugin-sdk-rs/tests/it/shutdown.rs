//! The plugin's side of the shutdown (docs/protocol.md §3), the same in every SDK: `examples/edge_cases.rs`
//! with calls still running when `shutdown` comes or stdin ends. They are cancelled at once, `shutdown`
//! is answered at once, and the plugin exits 0 within the shutdown grace, without waiting for a call
//! that ignores its cancel.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use agent_env_plugin_sdk::SHUTDOWN_GRACE;
use serde_json::{json, Value};

const PACKAGE: &str = "agentenv-edge-cases";

/// Only a guard against a hang, never a measure of speed: far above the grace.
const HANG_GUARD: Duration = Duration::from_secs(60);

fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    dir.join("examples").join("edge_cases")
}

/// The example plugin, started as agent-env starts it, with its stdout and stderr read line by line.
struct Started {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: Receiver<Value>,
    stderr: Receiver<String>,
    stderr_seen: Vec<String>,
}

impl Started {
    fn new() -> Started {
        let mut child = Command::new(example())
            .env("AGENT_ENV_PLUGIN", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let (answer_tx, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let message: Value = serde_json::from_str(&line).unwrap();
                if answer_tx.send(message).is_err() {
                    return;
                }
            }
        });
        let (stderr_tx, stderr_lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                if stderr_tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut started = Started {
            child,
            stdin,
            answers,
            stderr: stderr_lines,
            stderr_seen: Vec::new(),
        };
        started.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "host": {"name": "agent-env", "version": "0.1.0"}, "protocol": {"min": 1, "max": 1},
            "package": PACKAGE, "settings": {}}}),
        );
        let init = started.answer();
        assert_eq!(init["id"], 1, "{init}");
        assert!(init.get("result").is_some(), "{init}");
        started
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn execute(&mut self, id: u64, step_type: &str) {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "execute", "params": {
            "type": step_type, "step": {"id": step_type, "type": step_type}, "context": {}}}),
        );
    }

    fn answer(&self) -> Value {
        match self.answers.recv_timeout(HANG_GUARD) {
            Ok(answer) => answer,
            Err(e) => panic!("no answer from the plugin: {e}"),
        }
    }

    /// Reads stderr until the line `want`.
    fn wait_stderr(&mut self, want: &str) {
        loop {
            match self.stderr.recv_timeout(HANG_GUARD) {
                Ok(line) => {
                    let found = line == want;
                    self.stderr_seen.push(line);
                    if found {
                        return;
                    }
                }
                Err(e) => panic!("stderr never said {want:?} ({e}): {:?}", self.stderr_seen),
            }
        }
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The exit code, once the plugin has exited.
    fn exit_code(&mut self) -> Option<i32> {
        let guard = Instant::now() + HANG_GUARD;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < guard, "the plugin did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The answers to `ids`, in whatever order they come.
fn answers_to(plugin: &Started, ids: &[u64]) -> Vec<Value> {
    let mut got: Vec<Option<Value>> = vec![None; ids.len()];
    while got.iter().any(Option::is_none) {
        let answer = plugin.answer();
        if let Some(at) = ids.iter().position(|id| answer["id"] == json!(id)) {
            got[at] = Some(answer);
        }
    }
    got.into_iter().map(Option::unwrap).collect()
}

#[test]
fn shutdown_cancels_the_calls_still_running_is_answered_and_the_plugin_exits_0() {
    let mut plugin = Started::new();
    plugin.execute(2, "waits");
    plugin.wait_stderr("waits: started");
    plugin.execute(3, "stubborn");
    plugin.wait_stderr("stubborn: started");
    plugin.send(json!({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}));
    // `shutdown` is answered while `stubborn` still sleeps; `waits` saw its cancel and said so.
    let [waits, shutdown] = <[Value; 2]>::try_from(answers_to(&plugin, &[2, 4])).unwrap();
    assert_eq!(shutdown["result"], Value::Null, "{shutdown}");
    assert!(shutdown.get("error").is_none(), "{shutdown}");
    assert_eq!(waits["error"]["data"]["error_type"], "Cancelled", "{waits}");
    plugin.wait_stderr("waits: saw the cancel");
    plugin.close_stdin();
    // `stubborn` would sleep 10 minutes: the plugin exits without it.
    assert_eq!(plugin.exit_code(), Some(0));
}

#[test]
fn the_end_of_stdin_cancels_the_calls_still_running_and_the_plugin_exits_0() {
    let mut plugin = Started::new();
    plugin.execute(2, "waits");
    plugin.wait_stderr("waits: started");
    plugin.close_stdin();
    let waits = plugin.answer();
    assert_eq!(waits["id"], 2, "{waits}");
    assert_eq!(waits["error"]["data"]["error_type"], "Cancelled", "{waits}");
    plugin.wait_stderr("waits: saw the cancel");
    assert_eq!(plugin.exit_code(), Some(0));
}

#[test]
fn a_call_that_ignores_its_cancel_does_not_keep_the_plugin_past_the_grace() {
    let mut plugin = Started::new();
    plugin.execute(2, "stubborn");
    plugin.wait_stderr("stubborn: started");
    plugin.close_stdin();
    assert_eq!(plugin.exit_code(), Some(0));
    // It never answered: the process ended under it.
    match plugin.answers.recv_timeout(HANG_GUARD) {
        Err(RecvTimeoutError::Disconnected) => {}
        other => panic!("want stdout ended without an answer, got {other:?}"),
    }
}

#[test]
fn the_grace_is_the_one_every_sdk_keeps() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../protocol/vectors/shutdown.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let cases: Vec<Value> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(cases.len(), 1, "{cases:?}");
    let grace_ms = u64::try_from(SHUTDOWN_GRACE.as_millis()).unwrap();
    assert_eq!(cases[0]["shutdown_grace_ms"], json!(grace_ms));
    assert_eq!(cases[0]["exit_code"], 0);
}
