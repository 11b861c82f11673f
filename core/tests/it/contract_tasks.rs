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
            .contains("criterion 0 (bash_cmd_succeeds) needs 'command' (or 'bash_cmd')"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("criterion 1 (probe_file_contains) needs 'expected' (or 'value')"),
        "{}",
        r.stderr
    );
}
