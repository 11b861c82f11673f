//! Bundles whose steps come from plugins: a real Rust fixture plugin executes them over JSON-RPC and
//! calls the host's stores while it does; a plugin that fails, crashes mid-step or can't start fails
//! the run cleanly, with its sandbox torn down and nothing left running.

use crate::support::run::{fixture, running, Sandboxed};

const DEPLOY: &str = r#"{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}"#;

fn install_works(s: &Sandboxed) {
    install_works_with(s, "echo_step = \"EchoStep\"");
}

/// Installs the working fixture plugin with `echo_step` declared as given (its manifest entry).
fn install_works_with(s: &Sandboxed, echo_step_entry: &str) {
    let exe = fixture("fixture-works");
    install_works_run_by(s, &format!("\"{}\"", exe.display()), echo_step_entry);
}

/// The same, started by `exec` (the items of the manifest's `exec` array, as TOML).
fn install_works_run_by(s: &Sandboxed, exec: &str, echo_step_entry: &str) {
    s.install_manifest(
        "works",
        &format!(
            r#"[plugin]
name = "agentenv-fixture-works"
version = "0.3.0"
exec = [{exec}]
protocol = [1, 1]

[provides.task_steps]
{echo_step_entry}
store_roundtrip = "StoreRoundTrip"
"#
        ),
    );
}

/// A plugin process that crashes ends every step it runs: the tasks that only ran beside the one
/// that crashed it are told that the crash may have come from another task.
#[test]
fn a_crash_under_several_tasks_names_the_others() {
    let s = Sandboxed::new();
    install_works(&s);
    s.write(
        "crash/tasks/bad.json",
        r#"[{"id": "die", "type": "echo_step", "exit_after_seconds": 1}]"#,
    );
    s.write(
        "crash/tasks/good.json",
        r#"[{"id": "wait", "type": "echo_step", "sleep_seconds": 5}]"#,
    );
    let r = s.run(&["run", "./crash"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let good = r
        .stdout
        .lines()
        .find(|l| l.starts_with("  tasks/good.json v1: failed"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(
        good.contains("(it was running steps of tasks/bad.json too, so the crash may have come from one of those)"),
        "{good}"
    );
}

/// A score past 1 (or below 0) is warned about: 1 is full marks.
#[test]
fn a_score_outside_zero_to_one_is_warned_about() {
    let s = Sandboxed::new();
    shell_plugin(
        &s,
        r#"printf '{"jsonrpc":"2.0","id":%s,"result":{"metadata":{"verifications":{"g":{"score":2.5}}}}}\n' "$id""#,
    );
    s.write(
        "big/tasks/t.json",
        r#"[{"id": "grade", "type": "boom", "verifier_id": "g"}]"#,
    );
    let r = s.run(&["run", "./big"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stderr.contains(
            "[tasks/t.json] Warning: step 'grade' scored 2.5, outside 0 to 1 (1 is full marks)"
        ),
        "{}",
        r.both()
    );
}

/// Steps that run past their own `timeout_seconds` fail their tasks, and only theirs: the plugin is
/// slow, not unresponsive, so the other tasks' steps still run in it (three such timeouts made
/// every later task fail with crash-loop).
#[test]
fn steps_past_their_own_timeout_fail_only_their_tasks() {
    let s = Sandboxed::new();
    install_works(&s);
    for i in 1..=4 {
        s.write(
            &format!("slow/tasks/a{i}.json"),
            r#"[{"id": "wait", "type": "echo_step", "sleep_seconds": 3, "timeout_seconds": 0.2}]"#,
        );
    }
    for i in 1..=3 {
        s.write(
            &format!("slow/tasks/z{i}.json"),
            r#"[{"id": "quick", "type": "echo_step"}]"#,
        );
    }
    let r = s.run(&["run", "./slow", "-q"]);
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stdout_has("7 tasks: 3 unscored, 4 failed");
    assert!(
        !r.both().contains("crash-loop") && !r.both().contains("will not start it again"),
        "{}",
        r.both()
    );
}

#[test]
fn plugin_steps_run_in_the_plugin_and_reach_the_hosts_stores() {
    let s = Sandboxed::new();
    install_works(&s);
    s.write(
        "plugged/tasks/p.json",
        &format!(
            r#"[{DEPLOY},
               {{"id": "say", "type": "echo_step", "words": "hi"}},
               {{"id": "store", "type": "store_roundtrip", "text": "kept by the host"}}]"#
        ),
    );
    let r = s.run(&["run", "./plugged"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    r.assert_stdout_has("[tasks/p.json] step 2/3 say (echo_step)\n");
    r.assert_stdout_has("[tasks/p.json] step 3/3 store done in ");
    r.assert_stdout_has("  tasks/p.json v1: unscored, ");
    let instance = &s.docs("task_instances")[0];
    assert_eq!(instance["status"], "completed");
    let metadata = &instance["context"]["metadata"];
    // The plugin saw the step as stored and the run's context.
    assert_eq!(metadata["echo"]["step"]["words"], "hi");
    assert_eq!(metadata["echo"]["step"]["fail_task_on_error"], true);
    assert_eq!(metadata["echo"]["instance"], instance["instance_id"]);
    // Its host.store calls reached the local object store.
    assert_eq!(metadata["roundtrip"]["back"], "kept by the host");
    let url = metadata["roundtrip"]["url"].as_str().unwrap();
    assert!(url.starts_with("file://"), "{url}");
    assert_eq!(
        std::fs::read_to_string(s.state().join("object_store/roundtrip.txt")).unwrap(),
        "kept by the host"
    );
    assert!(s.sandboxes_left().is_empty());
}

/// A step that names a verifier but writes no score for it leaves its task unscored, and says why.
#[test]
fn a_verifier_that_wrote_no_score_is_warned_about() {
    let s = Sandboxed::new();
    install_works(&s);
    s.write(
        "plugged/tasks/p.json",
        &format!(
            r#"[{DEPLOY}, {{"id": "say", "type": "echo_step", "words": "hi", "verifier_id": "v"}}]"#
        ),
    );
    let r = s.run(&["run", "./plugged"]);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stdout_has("  tasks/p.json v1: unscored, ");
    assert!(
        r.stderr.contains("[tasks/p.json] Warning: step 'say' names verifier_id 'v', but the task's metadata.verifications['v'] gave no score: there is none"),
        "{}",
        r.stderr
    );
}

/// A bundle of several tasks, each with a plugin step: the plugin process is started once for the run
/// and every task's step is a call to that same process (no start per task).
#[test]
fn every_task_of_a_run_calls_the_one_plugin_process() {
    let s = Sandboxed::new();
    let starts = s.dir.path().join("starts.txt");
    // A shell that counts the starts, then becomes the fixture.
    install_works_run_by(
        &s,
        &format!(
            r#""/bin/sh", "-c", "echo $$ >> '{}'; exec '{}'""#,
            starts.display(),
            fixture("fixture-works").display()
        ),
        "echo_step = \"EchoStep\"",
    );
    for i in 0..6 {
        s.write(
            &format!("many/tasks/t{i}.json"),
            &format!(r#"[{DEPLOY}, {{"id": "say", "type": "echo_step", "words": "hi"}}]"#),
        );
    }
    let r = s.run(&["run", "./many"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(s.docs("task_instances").len(), 6);
    let started = std::fs::read_to_string(&starts).unwrap();
    assert_eq!(started.lines().count(), 1, "plugin starts: {started:?}");
    // Each start is counted: a second run starts it once more.
    assert_eq!(s.run(&["run", "./many"]).code, 0);
    let started = std::fs::read_to_string(&starts).unwrap();
    assert_eq!(started.lines().count(), 2, "plugin starts: {started:?}");
}

#[test]
fn a_plugin_step_that_fails_reports_the_plugins_error_type_and_message() {
    let s = Sandboxed::new();
    install_works(&s);
    s.write(
        "failing/tasks/f.json",
        &format!(r#"[{DEPLOY}, {{"id": "say", "type": "echo_step", "fail": true}}]"#),
    );
    let r = s.run(&["run", "./failing"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    r.assert_stdout_has("  tasks/f.json v1: failed at step 'say': ValueError: asked to fail, ");
    assert!(r.stdout.ends_with("\nTore down 1 sandbox.\n"));
    assert_eq!(s.docs("task_instances")[0]["status"], "failed");
}

#[test]
fn a_manifest_can_make_a_plugin_steps_failure_spare_its_task() {
    let s = Sandboxed::new();
    install_works_with(
        &s,
        "echo_step = { class = \"EchoStep\", fail_task_on_error = false }",
    );
    s.write(
        "spared/tasks/f.json",
        &format!(
            r#"[{DEPLOY},
               {{"id": "say", "type": "echo_step", "fail": true}},
               {{"id": "store", "type": "store_roundtrip", "text": "still runs"}}]"#
        ),
    );
    let r = s.run(&["run", "./spared"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    r.assert_stdout_has("[tasks/f.json] step 3/3 store done in ");
    let instance = &s.docs("task_instances")[0];
    assert_eq!(instance["status"], "completed");
    assert_eq!(
        instance["context"]["metadata"]["roundtrip"]["back"],
        "still runs"
    );

    // The task document still has the last word.
    s.write(
        "strict/tasks/f.json",
        &format!(
            r#"[{DEPLOY}, {{"id": "say", "type": "echo_step", "fail": true, "fail_task_on_error": true}}]"#
        ),
    );
    let r = s.run(&["run", "./strict"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
}

#[test]
fn a_step_type_the_manifest_lists_but_the_process_lacks_is_reported_before_any_step_runs() {
    let s = Sandboxed::new();
    s.install_manifest(
        "liar",
        &format!(
            r#"[plugin]
name = "agentenv-fixture-works-liar"
version = "0.1.0"
exec = ["{}"]
protocol = [1, 1]

[provides.task_steps]
not_really = "NotReally"
"#,
            fixture("fixture-works").display()
        ),
    );
    s.write(
        "liar/tasks/l.json",
        &format!(r#"[{DEPLOY}, {{"id": "x", "type": "not_really"}}]"#),
    );
    let r = s.run(&["run", "./liar"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "", "a step ran");
    assert!(
        r.stderr
            .contains("step 'x' (not_really) from the plugin agentenv-fixture-works-liar:"),
        "{}",
        r.stderr
    );
    assert!(s.sandboxes_left().is_empty());
}

#[test]
fn a_plugin_that_cannot_start_is_reported_before_any_step_runs() {
    let s = Sandboxed::new();
    s.install_manifest(
        "gone",
        r#"[plugin]
name = "agentenv-gone"
version = "0.1.0"
exec = ["./no-such-binary"]
protocol = [1, 1]

[provides.task_steps]
vanishing = "Vanishing"
"#,
    );
    s.write(
        "gone/tasks/g.json",
        &format!(r#"[{DEPLOY}, {{"id": "v", "type": "vanishing"}}]"#),
    );
    let r = s.run(&["run", "./gone"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr.contains("step 'v' (vanishing) from the plugin agentenv-gone: plugin agentenv-gone cannot start: its executable"),
        "{}",
        r.stderr
    );
    assert!(!s.local_db().exists(), "a refused run wrote documents");
}

/// A plugin speaking the protocol from a shell script: it answers `initialize` with one task step,
/// writes its pid, and kills itself in the middle of `execute`.
fn crashing_plugin(s: &Sandboxed) -> std::path::PathBuf {
    shell_plugin(s, "kill -9 $$")
}

/// The same plugin, doing `on_execute` when asked to execute.
pub(crate) fn shell_plugin(s: &Sandboxed, on_execute: &str) -> std::path::PathBuf {
    shell_plugin_starting(s, "", on_execute)
}

/// The same, running the shell lines `at_start` before it reads its first request.
pub(crate) fn shell_plugin_starting(
    s: &Sandboxed,
    at_start: &str,
    on_execute: &str,
) -> std::path::PathBuf {
    let pid_file = s.dir.path().join("plugin.pid");
    let result = r#"{"protocol":1,"plugin":{"name":"agentenv-crashy","version":"1.0"},"contributions":[{"group":"task_steps","name":"boom","type":"boom","class":"Boom","methods":["execute","from_dict"]}],"stores":[]}"#;
    let script = s.script(
        "crashy.sh",
        &format!(
            r#"#!/bin/sh
echo $$ > {pid}
{at_start}
sleep 300 &
while IFS= read -r line; do
  case "$line" in *'"id":'*) ;; *) continue ;; esac
  rest=${{line#*\"id\":}}
  id=${{rest%%[!0-9]*}}
  case "$line" in
    *'"method":"initialize"'*) printf '{{"jsonrpc":"2.0","id":%s,"result":%s}}\n' "$id" '{result}' ;;
    *'"method":"execute"'*) echo "crashy: dying in the middle of execute" >&2; {on_execute} ;;
    *) printf '{{"jsonrpc":"2.0","id":%s,"result":null}}\n' "$id" ;;
  esac
done
"#,
            pid = pid_file.display(),
            at_start = at_start,
            on_execute = on_execute
        ),
    );
    s.install_manifest(
        "crashy",
        &format!(
            r#"[plugin]
name = "agentenv-crashy"
version = "1.0"
exec = ["/bin/sh", "{}"]
protocol = [1, 1]

[provides.task_steps]
boom = "Boom"
"#,
            script.display()
        ),
    );
    pid_file
}

#[test]
fn a_plugin_that_crashes_mid_step_fails_the_run_cleanly() {
    let s = Sandboxed::new();
    let pid_file = crashing_plugin(&s);
    s.write(
        "crash/tasks/c.json",
        &format!(
            r#"[{DEPLOY}, {{"id": "bang", "type": "boom"}},
               {{"id": "after", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "a", "criteria": []}}]"#
        ),
    );
    let r = s.run(&["run", "./crash"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    // The one line a step failure gets is whole: it ends with the plugin's last stderr line.
    r.assert_stdout_has(
        "this is a bug in the plugin; its stderr's last line: 'crashy: dying in the middle of execute'\n",
    );
    r.assert_stdout_has("  tasks/c.json v1: failed at step 'bang': PluginError: ");
    assert!(!r.stdout.contains("step 3/3 after ("), "{}", r.stdout);
    assert!(
        r.stdout.ends_with("\nTore down 1 sandbox.\n"),
        "{}",
        r.stdout
    );
    assert!(s.sandboxes_left().is_empty());
    let instance = &s.docs("task_instances")[0];
    assert_eq!(instance["status"], "failed");
    assert_eq!(
        instance["context"]["metadata"]["failed_steps"][0]["error_type"],
        "PluginError"
    );
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!running(pid), "the plugin process is still running");
    // Its `sleep 300` child was in its process group, which the host kills.
    let leftovers = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|stat| {
                    let fields: Vec<String> = stat
                        .rsplit(')')
                        .next()?
                        .split_whitespace()
                        .map(String::from)
                        .collect();
                    // field 3 of the rest is the process group id.
                    Some(fields.get(2)? == &pid.to_string() && fields.first()? != "Z")
                })
                .unwrap_or(false)
        })
        .count();
    assert_eq!(
        leftovers, 0,
        "processes of the plugin's group are still running"
    );
}

/// A crash whose stderr has several lines: the step's line ends with the last, and the instance
/// keeps them all where `task get-instance` shows a failed step's traceback.
#[test]
fn a_crashed_plugins_stderr_is_kept_with_its_failed_step() {
    let s = Sandboxed::new();
    shell_plugin(&s, "echo 'crashy: the last words' >&2; kill -9 $$");
    s.write(
        "crash/tasks/c.json",
        &format!(r#"[{DEPLOY}, {{"id": "bang", "type": "boom"}}]"#),
    );
    let r = s.run(&["run", "./crash"]);
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stdout_has("its stderr's last line: 'crashy: the last words'\n");
    let instance = &s.docs("task_instances")[0];
    let failed = &instance["context"]["metadata"]["failed_steps"][0];
    let kept = failed["traceback"].as_str().unwrap_or_default();
    assert!(
        kept.contains("crashy: dying in the middle of execute\n    crashy: the last words"),
        "{failed:#}"
    );
    let id = instance["instance_id"].as_str().unwrap();
    let shown = s.run(&["task", "get-instance", id]);
    assert!(
        shown
            .stdout
            .contains("        crashy: dying in the middle of execute\n"),
        "{}",
        shown.both()
    );
}

/// Runs a task whose plugin step does `on_execute`, and sends the run SIGINT once the step has
/// reached the plugin; returns the plugin's pid file.
fn ctrl_c_during_a_plugin_step(s: &Sandboxed, on_execute: &str) -> std::path::PathBuf {
    use std::io::{BufRead, BufReader};
    let pid_file = shell_plugin(s, on_execute);
    s.write(
        "hang/tasks/h.json",
        &format!(r#"[{DEPLOY}, {{"id": "wait", "type": "boom"}}]"#),
    );
    let mut child = s
        .command(&["run", "./hang"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(s.home().join("run-stderr.txt")).unwrap())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let started = line.contains("step 2/2 wait (boom)");
        seen.push(line);
        if started {
            break;
        }
    }
    // The plugin says on stderr that it got `execute`, which the run's log has within 100 ms.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !std::fs::read_dir(s.state().join("logs"))
        .map(|logs| {
            logs.flatten().any(|log| {
                std::fs::read_to_string(log.path())
                    .is_ok_and(|text| text.contains("crashy: dying in the middle of execute"))
            })
        })
        .unwrap_or(false)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the step never reached the plugin"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: sends a signal to the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    seen.extend(lines.map_while(Result::ok));
    let out = seen.join("\n");
    assert_eq!(status.code(), Some(130), "{out}");
    assert!(out.contains("  tasks/h.json v1: cancelled, "), "{out}");
    assert!(out.ends_with("Tore down 1 sandbox."), "{out}");
    assert_eq!(s.docs("task_instances")[0]["status"], "cancelled");
    pid_file
}

#[test]
fn ctrl_c_during_a_plugin_step_stops_the_plugin_and_exits_130() {
    let s = Sandboxed::new();
    // The step sleeps on, deaf to the cancel: the plugin is ended with a signal, and the log says
    // so, so its author learns why the teardown waited.
    let pid_file = ctrl_c_during_a_plugin_step(&s, "sleep 300");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!running(pid), "the plugin process is still running");
    let log = std::fs::read_to_string(crate::run_plugin_ends::newest_log(&s)).unwrap();
    assert!(
        log.contains("Warning: plugin agentenv-crashy did not end when the run was cancelled"),
        "{log}"
    );
    assert!(log.contains("so agent-env ended it with SIGTERM"), "{log}");
    // The person watching is told too, not only the log and the JSON.
    let stderr = std::fs::read_to_string(s.home().join("run-stderr.txt")).unwrap();
    assert_eq!(
        stderr
            .matches("Warning: plugin agentenv-crashy did not end when the run was cancelled")
            .count(),
        1,
        "{stderr}"
    );
}

#[test]
fn a_plugin_that_heeds_the_cancel_is_not_said_to_ignore_it() {
    let s = Sandboxed::new();
    // The step answers nothing until its call is cancelled: the shell loop then answers the
    // cancel's id (the step's) and `shutdown`, and exits when its stdin closes.
    ctrl_c_during_a_plugin_step(&s, "pending=$id");
    let log = std::fs::read_to_string(crate::run_plugin_ends::newest_log(&s)).unwrap();
    assert!(log.contains(" SIGINT received: cancelling"), "{log}");
    assert!(
        !log.contains("did not end when the run was cancelled"),
        "{log}"
    );
}

/// A failure of several lines keeps the task's time and instance on its first line in the summary,
/// not between its lines.
#[test]
fn a_failure_of_several_lines_keeps_the_summary_line_whole() {
    let s = Sandboxed::new();
    shell_plugin(
        &s,
        r#"printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"line one\\nline two"}}\n' "$id""#,
    );
    s.write("multi/tasks/m.json", r#"[{"id": "go", "type": "boom"}]"#);
    let r = s.run(&["run", "./multi"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let summary = r
        .stdout
        .lines()
        .skip_while(|l| *l != "Tasks:")
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert!(
        summary.starts_with("  tasks/m.json v1: failed at step 'go': "),
        "{}",
        r.both()
    );
    assert!(
        summary.contains(": line one, ") && summary.contains("s, instance "),
        "{summary}"
    );
    r.assert_stdout_has(&format!("{summary}\nline two"));
}

/// A configured store that the plugin running the run's steps provides, whose config table that
/// plugin's store refuses (a key it does not take): the run refuses once, before any task starts,
/// naming the section, the store, the plugin and the problem, with the config's other up-front
/// problems' exit code and `--json` `problems`, rather than each task's step failing on it in turn.
#[test]
fn a_store_the_steps_plugin_provides_with_a_refused_table_stops_the_run_once() {
    let s = Sandboxed::new();
    s.install_fixture_works(
        "[provides.task_steps]\nstore_roundtrip = \"StoreRoundTrip\"\n\n[provides.stores]\nTableSecretStore = \"secret\"\n",
    );
    s.write(
        ".agentenv/config.toml",
        "[stores.secret]\nimpl = \"agentenv-fixture-works:TableSecretStore\"\nconfig = { values = { token = \"t\" }, colour = \"blue\" }\n",
    );
    for task in ["one", "two"] {
        s.write(
            &format!("b/tasks/{task}.json"),
            r#"[{"id": "e", "type": "store_roundtrip", "text": "x"}]"#,
        );
    }
    let said = "[stores.secret] names the secret store agentenv-fixture-works:TableSecretStore of the plugin agentenv-fixture-works, which runs this run's steps; it can't be opened, so no task was started: [stores.secret.config] The config table for 'agentenv-fixture-works:TableSecretStore' has unknown key 'colour'; it takes values, open_delay_ms (the keys the plugin agentenv-fixture-works declares for TableSecretStore in its initialize answer)";
    let r = s.run(&["run", "./b"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert_eq!(r.stderr.matches(said).count(), 1, "{}", r.both());
    assert!(
        r.stderr
            .contains("Fix them, then check with `agent-env config check`."),
        "{}",
        r.both()
    );
    assert!(!r.both().contains("step 1/1"), "{}", r.both());
    assert!(!s.local_db().exists() || s.docs("task_instances").is_empty());
    let r = s.run(&["run", "./b", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["status"], "error", "{doc:#}");
    assert_eq!(doc["problems"], serde_json::json!([said]), "{doc:#}");
    assert_eq!(doc["tasks"], serde_json::json!([]), "{doc:#}");
    // With a table the store takes, the same tasks run.
    s.write(
        ".agentenv/config.toml",
        "[stores.secret]\nimpl = \"agentenv-fixture-works:TableSecretStore\"\nconfig = { values = { token = \"t\" } }\n",
    );
    let r = s.run(&["run", "./b"]);
    assert_eq!(r.code, 0, "{}", r.both());
}
