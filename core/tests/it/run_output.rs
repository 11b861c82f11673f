//! What a run shows and keeps: a Rust fixture step that reports progress, writes to stderr and to
//! `$/log`, and panics or fails; `--verbose`, the per-run log, the traceback in the instance record,
//! `run --json`, `--fail-under`, and the whole reason of a plugin that cannot start.

use serde_json::Value;

use crate::support::run::{fixture, Ran, Sandboxed};
use agent_env_test_support::terminal::on_a_whole_terminal;

const PACKAGE: &str = "agentenv-fixture-works";

fn install_chatty(s: &Sandboxed) {
    s.install_manifest(
        "works",
        &format!(
            r#"[plugin]
name = "{PACKAGE}"
version = "0.3.0"
exec = ["{}"]
protocol = [1, 1]

[provides.task_steps]
chatty_step = "ChattyStep"
"#,
            fixture("fixture-works").display()
        ),
    );
}

/// A bundle `./chatty` whose one task runs the chatty step with `extra` fields.
fn chatty_bundle(s: &Sandboxed, extra: &str) {
    s.write(
        "chatty/tasks/c.json",
        &format!(r#"[{{"id": "talk", "type": "chatty_step"{extra}}}]"#),
    );
}

fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// The one log file the run left.
fn only_log(s: &Sandboxed) -> (std::path::PathBuf, String) {
    let dir = s.state().join("logs");
    let logs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("no log folder {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let text = std::fs::read_to_string(&logs[0]).unwrap();
    (logs[0].clone(), text)
}

/// With several tasks running one plugin's steps at once, a `$/log` line naming its call says which
/// task and step it is about, on the terminal (`-v`) and in the log, in the same order.
#[test]
fn with_several_tasks_a_plugins_log_line_names_its_task() {
    let s = Sandboxed::new();
    install_chatty(&s);
    for name in ["a", "b"] {
        s.write(
            &format!("chatty/tasks/{name}.json"),
            r#"[{"id": "talk", "type": "chatty_step"}]"#,
        );
    }
    let r = s.run(&["-v", "run", "./chatty"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let (_, log) = only_log(&s);
    for task in ["tasks/a.json", "tasks/b.json"] {
        let shown = format!("[{PACKAGE}] [{task}] talk warning: chatty: a log line");
        assert!(
            r.stderr.contains(&shown),
            "{shown:?} missing:\n{}",
            r.stderr
        );
        let logged = format!("[{PACKAGE}] [{task}] talk warning: chatty: a log line");
        assert!(log.contains(&logged), "{logged:?} missing:\n{log}");
    }
}

/// What a plugin writes to stderr while it starts, before any step, reaches `-v` and the run's log
/// (it was dropped: no call was there to hear it).
#[test]
fn a_plugins_stderr_while_it_starts_reaches_verbose_and_the_log() {
    let s = Sandboxed::new();
    crate::run_plugins::shell_plugin_starting(
        &s,
        "echo 'crashy: loaded 3 models, 1 skipped' >&2",
        r#"printf '{"jsonrpc":"2.0","id":%s,"result":{"metadata":{}}}\n' "$id""#,
    );
    s.write("early/tasks/t.json", r#"[{"id": "go", "type": "boom"}]"#);
    let r = s.run(&["-v", "run", "./early"]);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stderr_has("[agentenv-crashy] crashy: loaded 3 models, 1 skipped");
    let (_, log) = only_log(&s);
    assert!(
        log.contains("stderr: crashy: loaded 3 models, 1 skipped"),
        "{log}"
    );
}

#[test]
fn a_panicking_rust_step_shows_its_output_with_verbose_and_keeps_all_of_it() {
    let s = Sandboxed::new();
    install_chatty(&s);
    chatty_bundle(&s, r#", "panic": true"#);
    let r = s.run(&["-v", "run", "./chatty", "--json"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    // stdout is the JSON document alone.
    let doc = json_of(&r.stdout);
    assert_eq!(doc["format_version"], 1);
    assert_eq!(doc["status"], "failed");
    assert_eq!(doc["exit_code"], 1);
    let step = &doc["tasks"][0]["steps"][0];
    assert_eq!(step["step_id"], "talk");
    assert_eq!(step["package"], PACKAGE);
    assert_eq!(step["status"], "failed");
    assert_eq!(step["error_type"], "panic");
    assert_eq!(step["error"], "chatty was told to panic");
    let traceback = step["traceback"].as_str().unwrap();
    assert!(traceback.starts_with("panicked at "), "{traceback}");
    assert!(traceback.contains("fixture-works.rs:"), "{traceback}");
    // With -v: the plugin's stderr and log lines, the progress and the traceback, on stderr.
    for expected in [
        format!("[{PACKAGE}] chatty: a line on stderr"),
        // One task: its step, as the log names it, without the task.
        format!("[{PACKAGE}] talk warning: chatty: a log line"),
        "[tasks/c.json] talk 1/3 (33%) warming up".to_string(),
        "[tasks/c.json] talk 3/3 (100%) done".to_string(),
        "    panicked at ".to_string(),
        "[tasks/c.json] step 1/1 talk failed in ".to_string(),
    ] {
        assert!(
            r.stderr.contains(&expected),
            "{expected:?} missing:\n{}",
            r.stderr
        );
    }
    // The log has all of it, and its path is printed and in the document.
    let (path, log) = only_log(&s);
    assert_eq!(doc["log"], path.display().to_string());
    assert!(r.stderr.contains(&format!(
        "The run's log, with each plugin's output: {}",
        path.display()
    )));
    for expected in [
        // With the step when the line came while it ran (stderr may come after it ended).
        " stderr: chatty: a line on stderr",
        " warning: chatty: a log line",
        "progress 2/3 (67%): halfway",
        "failed in ",
        "panicked at ",
    ] {
        assert!(
            log.contains(expected),
            "{expected:?} missing from the log:\n{log}"
        );
    }
    // The instance record keeps the traceback with the failure.
    let instance = &s.docs("task_instances")[0];
    let failed = &instance["context"]["metadata"]["failed_steps"][0];
    assert_eq!(failed["error_type"], "panic");
    assert!(failed["traceback"]
        .as_str()
        .unwrap()
        .contains("chatty was told to panic"));
    assert_eq!(doc["tasks"][0]["instance_id"], instance["instance_id"]);
    assert!(!r.stderr.contains("-v shows it here"), "{}", r.stderr);
    // Without -v, where the traceback is, once.
    let quiet = s.run(&["run", "./chatty"]);
    assert_eq!(quiet.code, 1, "{}", quiet.both());
    assert_eq!(
        quiet
            .both()
            .matches("(the failed step's traceback: -v shows it here, and the run's log has it)")
            .count(),
        1,
        "{}",
        quiet.both()
    );
    assert!(
        !quiet.both().contains("    panicked at "),
        "{}",
        quiet.both()
    );
}

#[test]
fn without_verbose_plugin_output_goes_only_to_the_log_and_progress_is_plain_lines() {
    let s = Sandboxed::new();
    install_chatty(&s);
    chatty_bundle(&s, r#", "fail": true"#);
    let r = s.run(&["run", "./chatty"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        !r.stderr.contains("chatty: a line on stderr"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("chatty: a log line"), "{}", r.stderr);
    // Off a terminal, each progress report is one plain line among the run's lines.
    r.assert_stdout_has("[tasks/c.json] talk 1/3 (33%) warming up\n");
    r.assert_stdout_has("[tasks/c.json] talk 2/3 (67%) halfway\n");
    r.assert_stdout_has(
        "  tasks/c.json v1: failed at step 'talk': ValueError: chatty was told to fail, ",
    );
    let (path, log) = only_log(&s);
    assert!(r.stderr.ends_with(&format!(
        "The run's log, with each plugin's output: {}\n",
        path.display()
    )));
    assert!(log.contains(" stderr: chatty: a line on stderr"));
}

/// A dumb terminal (an editor's shell, a CI log viewer that fakes one) shows escape codes as text:
/// with `TERM=dumb` a run draws no progress bar, only the plain lines a pipe gets, and writes no
/// escape code at all. `NO_COLOR` is about colour only: the bar is still drawn.
#[test]
fn on_a_dumb_terminal_progress_is_plain_lines_without_escape_codes() {
    let s = Sandboxed::new();
    install_chatty(&s);
    chatty_bundle(&s, "");
    let mut dumb = s.command(&["run", "./chatty"]);
    dumb.env("TERM", "dumb").env_remove("NO_COLOR");
    let (code, shown) = on_a_whole_terminal(dumb);
    assert_eq!(code, 0, "{shown}");
    assert!(
        !shown.contains('\x1b'),
        "an escape code on a dumb terminal:\n{shown:?}"
    );
    let shown = shown.replace("\r\n", "\n");
    assert!(
        !shown.contains('\r'),
        "a line redrawn on a dumb terminal:\n{shown:?}"
    );
    assert!(
        shown.contains("[tasks/c.json] talk 1/3 (33%) warming up\n"),
        "{shown:?}"
    );
    assert!(
        shown.contains("[tasks/c.json] talk 2/3 (67%) halfway\n"),
        "{shown:?}"
    );

    let mut no_color = s.command(&["run", "./chatty"]);
    no_color.env("TERM", "xterm").env("NO_COLOR", "1");
    let (code, shown) = on_a_whole_terminal(no_color);
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("\r\x1b[2K[tasks/c.json] talk ["),
        "NO_COLOR alone keeps the bar:\n{shown:?}"
    );
    assert!(
        !shown.contains("\x1b[3"),
        "a colour with NO_COLOR:\n{shown:?}"
    );
}

#[test]
fn a_run_that_passes_prints_no_log_path_and_json_has_scores_steps_and_timings() {
    let s = Sandboxed::new();
    let r = s.run(&["run", "hello", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("The run's log"), "{}", r.stderr);
    // The run's lines go to stderr, so stdout stays one JSON document.
    assert!(
        r.stderr.contains("[tasks/hello.json] passed in "),
        "{}",
        r.stderr
    );
    let doc = json_of(&r.stdout);
    assert_eq!(doc["status"], "passed");
    assert_eq!(doc["bundle"], "hello");
    assert!(doc["run_group_id"].as_str().unwrap().starts_with("run-"));
    let task = &doc["tasks"][0];
    assert_eq!(task["path"], "tasks/hello.json");
    assert_eq!(task["version"], 1);
    assert_eq!(task["outcome"], "passed");
    assert_eq!(task["summary"], "passed (hello: 1)");
    assert_eq!(task["scores"]["hello"], 1.0);
    // What each criterion found, as the instance records it: a script needs no second command.
    let found = &task["verifications"]["hello"];
    assert_eq!(found["score"], 1.0);
    let criteria: Vec<(&str, bool, &str)> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["criterion"].as_str().unwrap(),
                c["result"].as_bool().unwrap(),
                c["justification"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        criteria,
        [
            ("greets", true, "contains 'hello'"),
            ("check passes", true, "exit=0; stderr=")
        ]
    );
    let steps: Vec<&str> = task["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|st| {
            assert_eq!(st["status"], "succeeded");
            assert!(st["duration_seconds"].as_f64().unwrap() >= 0.0);
            st["step_id"].as_str().unwrap()
        })
        .collect();
    assert_eq!(steps, ["box", "load", "hello"]);
    let instance = task["instance_id"].as_str().unwrap();
    assert!(instance.starts_with("@local/agentenv-framework/hello/hello-"));
}

/// What the lines say, the document says: the entities and why each was written, each eval's tally,
/// the tasks no eval names, and the warnings; a dry run's document lists what it would run.
#[test]
fn run_json_carries_entities_evals_skipped_tasks_warnings_and_the_dry_run_plan() {
    let s = Sandboxed::new();
    let folder = s.copy_hello("full");
    std::fs::create_dir_all(folder.join("evals")).unwrap();
    std::fs::write(folder.join("evals/one.toml"), "tasks = [\"hello\"]\n").unwrap();
    std::fs::write(
        folder.join("tasks/other.json"),
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    )
    .unwrap();
    let task = folder.join("tasks/hello.json");
    let text = std::fs::read_to_string(&task).unwrap().replace(
        r#""criteria": ["#,
        r#""criteria": [{"type": "probe_weird", "criterion": "typo"},"#,
    );
    std::fs::write(&task, text).unwrap();

    let dry = s.run(&["run", "./full", "--dry-run", "--json"]);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    let doc = json_of(&dry.stdout);
    assert_eq!(doc["status"], "dry_run");
    assert_eq!(doc["tasks"][0]["path"], "tasks/hello.json");
    assert_eq!(doc["tasks"][0]["outcome"], "planned");
    assert_eq!(doc["entities"][0]["path"], "artifacts/greeting");
    assert_eq!(doc["entities"][0]["reasons"], serde_json::json!(["new"]));
    assert_eq!(
        doc["skipped"][0]["reason"],
        "isn't named by any eval, so it would not run; run it with --task other"
    );

    let r = s.run(&["run", "./full", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = json_of(&r.stdout);
    let entities: Vec<(&str, &str, bool)> = doc["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap(),
                e["path"].as_str().unwrap(),
                e["written"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        entities,
        [
            ("artifact", "artifacts/greeting", true),
            ("task", "tasks/hello.json", true),
            ("eval", "evals/one.toml", true)
        ]
    );
    assert_eq!(
        doc["evals"],
        serde_json::json!([{"eval_id": "@local/~/full/one", "eval_path": "evals/one.toml",
                            "eval_version": 1, "tasks": 1, "passed": 1, "scored_below_one": 0, "unscored": 0, "failed": 0, "cancelled": 0, "didnt_start": 0}])
    );
    assert_eq!(doc["skipped"][0]["path"], "tasks/other.json");
    assert_eq!(
        doc["skipped"][0]["reason"],
        "isn't named by any eval, so it didn't run; run it with --task other"
    );
    // Said before the run starts, as a dry run says it, and again as the run skips it.
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().all(|w| w["path"] == "tasks/hello.json"),
        "{warnings:?}"
    );
    let said = |needle: &str| {
        warnings
            .iter()
            .any(|w| w["message"].as_str().unwrap().contains(needle))
    };
    assert!(said("has the type 'probe_weird'"), "{warnings:?}");
    assert!(said("of type 'probe_weird'"), "{warnings:?}");
    // A rerun decides everything unchanged.
    let again = json_of(&s.run(&["run", "./full", "--json"]).stdout);
    assert_eq!(again["entities"][1]["written"], false);
    assert_eq!(again["entities"][1]["reasons"], serde_json::json!([]));
}

#[test]
fn fail_under_exits_3_naming_the_task_below_it() {
    let s = Sandboxed::new();
    let r = s.run(&["run", "hello", "--fail-under", "1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // One criterion of two passes: the task scores 0.5.
    s.write(
        "half/tasks/half.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "half",
             "aggregator": "weighted_average",
             "criteria": [{"type": "bash_cmd_succeeds", "command": "true"},
                          {"type": "bash_cmd_succeeds", "command": "false"}]}]"#,
    );
    let r = s.run(&["run", "./half", "--fail-under", "0.75", "--json"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("tasks/half.json scored 0.5, below --fail-under 0.75\n"),
        "{}",
        r.stderr
    );
    let doc = json_of(&r.stdout);
    assert_eq!(doc["status"], "below_fail_under");
    assert_eq!(doc["exit_code"], 3);
    assert_eq!(doc["fail_under"], 0.75);
    let r = s.run(&["run", "./half", "--fail-under", "0.5", "-q"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// A task's score is from 0 to 1: a bound outside that (which every task, or none, would be below)
/// is a slip, refused before anything runs, as clap refuses any value it cannot read.
#[test]
fn fail_under_outside_0_to_1_is_a_usage_error() {
    let s = Sandboxed::new();
    for (value, why) in [
        ("1.5", "outside 0 to 1"),
        // A negative bound is a value, not an option, and is refused as one.
        ("-1", "outside 0 to 1"),
        ("nan", "outside 0 to 1"),
        ("inf", "outside 0 to 1"),
        ("most", "not a number"),
    ] {
        for command in [&["run", "hello"][..], &["task", "run", "team/hello"][..]] {
            let mut args = command.to_vec();
            args.extend(["--fail-under", value]);
            let r = s.run(&args);
            assert_eq!(r.code, 2, "{args:?}: {}", r.both());
            assert!(
                r.stderr.contains(&format!(
                    "invalid value '{value}' for '--fail-under <SCORE>': {why}; give a score from 0 to 1 (a task's score is in that range), such as 1 or 0.75"
                )),
                "{args:?}: {}",
                r.stderr
            );
        }
    }
}

#[test]
fn run_json_with_no_bundle_lists_the_installed_bundles() {
    let s = Sandboxed::new();
    let r = s.run(&["run", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = json_of(&r.stdout);
    assert_eq!(doc["format_version"], 1);
    let hello = doc["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "hello")
        .unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(hello["package"], "agentenv-framework");
    assert_eq!(hello["tasks"], serde_json::json!(["hello"]));
    // Built in: no folder, said as such, not in a sentence a script cannot use.
    assert_eq!(hello["folder"], Value::Null, "{hello:#}");
    assert_eq!(hello["built_in"], true);
    // A plugin's bundle folder is its absolute path.
    let folder = s.plugins().join("shipper/bundles/shipped");
    std::fs::create_dir_all(folder.join("tasks")).unwrap();
    std::fs::write(
        folder.join("tasks/t.json"),
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    )
    .unwrap();
    s.install_manifest(
        "shipper",
        "[plugin]\nname = \"agentenv-shipper\"\nversion = \"1\"\nexec = [\"./x\"]\nprotocol = [1, 1]\n[provides.bundles]\nshipped = \"bundles/shipped\"\n",
    );
    let doc = json_of(&s.run(&["run", "--json"]).stdout);
    let shipped = doc["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "shipped")
        .unwrap_or_else(|| panic!("{doc:#}"))
        .clone();
    assert_eq!(
        shipped["folder"],
        folder.display().to_string(),
        "{shipped:#}"
    );
    assert_eq!(shipped["built_in"], false);
}

#[test]
fn a_plugin_that_cannot_start_is_reported_with_its_whole_stderr() {
    let s = Sandboxed::new();
    let script = s.script(
        "dies.sh",
        "#!/bin/sh\necho 'first: loading settings' >&2\necho 'second: the settings file /etc/x.toml is missing' >&2\nexit 3\n",
    );
    s.install_manifest(
        "dies",
        &format!(
            "[plugin]\nname = \"agentenv-dies\"\nversion = \"0.1.0\"\nexec = [\"{}\"]\nprotocol = [1, 1]\n\n[provides.task_steps]\ndying = \"Dying\"\n",
            script.display()
        ),
    );
    s.write("dies/tasks/d.json", r#"[{"id": "d", "type": "dying"}]"#);
    for dry in [false, true] {
        let args: &[&str] = if dry {
            &["run", "./dies", "--dry-run"]
        } else {
            &["run", "./dies"]
        };
        let r = s.run(args);
        assert_eq!(r.code, 1, "dry run {dry}: {}{}", r.stdout, r.stderr);
        for expected in [
            "step 'd' (dying) from the plugin agentenv-dies: ",
            "first: loading settings",
            "second: the settings file /etc/x.toml is missing",
        ] {
            assert!(
                r.stderr.contains(expected),
                "dry run {dry}: {expected:?}:\n{}",
                r.stderr
            );
        }
    }
    assert!(!s.local_db().exists(), "a refused run wrote documents");
}

/// A wire-level step plugin that writes a stray line to stdout before its handshake, then answers
/// every request with an empty step result.
fn install_noisy_step(s: &Sandboxed) {
    let noisy = s.script(
        "noisy-step.sh",
        r#"#!/bin/sh
echo "debug: a stray print"
IFS= read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"plugin":{"name":"agentenv-noisy","version":"1"},"contributions":[{"group":"task_steps","name":"noisy_step","type":"noisy_step","class":"NoisyStep","methods":["execute","from_dict"]}]}}'
while IFS= read -r line; do
  rest=${line#*\"id\":}
  id=${rest%%[!0-9]*}
  [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"result":{"metadata":{}}}\n' "$id"
done
"#,
    );
    s.install_manifest(
        "noisy",
        &format!(
            "[plugin]\nname = \"agentenv-noisy\"\nversion = \"1\"\nexec = [\"/bin/sh\", \"{}\"]\nprotocol = [1, 1]\n\n[provides.task_steps]\nnoisy_step = \"NoisyStep\"\n",
            noisy.display()
        ),
    );
    s.write(
        "noisy/tasks/t.json",
        r#"[{"id": "n", "type": "noisy_step"}]"#,
    );
}

#[test]
fn a_plugin_that_writes_noise_to_stdout_is_warned_about_once_per_run() {
    let s = Sandboxed::new();
    install_noisy_step(&s);
    for args in [
        &["run", "./noisy"][..],
        &["run", "--dry-run", "./noisy"][..],
    ] {
        let r = s.run(args);
        assert_eq!(r.code, 0, "{}", r.both());
        let warning = "Warning: plugin agentenv-noisy wrote 1 line(s) to stdout that are not protocol messages (first: 'debug: a stray print')";
        assert_eq!(
            r.stderr.matches(warning).count(),
            1,
            "{args:?}: {}",
            r.both()
        );
        assert!(!r.stdout.contains("a stray print"), "{}", r.stdout);
    }
    // A script reads it in the run's document, and the run's log keeps it.
    let r = s.run(&["run", "./noisy", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let said = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| {
            w["message"].as_str().is_some_and(|m| {
                m.starts_with("plugin agentenv-noisy wrote 1 line(s) to stdout that are not protocol messages")
            })
        })
        .count();
    assert_eq!(said, 1, "{doc:#}");
    let log = std::fs::read_to_string(doc["log"].as_str().unwrap()).unwrap();
    assert!(
        log.contains("Warning: plugin agentenv-noisy wrote 1 line(s)"),
        "{log}"
    );
}

/// `--quiet` leaves out the line per step and per unchanged entity; what was written, each task's
/// end, a failed step and the summary stay.
#[test]
fn a_quiet_run_prints_each_tasks_end_and_what_went_wrong() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    let r = s.run(&["run", "hello", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let shown = crate::support::run::mask_durations(&r.stdout);
    assert!(
        shown.starts_with(
            "[tasks/hello.json] passed in N.Ns\n\nTasks:\n  tasks/hello.json v1: passed (hello: 1)"
        ),
        "{shown}"
    );
    assert!(!shown.contains("step 1/3"), "{shown}");

    s.write(
        "broken/tasks/fails.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
  {"id": "boom", "type": "verify_sandbox", "sandbox_name": "elsewhere", "verifier_id": "v", "criteria": []}]"#,
    );
    let r = s.run(&["run", "./broken", "-q"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let shown = crate::support::run::mask_durations(&r.stdout);
    assert!(shown.starts_with("tasks/fails.json: v1 (new)\n"), "{shown}");
    assert!(
        shown.contains("[tasks/fails.json] step 2/2 boom failed in N.Ns: "),
        "{shown}"
    );
    assert!(!shown.contains("step 1/2"), "{shown}");
}

/// The bundle `./esc`: one task whose criterion's command writes cursor moves, a screen clear and
/// colour codes (the last one left on) to stderr and fails.
fn escaping_bundle(s: &Sandboxed) {
    s.write(
        "esc/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
  {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
   "criteria": [{"type": "bash_cmd_succeeds",
                 "command": "printf 'A\\033[2JB\\033[1AC\\033[KD\\033[?25lE\\033[0mF\\033[31mRED' >&2; exit 1"}]}]"#,
    );
}

/// Whether `line` leaves a colour on: a colour code after the last reset.
fn leaves_colour_on(line: &str) -> bool {
    let last_reset = line.rfind("\u{1b}[0m");
    let last_code = line.rfind("\u{1b}[");
    match (last_code, last_reset) {
        (None, _) => false,
        (Some(code), Some(reset)) => code != reset,
        (Some(_), None) => true,
    }
}

/// A task command's escape codes reach neither a pipe nor a file as bytes when colour is off (no
/// terminal, `NO_COLOR`, `--color never`): its colour codes are shown as text like any other. With
/// colour on, its colour is ended with the line, so a CI log is not painted red from there on.
#[test]
fn a_commands_escape_codes_are_text_without_colour_and_end_with_their_line_with_it() {
    let s = Sandboxed::new();
    escaping_bundle(&s);
    let never = s.run(&["--color", "never", "run", "./esc"]);
    let no_color = Ran::from(
        s.command(&["run", "./esc"])
            .env("NO_COLOR", "1")
            .output()
            .unwrap(),
    );
    let piped = s.run(&["run", "./esc", "-q"]);
    for (how, r) in [
        ("--color never", &never),
        ("NO_COLOR", &no_color),
        ("a pipe", &piped),
    ] {
        assert_eq!(r.code, 0, "{how}: {}", r.both());
        assert!(
            !r.stdout.contains('\u{1b}') && !r.stderr.contains('\u{1b}'),
            "{how}: an escape byte got through:\n{:?}",
            r.both()
        );
        r.assert_stdout_has(r"stderr=A\x1b[2JB\x1b[1AC\x1b[KD\x1b[?25lE\x1b[0mF\x1b[31mRED");
    }
    // Into a file, as a CI job keeps its log.
    let file = s.dir.path().join("out.log");
    let status = s
        .command(&["--color", "never", "run", "./esc"])
        .stdout(std::fs::File::create(&file).unwrap())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let logged = std::fs::read_to_string(&file).unwrap();
    assert!(!logged.contains('\u{1b}'), "{logged:?}");

    let always = s.run(&["--color", "always", "run", "./esc"]);
    assert_eq!(always.code, 0, "{}", always.both());
    // The moves and the clear stay text; the colours are kept, and each line ends uncoloured.
    assert!(
        always
            .stdout
            .contains("stderr=A\\x1b[2JB\\x1b[1AC\\x1b[KD\\x1b[?25lE\u{1b}[0mF\u{1b}[31mRED"),
        "{:?}",
        always.stdout
    );
    for line in always.stdout.lines().chain(always.stderr.lines()) {
        assert!(!leaves_colour_on(line), "{line:?} leaves a colour on");
    }
}

/// A task `tasks/<name>.json` whose one criterion runs `command`; `sandbox` is the one it checks
/// (one it did not deploy fails the task).
fn criterion_task(s: &Sandboxed, bundle: &str, name: &str, sandbox: &str, command: &str) {
    s.write(
        &format!("{bundle}/tasks/{name}.json"),
        &format!(
            r#"[{{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}},
  {{"id": "v", "type": "verify_sandbox", "sandbox_name": "{sandbox}", "verifier_id": "v",
   "criteria": [{{"type": "bash_cmd_succeeds", "command": "{command}"}}]}}]"#
        ),
    );
}

/// A run of many tasks names the few that did not pass after its tally, where a CI log's reader
/// looks, and `--json` counts them; a small run, whose summary is read at a glance, does not repeat
/// them.
#[test]
fn a_long_runs_summary_ends_naming_the_tasks_that_did_not_pass() {
    let s = Sandboxed::new();
    for i in 0..10 {
        criterion_task(&s, "many", &format!("ok{i:02}"), "box", "true");
    }
    criterion_task(&s, "many", "low", "box", "false");
    criterion_task(&s, "many", "broken", "elsewhere", "true");
    let r = s.run(&["run", "./many", "-q"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let shown = crate::support::run::mask_durations(&r.stdout);
    let tally = "  12 tasks: 10 passed, 1 scored below 1, 1 failed\n";
    let at = shown
        .find(tally)
        .unwrap_or_else(|| panic!("no tally:\n{shown}"));
    let after: Vec<&str> = shown[at + tally.len()..].lines().collect();
    assert_eq!(after[0], "  Not passed:", "{shown}");
    assert!(
        after[1].starts_with("    tasks/broken.json v1: failed at step 'v': "),
        "{shown}"
    );
    assert!(!after.iter().any(|l| l.contains("tasks/ok")), "{shown}");
    // Quiet, a long run's summary lists no task above the tally: the tally and the tasks named
    // after it (each with its instance) say what needs reading; a run that is not quiet lists every
    // task there.
    let listed = |shown: &str| -> String {
        let from = shown.find("\nTasks:\n").expect("a summary");
        let to = shown.find(tally).expect("a tally");
        shown[from..to].to_string()
    };
    assert_eq!(listed(&shown), "\nTasks:\n", "{shown}");
    assert!(
        after[2].starts_with("    tasks/low.json v1: scored below 1 (v: 0), instance @local/"),
        "{shown}"
    );
    let r = s.run(&["run", "./many"]);
    let shown = crate::support::run::mask_durations(&r.stdout);
    assert_eq!(listed(&shown).matches("tasks/ok").count(), 10, "{shown}");

    let r = s.run(&["run", "./many", "-q", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc = json_of(&r.stdout);
    assert_eq!(
        doc["counts"],
        serde_json::json!({"tasks": 12, "passed": 10, "scored_below_one": 1, "unscored": 0,
                           "failed": 1, "cancelled": 0, "didnt_start": 0}),
        "{doc:#}"
    );

    criterion_task(&s, "few", "ok", "box", "true");
    criterion_task(&s, "few", "low", "box", "false");
    let r = s.run(&["run", "./few", "-q"]);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stdout_has("  2 tasks: 1 passed, 1 scored below 1\n");
    assert!(!r.stdout.contains("Not passed"), "{}", r.stdout);
}

/// Every run document has `problems`: the config's when it cannot be read, the bundle's when it is
/// refused, and an empty list otherwise, so a script reads the key without a check.
#[test]
fn a_run_documents_problems_are_always_there() {
    let s = Sandboxed::new();
    let r = s.run(&["run", "hello", "--json"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert_eq!(json_of(&r.stdout)["problems"], serde_json::json!([]));

    let r = s.run(&["run", "./nowhere", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc = json_of(&r.stdout);
    assert_eq!(doc["problems"].as_array().map(Vec::len), Some(1), "{doc:#}");

    s.write(".agentenv/config.toml", "stores = [\n");
    let r = s.run(&["run", "hello", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc = json_of(&r.stdout);
    assert_eq!(doc["status"], "error");
    let error = doc["error"].as_str().unwrap_or_default();
    assert!(error.contains("has 1 problem(s)"), "{doc:#}");
    let problems = doc["problems"].as_array().cloned().unwrap_or_default();
    assert_eq!(problems.len(), 1, "{doc:#}");
    let problem = problems[0].as_str().unwrap_or_default();
    assert!(problem.starts_with("Malformed config.toml at "), "{doc:#}");
    assert!(error.contains(problem), "{doc:#}");
}

/// A stored task that is not in the document store is not a problem with a bundle or the config:
/// `task run --json` says so in `error` alone, with an empty `problems`. A `--task` that names no task
/// of the bundle is a problem with what the run picks from it, listed in `problems`.
#[test]
fn a_stored_task_that_is_not_there_is_an_error_without_problems() {
    let s = Sandboxed::new();
    let r = s.run(&["task", "run", "nosuch/x", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc = json_of(&r.stdout);
    assert_eq!(doc["status"], "error", "{doc:#}");
    assert_eq!(
        doc["error"],
        "the configured document store has no task 'nosuch/x'; put one with agent-env task put FILE --id nosuch/x",
        "{doc:#}"
    );
    assert_eq!(doc["problems"], serde_json::json!([]), "{doc:#}");
    assert!(
        r.stderr
            .contains("Error: the configured document store has no task 'nosuch/x'"),
        "{}",
        r.stderr
    );

    let r = s.run(&["run", "hello", "--task", "nosuch", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc = json_of(&r.stdout);
    let problems = doc["problems"].as_array().cloned().unwrap_or_default();
    assert_eq!(problems.len(), 1, "{doc:#}");
    let problem = problems[0].as_str().unwrap_or_default();
    assert!(
        problem.starts_with("--task 'nosuch': this bundle has no task"),
        "{doc:#}"
    );
}
