//! How a run's plugin steps end when something else ends them: Ctrl-C while a slow plugin starts,
//! agent-env killing a plugin whose calls stopped answering, and the run's end right after a step
//! whose plugin wrote much to stderr (every line reaches the run's log).

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::run_plugins::{shell_plugin, shell_plugin_starting};
use crate::support::run::{running, Sandboxed};
use agent_env_test_support::Ran;

/// Waits, up to a minute, for `ready` to hold.
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    agent_env_test_support::deadline::wait_until(Duration::from_secs(60), what, ready);
}

/// The pid a plugin wrote to `path`, once it has.
fn pid_in(path: &std::path::Path) -> i32 {
    wait_for("the plugin's start", || {
        std::fs::read_to_string(path).is_ok_and(|t| t.trim().parse::<i32>().is_ok())
    });
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Ctrl-C (or SIGTERM) while the run waits for a plugin that takes its time to start ends the wait
/// at once: the plugin is killed, the run ends cancelled with the signal's exit code, and the plugin
/// is not blamed for a handshake it was not given the time for.
fn a_signal_during_a_slow_start(signal: i32, code: i32) {
    let s = Sandboxed::new();
    // It sleeps before it reads `initialize`, far past the two minutes the run would wait.
    let pid_file = shell_plugin_starting(&s, "sleep 300", "exit 3");
    s.write("slow/tasks/t.json", r#"[{"id": "go", "type": "boom"}]"#);
    let mut child = s
        .command(&["run", "./slow"])
        .env("AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT", "120")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let plugin = pid_in(&pid_file);
    // SAFETY: sends a signal to the child we started.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    // Well before the handshake timeout: a run that waited it out would still be running here.
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run did not end within a minute of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let r = Ran::from(child.wait_with_output().unwrap());
    assert_eq!(r.code, code, "{}", r.both());
    r.assert_stdout_has("Cancelled before any task ran");
    // No step runs and no sandbox is up yet: the signal's line does not speak of them.
    assert!(
        r.stderr.contains("Stopping before any task started; "),
        "{}",
        r.both()
    );
    assert!(
        !r.both().contains("cancelling the running steps"),
        "{}",
        r.both()
    );
    for blame in [
        "did not answer initialize",
        "not an agent-env plugin",
        "Error",
    ] {
        assert!(!r.both().contains(blame), "{}", r.both());
    }
    assert!(!running(plugin), "the plugin {plugin} outlived its start");
    // The log says which start the signal cut, not only the signal.
    let log = std::fs::read_to_string(newest_log(&s)).unwrap();
    assert!(log.contains("stopped the start of the plugin "), "{log}");
    assert!(
        log.contains(" received before any task started: stopping"),
        "{log}"
    );
}

#[test]
fn ctrl_c_while_a_plugin_starts_stops_the_start_at_once_and_exits_130() {
    a_signal_during_a_slow_start(libc::SIGINT, 130);
}

#[test]
fn sigterm_while_a_plugin_starts_exits_143() {
    a_signal_during_a_slow_start(libc::SIGTERM, 143);
}

/// A plugin whose calls time out three times is killed as unresponsive: a call still in flight then
/// (here a step with a limit of its own, far off) is cut short by agent-env, which says so, and is no
/// crash, nor a bug of the plugin's; no task is told that a crash may have come from another.
#[test]
fn a_step_cut_short_by_killing_an_unresponsive_plugin_is_not_called_a_crash() {
    let s = Sandboxed::new();
    shell_plugin(&s, "sleep 300");
    s.write(
        "stuck/tasks/t1.json",
        r#"[{"id": "go", "type": "boom", "timeout_seconds": 100}]"#,
    );
    for n in 2..=6 {
        s.write(
            &format!("stuck/tasks/t{n}.json"),
            r#"[{"id": "go", "type": "boom"}]"#,
        );
    }
    let r = Ran::from(
        s.command(&["run", "./stuck", "-q"])
            .env("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "2")
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 1, "{}", r.both());
    let t1 = r
        .stdout
        .lines()
        .find(|l| l.starts_with("  tasks/t1.json v1: failed"))
        .unwrap_or_else(|| panic!("{}", r.both()));
    assert!(
        t1.contains(
            "was stopped by agent-env while answering execute: 3 of its calls got no answer in time (the last: execute within 2 s), so agent-env took it as stuck and killed it, cutting this call short"
        ),
        "{t1}"
    );
    for blame in ["crashed", "bug in the plugin", "it was running steps of"] {
        assert!(!r.both().contains(blame), "{}", r.both());
    }
    r.assert_stdout_has("did not answer execute within 2 s");
}

/// Every line a step's plugin wrote to stderr before it answered is in the run's log, before the
/// line that says the run finished, even when the run ends right after the step.
#[test]
fn the_run_log_has_every_stderr_line_of_a_step_that_ended_the_run() {
    let s = Sandboxed::new();
    shell_plugin(
        &s,
        r#"seq -f 'stderr-line %.0f' 1 20000 >&2; printf '{"jsonrpc":"2.0","id":%s,"result":{"metadata":{}}}\n' "$id""#,
    );
    s.write("loud/tasks/t.json", r#"[{"id": "go", "type": "boom"}]"#);
    for attempt in 1..=3 {
        let r = s.run(&["run", "./loud", "-q"]);
        assert_eq!(r.code, 0, "{}", r.both());
        let log = newest_log(&s);
        let text = std::fs::read_to_string(&log).unwrap();
        let last = text
            .find(" stderr: stderr-line 20000\n")
            .unwrap_or_else(|| panic!("run {attempt}: the last line is missing from {log:?}"));
        let finished = text
            .find(" finished in ")
            .unwrap_or_else(|| panic!("run {attempt}: no finishing line in {log:?}"));
        assert!(
            last < finished,
            "run {attempt}: the last stderr line comes after the run's end in {log:?}"
        );
        let lines = text.matches(" stderr: stderr-line ").count();
        assert_eq!(lines, 20_000, "run {attempt}: {log:?}");
    }
}

/// The newest run log of the sandbox's state.
pub(crate) fn newest_log(s: &Sandboxed) -> std::path::PathBuf {
    std::fs::read_dir(s.state().join("logs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .max_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).unwrap())
        .unwrap()
}

/// An answer to `execute` of the wrong shape names the field and what it holds (serde's own words
/// named neither).
#[test]
fn an_answer_of_the_wrong_shape_names_the_field() {
    let s = Sandboxed::new();
    shell_plugin(
        &s,
        r#"printf '{"jsonrpc":"2.0","id":%s,"result":{"metadata":"oops"}}\n' "$id""#,
    );
    s.write("shape/tasks/t.json", r#"[{"id": "go", "type": "boom"}]"#);
    let r = s.run(&["run", "./shape", "-q"]);
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stdout_has(
        "answered execute with a result of the wrong shape: its 'metadata' (merged into the task's context.metadata) must be an object, and it is a string",
    );
}

/// A plugin that answers under an id of its own (not the request's) is told so when the call
/// times out, not only that it did not answer.
#[test]
fn an_answer_under_an_id_never_sent_is_named_when_the_call_times_out() {
    let s = Sandboxed::new();
    shell_plugin(
        &s,
        r#"printf '{"jsonrpc":"2.0","id":12345,"result":{"metadata":{}}}\n'"#,
    );
    s.write("ids/tasks/t.json", r#"[{"id": "go", "type": "boom"}]"#);
    let r = s
        .command(&["run", "./ids", "-q"])
        .env("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "1")
        .output()
        .map(Ran::from)
        .unwrap();
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stdout_has(
        "did not answer execute within 1 s; the call was cancelled. The plugin answered id 12345, which agent-env never sent: an answer must carry the id of the request it answers",
    );
}

/// An answer with the step's results beside `metadata` (where agent-env reads none) runs, and its
/// task is warned, in the run's output and its JSON document, of the keys it ignored.
#[test]
fn keys_beside_metadata_in_an_answer_are_warned_about() {
    let s = Sandboxed::new();
    shell_plugin(
        &s,
        r#"printf '{"jsonrpc":"2.0","id":%s,"result":{"verifications":{"v":{"score":1}}}}\n' "$id""#,
    );
    s.write(
        "top/tasks/t.json",
        r#"[{"id": "go", "type": "boom", "verifier_id": "v"}]"#,
    );
    let r = s.run(&["run", "./top", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let warnings: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["message"].as_str())
        .collect();
    assert!(
        warnings.iter().any(|w| w.starts_with(
            "step 'go': plugin agentenv-crashy answered execute with 'verifications' beside 'metadata', which agent-env ignores;"
        )),
        "{warnings:?}"
    );
    assert!(
        r.stderr
            .contains("Warning: step 'go': plugin agentenv-crashy answered"),
        "{}",
        r.stderr
    );
}

/// A plugin's step is checked for the fields every step has (agent-env reads those), not for its
/// own.
#[test]
fn a_plugin_steps_common_fields_are_checked_for_typos() {
    let s = Sandboxed::new();
    shell_plugin(
        &s,
        r#"printf '{"jsonrpc":"2.0","id":%s,"result":{"metadata":{}}}\n' "$id""#,
    );
    s.write(
        "typo/tasks/t.json",
        r#"[{"id": "a", "type": "boom"},
            {"id": "go", "type": "boom", "depend_on": ["a"], "words": 3, "timeout_seconds": 30}]"#,
    );
    let r = s.run(&["run", "./typo", "-q"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stderr
            .contains("step 'go': 'depend_on' is not a field it reads: did you mean 'depends_on'?"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("'words'"), "{}", r.stderr);
    assert!(!r.stderr.contains("timeout_seconds"), "{}", r.stderr);
}

/// Installs the hand-written plugin `tests/fixture-plugins/python/mangled_replies.py` as
/// `agentenv-mangled`, mangling its replies as `mode` says, and a bundle `./mangled` with one
/// step of it.
fn mangled_plugin(s: &Sandboxed, mode: &str) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixture-plugins/python/mangled_replies.py");
    s.install_manifest(
        "mangled",
        &format!(
            r#"[plugin]
name = "agentenv-mangled"
version = "1.0"
exec = ["python3", "{}", "{mode}"]
protocol = [1, 1]

[provides.task_steps]
mangled = "Mangled"
"#,
            script.display()
        ),
    );
    s.write(
        "mangled/tasks/t.json",
        r#"[{"id": "go", "type": "mangled"}]"#,
    );
}

/// `agent-env run ./mangled -q` against the plugin mangling as `mode`. A failure that came at once
/// says "gave a bad answer"; one that waited out the (long) timeouts would say it got no answer.
fn run_mangled(s: &Sandboxed, mode: &str) -> Ran {
    mangled_plugin(s, mode);
    s.command(&["run", "./mangled", "-q"])
        .env("AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT", "15")
        .env("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "15")
        .output()
        .map(Ran::from)
        .unwrap()
}

/// A reply to `initialize` under the request's id written as a string is named as such, at once:
/// not a handshake timeout that calls it no agent-env plugin.
#[test]
fn an_initialize_reply_with_a_string_id_is_named_at_once() {
    let s = Sandboxed::new();
    let r = run_mangled(&s, "init-string-id");
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr.contains("gave a bad answer to initialize: it answered with the id \"1\" (a string), where the request's id was the number 1: echo the id as sent; its stderr was empty"),
        "{}",
        r.both()
    );
    assert!(
        !r.both().contains("did not answer initialize"),
        "{}",
        r.both()
    );
}

/// Each reply meant as a message that is none is told its defect, at once: at `initialize` (the
/// handshake fails then, not after its timeout) and at `execute` (the call fails then), and the
/// line is quoted once, not also as "non-protocol output".
#[test]
fn a_malformed_reply_is_told_its_defect_at_once() {
    let cases = [
        (
            "null-id",
            "its id is null: an answer must carry the id of the request it answers",
        ),
        ("no-jsonrpc", "it lacks \"jsonrpc\":\"2.0\""),
        (
            "jsonrpc-1.0",
            "it says \"jsonrpc\":\"1.0\": every message must say \"jsonrpc\":\"2.0\"",
        ),
        (
            "batch",
            "the protocol has no batches: send one message per line",
        ),
        ("bom", "it starts with a byte order mark"),
        (
            "pretty",
            "a message must be on one line: write compact JSON",
        ),
        ("float-id", "its id 1.5 is not an integer or a string"),
    ];
    for (defect, said) in cases {
        for (stage, method) in [("init", "initialize"), ("exec", "execute")] {
            let s = Sandboxed::new();
            let r = run_mangled(&s, &format!("{stage}-{defect}"));
            let text = r.both();
            assert_eq!(r.code, 1, "{defect} at {method}: {text}");
            assert!(
                text.contains(&format!("gave a bad answer to {method}: its answer '")),
                "{defect} at {method}: {text}"
            );
            assert!(text.contains(said), "{defect} at {method}: {text}");
            assert!(
                !text.contains("non-protocol output"),
                "{defect} at {method}: {text}"
            );
            assert!(!text.contains("swallowed"), "{defect} at {method}: {text}");
        }
    }
}

/// A reply without its newline is named as such, at the handshake (not a bare timeout) and at a
/// call.
#[test]
fn a_reply_without_its_newline_is_named() {
    for (mode, method) in [("init-unended", "initialize"), ("exec-unended", "execute")] {
        let s = Sandboxed::new();
        mangled_plugin(&s, mode);
        let r = s
            .command(&["run", "./mangled", "-q"])
            .env("AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT", "1")
            .env("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "1")
            .output()
            .map(Ran::from)
            .unwrap();
        let text = r.both();
        assert_eq!(r.code, 1, "{text}");
        assert!(
            text.contains(&format!("{method}: no answer within 1 s: it wrote "))
                || text.contains(&format!(
                    "did not answer {method} within 1 s; the call was cancelled. It wrote "
                )),
            "{text}"
        );
        assert!(
            text.contains(
                " bytes on stdout without ending the line: end each message with \\n; its stderr was empty"
            ),
            "{text}"
        );
        assert!(!text.contains("it is not an agent-env plugin"), "{text}");
    }
}

/// A reply without its newline, then the next reply, is one line of two messages: the run's
/// warning names that defect, not log output to move to stderr.
#[test]
fn two_replies_on_one_line_are_named_as_such_not_as_log_output() {
    let s = Sandboxed::new();
    mangled_plugin(&s, "exec-unended");
    let r = s
        .command(&["run", "./mangled", "-q"])
        .env("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "1")
        .output()
        .map(Ran::from)
        .unwrap();
    let text = r.both();
    assert_eq!(r.code, 1, "{text}");
    assert!(
        text.contains("bytes on stdout without ending the line: end each message with \\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "meant as one: it is two or more messages on one line: end each message with \\n)"
        ),
        "{text}"
    );
    assert!(!text.contains("write logs to stderr"), "{text}");
}

/// An answer over the maximum message size fails its call as too large, and is no stray stdout
/// line: no warning of output that is not protocol messages.
#[test]
fn an_oversized_answer_is_not_counted_as_stray_output() {
    let s = Sandboxed::new();
    let r = run_mangled(&s, "exec-oversized");
    let text = r.both();
    assert_eq!(r.code, 1, "{text}");
    assert!(
        text.contains("a message over the 67108864-byte maximum message size was discarded; pass large data by file path"),
        "{text}"
    );
    assert!(!text.contains("not protocol messages"), "{text}");
}

/// A plugin that exits with code 0 while a call is in flight is told it stopped serving too soon,
/// not that it crashed.
#[test]
fn a_plugin_exiting_with_code_0_mid_call_is_told_to_keep_serving() {
    let s = Sandboxed::new();
    let r = run_mangled(&s, "exec-exit-zero");
    let text = r.both();
    assert_eq!(r.code, 1, "{text}");
    assert!(
        text.contains("exited on its own (code 0) while its execute call was in flight; a plugin must keep serving until its stdin closes"),
        "{text}"
    );
    assert!(!text.contains("crashed"), "{text}");
}

/// A `host.*` request sent with id null (a notification) cannot be answered: the plugin is warned,
/// where its logs go (`run -v`, the run's log), rather than the request being dropped in silence.
#[test]
fn a_host_request_sent_as_a_notification_is_warned_of() {
    let s = Sandboxed::new();
    mangled_plugin(&s, "exec-host-null");
    let r = s
        .command(&["run", "./mangled", "-v"])
        .env("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "1")
        .output()
        .map(Ran::from)
        .unwrap();
    let warning = "plugin agentenv-mangled sent host.store.object.exists as a notification (no id, or id null), so it cannot be answered: give the request an integer or string id";
    assert!(r.both().contains(warning), "{}", r.both());
    let log = std::fs::read_to_string(newest_log(&s)).unwrap();
    assert!(log.contains(warning), "{log}");
}

/// A plugin that exits with code 1 after agent-env shut it down is warned of by `plugin list` and
/// `plugin check`, on stderr and in `--json`'s `warnings`, with its stderr's last line; both still
/// succeed and its status stays `ok`.
#[test]
fn plugin_list_and_check_warn_of_an_exit_code_after_shutdown() {
    let s = Sandboxed::new();
    mangled_plugin(&s, "shutdown-exit-1");
    let warning = "plugin agentenv-mangled exited with code 1 after agent-env shut it down; \
                   a plugin should exit with code 0 once its stdin closes; its stderr's last line: \
                   'mangled: failed to flush my cache at shutdown'";
    for command in ["list", "check"] {
        let r = s.run(&["plugin", command]);
        assert_eq!(r.code, 0, "plugin {command}: {}", r.both());
        assert!(
            r.stderr.contains(&format!("Warning: {warning}\n")),
            "plugin {command}: {}",
            r.both()
        );
        let r = s.run(&["plugin", command, "--json"]);
        assert_eq!(r.code, 0, "plugin {command} --json: {}", r.both());
        let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let warnings = doc["warnings"].as_array().cloned().unwrap_or_default();
        assert!(
            warnings.iter().any(|w| w == warning),
            "plugin {command} --json: {doc:#}"
        );
    }
    let listed: serde_json::Value =
        serde_json::from_str(&s.run(&["plugin", "list", "--json"]).stdout).unwrap();
    let (status, _, reason) =
        crate::support::plugins::outcome(&listed, "agentenv-mangled", "mangled");
    assert_eq!(status, "active", "{reason}: {listed:#}");
    // A plugin that exits with code 0 is not warned of.
    let clean = Sandboxed::new();
    mangled_plugin(&clean, "");
    let r = clean.run(&["plugin", "list"]);
    assert!(
        !r.stderr.contains("after agent-env shut it down"),
        "{}",
        r.both()
    );
}

/// A host.* request the plugin sends without "jsonrpc" but with an id and a method is answered at
/// once, under its id, with an invalid-request error (-32600) naming the defect, not left waiting
/// for an answer until the plugin's own timeout; the run's noise warning names it too.
#[test]
fn a_malformed_host_request_is_answered_with_invalid_request() {
    let s = Sandboxed::new();
    mangled_plugin(&s, "exec-host-no-jsonrpc");
    let began = Instant::now();
    let r = s
        .command(&["run", "./mangled", "-v"])
        .env("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "30")
        .output()
        .map(Ran::from)
        .unwrap();
    assert!(began.elapsed() < Duration::from_secs(20), "{}", r.both());
    let log = std::fs::read_to_string(newest_log(&s)).unwrap();
    let seen = format!("{}\n{log}", r.both());
    assert!(
        seen.contains(
            r#"mangled: host answered: {"jsonrpc":"2.0","id":"h1","error":{"code":-32600,"message":"the request host.store.object.exists was not run: it lacks \"jsonrpc\":\"2.0\": every message must carry it""#
        ),
        "{seen}"
    );
    assert!(
        seen.contains("meant as one: it lacks \"jsonrpc\":\"2.0\""),
        "{seen}"
    );
}
