//! A run whose document store stops taking writes before a task's end is written: the instance shows
//! as running there, so the run leaves its journal behind and the next run marks it failed.

use std::time::Duration;

use crate::support::run::Sandboxed;

/// Once the store `argv[1]` holds the instance of the task `locked` (its start is written behind
/// the run), holds an exclusive lock on it (so every write waits, then fails) until the file
/// `argv[3]` appears; `argv[2]` appears once the lock is held.
const HOLD_LOCK: &str = r#"
import os, sqlite3, sys, time
db, held, release = sys.argv[1:4]
conn = sqlite3.connect(db, isolation_level=None)
started = "SELECT count(*) FROM docs_task_instances WHERE doc LIKE '%/locked\"%'"
deadline = time.monotonic() + 120
while conn.execute(started).fetchone()[0] == 0 and time.monotonic() < deadline:
    time.sleep(0.02)
conn.execute("BEGIN EXCLUSIVE")
open(held, "w").close()
while not os.path.exists(release) and time.monotonic() < deadline:
    time.sleep(0.05)
conn.execute("ROLLBACK")
conn.close()
os.remove(held)
"#;

/// Waits, up to two minutes, for `ready` to hold.
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    agent_env_test_support::deadline::wait_until(Duration::from_secs(120), what, ready);
}

#[test]
fn a_task_end_the_store_did_not_take_is_marked_failed_by_the_next_run() {
    let s = Sandboxed::new();
    // The local store exists before the run that is to be refused.
    let first = s.run(&["run", "hello", "-q"]);
    assert_eq!(first.code, 0, "{}", first.both());

    let hold = s.write("hold.py", HOLD_LOCK);
    let held = s.home().join("held");
    let release = s.home().join("release");
    // The task's command leaves, in a session of its own (so the run does not stop it with the
    // command), a process holding the store's write lock.
    let command = format!(
        "setsid python3 {} {} {} {} </dev/null >/dev/null 2>&1 & while [ ! -e {} ]; do sleep 0.05; done",
        hold.display(),
        s.local_db().display(),
        held.display(),
        release.display(),
        held.display()
    );
    let task = serde_json::json!([
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "lock", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
         "criteria": [{"type": "bash_cmd_succeeds", "command": command}]}
    ]);
    s.write("locked/tasks/locked.json", &task.to_string());
    let refused = s.run(&["run", "./locked"]);
    std::fs::write(&release, "").unwrap();
    wait_for("the lock released", || !held.exists());
    assert_eq!(refused.code, 1, "{}", refused.both());
    assert!(
        refused
            .both()
            .contains("StoreError: the document store did not take the task's end"),
        "{}",
        refused.both()
    );
    let locked = |s: &Sandboxed| {
        s.docs("task_instances")
            .into_iter()
            .find(|d| d["task_id"].as_str().unwrap_or("").ends_with("/locked"))
            .unwrap()
    };
    assert_eq!(locked(&s)["status"], "running", "the store shows the start");

    let listed = s.run(&["task", "list"]);
    assert!(
        listed
            .stderr
            .contains("1 earlier run could not write the end of some tasks to the document store"),
        "{}",
        listed.both()
    );

    let next = s.run(&["run", "hello", "-q"]);
    assert_eq!(next.code, 0, "{}", next.both());
    assert!(
        next.stderr.contains(
            "note: 1 earlier run could not write the end of some tasks to the document store: 1 task instance left showing as running marked failed"
        ),
        "{}",
        next.both()
    );
    let instance = locked(&s);
    assert_eq!(instance["status"], "failed", "{instance}");
    assert!(
        instance["error"].as_str().unwrap().starts_with(
            "the run that ran this task could not write its end to the document store"
        ),
        "{instance}"
    );
    // Done once: the run after has nothing to say.
    let again = s.run(&["run", "hello", "-q"]);
    assert!(!again.stderr.contains("earlier run"), "{}", again.both());
}
