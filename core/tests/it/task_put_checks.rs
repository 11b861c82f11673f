//! `agent-env task put` checks a task's steps as a bundle run checks a task file's (at least one step,
//! each with an id of its own and a type), and `task run` refuses a stored task that fails them, where
//! such a task was stored and then ran wrongly.

use crate::support::run::Sandboxed;

/// The problems `task put` and a bundle run both say of a task with two steps of one id, a step
/// without an id and a step whose id is a number.
const TWO_OF_ONE_ID: &str = r#"[{"id": "a", "type": "deploy_sandbox", "sandbox_name": "box"},
  {"id": "a", "type": "deploy_sandbox", "sandbox_name": "box2"},
  {"type": "deploy_sandbox", "sandbox_name": "box3"},
  {"id": 5, "type": "deploy_sandbox", "sandbox_name": "box4"}]"#;

const PROBLEMS: [&str; 3] = [
    "two steps have the id 'a'; step ids must be unique in a task",
    "step 3 needs an 'id' (a non-empty string)",
    "step 4 needs an 'id' (a non-empty string)",
];

#[test]
fn task_put_refuses_what_a_bundle_run_refuses_naming_every_problem() {
    let s = Sandboxed::new();
    s.write("b1/tasks/t.json", TWO_OF_ONE_ID);
    let bundle = s.run(&["run", "./b1"]);
    let file = s.write("t.json", TWO_OF_ONE_ID);
    let put = s.run(&["task", "put", file.to_str().unwrap(), "--id", "q/dup"]);
    assert_eq!(put.code, 1, "{}", put.both());
    for problem in PROBLEMS {
        assert!(
            bundle.stderr.contains(problem),
            "{problem}: {}",
            bundle.both()
        );
        assert!(
            put.stderr.contains(&format!("t.json: {problem}")),
            "{problem}: {}",
            put.both()
        );
    }
    // Nothing was stored.
    let got = s.run(&["task", "get", "q/dup"]);
    assert_eq!(got.code, 1, "{}", got.both());
    assert!(got.stderr.contains("has no task 'q/dup'"), "{}", got.both());

    // A task of no steps is refused too, where its run was 'unscored' and exited 0.
    let empty = s.write("empty.json", "[]");
    let put = s.run(&["task", "put", empty.to_str().unwrap(), "--id", "q/empty"]);
    assert_eq!(put.code, 1, "{}", put.both());
    assert!(
        put.stderr
            .contains("empty.json: a task needs at least one step"),
        "{}",
        put.both()
    );
}

/// A task stored before `task put` checked its steps is refused by `task run`, saying what is wrong
/// and how to store a corrected version, where its two steps of one id ran as one step run twice.
#[test]
fn task_run_refuses_a_stored_task_that_fails_the_checks() {
    let s = Sandboxed::new();
    let file = s.write(
        "t.json",
        r#"[{"id": "a", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "b", "type": "deploy_sandbox", "sandbox_name": "box2"}]"#,
    );
    let put = s.run(&["task", "put", file.to_str().unwrap(), "--id", "q/dup2"]);
    assert_eq!(put.code, 0, "{}", put.both());
    // As an older agent-env stored it: the second step has the first one's id.
    let db = s.state().join("document_store").join("documents.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let changed = conn
        .execute(
            "UPDATE docs_tasks SET doc = json_set(doc, '$.steps[1].id', 'a')",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);
    let run = s.run(&["task", "run", "q/dup2"]);
    assert_eq!(run.code, 1, "{}", run.both());
    assert!(
        run.stderr.contains(
            "the stored task 'q/dup2' v1 can't run: two steps have the id 'a'; step ids must be unique in a task; put a corrected version with agent-env task put FILE --id q/dup2"
        ),
        "{}",
        run.both()
    );
    assert!(!run.both().contains("attempt"), "{}", run.both());
    let instances = s.run(&["task", "instances", "q/dup2", "--json"]);
    assert!(
        instances.stdout.contains("\"instances\": []"),
        "{}",
        instances.both()
    );
}
