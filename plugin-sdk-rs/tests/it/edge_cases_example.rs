//! `examples/edge_cases.rs`, driven as agent-env drives it: each test takes one of the edges the
//! example shows.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use agent_env_plugin_sdk::testing::PluginProcess;
use serde_json::{json, Value};

const PACKAGE: &str = "agentenv-edge-cases";

fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    dir.join("examples").join("edge_cases")
}

fn started() -> (PluginProcess, Value) {
    PluginProcess::start(example(), PACKAGE).unwrap()
}

/// A fresh folder of this test binary's own, named `name`.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("edge-cases-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
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

#[test]
fn a_step_that_hangs_fails_its_call_naming_the_method_and_the_limit() {
    let (mut plugin, _) = started();
    assert_eq!(plugin.timeout(), PluginProcess::DEFAULT_TIMEOUT);
    plugin.set_timeout(Duration::from_millis(300));
    let err = plugin
        .execute(json!({"id": "h", "type": "hangs"}))
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut, "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with(
            "agentenv-edge-cases did not answer execute within 300ms, so the test stopped it"
        ) && message.contains("PluginProcess::set_timeout"),
        "{message}"
    );
    let after = plugin.call("shutdown", json!({})).unwrap_err();
    assert_eq!(
        after.to_string(),
        "the plugin is stopped: agentenv-edge-cases did not answer execute within 300ms"
    );
}

#[test]
fn a_plugin_that_never_answers_initialize_fails_its_start() {
    let dir = scratch("silent");
    let script = dir.join("silent-plugin");
    std::fs::write(&script, "#!/bin/sh\nexec sleep 600\n").unwrap();
    let mut permissions = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&script, permissions).unwrap();
    let Err(err) = PluginProcess::start_with_timeout(&script, "silent", Duration::from_millis(200))
    else {
        panic!("a plugin that never answers started");
    };
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut, "{err}");
    assert!(
        err.to_string()
            .starts_with("silent did not answer initialize within 200ms"),
        "{err}"
    );
}

#[test]
fn implementing_validate_is_enough_for_the_host_to_call_it() {
    let (mut plugin, init) = started();
    let methods = |name: &str| {
        init["result"]["contributions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .map(|c| c["methods"].clone())
            .unwrap()
    };
    assert_eq!(
        methods("checked"),
        json!(["execute", "from_dict", "validate"])
    );
    assert_eq!(methods("panics"), json!(["execute", "from_dict"]));
    let refused = plugin
        .call(
            "task_step.validate",
            json!({"type": "checked", "step": {"id": "c", "type": "checked"}}),
        )
        .unwrap();
    assert_eq!(
        refused["error"]["message"], "ValueError: checked needs a string 'path'",
        "{refused}"
    );
    let accepted = plugin
        .call(
            "task_step.validate",
            json!({"type": "checked", "step": {"id": "c", "type": "checked", "path": "a"}}),
        )
        .unwrap();
    assert_eq!(accepted, json!({"jsonrpc": "2.0", "id": 3, "result": null}));
    assert_eq!(plugin.shutdown().unwrap(), Some(0));
}

#[test]
fn a_file_error_names_the_file_when_the_step_adds_it_and_keeps_the_cause_as_its_traceback() {
    let missing = scratch("reads").join("essay.txt");
    let path = missing.to_str().unwrap();
    let (mut plugin, _) = started();
    let bare = plugin
        .execute(json!({"id": "r", "type": "reads", "path": path}))
        .unwrap();
    let io = std::fs::read(&missing).unwrap_err().to_string();
    assert_eq!(bare["error"]["code"], -32020, "{bare}");
    assert_eq!(bare["error"]["message"], format!("FileNotFoundError: {io}"));
    assert_eq!(bare["error"]["data"]["traceback"], Value::Null, "{bare}");
    let named = plugin
        .execute(json!({"id": "r", "type": "reads", "path": path, "context": true}))
        .unwrap();
    let message = format!("reading {path}: {io}");
    assert_eq!(
        named["error"]["message"],
        format!("FileNotFoundError: {message}")
    );
    assert_eq!(named["error"]["data"]["error_type"], "FileNotFoundError");
    assert_eq!(named["error"]["data"]["message"], message);
    assert_eq!(
        named["error"]["data"]["traceback"],
        format!("{message}\ncaused by: {io}")
    );
    assert_eq!(plugin.shutdown().unwrap(), Some(0));
}

#[test]
fn a_log_line_goes_at_its_level_and_a_misspelt_level_goes_as_a_warning_that_names_it() {
    let (mut plugin, _) = started();
    let answer = plugin.execute(json!({"id": "l", "type": "logs"})).unwrap();
    assert_eq!(answer["result"], json!({"metadata": {}}), "{answer}");
    let logs: Vec<Value> = plugin
        .take_notifications()
        .into_iter()
        .filter(|n| n["method"] == "$/log")
        .map(|n| n["params"].clone())
        .collect();
    let levels: Vec<&str> = logs.iter().map(|l| l["level"].as_str().unwrap()).collect();
    assert_eq!(levels, ["debug", "info", "warning", "error", "warning"]);
    assert_eq!(logs[1]["message"], "a line at info");
    assert_eq!(
        logs[4]["message"],
        "('warnign' is not a log level; $/log takes debug, info, warning or error) a level given by name, misspelt"
    );
    assert_eq!(logs[0]["call_id"], answer["id"]);
    assert!(plugin.take_notifications().is_empty());
    assert_eq!(plugin.shutdown().unwrap(), Some(0));
}

#[test]
fn a_command_gets_its_arguments_the_folder_it_was_run_in_and_whether_a_terminal_is_attached() {
    let dir = scratch("where");
    let out = dir.join("held.json");
    let out_arg = out.display().to_string();
    let (mut plugin, _) = started();
    let ran = plugin
        .call(
            "cli.run",
            json!({"command": "where", "argv": [out_arg, "--flag"], "cwd": "/home/me/project",
                   "interactive": true}),
        )
        .unwrap();
    assert_eq!(ran["result"], json!({"exit_code": 0}), "{ran}");
    let held: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        held,
        json!({"argv": [out_arg, "--flag"], "cwd": "/home/me/project", "interactive": true})
    );
    let bare = plugin
        .call("cli.run", json!({"command": "where", "argv": [out_arg]}))
        .unwrap();
    assert_eq!(bare["result"], json!({"exit_code": 0}), "{bare}");
    let held: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        held,
        json!({"argv": [out_arg], "cwd": null, "interactive": false})
    );
    assert_eq!(plugin.shutdown().unwrap(), Some(0));
}

#[test]
fn a_command_that_implements_neither_run_nor_invoke_fails_saying_so() {
    let (mut plugin, _) = started();
    let answer = plugin
        .call("cli.run", json!({"command": "unfinished", "argv": []}))
        .unwrap();
    assert_eq!(
        answer["error"]["message"],
        "agentenv-edge-cases's command 'unfinished' implements neither CliCommand::run nor \
         CliCommand::invoke; implement one of them",
        "{answer}"
    );
    assert_eq!(plugin.shutdown().unwrap(), Some(0));
}

/// `execute`'s `timeout_ms` becomes the step's deadline, counted from when the plugin read the
/// request; a host that sends none leaves the step without one.
#[test]
fn a_step_has_the_time_the_host_gave_it_and_no_deadline_when_it_gave_none() {
    let (mut plugin, _) = started();
    let step = json!({"id": "d", "type": "deadline"});
    let told = plugin
        .call(
            "execute",
            json!({"type": "deadline", "step": step, "context": {}, "timeout_ms": 600_000}),
        )
        .unwrap();
    let left = told["result"]["metadata"]["remaining_ms"]
        .as_u64()
        .unwrap_or_else(|| panic!("{told}"));
    // Ten minutes, less the moment the step took to look: far from either end of the range.
    assert!((300_000..=600_000).contains(&left), "{told}");
    let untold = plugin.execute(step).unwrap();
    assert_eq!(
        untold["result"]["metadata"]["remaining_ms"],
        Value::Null,
        "{untold}"
    );
    assert_eq!(plugin.shutdown().unwrap(), Some(0));
}
