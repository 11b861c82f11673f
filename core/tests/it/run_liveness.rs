//! What a live run keeps from others: a copy of the state folder taken while it runs (a CI cache)
//! does not make a run from the copy clean up after it as if it were killed, and the pruning of old
//! run logs leaves its log. The cleanup after a run that did end unfinished is said once on stderr
//! and once in `run --json`'s warnings.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::run::Sandboxed;

/// Starts `agent-env run ./slow --json` and waits until its task is recorded running in its
/// sandbox.
fn start_waiting_run(s: &Sandboxed) -> Child {
    let child = s
        .command(&["run", "./slow", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the instance recorded running", || {
        s.local_db().exists()
            && s.docs("task_instances").iter().any(|d| {
                d["status"] == "running" && d["running_steps"] == serde_json::json!(["wait"])
            })
    });
    wait_for("the sandbox", || s.sandboxes_left().len() == 1);
    child
}

/// Lets the waiting run end and reads its document.
fn release_and_finish(child: Child, release: &Path) -> (Value, String) {
    std::fs::write(release, "").unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&out.stdout)));
    (doc, stderr)
}

/// Copies the folder `src` to `dest` as `cp -a` would for this test's needs: a file that goes away
/// while the copy is made (a store's temporary file) is left out.
fn copy_folder(src: &Path, dest: &Path) {
    std::fs::create_dir_all(dest).unwrap();
    for entry in std::fs::read_dir(src).unwrap().flatten() {
        let to = dest.join(entry.file_name());
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => copy_folder(&entry.path(), &to),
            Ok(kind) if kind.is_file() => {
                let _ = std::fs::copy(entry.path(), to);
            }
            _ => {}
        }
    }
}

fn wait_for(what: &str, ready: impl Fn() -> bool) {
    agent_env_test_support::deadline::wait_until(Duration::from_secs(60), what, ready);
}

/// The state folder (`XDG_STATE_HOME`) copied while a run goes on, as a CI cache saved mid-run and
/// restored for another job: a run from the copy leaves the live run's sandbox and instance alone
/// (even with a sandbox root of its own), and the live run passes. Once that run has ended, a run
/// from the copy marks the instance the copy shows running as failed, and says so once on stderr
/// and once in its document's warnings.
#[test]
fn a_run_from_a_state_folder_copied_mid_run_leaves_the_live_run_alone() {
    let s = Sandboxed::new();
    let release = s.dir.path().join("release");
    s.write_waiting_bundle(&release);
    let live = start_waiting_run(&s);
    let cache = s.dir.path().join("cache");
    copy_folder(&s.dir.path().join("state"), &cache);
    let other_sandboxes = s.dir.path().join("other-sandboxes");
    let from_copy = |what: &str| {
        let out = s
            .command(&["run", "hello", "--json"])
            .env("XDG_STATE_HOME", &cache)
            .env("AGENT_ENV_LOCAL_SANDBOX_DIR", &other_sandboxes)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        (doc, stderr)
    };

    let (doc, stderr) = from_copy("the run while the other goes on");
    assert!(!stderr.contains("earlier run"), "{stderr}");
    assert_eq!(doc["warnings"], serde_json::json!([]), "{doc}");
    assert_eq!(
        s.sandboxes_left().len(),
        1,
        "the live run's sandbox is kept"
    );

    let (doc, stderr) = release_and_finish(live, &release);
    assert_eq!(doc["status"], "passed", "{doc}\n{stderr}");
    assert_eq!(doc["exit_code"], 0);
    assert!(s.sandboxes_left().is_empty(), "{:?}", s.sandboxes_left());

    // Its process gone, the copy's journal is a run that ended unfinished there.
    let (doc, stderr) = from_copy("the run after the other ended");
    let note = "1 earlier run ended without finishing (agent-env was killed or stopped at once by a second signal, its machine stopped, or the state folder was copied while it ran): 1 task instance it left running marked failed, 0 sandboxes it left removed";
    assert_eq!(stderr.matches("earlier run").count(), 1, "{stderr}");
    assert!(stderr.contains(&format!("note: {note}")), "{stderr}");
    assert_eq!(
        doc["warnings"],
        serde_json::json!([{"path": null, "message": note}]),
        "{doc}"
    );
}

/// The run's log, from its document.
fn log_of(doc: &Value) -> PathBuf {
    PathBuf::from(
        doc["log"]
            .as_str()
            .unwrap_or_else(|| panic!("no log: {doc}")),
    )
}

/// A run that goes on while others fill the logs folder past the 200 it keeps keeps its log, though
/// its name is the oldest: it holds the whole run, end included.
#[test]
fn the_pruning_of_old_logs_leaves_the_log_of_a_run_still_going() {
    let s = Sandboxed::new();
    let release = s.dir.path().join("release");
    s.write_waiting_bundle(&release);
    let live = start_waiting_run(&s);
    let logs = s.state().join("logs");
    let count = || std::fs::read_dir(&logs).map_or(0, |d| d.count());
    wait_for("the live run's log", || count() == 1);
    // Named after it (a later year): the live run's log is the oldest of all.
    for n in 0..200 {
        std::fs::write(logs.join(format!("2999-01-01T00-00-00-{n:06}.log")), "x").unwrap();
    }
    let short = s.run(&["run", "hello", "-q"]);
    assert_eq!(short.code, 0, "{}", short.both());
    assert_eq!(count(), 200, "the newest 200 are kept");

    let (doc, stderr) = release_and_finish(live, &release);
    assert_eq!(doc["status"], "passed", "{doc}\n{stderr}");
    let log = log_of(&doc);
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    assert!(text.contains(" finished in "), "{text}");
    // The next oldest went in its place.
    assert!(!logs.join("2999-01-01T00-00-00-000001.log").exists());
}
