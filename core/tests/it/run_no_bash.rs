//! A machine with no `bash` on PATH cannot check a `bash_cmd_succeeds` criterion at all: the step
//! fails, saying so and what to do, rather than scoring the sandbox 0 (which would read as the agent
//! failing), and a dry run tells beforehand.

use std::path::Path;

use crate::support::run::Sandboxed;

/// A task whose check runs a command bash must interpret, and (criterion 2) one given by `plain`.
fn write_bundle(s: &Sandboxed, plain: &str) {
    let task = serde_json::json!([
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
         "criteria": [{"type": "probe_dir_exists", "paths": ["/app"]},
                      {"type": "bash_cmd_succeeds", "command": plain}]}
    ]);
    s.write("nb/tasks/t.json", &task.to_string());
}

/// `agent-env ARGS` with PATH holding only the folder `path`.
fn run_with_path(s: &Sandboxed, args: &[&str], path: &Path) -> agent_env_test_support::Ran {
    agent_env_test_support::Ran::from(
        s.command(args)
            .env("PATH", path)
            .output()
            .expect("run agent-env"),
    )
}

#[test]
fn without_bash_the_step_fails_saying_bash_is_missing() {
    let s = Sandboxed::new();
    let empty = s.dir.path().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    write_bundle(&s, "test -d . && echo ok");
    let r = run_with_path(&s, &["run", "./nb"], &empty);
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stdout_has("step 2/2 v failed in ");
    r.assert_stdout_has(&format!(
        "EnvironmentError: criterion 2 (bash_cmd_succeeds) can't be checked: bash is not on PATH ({}), and a bash_cmd_succeeds command runs in bash; install bash, or run agent-env with the folder that holds it on PATH",
        empty.display()
    ));
    assert!(!r.stdout.contains("scored below 1"), "{}", r.stdout);
    assert_eq!(s.docs("task_instances")[0]["status"], "failed");
}

/// A criterion with a name is called by it, as the run's other messages call it.
#[test]
fn without_bash_a_named_criterion_is_called_by_its_name() {
    let s = Sandboxed::new();
    let empty = s.dir.path().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let task = serde_json::json!([
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
         "criteria": [{"type": "probe_dir_exists", "paths": ["/app"]},
                      {"type": "bash_cmd_succeeds", "criterion": "check passes",
                       "command": "test -d . && echo ok"}]}
    ]);
    s.write("nb/tasks/t.json", &task.to_string());
    let r = run_with_path(&s, &["run", "./nb"], &empty);
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stdout_has(
        "EnvironmentError: criterion 'check passes' (bash_cmd_succeeds) can't be checked: bash is not on PATH (",
    );
}

#[test]
fn a_dry_run_without_bash_counts_a_command_that_needs_it_as_a_failure() {
    let s = Sandboxed::new();
    let empty = s.dir.path().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    write_bundle(&s, "test -d . && echo ok");
    let r = run_with_path(&s, &["run", "./nb", "--dry-run"], &empty);
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stderr_has(&format!(
        "note: tasks/t.json: bash is not on PATH ({}), and a bash_cmd_succeeds command runs in bash (step 'v', criterion 2): the step fails, and the task with it; install bash",
        empty.display()
    ));
    assert!(r.both().contains("1 of 1 task would fail"), "{}", r.both());
    // With bash on PATH, nothing of the kind is said.
    let r = s.run(&["run", "./nb", "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(!r.both().contains("bash is not on PATH"), "{}", r.both());
}

#[test]
fn a_dry_run_without_bash_notes_a_plain_command_that_may_start_without_it() {
    let s = Sandboxed::new();
    let bin = s.script("bin/check-it", "#!/no/such/interpreter\n");
    let bin = bin.parent().unwrap();
    write_bundle(&s, "check-it --quick");
    let r = run_with_path(&s, &["run", "./nb", "--dry-run"], bin);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stderr_has(
        "(step 'v', criterion 2): the step fails if a command goes to bash (one of plain words whose program is found starts without it); install bash",
    );
}
