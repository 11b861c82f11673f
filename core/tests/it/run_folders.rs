//! Black-box runs of folder bundles and installed bundles (reference scenarios 17, 18, 19, 22, 24, 27),
//! step scheduling, and problems reported before any step runs.

use serde_json::json;

use crate::support::run::{has_suffix_id, Sandboxed};

const DEPLOY: &str = r#"{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box", "sandbox_mode": "vm", "sandbox_type": "local"}"#;

#[test]
fn an_edited_copy_writes_a_new_artifact_version_and_scores_below_one() {
    let s = Sandboxed::new();
    let folder = s.copy_hello("my-hello");
    let first = s.run(&["run", "./my-hello"]);
    assert_eq!(first.code, 0, "{}{}", first.stdout, first.stderr);
    assert!(first
        .stdout
        .starts_with("artifacts/greeting: v1 (new)\ntasks/hello.json: v1 (new)\n"));
    assert!(
        has_suffix_id(&first.stdout, "instance @local/~/my-hello/hello-").is_some(),
        "{}",
        first.stdout
    );
    std::fs::write(folder.join("artifacts/greeting/hello.txt"), "goodbye\n").unwrap();
    let r = s.run(&["run", "./my-hello"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.starts_with(
            "artifacts/greeting: v2 (files changed: hello.txt)\ntasks/hello.json: v1, unchanged\n"
        ),
        "{}",
        r.stdout
    );
    r.assert_stdout_has("  tasks/hello.json v1: scored below 1 (hello: 0), ");
    let id = has_suffix_id(&r.stdout, "instance @local/~/my-hello/hello-").unwrap();
    let id = id.trim_start_matches("instance ");
    let instance = s
        .docs("task_instances")
        .into_iter()
        .find(|i| i["instance_id"] == id)
        .unwrap();
    assert_eq!(instance["status"], "completed");
    let v = &instance["context"]["metadata"]["verifications"]["hello"];
    assert_eq!(v["score"], 0.0);
    for row in v["results"].as_array().unwrap() {
        assert_eq!(row["result"], false, "{row}");
        assert_eq!(row["score"], 0.0);
    }
    // The same run through the absolute path reuses everything.
    let abs = s.run(&["run", folder.to_str().unwrap(), "--dry-run"]);
    abs.assert_stdout_has("artifacts/greeting: v2, unchanged");
}

#[test]
fn evals_run_the_tasks_they_name_and_say_which_tasks_did_not_run() {
    let s = Sandboxed::new();
    let folder = s.copy_hello("evals-demo");
    std::fs::create_dir_all(folder.join("evals")).unwrap();
    std::fs::write(folder.join("evals/smoke.toml"), "tasks = [\"hello\"]\n").unwrap();
    std::fs::write(folder.join("tasks/other.json"), format!("[{DEPLOY}]")).unwrap();
    // A dry run says it too, as the run does.
    let dry = s.run(&["run", "./evals-demo", "--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.both());
    dry.assert_stdout_has(
        "tasks/other.json isn't named by any eval, so it would not run; run it with --task other\n",
    );
    let r = s.run(&["run", "./evals-demo"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    r.assert_stdout_has("evals/smoke.toml: v1 (new)\n");
    r.assert_stdout_has("\nEvals:\n  evals/smoke.toml v1: 1 of 1 passed\n");
    r.assert_stdout_has(
        "tasks/other.json isn't named by any eval, so it didn't run; run it with --task other",
    );
    assert!(!r.stdout.contains("[tasks/other.json]"));
    let evals = s.docs("evals");
    assert_eq!(evals[0]["tasks"][0], "@local/~/evals-demo/hello");
    let r = s.run(&["run", "./evals-demo", "--task", "other"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.assert_stdout_has("  tasks/other.json v1: unscored, ");
}

/// A task an eval names twice counts once, and an eval asked for twice is run and counted once.
#[test]
fn an_eval_naming_a_task_twice_counts_it_once() {
    let s = Sandboxed::new();
    let folder = s.copy_hello("twice");
    std::fs::create_dir_all(folder.join("evals")).unwrap();
    std::fs::write(
        folder.join("evals/dup.toml"),
        "tasks = [\"hello\", \"hello\", \"@local/~/twice/hello\"]\n",
    )
    .unwrap();
    let r = s.run(&["run", "./twice"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    r.assert_stdout_has("\nEvals:\n  evals/dup.toml v1: 1 of 1 passed\n");
    let r = s.run(&["run", "./twice", "--eval", "dup", "--eval", "dup"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout.matches("evals/dup.toml v1: 1 of 1 passed").count(),
        1,
        "{}",
        r.stdout
    );
}

#[test]
fn every_problem_of_a_bundle_is_reported_together_sorted() {
    let s = Sandboxed::new();
    s.write("empty/README.md", "nothing here\n");
    let r = s.run(&["run", "./empty"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr.trim(),
        "Error: ~/empty: not a bundle: it has none of envs/, agents/, artifacts/, skills/, tasks/, evals/"
    );
    s.write("bad/bundle.toml", "name = 'x'\n");
    s.write("bad/tasks/x.json", "{\"id\": \"a\"}");
    s.write("bad/tasks/folder/inner.json", "[]");
    s.write("bad/tasks/named.json/inner.json", "[]");
    s.write("bad/artifacts/only_toml/artifact.toml", "type = \"file\"\n");
    s.write("bad/artifacts/a__b/f.txt", "x");
    s.write("bad/artifacts/skilly/SKILL.md", "x");
    let r = s.run(&["run", "./bad"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let lines: Vec<&str> = r
        .stderr
        .trim()
        .trim_start_matches("Error: ")
        .lines()
        .collect();
    assert_eq!(
        lines,
        [
            "~/bad/artifacts/a__b: 'a__b': '__' is reserved in artifact and skill names, since derived ids use it",
            "~/bad/artifacts/only_toml: holds only artifact.toml, and a 'file' artifact is files: put its files beside it",
            "~/bad/artifacts/skilly: this looks like a skill: skills live in skills/<name>/, not artifacts/",
            "~/bad/bundle.toml: reserved: a bundle takes its name from the folder and its description from README.md",
            "~/bad/tasks/folder: task folders are not supported yet; write tasks/folder.json",
            "~/bad/tasks/named.json: is a folder, but a task is a file: make it a JSON file of the task's steps",
            "~/bad/tasks/x.json: a task file must be a JSON array of step objects, or an object with a \"steps\" array",
        ]
    );
    assert!(!s.state().exists());
    // A script gets them one by one, beside the joined message.
    let r = s.run(&["run", "./bad", "--json"]);
    assert_eq!(r.code, 1);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["status"], "error");
    let problems: Vec<&str> = doc["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(problems, lines, "{doc:#}");
    assert_eq!(doc["error"].as_str().unwrap().lines().count(), lines.len());
}

#[test]
fn unknown_step_types_and_bad_fields_are_reported_before_any_step_runs() {
    let s = Sandboxed::new();
    s.write(
        "typo/tasks/t.json",
        &format!(
            r#"[{DEPLOY},
               {{"id": "x", "type": "no_such_step"}},
               {{"id": "e", "type": "deploy_env"}},
               {{"id": "v", "type": "verify_sandbox", "sandbox_name": "box"}},
               {{"id": "l", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "missing", "destination_path": "/app"}}]"#
        ),
    );
    let r = s.run(&["run", "./typo"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "");
    let err = r.stderr;
    assert!(
        err.contains("~/typo/tasks/t.json: step 'x': 'no_such_step' is not a known step type; no built-in step or installed plugin provides it"),
        "{err}"
    );
    assert!(
        err.contains("step 'e': the step type 'deploy_env' is built into the Python agent-env"),
        "{err}"
    );
    assert!(
        err.contains("step 'v': verify_sandbox can't read it (needs 'verifier_id'"),
        "{err}"
    );
    assert!(
        err.contains("step 'v': verify_sandbox can't read it (needs 'criteria'"),
        "{err}"
    );
    assert!(
        err.contains("'missing' is not an artifact of this bundle, and a bundle run reads only @local ids from the store; the bundle has no artifacts: put the artifact's files in artifacts/missing/"),
        "{err}"
    );
    assert!(!s.state().exists(), "a refused run wrote state");

    // A near miss of a step type that runs here is named.
    s.write(
        "typo2/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbx", "sandbox_name": "box"},
            {"id": "l", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "greting", "destination_path": "/app/g"}]"#,
    );
    s.write("typo2/artifacts/greeting/hello.txt", "hello\n");
    let r = s.run(&["run", "./typo2"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("'deploy_sandbx' is not a known step type; no built-in step or installed plugin provides it; did you mean 'deploy_sandbox'?"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("'greting' is not an artifact of this bundle, and a bundle run reads only @local ids from the store; did you mean 'greeting'?"),
        "{}",
        r.stderr
    );
}

/// A field close to one a step reads, and a criterion type close to a known one, are noted before a
/// real run's tasks start too (not only a dry run's): the task would otherwise pass having checked
/// nothing.
#[test]
fn typos_a_run_would_skip_are_said_on_every_run() {
    let s = Sandboxed::new();
    s.write(
        "ty/tasks/t.json",
        &format!(
            r#"[{DEPLOY},
               {{"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
                 "agregator": "any_pass", "criteria": [{{"type": "probe_file_exist", "paths": ["x"]}}]}}]"#
        ),
    );
    let r = s.run(&["run", "./ty", "--json"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stderr.contains("note: tasks/t.json: step 'v': 'agregator' is not a field it reads: did you mean 'aggregator'?"),
        "{}",
        r.stderr
    );
    // The unknown criterion type is noted before the task starts, as a dry run notes it, and said
    // again, with the near miss, as the step skips it.
    let noted = "note: tasks/t.json: step 'v' criterion 1 has the type 'probe_file_exist', which verify_sandbox does not know: a run skips it; did you mean 'probe_file_exists'?";
    let skipped = "skipped criterion 1 of type 'probe_file_exist', which verify_sandbox does not know; did you mean 'probe_file_exists'?";
    let (Some(noted_at), Some(skipped_at)) = (r.stderr.find(noted), r.stderr.find(skipped)) else {
        panic!("{}", r.stderr);
    };
    assert!(noted_at < skipped_at, "{}", r.stderr);
    assert_eq!(r.stderr.matches(noted).count(), 1, "{}", r.stderr);
    assert_eq!(
        r.stderr.matches("probe_file_exist'").count(),
        2,
        "{}",
        r.stderr
    );
    // A dry run, which skips nothing, says the same note.
    let dry = s.run(&["run", "./ty", "--dry-run"]);
    assert!(dry.stderr.contains(noted), "{}", dry.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let warnings: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        warnings[0], "step 'v': 'agregator' is not a field it reads: did you mean 'aggregator'?",
        "{doc:#}"
    );
    assert!(
        warnings.contains(&noted.trim_start_matches("note: tasks/t.json: ")),
        "{doc:#}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("step 'v' skipped criterion 1")),
        "{doc:#}"
    );
}

#[test]
fn a_fatal_step_failure_fails_the_run_and_still_tears_down() {
    let s = Sandboxed::new();
    s.write(
        "failing/tasks/broken.json",
        &format!(
            r#"[{DEPLOY},
               {{"id": "check", "type": "verify_sandbox", "sandbox_name": "elsewhere", "verifier_id": "v",
                 "criteria": [{{"type": "probe_file_exists", "paths": ["x"]}}]}},
               {{"id": "never", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "n",
                 "criteria": [{{"type": "probe_dir_exists", "paths": ["."]}}]}}]"#
        ),
    );
    let r = s.run(&["run", "./failing"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let message = "RuntimeError: Sandbox 'elsewhere' not found in context.deployed_sandboxes (deployed: ['box']); deploy it with a deploy_sandbox step first";
    r.assert_stdout_has(&format!(
        "  tasks/broken.json v1: failed at step 'check': {message}, "
    ));
    assert!(!r.stdout.contains("step 3/3"), "{}", r.stdout);
    assert!(r.stdout.ends_with("\nTore down 1 sandbox.\n"));
    assert!(s.sandboxes_left().is_empty());
    let instance = &s.docs("task_instances")[0];
    assert_eq!(instance["status"], "failed");
    let failed = &instance["context"]["metadata"]["failed_steps"][0];
    assert_eq!(failed["step_id"], "check");
    assert_eq!(failed["error_type"], "RuntimeError");
    assert_eq!(failed["is_fatal"], true);
}

#[test]
fn a_step_that_does_not_fail_the_task_lets_the_run_go_on() {
    let s = Sandboxed::new();
    s.write(
        "lenient/tasks/t.json",
        &format!(
            r#"[{DEPLOY},
               {{"id": "soft", "type": "verify_sandbox", "sandbox_name": "gone", "verifier_id": "s",
                 "fail_task_on_error": false, "criteria": []}},
               {{"id": "real", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "r",
                 "criteria": [{{"type": "probe_dir_exists", "paths": ["."]}},
                              {{"type": "not_a_criterion"}}]}}]"#
        ),
    );
    let r = s.run(&["run", "./lenient"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    r.assert_stdout_has("  tasks/t.json v1: passed (real: 1), ");
    let instance = &s.docs("task_instances")[0];
    assert_eq!(instance["status"], "completed");
    assert_eq!(
        instance["context"]["metadata"]["failed_steps"][0]["is_fatal"],
        false
    );
    // The step failed, though its failure did not fail the task: its record says so.
    assert_eq!(instance["completed_steps"][1]["step_id"], "soft");
    assert_eq!(
        instance["completed_steps"][1]["status"], "failure",
        "{instance:#}"
    );
    let rows = &instance["context"]["metadata"]["verifications"]["r"]["results"];
    assert_eq!(rows[1]["skipped"], true);
    // The skipped criterion is said, once; the soft step's failure is said where it happened, and
    // that its verifier gave the task no score once.
    assert!(
        r.stderr.contains("[tasks/t.json] Warning: step 'real' skipped criterion 2 of type 'not_a_criterion', which verify_sandbox does not know"),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.stderr
            .matches("step 'soft' failed without failing the task (fail_task_on_error is false), so verifier 's' gave no score")
            .count(),
        1,
        "{}",
        r.stderr
    );
}

/// A task whose only criteria have mistyped types scores 1, as the original does, and says why.
#[test]
fn criteria_of_no_known_type_pass_with_a_warning() {
    let s = Sandboxed::new();
    s.write(
        "typo/tasks/t.json",
        &format!(
            r#"[{DEPLOY},
               {{"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "c",
                 "criteria": [{{"type": "probe_file_contain", "paths": ["x"], "expected": "y"}}]}}]"#
        ),
    );
    // A dry run says so before anything runs.
    let dry = s.run(&["run", "./typo", "--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.both());
    assert!(
        dry.stderr.contains("note: tasks/t.json: step 'check' criterion 1 has the type 'probe_file_contain', which verify_sandbox does not know: a run skips it"),
        "{}",
        dry.both()
    );
    // And so does its document, for a script that lints with --dry-run --json.
    let dry = s.run(&["run", "./typo", "--dry-run", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&dry.stdout).unwrap();
    assert_eq!(doc["warnings"][0]["path"], "tasks/t.json", "{doc:#}");
    assert!(
        doc["warnings"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("step 'check' criterion 1 has the type 'probe_file_contain'"),
        "{doc:#}"
    );
    let r = s.run(&["run", "./typo"]);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stdout_has("  tasks/t.json v1: passed (check: 1), ");
    assert!(
        r.stderr
            .contains("[tasks/t.json] Warning: step 'check' scored 1 with no criterion checked"),
        "{}",
        r.stderr
    );
}

#[test]
fn independent_ready_steps_run_at_the_same_time() {
    // Each of `left` and `right` waits for the other's marker, so the task passes only when both run at
    // once; a sequential scheduler would fail them when their wait runs out.
    let s = Sandboxed::new();
    let wait = |me: &str, other: &str| {
        format!(
            r#"{{"id": "{me}", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "{me}", "depends_on": ["box"],
                "criteria": [{{"type": "bash_cmd_succeeds", "command": "touch {me}; for i in $(seq 1 600); do [ -e {other} ] && exit 0; sleep 0.05; done; exit 1"}}]}}"#
        )
    };
    s.write(
        "parallel/tasks/p.json",
        &format!(
            "[{DEPLOY}, {}, {}, {}]",
            wait("left", "right"),
            wait("right", "left"),
            r#"{"id": "after", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "after",
                "criteria": [{"type": "probe_file_exists", "paths": ["left", "right"]}]}"#
        ),
    );
    let r = s.run(&["run", "./parallel"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    r.assert_stdout_has("passed (left: 1, right: 1, after: 1)");
    // `after` declares no depends_on in a task where others do, so it waits for every earlier step.
    let after_start = r.stdout.find("step 4/4 after (verify_sandbox)").unwrap();
    assert!(r.stdout.find("step 2/4 left done").unwrap() < after_start);
    assert!(r.stdout.find("step 3/4 right done").unwrap() < after_start);
}

#[test]
fn an_installed_bundle_from_a_manifest_runs_by_its_qualified_name_without_starting_the_plugin() {
    let s = Sandboxed::new();
    let plugin = s.plugins().join("demo");
    crate::support::run::copy_dir(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/hello"),
        &plugin.join("bundles/hello"),
    );
    let marker = s.dir.path().join("plugin-was-started");
    std::fs::write(
        plugin.join("start.sh"),
        format!("#!/bin/sh\ntouch {}\n", marker.display()),
    )
    .unwrap();
    std::fs::write(
        plugin.join("agent-env-plugin.toml"),
        r#"[plugin]
name = "Demo_Installed.Bundles"
version = "1.2.3"
exec = ["./start.sh"]
protocol = [1, 1]

[provides.bundles]
hello = "bundles/hello"
"#,
    )
    .unwrap();
    let list = s.run(&["run"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    list.assert_stdout_has("\ndemo-installed-bundles/hello  demo-installed-bundles 1.2.3  ");
    let r = s.run(&["run", "demo-installed-bundles/hello"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        has_suffix_id(
            &r.stdout,
            "instance @local/demo-installed-bundles/hello/hello-"
        )
        .is_some(),
        "{}",
        r.stdout
    );
    // The bare name still runs agent-env's own hello.
    let r = s.run(&["run", "hello"]);
    assert!(has_suffix_id(&r.stdout, "instance @local/agentenv-framework/hello/hello-").is_some());
    assert!(
        !marker.exists(),
        "listing or running a bundle started the plugin"
    );
}

#[test]
fn a_failed_step_with_retry_config_runs_again_from_the_step_it_names() {
    let s = Sandboxed::new();
    // `mk` makes `made` a file the first time and a folder after; loading into `made/` fails on a file.
    let task = |max_retries: u32| {
        format!(
            r#"[{DEPLOY},
               {{"id": "mk", "type": "verify_sandbox", "sandbox_name": "box", "base_dir": "/app", "verifier_id": "mk",
                 "criteria": [{{"type": "bash_cmd_succeeds", "command": "if [ -e once ]; then rm -f made; mkdir made; else touch made; fi; touch once"}}]}},
               {{"id": "check", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "note", "destination_path": "/app/made/",
                 "retry_config": {{"retry_from_step_id": "mk", "max_retries": {max_retries}}}}}]"#
        )
    };
    for folder in ["retry", "noretry"] {
        s.write(&format!("{folder}/artifacts/note/note.txt"), "a note\n");
    }
    s.write("retry/tasks/r.json", &task(1));
    let r = s.run(&["run", "./retry"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("; retrying from step 'mk'\n"),
        "{}",
        r.stdout
    );
    assert_eq!(
        r.stdout.matches("step 2/3 mk done in").count(),
        2,
        "{}",
        r.stdout
    );
    r.assert_stdout_has("passed (mk: 1)");
    let failed = &s.docs("task_instances")[0]["context"]["metadata"]["failed_steps"][0];
    assert_eq!(failed["step_id"], "check");
    assert_eq!(failed["retried"], true);
    assert_eq!(failed["is_fatal"], false);

    s.write("noretry/tasks/r.json", &task(0));
    let r = s.run(&["run", "./noretry"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    r.assert_stdout_has("failed at step 'check': ");

    s.write(
        "badretry/tasks/r.json",
        &format!(
            r#"[{DEPLOY}, {{"id": "a", "type": "deploy_sandbox", "sandbox_name": "a", "depends_on": [],
                "retry_config": {{"retry_from_step_id": "box"}}}}]"#
        ),
    );
    let r = s.run(&["run", "./badretry"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains(
        "step 'a': retry_config resumes from 'box', which must be this step or a step it depends on"
    ), "{}", r.stderr);
}

/// An installed bundle whose tasks use step types nothing here runs is told as one that cannot run
/// (by `run`'s list and `plugin check`), not only when `run` refuses it.
#[test]
fn an_installed_bundle_with_step_types_nothing_runs_is_told_before_it_is_run() {
    let s = Sandboxed::new();
    let plugin = s.plugins().join("games");
    std::fs::create_dir_all(plugin.join("bundles/match/tasks")).unwrap();
    std::fs::write(
        plugin.join("bundles/match/tasks/play.json"),
        r#"[{"id": "env", "type": "deploy_env", "env_id": "x"},
            {"id": "go", "type": "nowhere_step"},
            {"id": "again", "type": "deploy_env", "env_id": "y"}]"#,
    )
    .unwrap();
    std::fs::write(
        plugin.join("agent-env-plugin.toml"),
        "[plugin]\nname = \"games\"\nversion = \"1.0.0\"\nexec = [\"./none\"]\nprotocol = [1, 1]\n\n[provides.bundles]\nmatch = \"bundles/match\"\n",
    )
    .unwrap();
    let why = "its tasks use step types 'deploy_env', 'nowhere_step' that this agent-env has no step for (no built-in step or installed plugin provides them), so agent-env run refuses the bundle";
    let list = s.run(&["run"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    list.assert_stdout_has(&format!("\n  cannot run here: {why}\n"));
    assert_eq!(
        list.stdout.matches("cannot run here").count(),
        1,
        "{}",
        list.stdout
    );
    let listed = s.run(&["run", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
    let problems: Vec<&serde_json::Value> = doc["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| &b["problem"])
        .collect();
    assert_eq!(
        problems,
        [&serde_json::Value::Null, &serde_json::json!(why)],
        "{doc:#}"
    );
    let check = s.run(&["plugin", "check", "--no-load", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&check.stdout).unwrap();
    assert_eq!(
        doc["warnings"],
        serde_json::json!([format!(
            "the bundle 'match' of games cannot run here: {why}"
        )]),
        "{doc:#}"
    );
    assert!(
        check
            .stderr
            .contains("Warning: the bundle 'match' of games cannot run here: "),
        "{}",
        check.stderr
    );
}

/// A link the sandbox's own commands made, to a file or folder of the machine, does not make
/// `load_artifact` write there nor a probe read there: the step fails, naming the link.
#[test]
fn links_out_of_the_sandbox_are_neither_written_nor_read_through() {
    let s = Sandboxed::new();
    let victim = s.write("victim/important.txt", "keep\n");
    let victim_dir = victim.parent().unwrap().to_path_buf();
    s.write("links/artifacts/a/p.txt", "OVERWRITTEN\n");
    let link_step = |command: String| {
        format!(
            r#"{{"id": "mk", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "mk",
                "criteria": [{{"type": "bash_cmd_succeeds", "command": "{command}"}}]}}"#
        )
    };
    let load = |to: &str| {
        format!(
            r#"{{"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "a", "destination_path": "{to}"}}"#
        )
    };
    s.write(
        "links/tasks/file.json",
        &format!(
            "[{DEPLOY}, {}, {}]",
            link_step(format!("mkdir d && ln -s {} d/p.txt", victim.display())),
            load("/app/d")
        ),
    );
    s.write(
        "links/tasks/folder.json",
        &format!(
            "[{DEPLOY}, {}, {}]",
            link_step(format!("ln -s {} out", victim_dir.display())),
            load("/app/out")
        ),
    );
    s.write(
        "links/tasks/read.json",
        &format!(
            r#"[{DEPLOY}, {}, {{"id": "probe", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "probe",
                "criteria": [{{"type": "probe_file_contains", "paths": ["seen.txt"], "expected": "keep"}}]}}]"#,
            link_step(format!("ln -s {} seen.txt", victim.display()))
        ),
    );
    let r = s.run(&["run", "./links"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    assert!(!victim_dir.join("p.txt").exists());
    for (task, via) in [
        ("file", "/d/p.txt leads through a symbolic link to "),
        ("folder", "/out/p.txt leads through a symbolic link to "),
        ("read", "/seen.txt leads through a symbolic link to "),
    ] {
        let said = r
            .stdout
            .lines()
            .any(|l| l.starts_with(&format!("[tasks/{task}.json]")) && l.contains(via));
        assert!(said, "{task}: {}", r.stdout);
    }
    r.assert_stdout_has(
        "outside the sandbox; agent-env reads and writes only the sandbox's own files",
    );
}

/// What a task's command writes reaches the terminal with its control characters shown, not obeyed:
/// it cannot erase a line and print a fake `passed` over it.
#[test]
fn control_characters_from_a_task_reach_the_terminal_escaped() {
    let s = Sandboxed::new();
    s.write(
        "esc/tasks/t.json",
        &format!(
            r#"[{DEPLOY}, {{"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
                "criteria": [{{"type": "bash_cmd_succeeds", "command": "printf 'bad\\033[2K\\rpassed\\n' >&2; exit 1"}}]}}]"#
        ),
    );
    let r = s.run(&["run", "./esc"]);
    assert!(
        !r.stdout.contains('\u{1b}') && !r.stdout.contains('\r'),
        "{:?}",
        r.stdout
    );
    r.assert_stdout_has("bad\\x1b[2K\\rpassed");
}

/// An artifact's dot files are its files like any other (a repository's `.env`, `.github/`); its
/// version-control folder and bytecode caches are not.
#[test]
fn an_artifacts_dot_files_are_loaded_and_its_git_folder_is_not() {
    let s = Sandboxed::new();
    s.write("dots/artifacts/repo/.env", "K=1\n");
    s.write("dots/artifacts/repo/.config/settings", "x\n");
    s.write("dots/artifacts/repo/src/main.py", "print(1)\n");
    s.write("dots/artifacts/repo/.git/HEAD", "ref: refs/heads/main\n");
    s.write(
        "dots/artifacts/repo/src/__pycache__/main.cpython-311.pyc",
        "x",
    );
    s.write(
        "dots/tasks/d.json",
        &format!(
            r#"[{DEPLOY}, {{"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "repo", "destination_path": "/app/repo"}},
               {{"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v", "base_dir": "/app/repo",
                 "criteria": [{{"type": "probe_file_exists", "paths": [".env", ".config/settings", "src/main.py"]}},
                              {{"type": "bash_cmd_succeeds", "command": "test ! -e .git && test ! -e src/__pycache__"}}]}}]"#
        ),
    );
    let r = s.run(&["run", "./dots"]);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stdout_has("passed (v: 1)");
}

/// Many tasks no eval names are one line after the summary, not one each; `--json` lists each.
#[test]
fn many_tasks_no_eval_names_are_one_line() {
    let s = Sandboxed::new();
    for name in ["a", "b", "c", "d", "e"] {
        s.write(&format!("many/tasks/{name}.json"), &format!("[{DEPLOY}]"));
    }
    s.write("many/evals/one.toml", "tasks = [\"a\"]\n");
    let r = s.run(&["run", "./many", "-q"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stdout.contains("\n4 tasks no eval names didn't run (tasks/b.json, tasks/c.json, tasks/d.json, and 1 more); run one with --task NAME\n"),
        "{}",
        r.stdout
    );
    let dry = s.run(&["run", "./many", "--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.both());
    dry.assert_stdout_has("\n4 tasks no eval names would not run (tasks/b.json, tasks/c.json, tasks/d.json, and 1 more); run one with --task NAME\n");
    let json = s.run(&["run", "./many", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["skipped"].as_array().unwrap().len(), 4);
}

/// A retry that runs `deploy_sandbox` again gets a fresh sandbox: the first is torn down, not
/// refused as "already deployed", and both are in the instance's `torn_down_sandbox_ids`.
#[test]
fn a_retry_from_deploy_sandbox_starts_over_in_a_fresh_sandbox() {
    let s = Sandboxed::new();
    s.write("redeploy/artifacts/note/note.txt", "a note\n");
    // The first sandbox gets a file `made` (loading into `made/` then fails); the second a folder.
    s.write(
        "redeploy/tasks/r.json",
        &format!(
            r#"[{DEPLOY},
               {{"id": "mk", "type": "verify_sandbox", "sandbox_name": "box", "base_dir": "/app", "verifier_id": "mk",
                 "criteria": [{{"type": "bash_cmd_succeeds", "command": "if [ -e \"$HOME/once\" ]; then mkdir made; else touch made \"$HOME/once\"; fi"}}]}},
               {{"id": "ld", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "note", "destination_path": "/app/elsewhere/"}},
               {{"id": "check", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "note", "destination_path": "/app/made/",
                 "retry_config": {{"retry_from_step_id": "box"}}}}]"#
        ),
    );
    let r = s.run(&["run", "./redeploy"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    r.assert_stdout_has("; retrying from step 'box'\n");
    r.assert_stdout_has("\nTore down 2 sandboxes, 1 of them replaced by retries.\n");
    assert_eq!(
        r.stdout.matches("step 1/4 box done in").count(),
        2,
        "{}",
        r.stdout
    );
    r.assert_stdout_has("passed (mk: 1)");
    let context = &s.docs("task_instances")[0]["context"];
    let deployed = context["deployed_sandboxes"].as_array().unwrap();
    assert_eq!(deployed.len(), 1, "{context:#}");
    let torn = context["metadata"]["torn_down_sandbox_ids"]
        .as_array()
        .unwrap();
    assert_eq!(torn.len(), 2, "{context:#}");
    assert_eq!(torn[1], deployed[0]["sandbox_id"], "{context:#}");
    assert!(s.sandboxes_left().is_empty(), "{:?}", s.sandboxes_left());
    // The record counts each step once (the first attempts are superseded) and the retry.
    let doc = &s.docs("task_instances")[0];
    assert_eq!(doc["current_step"], 4, "{doc:#}");
    assert_eq!(doc["total_steps"], 4, "{doc:#}");
    assert_eq!(doc["attempt_epoch"], 1, "{doc:#}");
    assert_eq!(doc["step_attempt_failures"], json!({"check": 1}), "{doc:#}");
    assert_eq!(
        doc["rerecorded_steps"],
        json!(["box", "mk", "ld", "check"]),
        "{doc:#}"
    );
    let steps = doc["completed_steps"].as_array().unwrap();
    let superseded: Vec<bool> = steps.iter().map(|s| s["superseded"] == true).collect();
    assert_eq!(
        superseded,
        [true, true, true, true, false, false, false, false],
        "{doc:#}"
    );
    assert_eq!(steps[3]["retried"], true, "{doc:#}");
    let loaded = doc["context"]["metadata"]["loaded_artifacts"]
        .as_array()
        .unwrap();
    let ids: Vec<&str> = loaded
        .iter()
        .map(|l| l["step_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["ld", "check"],
        "one entry a step, however often it ran: {doc:#}"
    );
    // get-instance numbers the attempts, so its rows add up, and marks the retried failure.
    let id = s.docs("task_instances")[0]["instance_id"]
        .as_str()
        .unwrap()
        .to_string();
    let shown = s.run(&["task", "get-instance", &id]);
    assert!(
        shown
            .stdout
            .contains("steps (4; 8 attempts, with retries):\n"),
        "{}",
        shown.stdout
    );
    assert!(shown.stdout.contains("  box success"), "{}", shown.stdout);
    assert!(
        shown.stdout.contains(" (attempt 2 of 2)\n"),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("failed step check (retried): "),
        "{}",
        shown.stdout
    );
}

/// A failed instance's steps that never ran are listed as `not run` by get-instance, so its rows add
/// up to its step count; `--json` names them under `not_run_steps`.
#[test]
fn get_instance_lists_the_steps_a_failed_instance_never_ran() {
    let s = Sandboxed::new();
    s.write(
        "halt/tasks/t.json",
        r#"[{"id": "check", "type": "verify_sandbox", "sandbox_name": "nope", "verifier_id": "v",
             "criteria": [{"type": "bash_cmd_succeeds", "bash_cmd": "true"}]},
            {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );
    let r = s.run(&["run", "./halt"]);
    assert_ne!(r.code, 0, "{}", r.both());
    let instance = &s.docs("task_instances")[0];
    assert_eq!(instance["status"], "failed", "{instance}");
    let id = instance["instance_id"].as_str().unwrap().to_string();
    let shown = s.run(&["task", "get-instance", &id]);
    assert_eq!(shown.code, 0, "{}", shown.both());
    assert!(
        shown.stdout.contains("steps (2):\n  check failure")
            && shown.stdout.contains("\n  box not run\n"),
        "{}",
        shown.stdout
    );
    let json = s.run(&["task", "get-instance", &id, "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["not_run_steps"], json!(["box"]), "{doc:#}");
}

/// A file in one of a bundle's folders that agent-env does not read (an eval written as JSON) is
/// named, with what the folder holds instead; the run goes on.
#[test]
fn a_file_a_bundle_folder_does_not_read_is_named() {
    let s = Sandboxed::new();
    s.write("mixed/tasks/t.json", &format!(r#"[{DEPLOY}]"#));
    s.write("mixed/evals/smoke.json", "{}");
    s.write("mixed/tasks/notes.md", "notes");
    s.write("mixed/envs/web/Dockerfile", "FROM scratch\n");
    s.write("mixed/agents/bot/Dockerfile", "FROM scratch\n");
    let r = s.run(&["run", "./mixed"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stderr
            .contains("note: evals/smoke.json is not read: an eval is a .toml file")
            && r.stderr
                .contains("note: tasks/notes.md is not read: a task is a .json file"),
        "{}",
        r.stderr
    );
    // Build contexts are read (their ids are checked) but nothing builds them: said, not skipped.
    assert!(
        r.stderr.contains("note: envs/web, agents/bot are not built: this agent-env builds no env or agent images"),
        "{}",
        r.stderr
    );
}

/// A task file may also be an object with a `steps` array, the form `task put` takes.
#[test]
fn a_task_file_may_be_an_object_with_steps() {
    let s = Sandboxed::new();
    s.write(
        "wrapped/tasks/t.json",
        &format!(r#"{{"steps": [{DEPLOY}]}}"#),
    );
    let r = s.run(&["run", "./wrapped"]);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stdout_has("[tasks/t.json] step 1/1 box (deploy_sandbox)\n");
}

/// A bundle's TOML file that does not parse is named with the line and column of the fault.
#[test]
fn a_bundle_toml_file_that_does_not_parse_says_where() {
    let s = Sandboxed::new();
    let folder = s.copy_hello("bad-toml");
    std::fs::create_dir_all(folder.join("evals")).unwrap();
    std::fs::write(folder.join("evals/e.toml"), "# smoke\ntasks = [\"hello\"\n").unwrap();
    let r = s.run(&["run", "./bad-toml", "--dry-run"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr.contains(
            "evals/e.toml: isn't valid TOML: invalid array; expected `]` (at line 3, column 1)"
        ),
        "{}",
        r.stderr
    );
}

/// With more than one task, each task's last line says how many of the run's tasks have ended.
#[test]
fn each_tasks_last_line_counts_the_tasks_ended() {
    let s = Sandboxed::new();
    let folder = s.copy_hello("counted");
    std::fs::write(folder.join("tasks/other.json"), format!("[{DEPLOY}]")).unwrap();
    let r = s.run(&["run", "./counted"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let ends: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.contains(" tasks ended)"))
        .map(|l| &l[l.rfind('(').unwrap()..])
        .collect();
    let mut ends = ends;
    ends.sort_unstable();
    assert_eq!(
        ends,
        ["(1 of 2 tasks ended)", "(2 of 2 tasks ended)"],
        "{}",
        r.stdout
    );
    // The summary counts them by how they came out.
    r.assert_stdout_has("  2 tasks: 1 passed, 1 unscored\n");
    // A lone task's line stays as it was.
    let one = s.run(&["run", "./counted", "--task", "hello"]);
    assert!(
        one.stdout.contains("[tasks/hello.json] passed in "),
        "{}",
        one.stdout
    );
    assert!(!one.stdout.contains("tasks ended"), "{}", one.stdout);
    assert!(!one.stdout.contains("1 tasks:"), "{}", one.stdout);
}

/// Runs of one bundle started together each write an id once between them (the ids' locks hold
/// while their files come and go), and leave no lock file behind.
#[test]
fn runs_started_together_write_each_id_once_and_leave_no_lock_files() {
    let s = Sandboxed::new();
    let bundle = s.copy_hello("together");
    let task = std::fs::read_to_string(bundle.join("tasks/hello.json")).unwrap();
    for i in 0..12 {
        std::fs::write(bundle.join(format!("tasks/t{i:02}.json")), &task).unwrap();
    }
    for round in 0..2 {
        if round == 1 {
            // Every task changed: each run that sees it first writes version 2, once.
            for i in 0..12 {
                let changed = task.replace("/app/greeting", "/app/greeting.txt");
                std::fs::write(bundle.join(format!("tasks/t{i:02}.json")), changed).unwrap();
            }
        }
        let children: Vec<_> = (0..4)
            .map(|_| {
                s.command(&["run", "./together", "-q"])
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let mut versions: Vec<(String, i64)> = s
            .docs("tasks")
            .iter()
            .map(|d| {
                (
                    d["id"].as_str().unwrap().to_string(),
                    d["version"].as_i64().unwrap(),
                )
            })
            .collect();
        versions.sort();
        let before = versions.len();
        versions.dedup();
        assert_eq!(before, versions.len(), "an id's version written twice");
        // hello.json once, the 12 copies once a round.
        assert_eq!(versions.len(), 1 + 12 * (round + 1), "{versions:?}");
    }
    let left: Vec<_> = std::fs::read_dir(s.state().join("locks"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("entity-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A NUL in a command's output is recorded as the text `\x00` (PostgreSQL's jsonb refuses a NUL,
/// which lost the task's whole record there).
#[test]
fn a_nul_in_a_commands_output_is_recorded_as_text() {
    let s = Sandboxed::new();
    s.write(
        "nul/tasks/n.json",
        &format!(
            r#"[{DEPLOY},
               {{"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "check",
                 "criteria": [{{"type": "bash_cmd_succeeds", "command": "printf 'a\\0b' >&2; exit 1"}}]}}]"#
        ),
    );
    let r = s.run(&["run", "./nul"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let doc = &s.docs("task_instances")[0];
    let text = doc.to_string();
    assert!(!text.contains("\\u0000"), "{text}");
    assert!(text.contains("a\\\\x00b"), "{text}");
}

/// A bundle whose step type its own plugin provides, when that plugin fails to load (here its
/// settings table can't be read), is told why the type can't be used (it was said that no installed
/// plugin provides it).
#[test]
fn a_bundle_whose_step_plugin_fails_is_told_why_the_step_cannot_run() {
    let s = Sandboxed::new();
    s.write(
        ".agentenv/config.toml",
        "[plugins.agentenv-essay]\nkey = \"env:NOPE_NOT_SET\"\n",
    );
    let plugin = s.plugins().join("essay");
    std::fs::create_dir_all(plugin.join("bundles/essay/tasks")).unwrap();
    std::fs::write(
        plugin.join("bundles/essay/tasks/grade.json"),
        r#"[{"id": "g", "type": "grade_essay"}]"#,
    )
    .unwrap();
    std::fs::write(
        plugin.join("agent-env-plugin.toml"),
        "[plugin]\nname = \"agentenv-essay\"\nversion = \"1.0.0\"\nexec = [\"./none\"]\nprotocol = [1, 1]\n\n[provides.task_steps]\ngrade_essay = \"Grader\"\n\n[provides.bundles]\nessay = \"bundles/essay\"\n",
    )
    .unwrap();
    let check = s.run(&["plugin", "check"]);
    assert!(
        check.stderr.contains(
            "Warning: the bundle 'essay' of agentenv-essay cannot run here: its tasks use step type 'grade_essay' that this agent-env has no step for (the step type 'grade_essay' can't be used: "
        ),
        "{}",
        check.both()
    );
    assert!(
        !check
            .stderr
            .contains("no built-in step or installed plugin provides"),
        "{}",
        check.stderr
    );
}

/// A task file in object form may give an id (`task put` reads it); a bundle names its tasks by
/// file, and says so when the file's id is another, rather than dropping it in silence.
#[test]
fn a_task_files_own_id_in_a_bundle_is_said_to_be_unread() {
    let s = Sandboxed::new();
    let steps = r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#;
    s.write(
        "ids/tasks/a.json",
        &format!(r#"{{"id": "same", "steps": {steps}}}"#),
    );
    s.write(
        "ids/tasks/b.json",
        &format!(r#"{{"id": "b", "steps": {steps}}}"#),
    );
    let r = s.run(&["run", "./ids"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stderr.contains("note: tasks/a.json gives the id 'same', which a bundle run does not read: a bundle's task is named by its file, so this one is 'a' (agent-env task put reads the id)"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("tasks/b.json gives"), "{}", r.stderr);
}

/// A bare name that names a folder here and an installed bundle runs the folder, as before, and says
/// so, with how to run the installed bundle; `./hello` and `package/name` say which one they mean.
#[test]
fn a_folder_named_like_an_installed_bundle_runs_and_says_so() {
    let s = Sandboxed::new();
    s.copy_hello("hello");
    let said = "note: ./hello runs: 'hello' names this folder and the installed bundle agentenv-framework/hello; agent-env run agentenv-framework/hello runs that bundle, and agent-env run ./hello says you mean the folder";
    let r = s.run(&["run", "hello"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(r.stderr.contains(said), "{}", r.stderr);
    assert!(
        has_suffix_id(&r.stdout, "instance @local/~/hello/hello-").is_some(),
        "{}",
        r.stdout
    );
    let json = s.run(&["run", "hello", "--dry-run", "--json"]);
    assert!(
        json.stdout.contains(&said["note: ".len()..]),
        "{}",
        json.both()
    );
    for named in ["./hello", "agentenv-framework/hello"] {
        let r = s.run(&["run", named, "--dry-run"]);
        assert_eq!(r.code, 0, "{named}: {}", r.both());
        assert!(
            !r.stderr.contains("note: ./hello runs"),
            "{named}: {}",
            r.stderr
        );
    }
}

/// A task file that parses is planned beside one that does not: its unknown step type is said with
/// the other file's parse error, in one pass, not once that file is fixed.
#[test]
fn a_task_file_that_parses_is_checked_beside_one_that_does_not() {
    let s = Sandboxed::new();
    s.write(
        "bad/tasks/a.json",
        r#"[{"id": "x", "type": "nosuch_step"}]"#,
    );
    s.write("bad/tasks/b.json", "not json");
    let r = s.run(&["run", "./bad", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let problems: Vec<&str> = doc["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(
        problems[0]
            .starts_with("~/bad/tasks/a.json: step 'x': 'nosuch_step' is not a known step type"),
        "{problems:#?}"
    );
    assert!(
        problems[1].starts_with("~/bad/tasks/b.json: isn't valid JSON"),
        "{problems:#?}"
    );
    assert!(!s.state().exists(), "a refused run wrote state");
}

/// A bundle's problems are listed in the order its tasks run, numbers in names by their value
/// (`t2` before `t10`), in the text and in `--json`'s `problems` alike, whether a file does not
/// parse (t1, t10) or does and names a step type nothing provides (t2, t3).
#[test]
fn a_bundle_s_problems_are_listed_in_the_order_its_tasks_run() {
    let s = Sandboxed::new();
    for n in [1, 10] {
        s.write(&format!("bad/tasks/t{n}.json"), "not json");
    }
    for n in [3, 2] {
        s.write(
            &format!("bad/tasks/t{n}.json"),
            r#"[{"id": "x", "type": "nosuch_step"}]"#,
        );
    }
    let files = ["t1", "t2", "t3", "t10"].map(|t| format!("~/bad/tasks/{t}.json: "));
    let r = s.run(&["run", "./bad", "--dry-run", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let problems: Vec<&str> = doc["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(problems.len(), 4, "{problems:#?}");
    for (problem, file) in problems.iter().zip(&files) {
        assert!(problem.starts_with(file.as_str()), "{problems:#?}");
    }
    let r = s.run(&["run", "./bad", "--dry-run"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let said: Vec<usize> = files
        .iter()
        .map(|f| {
            r.stderr
                .find(f.as_str())
                .unwrap_or_else(|| panic!("{f}: {}", r.stderr))
        })
        .collect();
    assert!(said.windows(2).all(|w| w[0] < w[1]), "{}", r.stderr);
}

/// `AGENT_ENV_FIXTURE_PREFIX` is held to what an object key's prefix can be where it is read: one
/// that climbs (or starts with `/`) is refused naming the variable, before anything is written; a
/// good one starts the keys of the run's artifacts.
#[test]
fn a_fixture_prefix_that_climbs_is_refused_naming_the_variable() {
    let s = Sandboxed::new();
    s.copy_hello("hello");
    for bad in ["../../escape", "/abs/prefix", "a//b"] {
        let r = agent_env_test_support::Ran::from(
            s.command(&["run", "./hello", "--json"])
                .env("AGENT_ENV_FIXTURE_PREFIX", bad)
                .output()
                .unwrap(),
        );
        assert_eq!(r.code, 1, "{}", r.both());
        let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let problem = doc["problems"][0].as_str().unwrap_or_default();
        assert!(
            problem.starts_with(&format!("AGENT_ENV_FIXTURE_PREFIX=\"{bad}\" "))
                && problem.contains("set it to such a prefix, or unset it"),
            "{doc:#}"
        );
        assert!(!s.state().join("object_store").exists(), "{bad}");
    }
    let r = agent_env_test_support::Ran::from(
        s.command(&["run", "./hello"])
            .env("AGENT_ENV_FIXTURE_PREFIX", "fixtures/team-a/")
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(s
        .state()
        .join("object_store/fixtures/team-a/artifacts")
        .is_dir());
}

/// `AGENT_ENV_FIXTURE_PREFIX` with a part longer than a file name may be, or a character outside
/// the plain ones (letters, digits, `-`, `_`, `.`): the dry run and the run refuse it naming the
/// variable, before anything is written, rather than the store refusing its keys mid-run.
#[test]
fn a_fixture_prefix_with_a_long_part_or_an_odd_character_is_refused_naming_the_variable() {
    let s = Sandboxed::new();
    s.copy_hello("hello");
    let long = format!("fixtures/{}", "y".repeat(300));
    for (bad, fault) in [
        (long.as_str(), "has a part of 300 bytes"),
        ("team a", "holds ' '"),
        ("team\\a", "holds '\\\\'"),
        ("~/fixtures", "holds '~'"),
        ("team\ta", "holds '\\t'"),
    ] {
        for args in [
            &["run", "./hello", "--dry-run", "--json"][..],
            &["run", "./hello", "--json"],
        ] {
            let r = agent_env_test_support::Ran::from(
                s.command(args)
                    .env("AGENT_ENV_FIXTURE_PREFIX", bad)
                    .output()
                    .unwrap(),
            );
            assert_eq!(r.code, 1, "{bad:?} {args:?}: {}", r.both());
            let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
            let problem = doc["problems"][0].as_str().unwrap_or_default();
            assert!(
                problem.starts_with(&format!(
                    "AGENT_ENV_FIXTURE_PREFIX=\"{}\" {fault}",
                    bad.escape_debug()
                )) && problem.contains("set it to such a prefix, or unset it"),
                "{bad:?}: {doc:#}"
            );
            assert!(!s.state().join("object_store").exists(), "{bad:?}");
        }
    }
}

/// An artifact's link to a file outside the bundle folder is read through, into the object store
/// and the sandbox: the run and the dry run name it by its path in the bundle, and where it leads (a
/// note, and a warning in `--json` carrying that path). A link to a folder outside is left out of
/// the artifact, and named so. A link that stays inside the bundle is not named.
#[test]
fn an_artifact_link_leading_outside_the_bundle_is_named() {
    let s = Sandboxed::new();
    let secret = s.write("secret.txt", "s\n");
    let outside = s.write("outside/held.txt", "h\n");
    let artifact = s.write("linked/artifacts/a/real.txt", "r\n");
    let artifact = artifact.parent().unwrap();
    std::os::unix::fs::symlink(&secret, artifact.join("out.txt")).unwrap();
    std::os::unix::fs::symlink(outside.parent().unwrap(), artifact.join("outdir")).unwrap();
    std::os::unix::fs::symlink("real.txt", artifact.join("in.txt")).unwrap();
    s.write(
        "linked/tasks/t.json",
        &format!(
            r#"[{DEPLOY}, {{"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "a", "destination_path": "/app/a"}}]"#
        ),
    );
    let file_said = "artifacts/a/out.txt of the bundle is a symbolic link to ~/secret.txt, outside the bundle folder: a run reads that file into the object store and the sandbox";
    let folder_said = "artifacts/a/outdir of the bundle is a symbolic link to the folder ~/outside, outside the bundle folder: a run follows no link to a folder, so what it holds is left out of the artifact";
    for args in [
        &["run", "./linked", "--dry-run"][..],
        &["run", "./linked"][..],
    ] {
        let r = s.run(args);
        assert_eq!(r.code, 0, "{}", r.both());
        r.assert_stderr_has(&format!("note: {file_said}"));
        r.assert_stderr_has(&format!("note: {folder_said}"));
        assert!(!r.stderr.contains("in.txt"), "{}", r.stderr);
        // Said once each, as a note.
        assert_eq!(r.stderr.matches(file_said).count(), 1, "{}", r.stderr);
    }
    let r = s.run(&["run", "./linked", "--dry-run", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let warned: Vec<(&str, &str)> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| Some((w["path"].as_str()?, w["message"].as_str()?)))
        .filter(|(_, m)| m.contains("outside the bundle folder"))
        .collect();
    assert_eq!(warned.len(), 2, "{doc:#}");
    assert_eq!(warned[0].0, "artifacts/a/out.txt", "{doc:#}");
    assert!(warned[0].1.starts_with(file_said), "{doc:#}");
    assert_eq!(warned[1].0, "artifacts/a/outdir", "{doc:#}");
    assert!(warned[1].1.starts_with(folder_said), "{doc:#}");
}

/// A link to a folder inside the bundle, the artifact's own or another, is not followed either: the
/// run says so in a note (and in --json's warnings), as it does of one leading outside, where it was
/// left out without a word.
#[test]
fn an_artifact_link_to_a_folder_inside_the_bundle_is_named_as_left_out() {
    let s = Sandboxed::new();
    let artifact = s.write("linked/artifacts/a/sub/real.txt", "r\n");
    let artifact = artifact.parent().unwrap().parent().unwrap();
    s.write("linked/artifacts/b/other.txt", "o\n");
    std::os::unix::fs::symlink("sub", artifact.join("dirlink")).unwrap();
    std::os::unix::fs::symlink("../../b", artifact.join("sub/sibling")).unwrap();
    std::os::unix::fs::symlink(".", artifact.join("dot")).unwrap();
    s.write(
        "linked/tasks/t.json",
        &format!(
            r#"[{DEPLOY}, {{"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "a", "destination_path": "/app/a"}}]"#
        ),
    );
    let own_said = "artifacts/a/dirlink of the bundle is a symbolic link to the artifact's own folder sub: a run follows no link to a folder, so the artifact has no dirlink/ (what it holds is read as sub/ alone)";
    let other_said = "artifacts/a/sub/sibling of the bundle is a symbolic link to the folder artifacts/b of the bundle: a run follows no link to a folder, so what it holds is left out of the artifact";
    let top_said = "artifacts/a/dot of the bundle is a symbolic link to the artifact's own top folder: a run follows no link to a folder, so the artifact has no dot/ (its files are read once, from the folder itself); remove the link if nothing needs it";
    let r = s.run(&["run", "./linked", "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stderr_has(&format!("note: {top_said}"));
    r.assert_stderr_has(&format!("note: {own_said}"));
    r.assert_stderr_has(&format!("note: {other_said}"));
    let r = s.run(&["run", "./linked", "--dry-run", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let warned: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["message"].as_str())
        .filter(|m| m.contains("a run follows no link to a folder"))
        .collect();
    assert_eq!(warned.len(), 3, "{doc:#}");
    assert!(warned[0].starts_with(own_said), "{doc:#}");
    assert!(warned[1].starts_with(top_said), "{doc:#}");
    assert!(warned[2].starts_with(other_said), "{doc:#}");
}

/// Two checkouts of one bundle declare one artifact id: while its files are the same, each run of
/// either reuses the newest version, whichever folder wrote it, rather than writing another of the
/// same bytes; a checkout whose files differ writes a new version, saying which bundle wrote the last.
#[test]
fn two_folders_declaring_one_artifact_id_share_its_version_while_its_files_are_the_same() {
    let s = Sandboxed::new();
    s.write(
        "mb/artifacts/notes/artifact.toml",
        "id = \"@local/notes-file\"\n",
    );
    s.write("mb/artifacts/notes/notes.txt", "n\n");
    s.write(
        "mb/tasks/t.json",
        &format!(
            r#"[{DEPLOY}, {{"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "notes", "destination_path": "/app/notes"}}]"#
        ),
    );
    crate::support::run::copy_dir(&s.home().join("mb"), &s.home().join("bad"));
    let notes = |r: &crate::support::run::Ran| {
        let doc: serde_json::Value = serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", r.both()));
        let entity = doc["entities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == "@local/notes-file")
            .cloned()
            .unwrap_or_else(|| panic!("{doc:#}"));
        (entity["version"].clone(), entity["written"].clone())
    };
    for (folder, written) in [("./bad", true), ("./mb", false), ("./bad", false)] {
        let r = s.run(&["run", folder, "--json"]);
        assert_eq!(r.code, 0, "{}", r.both());
        assert_eq!(
            notes(&r),
            (json!(1), json!(written)),
            "{folder}: {}",
            r.both()
        );
    }
    let r = s.run(&["run", "./mb"]);
    r.assert_stdout_has("artifacts/notes: v1, unchanged\n");
    s.write("mb/artifacts/notes/notes.txt", "changed\n");
    let r = s.run(&["run", "./mb"]);
    r.assert_stdout_has(
        "artifacts/notes: v2 (last written by the bundle @local/~/bad; files changed: notes.txt)\n",
    );
}

/// Links among an artifact's files that lead to nothing are problems of the bundle: every one is
/// named at once, under the bundle's path as its other problems are, before the dry run starts
/// (and in `--json`'s `problems`), not the first one met while the artifact is read.
#[test]
fn every_dangling_link_of_an_artifact_is_a_problem_of_the_bundle_named_at_once() {
    let s = Sandboxed::new();
    let artifact = s.write("dangles/artifacts/a/f", "x\n");
    let artifact = artifact.parent().unwrap();
    std::os::unix::fs::symlink("/nonexistent", artifact.join("dangling")).unwrap();
    std::fs::create_dir_all(artifact.join("sub")).unwrap();
    std::os::unix::fs::symlink("/nope2", artifact.join("sub/dangling2")).unwrap();
    s.write(
        "dangles/tasks/t.json",
        &format!(
            r#"[{DEPLOY}, {{"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "a", "destination_path": "/app/a"}}]"#
        ),
    );
    let problem = String::from(
        "~/dangles/artifacts/a: can't be read: dangling is a symbolic link to /nonexistent, which does not exist, sub/dangling2 is a symbolic link to /nope2, which does not exist; remove each link or restore what it points to"
    );
    let r = s.run(&["run", "./dangles", "--dry-run"]);
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stderr_has(&problem);
    assert!(!r.both().contains("Dry run:"), "{}", r.both());
    let r = s.run(&["run", "./dangles", "--dry-run", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["status"], "error", "{doc:#}");
    let problems: Vec<&str> = doc["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    // The artifact is the bundle's all the same: the task loading it is told nothing more.
    assert_eq!(problems, [problem.as_str()], "{doc:#}");
}

/// A named pipe among an artifact's files is its one problem: the artifact is still the bundle's,
/// so the task loading it is not told it has no such artifact.
#[test]
fn a_named_pipe_in_an_artifact_is_its_one_problem() {
    let s = Sandboxed::new();
    let artifact = s.write("piped/artifacts/a/f", "x\n");
    let artifact = artifact.parent().unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(artifact.join("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    s.write(
        "piped/tasks/t.json",
        &format!(
            r#"[{DEPLOY}, {{"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "a", "destination_path": "/app/a"}}]"#
        ),
    );
    let r = s.run(&["run", "./piped", "--dry-run", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let problems: Vec<&str> = doc["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    assert_eq!(problems.len(), 1, "{doc:#}");
    assert!(
        problems[0].starts_with("~/piped/artifacts/a: can't be read: ")
            && problems[0].contains("is a named pipe (FIFO), not a regular file"),
        "{doc:#}"
    );
}

/// The user id of `nobody`, whom a test run as root runs agent-env as.
pub(crate) const NOBODY: u32 = 65534;

/// Whether this test process is root's.
pub(crate) fn as_root() -> bool {
    // SAFETY: geteuid only reads this process's effective user id.
    unsafe { libc::geteuid() == 0 }
}

/// The name and home folder the user database gives `uid`.
pub(crate) fn users_entry(uid: u32) -> Option<(String, std::path::PathBuf)> {
    use std::os::unix::ffi::OsStrExt;
    let mut buffer = vec![0u8; 16 * 1024];
    // SAFETY: an all-zero passwd is a valid value for getpwuid_r to fill in.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: the entry and its strings are written into `entry` and `buffer`, alive while read.
    let status = unsafe {
        libc::getpwuid_r(
            uid,
            &mut entry,
            buffer.as_mut_ptr().cast(),
            buffer.len(),
            &mut found,
        )
    };
    if status != 0 || found.is_null() {
        return None;
    }
    // SAFETY: both fields are NUL-terminated strings inside `buffer`.
    let (name, home) = unsafe {
        (
            std::ffi::CStr::from_ptr(entry.pw_name),
            std::ffi::CStr::from_ptr(entry.pw_dir),
        )
    };
    Some((
        name.to_string_lossy().into_owned(),
        std::ffi::OsStr::from_bytes(home.to_bytes()).into(),
    ))
}
/// The name and home folder of the user [`NOBODY`] where a test may run agent-env as that user and
/// its home folder is not there, nor can be made (its nearest folder that is there is root's and
/// closed to others): a container's nobody, at /nonexistent. None, said as a skip, where the test
/// is not run as root, the user database lacks the user, or the folder is there or could be made.
pub(crate) fn nobody_without_a_home_folder() -> Option<(String, std::path::PathBuf)> {
    use std::os::unix::fs::MetadataExt;
    let Some((nobody, home)) = users_entry(NOBODY).filter(|_| as_root()) else {
        eprintln!("skipped: needs root, and a user database entry for uid {NOBODY}");
        return None;
    };
    let nearest = home.ancestors().find(|p| p.exists())?.to_path_buf();
    let meta = std::fs::metadata(&nearest).ok()?;
    if nearest == home || meta.uid() != 0 || meta.mode() & 0o002 != 0 {
        eprintln!(
            "skipped: {nobody}'s home folder {} is there, or could be made",
            home.display()
        );
        return None;
    }
    Some((nobody, home))
}

/// Sets `path`'s permission bits to `mode`.
pub(crate) fn set_mode(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A run whose state folder is not there and cannot be made (HOME under a folder this user may not
/// write, XDG_STATE_HOME unset) names the folder that refuses, the nearest one that is there, not
/// the state folder as though it were there: as root, the run is made as nobody, with the folder
/// root's; else the folder is this user's own, chmod 555.
#[test]
fn a_state_folder_that_cannot_be_made_names_the_folder_that_refuses() {
    use std::os::unix::process::CommandExt;
    let s = Sandboxed::new();
    let closed = s.dir.path().join("closed");
    std::fs::create_dir(&closed).unwrap();
    let home = closed.join("home");
    let state = home.join(".local/state/agent-env");
    let mut cmd = s.command(&["run", "hello", "-q"]);
    cmd.env("HOME", &home).env_remove("XDG_STATE_HOME");
    if as_root() {
        for open in [s.dir.path(), &s.home(), &closed] {
            set_mode(open, 0o755);
        }
        cmd.uid(NOBODY).gid(NOBODY);
    } else {
        set_mode(&closed, 0o555);
    }
    let ran = crate::support::run::Ran::from(cmd.output().expect("run agent-env"));
    set_mode(&closed, 0o755);
    assert_ne!(ran.code, 0, "{}", ran.both());
    assert!(
        ran.stderr.contains(&format!(
            "can't make the locks folder {}: Permission denied",
            state.join("locks").display()
        )),
        "{}",
        ran.stderr
    );
    let (closed, state) = (closed.display(), state.display());
    let refusal = match as_root() {
        true => {
            let nobody = users_entry(NOBODY).unwrap().0;
            format!("; {closed} belongs to root and this user ({nobody}) may not write in it, so agent-env's state folder {state} cannot be made: have it made for this user (sudo mkdir -p {state} && sudo chown {nobody} {state}), or point XDG_STATE_HOME at a place of this user's")
        }
        false => format!(" may not write in {closed}, so agent-env's state folder {state} cannot be made: give {closed} back its write permission (chmod u+w {closed}), or point XDG_STATE_HOME at a writable place"),
    };
    assert!(ran.stderr.contains(&refusal), "{}", ran.stderr);
    assert!(!ran.stderr.contains(", not to this user"), "{}", ran.stderr);
    assert!(
        !ran.stderr.contains("not writable by this user"),
        "{}",
        ran.stderr
    );
}

/// A run with HOME unset whose user's home folder in the user database is not there (a container's
/// nobody, at /nonexistent): the run warns that HOME is not set and where its state goes, and the
/// state folder it cannot make is said to be under that missing home, with HOME and XDG_STATE_HOME
/// to set. Root's alone (the run is made as nobody), and only where nobody can make nothing on the
/// way to that home (its nearest folder that is there is root's and closed to others).
#[test]
fn a_run_with_home_unset_and_no_home_folder_says_to_set_home() {
    use std::os::unix::process::CommandExt;
    let Some((nobody, home)) = nobody_without_a_home_folder() else {
        return;
    };
    let nearest = home.ancestors().find(|p| p.exists()).unwrap().to_path_buf();
    let s = Sandboxed::new();
    for open in [s.dir.path(), &s.home()] {
        set_mode(open, 0o755);
    }
    let mut cmd = s.command(&["run", "hello", "-q"]);
    cmd.env_remove("HOME")
        .env_remove("XDG_STATE_HOME")
        .uid(NOBODY)
        .gid(NOBODY);
    let ran = crate::support::run::Ran::from(cmd.output().expect("run agent-env"));
    assert_ne!(ran.code, 0, "{}", ran.both());
    let state = home.join(".local/state/agent-env");
    let (home, state, nearest) = (home.display(), state.display(), nearest.display());
    assert!(
        ran.stderr.contains(&format!(
            "Warning: HOME is not set, so agent-env keeps its state in {state}, under {home}, the home folder the user database gives this user ({nobody}), which is not there: set HOME to a folder of this user's, or point XDG_STATE_HOME at one"
        )),
        "{}",
        ran.stderr
    );
    assert!(
        ran.stderr.contains(&format!(
            "; {nearest} belongs to root and this user ({nobody}) may not write in it, so agent-env's state folder {state} cannot be made; {home}, the home folder the user database gives this user, is not there: set HOME to a folder of this user's, or point XDG_STATE_HOME at one"
        )),
        "{}",
        ran.stderr
    );
    assert!(!ran.stderr.contains(", not to this user"), "{}", ran.stderr);
}

/// A run as root with XDG_STATE_HOME at a folder of another user's warns before it starts that
/// what it makes there will be root's, which that user will not be able to write: while the state
/// folder is not made yet, once it is root's (made by the first run), and when it is that user's.
/// A run in a folder of root's says none of it.
#[test]
fn a_run_as_root_in_another_users_state_folder_warns_that_its_files_will_be_roots() {
    if !as_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let nobody = users_entry(NOBODY).map_or_else(|| format!("uid {NOBODY}"), |(name, _)| name);
    let s = Sandboxed::new();
    let plain = s.run(&["run", "hello", "-q"]);
    assert_eq!(plain.code, 0, "{}", plain.both());
    assert!(!plain.stderr.contains("root's"), "{}", plain.both());
    let theirs = s.dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
    let state = theirs.join("agent-env");
    let run = || {
        let mut cmd = s.command(&["run", "hello", "-q"]);
        cmd.env("XDG_STATE_HOME", &theirs);
        let ran = crate::support::run::Ran::from(cmd.output().expect("run agent-env"));
        assert_eq!(ran.code, 0, "{}", ran.both());
        ran
    };
    let then = format!(
        "and {nobody} will not be able to write them; run agent-env as {nobody}, or point XDG_STATE_HOME at a place of root's (chown -R {nobody} {} gives {nobody} back what root made there)",
        state.display()
    );
    let (theirs_shown, state_shown) = (theirs.display(), state.display());
    let first = run();
    assert!(
        first.stderr.contains(&format!(
            "Warning: {theirs_shown}, where agent-env's state folder {state_shown} is to be made, belongs to {nobody}, but this run is root's: the state folder, and the stores, locks and logs it makes there, will be root's, {then}"
        )),
        "{}",
        first.stderr
    );
    let second = run();
    assert!(
        second.stderr.contains(&format!(
            "Warning: agent-env's state folder {state_shown} is root's, in {theirs_shown}, which belongs to {nobody}: the stores, locks and logs this run makes there will be root's too, {then}"
        )),
        "{}",
        second.stderr
    );
    std::os::unix::fs::chown(&state, Some(NOBODY), Some(NOBODY)).unwrap();
    let third = run();
    assert!(
        third.stderr.contains(&format!(
            "Warning: agent-env's state folder {state_shown} belongs to {nobody}, but this run is root's: the stores, locks and logs it makes there will be root's, {then}"
        )),
        "{}",
        third.stderr
    );
}
