//! Task files written for the Python original plan and score the same here: `verify_sandbox` reads the
//! original's criterion spellings (`bash_cmd`, `value`, `criterion`, `score_aggregator`,
//! `shell_timeout_seconds`) beside ours, and its result rows carry the criterion's fields.

use crate::support::run::Sandboxed;

/// The original's own spelling of a verifier step, as its `hello` example writes it.
const ORIGINAL_TASK: &str = r#"[
  {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box", "sandbox_mode": "vm", "sandbox_type": "local"},
  {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "orig",
   "score_aggregator": "weighted_average", "shell_timeout_seconds": 30, "criteria": [
     {"type": "bash_cmd_succeeds", "criterion": "writes a greeting", "bash_cmd": "echo hello > made.txt"},
     {"type": "probe_file_contains", "criterion": "greets", "paths": ["made.txt"], "value": "hel+o"},
     {"type": "bash_cmd_succeeds", "criterion": "a failing check", "bash_cmd": "false", "weight": 2}
   ]}
]"#;

#[test]
fn a_task_in_the_originals_spelling_plans_and_scores_as_the_original_scores_it() {
    let s = Sandboxed::new();
    s.write("orig/tasks/t.json", ORIGINAL_TASK);
    let dry = s.run(&["run", "--dry-run", "./orig"]);
    assert_eq!(dry.code, 0, "{}", dry.both());

    let r = s.run(&["run", "./orig"]);
    assert_eq!(r.code, 0, "{}", r.both());
    // weighted_average: 1 + 1 + 0 over weights 1 + 1 + 2.
    r.assert_stdout_has("  tasks/t.json v1: scored below 1 (check: 0.5), ");
    let instance = &s.docs("task_instances")[0];
    let verification = &instance["context"]["metadata"]["verifications"]["orig"];
    assert_eq!(verification["score"], 0.5);
    let rows = verification["results"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["criterion"], "writes a greeting");
    assert_eq!(rows[0]["bash_cmd"], "echo hello > made.txt");
    assert_eq!(rows[0]["result"], true);
    assert_eq!(rows[1]["result"], true, "{}", rows[1]);
    assert_eq!(rows[2]["result"], false);
    assert_eq!(rows[2]["weight"], 2);
    assert_eq!(rows[2]["criterion_index"], 2);
}

/// A task is scored by each verifier's score: two steps giving one verifier_id would let the second
/// replace the first's (a failing grade hidden), so the task is refused before anything runs.
#[test]
fn two_steps_giving_one_verifier_id_are_refused() {
    let s = Sandboxed::new();
    s.write(
        "vid/tasks/same.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "first", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "grade",
             "criteria": [{"type": "bash_cmd_succeeds", "command": "false"}]},
            {"id": "second", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "grade",
             "criteria": [{"type": "bash_cmd_succeeds", "command": "true"}]}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./vid"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr
            .contains("steps 'first' and 'second' both give verifier_id 'grade'"),
        "{}",
        r.stderr
    );
}

/// What is fixed text in a task is checked before the run: where base_dir and destination_path
/// lead, the type of paths, and an empty command (which passes whatever the sandbox holds).
#[test]
fn fixed_paths_and_commands_are_checked_before_the_run() {
    let s = Sandboxed::new();
    s.write("fixed/artifacts/a/x", "x");
    s.write(
        "fixed/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "l", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "a", "destination_path": "/tmp/out"},
            {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v", "base_dir": "/app/sub/..",
             "criteria": [{"type": "probe_file_exists", "paths": ["x", 5]},
                          {"type": "bash_cmd_succeeds", "command": " "}]},
            {"id": "w", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "w", "base_dir": 7,
             "criteria": [{"type": "probe_file_exists", "paths": ["x"]}]}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./fixed"]);
    assert_eq!(r.code, 1, "{}", r.both());
    for said in [
        "destination_path: the local sandbox maps only /app (to its work folder), so '/tmp/out' is outside it",
        "base_dir: '/app/sub/..' has a '..' part",
        "criterion 1 (probe_file_exists): 'paths' must be a list of paths (strings), got [\"x\",5]",
        "criterion 2 (bash_cmd_succeeds): the command is empty",
        "base_dir must be a path in the sandbox (a string such as /app/repo), got 7",
    ] {
        assert!(r.stderr.contains(said), "{said}\n{}", r.stderr);
    }
}

/// A field name close to one a built-in step reads is a typo, most likely: a dry run says which it
/// may have meant (an optional field misspelled was ignored, and changed the scoring). A field close
/// to none (a description for other tools) is left alone.
#[test]
fn a_dry_run_names_the_field_a_typo_may_have_meant() {
    let s = Sandboxed::new();
    s.write(
        "ty/tasks/typo.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box", "description": "a box"},
            {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v", "agregator": "any_pass",
             "criteria": [{"type": "bash_cmd_succeeds", "command": "true", "wieght": 3}]}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./ty"]);
    assert_eq!(r.code, 0, "{}", r.both());
    for said in [
        "note: tasks/typo.json: step 'v': 'agregator' is not a field it reads: did you mean 'aggregator'?",
        "note: tasks/typo.json: step 'v' criterion 1: 'wieght' is not a field it reads: did you mean 'weight'?",
    ] {
        assert!(r.stderr.contains(said), "{said}\n{}", r.stderr);
    }
    assert!(!r.stderr.contains("'description'"), "{}", r.stderr);
}

/// The likeliest ways to mistype a built-in step's time limit, which it would ignore (a command
/// sleeping past it would pass): each is noted with the field that limits the command.
#[test]
fn a_time_limit_a_built_in_step_does_not_read_names_the_one_it_does() {
    let s = Sandboxed::new();
    s.write(
        "limits/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "timeout_seconds": 1, "timeout": 1,
             "criteria": [{"type": "probe_dir_exists", "paths": ["."], "timeout": 1},
                          {"type": "bash_cmd_succeeds", "command": "true", "timeout": 1}]}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./limits"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let notes: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("note: "))
        .collect();
    assert_eq!(
        notes,
        [
            "note: tasks/t.json: step 'v': 'timeout_seconds' limits a plugin's step, and a built-in step does not read it; verify_sandbox limits each bash_cmd_succeeds command instead, by its criterion's 'timeout_seconds', else the step's 'shell_timeout_seconds' (300 seconds without either)",
            "note: tasks/t.json: step 'v': 'timeout' is not a field it reads: did you mean 'shell_timeout_seconds' (the time limit of each bash_cmd_succeeds command, in seconds)?",
            "note: tasks/t.json: step 'v' criterion 2: 'timeout' is not a field it reads: did you mean 'timeout_seconds' (the command's time limit, in seconds)?",
        ],
        "{}",
        r.stderr
    );
    // A step without a limit of its own keeps the note it had.
    s.write(
        "deploy/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box", "timeout_seconds": 1}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./deploy"]);
    assert!(
        r.stderr.contains("note: tasks/t.json: step 'box': 'timeout_seconds' limits a plugin's step, and a built-in step does not read it\n"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_criterion_without_its_command_names_both_spellings() {
    let s = Sandboxed::new();
    s.write(
        "bad/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "criteria": [{"type": "bash_cmd_succeeds"},
                          {"type": "probe_file_contains", "paths": ["x"]}]}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./bad"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr
            .contains("criterion 1 (bash_cmd_succeeds) needs 'command' (or 'bash_cmd')"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("criterion 2 (probe_file_contains) needs 'expected' (or 'value')"),
        "{}",
        r.stderr
    );
}

/// A task that scores below 1 says why as it ends: each criterion that did not pass, with the end
/// of a command's stderr (where its error is), not its first 200 characters; `task get-instance`
/// shows every criterion the same way.
#[test]
fn a_task_scoring_below_one_says_which_criteria_did_not_pass_and_why() {
    let s = Sandboxed::new();
    s.write(
        "why/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "criteria": [
               {"type": "bash_cmd_succeeds", "criterion": "quiet", "bash_cmd": "true"},
               {"type": "bash_cmd_succeeds", "criterion": "noisy",
                "bash_cmd": "for i in $(seq 1 500); do echo line$i >&2; done; echo the-real-error >&2; exit 3"}
             ]}]"#,
    );
    let r = s.run(&["run", "./why"]);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stdout_has(
        "[tasks/t.json] step 'check': criterion 'noisy' (bash_cmd_succeeds) did not pass: exit=3; stderr=… the-real-error\n",
    );
    assert!(!r.stdout.contains("'quiet'"), "{}", r.stdout);
    let instance = &s.docs("task_instances")[0];
    let kept = instance["context"]["metadata"]["verifications"]["v"]["results"][1]["justification"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(kept.ends_with("line500\nthe-real-error\n"), "{kept}");
    let id = instance["instance_id"].as_str().unwrap();
    let shown = s.run(&["task", "get-instance", id]);
    assert!(
        shown.stdout.contains(
            "checks (verifier v):\n  quiet: passed\n  noisy: did not pass: exit=3; stderr=… the-real-error\n"
        ),
        "{}",
        shown.stdout
    );
}

/// Each criterion's justification is the original's sentence, word for word (judges and dashboards read
/// them); a criterion whose check cannot run fails that criterion with `evaluator error: …` instead of
/// the step; a type verify_sandbox does not check is skipped with no score; a second sandbox of one
/// name and a missing sandbox are the original's errors.
#[test]
fn verify_sandbox_justifies_each_criterion_in_the_originals_words() {
    let s = Sandboxed::new();
    s.write(
        "words/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "score_aggregator": "weighted_average", "criteria": [
               {"type": "bash_cmd_succeeds", "bash_cmd": "echo hi > a.txt; echo oops >&2; exit 3"},
               {"type": "probe_file_exists", "paths": ["a.txt", "zz.txt", "yy"]},
               {"type": "probe_file_exists", "paths": ["a.txt"]},
               {"type": "probe_file_contains", "paths": ["a.txt"], "value": "h.$"},
               {"type": "probe_file_contains", "paths": ["a.txt"], "value": "bye"},
               {"type": "probe_file_contains", "paths": ["none.txt"], "value": "x"},
               {"type": "probe_file_exists", "paths": ["../escape"]},
               {"type": "weird"}
             ]}]"#,
    );
    let r = s.run(&["run", "./words"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let instance = &s.docs("task_instances")[0];
    let rows = instance["context"]["metadata"]["verifications"]["v"]["results"]
        .as_array()
        .unwrap()
        .clone();
    let why: Vec<&str> = rows
        .iter()
        .map(|r| r["justification"].as_str().unwrap())
        .collect();
    assert_eq!(why[0], "exit=3; stderr=oops\n");
    assert_eq!(why[1], "Missing: ['zz.txt', 'yy']");
    assert_eq!(why[2], "All paths exist");
    assert_eq!(why[3], "contains 'h.$'");
    assert_eq!(why[4], "does not contain 'bye'");
    assert!(
        why[5].starts_with("could not read none.txt: "),
        "{}",
        why[5]
    );
    assert_eq!(
        why[6],
        "evaluator error: '../escape' climbs out of base_dir"
    );
    assert_eq!(why[7], "type 'weird' not handled by verify_sandbox");
    assert_eq!(rows[6]["result"], false);
    assert_eq!(rows[7]["skipped"], true);
    assert!(
        rows[7].get("score").is_none() && rows[7].get("result").is_none(),
        "{}",
        rows[7]
    );

    s.write(
        "twice/tasks/t.json",
        r#"[{"id": "a", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "b", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );
    let r = s.run(&["run", "./twice"]);
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stdout_has("failed at step 'b': RuntimeError: Sandbox 'box' is already deployed");
    assert!(
        r.stdout.ends_with("\nTore down 1 sandbox.\n"),
        "{}",
        r.stdout
    );

    s.write(
        "mode/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box", "sandbox_mode": "foo"}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./mode"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr.contains("step 'box': deploy_sandbox can't read it ('sandbox_mode' is 'foo'; it takes 'container' or 'vm')"),
        "{}",
        r.stderr
    );
}

/// A task asking for a sandbox provider no run can use is refused before anything is written, rather
/// than run in the local sandbox it did not ask for.
#[test]
fn a_sandbox_type_no_provider_serves_is_refused_before_anything_runs() {
    let s = Sandboxed::new();
    s.write(
        "docker/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box", "sandbox_type": "docker"}]"#,
    );
    let r = s.run(&["run", "./docker"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr.contains("step 'box': deploy_sandbox can't read it (sandbox_type 'docker' names no sandbox provider a run can use; the built-in one is 'local': write \"sandbox_type\": \"local\", or leave the key out)"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("v1"), "nothing is written: {}", r.stdout);
}

/// A bundle artifact of a type nothing registers is refused before anything runs, as the original
/// refuses it: `'weird_thing' is not a known artifact type`, naming the file that declares the type and
/// the types there are.
#[test]
fn a_bundle_artifact_of_an_unknown_type_is_refused() {
    let s = Sandboxed::new();
    s.write(
        "weird/artifacts/g/artifact.toml",
        "type = \"weird_thing\"\n",
    );
    s.write("weird/artifacts/g/f.txt", "x\n");
    s.write(
        "weird/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./weird"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr
            .contains("artifacts/g/artifact.toml: 'weird_thing' is not a known artifact type; the known ones are cli, docker_image, environment, environment_universe, file, file_artifact_universe, skill"),
        "{}",
        r.stderr
    );
}

/// A file artifact loads into its destination folder under its own name, as the original loads it, so
/// a check with that folder as `base_dir` finds it.
/// What stands in the way of an artifact's file in the sandbox (a `destination_path` that is a file,
/// say a file artifact's own path) is said in the sandbox's terms, with what to do.
#[test]
fn what_stands_where_an_artifacts_file_goes_is_named_in_the_sandbox() {
    let s = Sandboxed::new();
    s.write("load/artifacts/g/greeting.txt", "hello\n");
    s.write("load/artifacts/u/c.txt", "c\n");
    s.write("load/artifacts/u/greeting.txt/b.txt", "b\n");
    s.write("load/artifacts/h/x", "x\n");
    // Each task first loads `g` into /app/x: /app/x/greeting.txt is a file, /app/x a folder.
    let second = [
        r#""artifact_id": "g", "destination_path": "/app/x/greeting.txt""#,
        r#""artifact_id": "g", "destination_path": "x/greeting.txt/in""#,
        r#""artifact_id": "u", "destination_path": "/app/x""#,
        r#""artifact_id": "h", "destination_path": "/app""#,
    ];
    for (n, load) in second.iter().enumerate() {
        s.write(
            &format!("load/tasks/t{n}.json"),
            &format!(
                r#"[{{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}},
                    {{"id": "first", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "g", "destination_path": "/app/x"}},
                    {{"id": "load", "type": "load_artifact", "sandbox_name": "box", {load}}}]"#
            ),
        );
    }
    let r = s.run(&["run", "./load"]);
    assert_eq!(r.code, 1, "{}", r.both());
    for said in [
        "tasks/t0.json v1: failed at step 'load': ValueError: can't load the artifact '@local/~/load/g' into the sandbox: destination_path '/app/x/greeting.txt' is a file, not a folder; give destination_path the folder to copy into (it is made when missing), such as /app/x,",
        "tasks/t1.json v1: failed at step 'load': ValueError: can't load the artifact '@local/~/load/g' into the sandbox: /app/x/greeting.txt is a file, not a folder, so destination_path 'x/greeting.txt/in' can't be made; give destination_path the folder to copy into (it is made when missing), such as /app/x,",
        "tasks/t2.json v1: failed at step 'load': ValueError: can't load the artifact '@local/~/load/u' into the sandbox: its file greeting.txt/b.txt goes in /app/x/greeting.txt, but /app/x/greeting.txt is a file, not a folder; remove it in an earlier step, or load the artifact into another folder,",
        "tasks/t3.json v1: failed at step 'load': ValueError: can't load the artifact '@local/~/load/h' into the sandbox: its file x goes at /app/x, which is a folder; remove it in an earlier step, or load the artifact into another folder,",
    ] {
        r.assert_stdout_has(said);
    }
    // No host path: neither the object store's nor the sandbox folder's.
    let state = s.state();
    assert!(
        !r.stdout.contains(&*state.to_string_lossy())
            && !r.stdout.contains(&*s.sandboxes().to_string_lossy()),
        "{}",
        r.stdout
    );
}

/// A script an artifact holds arrives without its mode: a criterion running it as `./check.sh`
/// fails with bash's exit 126, and the run says how to run it.
#[test]
fn a_script_that_is_not_executable_gets_the_ways_to_run_it() {
    use std::os::unix::fs::PermissionsExt;
    let s = Sandboxed::new();
    let script = s.write("exec/artifacts/s/check.sh", "#!/bin/sh\necho checked\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    s.write("exec/artifacts/s/notes.txt", "notes\n");
    s.write(
        "exec/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "s", "destination_path": "/app/s"},
            {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "base_dir": "/app/s", "verifier_id": "v",
             "criteria": [{"type": "bash_cmd_succeeds", "command": "./check.sh --all"},
                          {"type": "bash_cmd_succeeds", "command": "bash ./check.sh"},
                          {"type": "bash_cmd_succeeds", "command": "chmod +x ./check.sh && ./check.sh"}]}]"#,
    );
    let r = s.run(&["run", "./exec"]);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stdout_has("step 'check': criterion 1 (bash_cmd_succeeds) did not pass: exit=126; stderr=bash: line 1: ./check.sh: Permission denied … (./check.sh is not executable: an artifact's files arrive with their contents, not their modes; run it as bash ./check.sh, or make it executable first: chmod +x ./check.sh && ./check.sh)\n");
    // Both ways it names pass.
    let rows = &s.docs("task_instances")[0]["context"]["metadata"]["verifications"]["v"]["results"];
    assert_eq!(rows[1]["result"], true, "{rows}");
    assert_eq!(rows[2]["result"], true, "{rows}");
}

#[test]
fn a_file_artifact_loads_into_its_destination_folder() {
    let s = Sandboxed::new();
    s.write("load/artifacts/g/greeting.txt", "hello\n");
    s.write(
        "load/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "g", "destination_path": "/app/g"},
            {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "base_dir": "/app/g", "verifier_id": "v",
             "criteria": [{"type": "probe_file_contains", "paths": ["greeting.txt"], "value": "hello"}]}]"#,
    );
    let r = s.run(&["run", "./load"]);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stdout_has("passed (check: 1)");
}

/// A command whose base_dir is no folder in the sandbox fails its criterion saying so (starting bash
/// there failed as if bash could not run on this machine, and stopped the step).
#[test]
fn a_command_whose_base_dir_is_not_there_fails_its_criterion_naming_it() {
    let s = Sandboxed::new();
    s.write(
        "nodir/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v", "base_dir": "/app/nope",
             "criteria": [{"type": "bash_cmd_succeeds", "command": "true"}]}]"#,
    );
    let r = s.run(&["run", "./nodir", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let rows = &doc["tasks"][0]["verifications"]["v"]["results"];
    let why = rows[0]["justification"].as_str().unwrap_or_default();
    assert!(
        why.contains("the folder it runs in (its base_dir) is not in the sandbox")
            && why.contains("/nope is not a folder; make it in an earlier step, or fix base_dir"),
        "{}",
        r.both()
    );
    assert!(!r.both().contains("can't start bash"), "{}", r.both());
}
