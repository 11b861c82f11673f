//! A run whose document store stops taking writes before a task's end is written: the task comes out
//! as its steps said (passed, with its scores), the run waits for the store for a while, and when the
//! store still does not take the end, the run keeps the final document in its journal and the next run
//! writes it, marked as recorded late. A store that comes back during the wait takes the end at once.
//!
//! The store is SQLite (the @local store, or the configured document store at a path), refused on cue:
//! the task's own command leaves a process holding the database's write lock.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::support::run::Sandboxed;
use agent_env_test_support::Ran;

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

/// The lock holder's cue files: `held` while it holds the lock, `release` to let it go.
struct Lock {
    held: PathBuf,
    release: PathBuf,
}

impl Lock {
    fn release(&self) {
        std::fs::write(&self.release, "").unwrap();
        wait_for("the lock released", || !self.held.exists());
    }
}

/// The steps of the task `locked`: a sandbox, then a check whose command leaves, in a session of its
/// own and unmarked (so the run stops it neither with the command nor with the sandbox: it stands for
/// another process holding the store), a process holding the write lock of the database `db`, and
/// passes once it holds it.
fn locking_steps(s: &Sandboxed, db: &Path) -> (Value, Lock) {
    let hold = s.write("hold.py", HOLD_LOCK);
    let lock = Lock {
        held: s.home().join("held"),
        release: s.home().join("release"),
    };
    let command = format!(
        "setsid env -u AGENT_ENV_TASK_COMMAND_DIR python3 {} {} {} {} </dev/null >/dev/null 2>&1 & while [ ! -e {} ]; do sleep 0.05; done",
        hold.display(),
        db.display(),
        lock.held.display(),
        lock.release.display(),
        lock.held.display()
    );
    let steps = serde_json::json!([
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "lock", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
         "criteria": [{"type": "bash_cmd_succeeds", "command": command}]}
    ]);
    (steps, lock)
}

/// The instance of the task `locked` in the documents `docs`.
fn locked(docs: Vec<Value>) -> Value {
    docs.into_iter()
        .find(|d| d["task_id"].as_str().unwrap_or("").ends_with("/locked"))
        .expect("the instance of 'locked'")
}

fn run_with(s: &Sandboxed, args: &[&str], env: &[(&str, &str)]) -> Ran {
    let mut command = s.command(args);
    for (name, value) in env {
        command.env(name, value);
    }
    Ran::from(command.output().unwrap())
}

#[test]
fn a_task_end_the_store_did_not_take_is_written_by_the_next_run_as_the_task_left_it() {
    let s = Sandboxed::new();
    // The local store exists before the run that is to be refused.
    let first = s.run(&["run", "hello", "-q"]);
    assert_eq!(first.code, 0, "{}", first.both());

    let (steps, lock) = locking_steps(&s, &s.local_db());
    s.write("locked/tasks/locked.json", &steps.to_string());
    let refused = run_with(
        &s,
        &["run", "./locked"],
        &[("AGENT_ENV_RECORD_WAIT_SECONDS", "0")],
    );
    lock.release();
    // The task passed: the store's trouble is said, not counted against it.
    assert_eq!(refused.code, 0, "{}", refused.both());
    refused.assert_stdout_has("  tasks/locked.json v1: passed (lock: 1)");
    assert!(
        refused.stderr.contains(
            "[tasks/locked.json] Warning: the document store did not take the task's end ("
        ) && refused.stderr.contains(
            "so its record is not written yet; it is kept in this machine's state folder, and the next agent-env run (of a bundle) on this machine writes it as the task left it"
        ),
        "{}",
        refused.both()
    );
    assert_eq!(locked(s.docs("task_instances"))["status"], "running");

    let listed = s.run(&["task", "list"]);
    assert!(
        listed
            .stderr
            .contains("1 earlier run could not write the end of some tasks to the document store: those task instances show as running (or as failed, when a run on another machine took theirs for killed; or are not there yet) until the next agent-env run (of a bundle) writes their end"),
        "{}",
        listed.both()
    );

    let next = s.run(&["run", "hello", "-q"]);
    assert_eq!(next.code, 0, "{}", next.both());
    assert!(
        next.stderr.contains(
            "note: wrote the end of 1 task instance that earlier runs could not write to the document store when the task ended"
        ),
        "{}",
        next.both()
    );
    assert!(!next.stderr.contains("marked failed"), "{}", next.both());
    let instance = locked(s.docs("task_instances"));
    assert_eq!(instance["status"], "completed", "{instance}");
    assert_eq!(instance["error"], Value::Null, "{instance}");
    assert_eq!(instance["current_step"], 2, "{instance}");
    assert_eq!(
        instance["context"]["metadata"]["verifications"]["v"]["score"], 1.0,
        "{instance}"
    );
    assert!(instance["recorded_late_at_utc"].is_string(), "{instance}");
    let id = instance["instance_id"].as_str().unwrap();
    let shown = s.run(&["task", "get-instance", id]);
    assert!(
        shown.stdout.contains("status:    completed (passed)\n")
            && shown.stdout.contains("scores:    lock: 1\n")
            && shown.stdout.contains("recorded:  late, at "),
        "{}",
        shown.both()
    );
    // Done once: the run after has nothing to say.
    let again = s.run(&["run", "hello", "-q"]);
    assert!(!again.stderr.contains("earlier run"), "{}", again.both());
    assert!(!again.stderr.contains("wrote the end"), "{}", again.both());
}

/// A home whose configured document store is the SQLite file `db`.
fn configured(s: &Sandboxed, db: &Path) {
    s.write(
        ".agentenv/config.toml",
        &format!(
            "[stores.document]\nimpl = \"LocalSqliteDocumentStore\"\nconfig = {{ path = \"{}\" }}\n",
            db.display()
        ),
    );
}

/// A stored task's run, as a CI job reads it: `--json` holds the outcome and the scores the steps
/// gave, and its warnings say the record waits; the next `task run` writes it.
#[test]
fn a_stored_tasks_run_keeps_its_outcome_and_scores_when_the_store_does_not_take_its_end() {
    let s = Sandboxed::new();
    let db = s.dir.path().join("team.db");
    configured(&s, &db);
    let (steps, lock) = locking_steps(&s, &db);
    let file = s.write("locked.json", &steps.to_string());
    let put = s.run(&["task", "put", file.to_str().unwrap(), "--id", "team/locked"]);
    assert_eq!(put.code, 0, "{}", put.both());
    let quick = s.write(
        "quick.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );
    let put = s.run(&["task", "put", quick.to_str().unwrap(), "--id", "team/quick"]);
    assert_eq!(put.code, 0, "{}", put.both());

    let refused = run_with(
        &s,
        &["task", "run", "team/locked", "--json"],
        &[("AGENT_ENV_RECORD_WAIT_SECONDS", "0")],
    );
    lock.release();
    assert_eq!(refused.code, 0, "{}", refused.both());
    let doc: Value = serde_json::from_str(&refused.stdout).expect("one JSON document");
    assert_eq!(doc["status"], "passed", "{doc:#}");
    let task = &doc["tasks"][0];
    assert_eq!(task["outcome"], "passed", "{doc:#}");
    assert_eq!(task["scores"], serde_json::json!({"lock": 1.0}), "{doc:#}");
    // The task's row says its end waits in this machine's journal, so a script need not match the
    // warning's words to know which instances are pending.
    assert_eq!(task["end_waiting_here"], true, "{doc:#}");
    let id = task["instance_id"]
        .as_str()
        .expect("the instance id")
        .to_string();
    let warned = doc["warnings"].to_string();
    assert!(
        warned.contains("the document store did not take the task's end")
            && warned.contains("the next agent-env task run on this machine writes it"),
        "{doc:#}"
    );
    let stored = agent_env_test_support::documents(&db, "task_instances");
    assert_eq!(locked(stored)["status"], "running");

    let next = s.run(&["task", "run", "team/quick"]);
    assert_eq!(next.code, 0, "{}", next.both());
    assert!(
        next.stderr
            .contains("note: wrote the end of 1 task instance"),
        "{}",
        next.both()
    );
    let shown = s.run(&["task", "get-instance", &id, "--json"]);
    assert_eq!(shown.code, 0, "{}", shown.both());
    let instance: Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(instance["status"], "completed", "{instance:#}");
    assert!(instance["recorded_late_at_utc"].is_string(), "{instance:#}");
    let listed = s.run(&["task", "instances", "team/locked", "--json"]);
    let listed: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(
        listed["instances"][0]["scores"],
        serde_json::json!({"lock": 1.0}),
        "{listed:#}"
    );
}

/// A store that comes back while the task's end waits for it takes the end: the run says it waited,
/// and nothing is left for a later run.
#[test]
fn a_task_end_waits_for_a_store_that_comes_back() {
    let s = Sandboxed::new();
    let mut run = LockedRun::start(&s);
    // Said once the first try goes unanswered, then again with the store's answer.
    let mut stderr = run.stderr_until(|line| {
        line.contains("waiting for the document store to take the task's end")
            && line.contains("is locked")
    });
    assert!(
        stderr.contains(
            "[tasks/locked.json] waiting for the document store to take the task's end (it has not answered for 1 s); "
        ) && stderr.contains(
            "[tasks/locked.json] waiting for the document store to take the task's end ("
        ) && stderr.contains("is locked: another process has held its write lock")
            && stderr.contains("trying for up to 600 s in all (Ctrl-C stops waiting)"),
        "{stderr}"
    );
    run.lock.release();
    let (status, stdout, _released) = run.finish(&mut stderr);
    assert_eq!(status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("  tasks/locked.json v1: passed (lock: 1)"),
        "{stdout}"
    );
    assert!(!stderr.contains("Warning"), "{stderr}");
    let instance = locked(s.docs("task_instances"));
    assert_eq!(instance["status"], "completed", "{instance}");
    assert!(instance.get("recorded_late_at_utc").is_none(), "{instance}");
    let next = s.run(&["run", "hello", "-q"]);
    assert!(!next.stderr.contains("earlier run"), "{}", next.both());
    assert!(!next.stderr.contains("wrote the end"), "{}", next.both());
}

/// Two machines share the configured store, and one's run could not write a task's end: the
/// instance shows `running` with its heartbeat stopped. The machine whose journal holds the end
/// says it waits there; the other takes the run for killed and its next run marks the instance
/// failed; the owning machine's next run then writes the end as the task left it.
#[test]
fn an_end_waiting_in_a_journal_is_said_so_there_and_outlives_another_machines_failed_mark() {
    let shared = tempfile::tempdir().unwrap();
    let db = shared.path().join("team.db");
    let alice = Sandboxed::new();
    configured(&alice, &db);
    let bob = Sandboxed::new();
    configured(&bob, &db);
    let (steps, lock) = locking_steps(&alice, &db);
    let file = alice.write("locked.json", &steps.to_string());
    let put = alice.run(&["task", "put", file.to_str().unwrap(), "--id", "team/locked"]);
    assert_eq!(put.code, 0, "{}", put.both());
    let quick = alice.write(
        "quick.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );
    let put = alice.run(&["task", "put", quick.to_str().unwrap(), "--id", "team/quick"]);
    assert_eq!(put.code, 0, "{}", put.both());

    let refused = run_with(
        &alice,
        &["task", "run", "team/locked", "--json"],
        &[
            ("AGENT_ENV_RECORD_WAIT_SECONDS", "0"),
            ("AGENT_ENV_HEARTBEAT_SECONDS", "0.1"),
        ],
    );
    lock.release();
    assert_eq!(refused.code, 0, "{}", refused.both());
    let doc: Value = serde_json::from_str(&refused.stdout).expect("one JSON document");
    let id = doc["tasks"][0]["instance_id"]
        .as_str()
        .expect("the instance id")
        .to_string();
    let listed = |s: &Sandboxed| -> Value {
        let r = s.run(&["task", "instances", "team/locked", "--json"]);
        assert_eq!(r.code, 0, "{}", r.both());
        let doc: Value = serde_json::from_str(&r.stdout).unwrap();
        doc["instances"][0].clone()
    };
    // Four of its 0.1 s heartbeats on, Bob sees a run that stopped sending signs of life.
    wait_for("the instance seen stale elsewhere", || {
        listed(&bob)["stale"] == true
    });
    let shown = bob.run(&["task", "get-instance", &id]);
    assert!(
        shown.stdout.contains("its run was probably killed"),
        "{}",
        shown.both()
    );

    // Alice's journal holds its end: her readers say so, and not that the run was killed.
    let waiting = "running (its end is waiting in this machine's journal (the store did not take it); the next agent-env task run here writes it)";
    let shown = alice.run(&["task", "get-instance", &id]);
    assert!(
        shown.stdout.contains(&format!("status:    {waiting}\n"))
            && !shown.stdout.contains("probably killed"),
        "{}",
        shown.both()
    );
    let table = alice.run(&["task", "list"]);
    assert!(
        table.stdout.contains(waiting) && !table.stdout.contains("no sign of life"),
        "{}",
        table.both()
    );
    let seen = listed(&alice);
    assert_eq!(
        (&seen["stale"], &seen["end_waiting_here"]),
        (&false.into(), &true.into()),
        "{seen:#}"
    );
    let json = alice.run(&["task", "get-instance", &id, "--json"]);
    let instance: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(instance["end_waiting_here"], true, "{instance:#}");
    assert!(instance.get("stale").is_none(), "{instance:#}");

    // Bob cannot tell: his next run marks it failed. Alice's readers still say its end waits here.
    let next = bob.run(&["task", "run", "team/quick"]);
    assert_eq!(next.code, 0, "{}", next.both());
    let stored = || locked(agent_env_test_support::documents(&db, "task_instances"));
    assert_eq!(stored()["status"], "failed", "{}", stored());
    assert_eq!(listed(&alice)["end_waiting_here"], true);
    let shown = alice.run(&["task", "get-instance", &id]);
    assert!(
        shown.stdout.contains(
            "status:    failed (its end is waiting in this machine's journal (the store did not take it); the next agent-env task run here writes it)\n"
        ),
        "{}",
        shown.both()
    );
    let json = alice.run(&["task", "get-instance", &id, "--json"]);
    let instance: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(instance["end_waiting_here"], true, "{instance:#}");
    assert_eq!(listed(&bob)["end_waiting_here"], false);

    // Alice's next run writes the end over that mark, as the task left it.
    let next = alice.run(&["task", "run", "team/quick"]);
    assert_eq!(next.code, 0, "{}", next.both());
    assert!(
        next.stderr
            .contains("note: wrote the end of 1 task instance"),
        "{}",
        next.both()
    );
    let instance = stored();
    assert_eq!(instance["status"], "completed", "{instance:#}");
    assert_eq!(instance["error"], Value::Null, "{instance:#}");
    assert!(instance["recorded_late_at_utc"].is_string(), "{instance:#}");
    let shown = bob.run(&["task", "get-instance", &id]);
    assert!(
        shown.stdout.contains("status:    completed (passed)\n"),
        "{}",
        shown.both()
    );
}

/// One person, two projects whose configurations select different document stores: the end of a
/// task one project's store did not take waits in the journal for that store. A `task run` of the
/// other project leaves it there (saying so, without writing it into its own store), and the next
/// run against the first store writes it.
#[test]
fn a_kept_task_end_is_written_only_into_the_store_its_run_wrote_to() {
    let s = Sandboxed::new();
    let team = s.dir.path().join("team.db");
    let other = s.dir.path().join("other.db");
    let quick = s.write(
        "quick.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );
    configured(&s, &other);
    let put = s.run(&["task", "put", quick.to_str().unwrap(), "--id", "team/quick"]);
    assert_eq!(put.code, 0, "{}", put.both());
    configured(&s, &team);
    let put = s.run(&["task", "put", quick.to_str().unwrap(), "--id", "team/quick"]);
    assert_eq!(put.code, 0, "{}", put.both());
    let (steps, lock) = locking_steps(&s, &team);
    let file = s.write("locked.json", &steps.to_string());
    let put = s.run(&["task", "put", file.to_str().unwrap(), "--id", "team/locked"]);
    assert_eq!(put.code, 0, "{}", put.both());
    let refused = run_with(
        &s,
        &["task", "run", "team/locked"],
        &[("AGENT_ENV_RECORD_WAIT_SECONDS", "0")],
    );
    lock.release();
    assert_eq!(refused.code, 0, "{}", refused.both());
    let stored = |db: &Path| {
        agent_env_test_support::documents(db, "task_instances")
            .into_iter()
            .find(|d| d["task_id"].as_str().unwrap_or("").ends_with("/locked"))
    };
    assert_eq!(stored(&team).unwrap()["status"], "running");

    // The other project's run leaves the end for the team's store, and says which store it waits for.
    configured(&s, &other);
    let elsewhere = s.run(&["task", "run", "team/quick"]);
    assert_eq!(elsewhere.code, 0, "{}", elsewhere.both());
    assert!(
        elsewhere.stderr.contains(&format!(
            "note: the end of 1 task instance that earlier runs could not write is kept in this machine's journal for another document store (LocalSqliteDocumentStore at {}); the next agent-env task run whose configuration selects that store writes it",
            team.display()
        )) && !elsewhere.stderr.contains("wrote the end"),
        "{}",
        elsewhere.both()
    );
    assert_eq!(stored(&other), None, "no orphan in the other store");

    configured(&s, &team);
    let next = s.run(&["task", "run", "team/quick"]);
    assert_eq!(next.code, 0, "{}", next.both());
    assert!(
        next.stderr
            .contains("note: wrote the end of 1 task instance"),
        "{}",
        next.both()
    );
    let instance = stored(&team).unwrap();
    assert_eq!(instance["status"], "completed", "{instance:#}");
    assert!(instance["recorded_late_at_utc"].is_string(), "{instance:#}");
}

/// Ctrl-C while the only task's end waits for the store stops the wait and cancels nothing: the run
/// says so, the task keeps its outcome and the run exits as it says, and the end stays in the
/// journal for the next run.
#[test]
fn ctrl_c_during_the_record_wait_stops_the_wait_and_keeps_the_tasks_outcome() {
    let s = Sandboxed::new();
    let mut run = LockedRun::start(&s);
    let mut stderr = run.stderr_until(|line| {
        line.contains("waiting for the document store to take the task's end")
    });
    unsafe { libc::kill(run.child.id() as i32, libc::SIGINT) };
    let (status, stdout, lock) = run.finish(&mut stderr);
    lock.release();
    assert!(
        stderr.contains("Stopping: no step is running; no longer waiting for the document store to take the end of the tasks that ended: their records stay in this machine's journal, and the next run here writes them; another Ctrl-C stops at once")
            && !stderr.contains("cancelling the running steps"),
        "{stderr}"
    );
    assert_eq!(status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("  tasks/locked.json v1: passed (lock: 1)"),
        "{stdout}"
    );
    assert!(
        stderr.contains(
            "so its record is not written yet; it is kept in this machine's state folder"
        ),
        "{stderr}"
    );
    assert_eq!(locked(s.docs("task_instances"))["status"], "running");
    let next = s.run(&["run", "hello", "-q"]);
    assert!(
        next.stderr
            .contains("note: wrote the end of 1 task instance"),
        "{}",
        next.both()
    );
    assert_eq!(locked(s.docs("task_instances"))["status"], "completed");
}

/// A wait shorter than the time one write may block (SQLite waits 5 s on a lock) still says it
/// waits: once the first try has gone a second unanswered, before the run gives up.
#[test]
fn a_short_record_wait_still_says_it_waits() {
    let s = Sandboxed::new();
    let first = s.run(&["run", "hello", "-q"]);
    assert_eq!(first.code, 0, "{}", first.both());
    let (steps, lock) = locking_steps(&s, &s.local_db());
    s.write("locked/tasks/locked.json", &steps.to_string());
    let refused = run_with(
        &s,
        &["run", "./locked"],
        &[("AGENT_ENV_RECORD_WAIT_SECONDS", "5")],
    );
    lock.release();
    assert_eq!(refused.code, 0, "{}", refused.both());
    let said = refused
        .stderr
        .find("[tasks/locked.json] waiting for the document store to take the task's end (it has not answered for 1 s); trying for up to 5 s in all (Ctrl-C stops waiting)");
    let warned = refused
        .stderr
        .find("[tasks/locked.json] Warning: the document store did not take the task's end (");
    assert!(
        matches!((said, warned), (Some(s), Some(w)) if s < w),
        "{}",
        refused.both()
    );
    assert_eq!(
        refused
            .stderr
            .matches("waiting for the document store")
            .count(),
        1,
        "{}",
        refused.both()
    );
    // The run's log, which a post-mortem reads, has the wait too (the newest of the two runs' logs).
    let mut logs: Vec<_> = std::fs::read_dir(s.state().join("logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    logs.sort_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap());
    let log = std::fs::read_to_string(logs.last().unwrap()).unwrap();
    assert!(
        log.contains("[tasks/locked.json] waiting for the document store to take the task's end (it has not answered for 1 s)"),
        "{log}"
    );
}

/// `agent-env run ./locked` after a first run made the local store: its task's steps take the
/// store's write lock (`lock`) and hold it, so the task's end waits for the store (up to 600 s).
struct LockedRun {
    child: std::process::Child,
    reading: std::thread::JoinHandle<String>,
    lines: std::io::Lines<BufReader<std::process::ChildStderr>>,
    lock: Lock,
}

impl LockedRun {
    fn start(s: &Sandboxed) -> LockedRun {
        let first = s.run(&["run", "hello", "-q"]);
        assert_eq!(first.code, 0, "{}", first.both());
        let (steps, lock) = locking_steps(s, &s.local_db());
        s.write("locked/tasks/locked.json", &steps.to_string());
        let mut child = s
            .command(&["run", "./locked"])
            .env("AGENT_ENV_RECORD_WAIT_SECONDS", "600")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reading = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap());
        let lines = BufReader::new(child.stderr.take().unwrap()).lines();
        LockedRun {
            child,
            reading,
            lines,
            lock,
        }
    }

    /// The run's stderr up to and with the first line `stop` takes.
    fn stderr_until(&mut self, stop: impl Fn(&str) -> bool) -> String {
        let mut stderr = String::new();
        for line in self.lines.by_ref() {
            let line = line.unwrap();
            stderr.push_str(&line);
            stderr.push('\n');
            if stop(&line) {
                break;
            }
        }
        stderr
    }

    /// Reads the rest of its stderr into `stderr` and waits for it: its exit, its stdout, and the
    /// lock its steps took (still held if it was not released before).
    fn finish(mut self, stderr: &mut String) -> (std::process::ExitStatus, String, Lock) {
        for line in self.lines.by_ref() {
            stderr.push_str(&line.unwrap());
            stderr.push('\n');
        }
        let status = self.child.wait().unwrap();
        (status, self.reading.join().unwrap(), self.lock)
    }
}
