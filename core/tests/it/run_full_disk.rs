//! A run on a full disk says nothing is kept that is not: when neither the document store nor the
//! run's journal (both in the state folder) can take a task's end, the task fails as not recorded,
//! with no instance to look up, and the run exits 1. A journal a failed write left empty is read as
//! what it is, not as a killed run's.
//!
//! The full disk is a small tmpfs mounted as the state folder, which needs root and `mount`: without
//! them the test that needs it says so and passes.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::run::Sandboxed;

/// A tmpfs mounted at a folder while it lives.
struct Mounted(PathBuf);

impl Mounted {
    /// Mounts a tmpfs of `size` at `at`; `None` where this process cannot (not root, no `mount`).
    fn tmpfs(at: &Path, size: &str) -> Option<Mounted> {
        std::fs::create_dir_all(at).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .is_ok_and(|out| out.status.success());
        mounted.then(|| Mounted(at.to_path_buf()))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Fills the file system `filler` is on with it, until it takes no more.
fn fill(filler: &Path) {
    use std::io::Write;
    let mut file = std::fs::File::create(filler).unwrap();
    let block = vec![0u8; 4096];
    while file.write_all(&block).is_ok() {}
    let _ = file.sync_all();
}

/// How many empty files the logs folder holds.
fn empty_logs(s: &Sandboxed) -> usize {
    std::fs::read_dir(s.state().join("logs"))
        .unwrap()
        .flatten()
        .filter(|e| e.metadata().is_ok_and(|m| m.len() == 0))
        .count()
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The state folder's disk fills after a first run: the next run's task passes its steps, but
/// neither the store nor a journal can take its end, so it fails as not recorded (exit 1, no
/// instance id), saying its result is not saved and why, rather than that its record is kept. Once
/// there is room again, the next run finds nothing left behind: no run said to be killed, no record
/// written late.
#[test]
fn a_task_end_nothing_can_keep_on_a_full_disk_fails_the_task_as_not_recorded() {
    let s = Sandboxed::new();
    let Some(_mounted) = Mounted::tmpfs(&s.dir.path().join("state"), "4m") else {
        eprintln!("skipped: a tmpfs cannot be mounted here (needs root and mount)");
        return;
    };
    let first = s.command(&["run", "hello", "--json"]).output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", json_of(&first));

    let filler = s.dir.path().join("state").join("filler");
    fill(&filler);
    let full = s
        .command(&["run", "hello", "--json"])
        .env("AGENT_ENV_RECORD_WAIT_SECONDS", "0")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&full.stderr).into_owned();
    let doc = json_of(&full);
    assert_eq!(full.status.code(), Some(1), "{doc}\n{stderr}");
    assert_eq!(doc["status"], "failed", "{doc}");
    assert_eq!(doc["exit_code"], 1, "{doc}");
    let task = &doc["tasks"][0];
    assert_eq!(task["outcome"], "failed", "{doc}");
    assert_eq!(task["instance_id"], Value::Null, "{doc}");
    let summary = task["summary"].as_str().unwrap();
    for said in [
        "StoreError: the document store did not take the task's end (",
        "and this machine's state folder could not keep it for a later run (could not start the run's journal in ",
        "No space left on device",
        "so the task's result (passed) is not saved: nothing of this run of the task is recorded",
    ] {
        assert!(summary.contains(said), "{said}\n{summary}");
    }
    assert!(
        !stderr.contains("it is kept in this machine's state folder"),
        "{stderr}"
    );
    // The run's log took nothing either: the document's warnings say so, as stderr does, and no
    // empty log is left behind.
    let log_warning = "No space left on device (os error 28), so this run has no log (the empty file is removed); free space on the file system that holds it for the next run's log";
    assert_eq!(doc["log"], Value::Null, "{doc}");
    let warnings = doc["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{doc}");
    assert_eq!(warnings[0]["path"], Value::Null, "{doc}");
    let message = warnings[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("cannot write the run log ") && message.ends_with(log_warning),
        "{doc}"
    );
    assert!(stderr.contains(&format!("Warning: {message}")), "{stderr}");
    assert_eq!(empty_logs(&s), 0, "{stderr}");

    std::fs::remove_file(&filler).unwrap();
    let after = s.command(&["run", "hello", "--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&after.stderr).into_owned();
    assert_eq!(after.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("earlier run"), "{stderr}");
    assert!(!stderr.contains("wrote the end"), "{stderr}");
    assert_eq!(
        s.docs("task_instances").len(),
        2,
        "the lost one is not there"
    );
}

/// A document store on a full disk is not waited for at a task's end: the run does not hold up
/// for the record wait (30 s by default) asking a store that takes nothing until space is freed;
/// the task fails at once as not recorded, the store's error saying to free space.
#[test]
fn a_task_end_on_a_full_disk_is_not_waited_for() {
    let s = Sandboxed::new();
    let Some(_mounted) = Mounted::tmpfs(&s.dir.path().join("state"), "4m") else {
        eprintln!("skipped: a tmpfs cannot be mounted here (needs root and mount)");
        return;
    };
    let first = s.command(&["run", "hello", "--json"]).output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", json_of(&first));
    fill(&s.dir.path().join("state").join("filler"));
    let began = std::time::Instant::now();
    let full = s
        .command(&["run", "hello", "--json"])
        .env("AGENT_ENV_RECORD_WAIT_SECONDS", "20")
        .output()
        .unwrap();
    let took = began.elapsed();
    let stderr = String::from_utf8_lossy(&full.stderr).into_owned();
    assert_eq!(full.status.code(), Some(1), "{stderr}");
    assert!(
        took < std::time::Duration::from_secs(10),
        "took {took:?}: {stderr}"
    );
    assert!(
        !stderr.contains("waiting for the document store"),
        "{stderr}"
    );
    let summary = json_of(&full)["tasks"][0]["summary"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        summary
            .contains("the disk is full (database or disk is full); free some space and run again"),
        "{summary}"
    );
}

/// A journal left empty (a run's write to it failed: older runs left one so on a full disk) is a
/// run whose journal was cut short, as `task list` and the next run say, not a killed run.
#[test]
fn an_empty_journal_is_said_cut_short_not_killed() {
    let s = Sandboxed::new();
    let runs = s.state().join("locks").join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::write(runs.join("run-old.journal"), "").unwrap();

    let listed = s.run(&["task", "list"]);
    assert!(
        listed.stderr.contains("1 earlier run left its journal cut short (a write to this machine's state folder failed, most likely because its disk was full), so how it ended is not known: the task instances it left show as running until the next agent-env run marks them failed"),
        "{}",
        listed.stderr
    );
    assert!(!listed.stderr.contains("killed"), "{}", listed.stderr);

    let out = s.command(&["run", "hello", "--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let note = "1 earlier run left its journal cut short (a write to this machine's state folder failed, most likely because its disk was full), so how it ended is not known: 0 task instances it left running marked failed, 0 sandboxes it left removed";
    assert!(stderr.contains(&format!("note: {note}")), "{stderr}");
    assert!(!stderr.contains("killed"), "{stderr}");
    assert_eq!(
        json_of(&out)["warnings"],
        serde_json::json!([{"path": null, "message": note}])
    );
    assert!(!runs.join("run-old.journal").exists());
}

/// A run whose bundle's artifact files find no room in the object store (its folder on a full
/// disk) says what it was storing and for what, and what to do; the run's log, which the full disk
/// left empty, is not pointed at as if it held the run: the run says it could not be written.
#[test]
fn artifact_files_with_no_room_say_what_was_stored_and_what_to_do() {
    let s = Sandboxed::new();
    let Some(_mounted) = Mounted::tmpfs(&s.dir.path().join("state"), "4m") else {
        eprintln!("skipped: a tmpfs cannot be mounted here (needs root and mount)");
        return;
    };
    // A first run makes the state folder's stores; one artifact changes, so the next run stores
    // its files again, and finds the disk full. The one before it, unchanged, is a line of the
    // run's log, which the full disk leaves empty.
    let bundle = s.copy_hello("full");
    s.write("full/artifacts/aaa/a.txt", "a\n");
    assert_eq!(s.run(&["run", "./full"]).code, 0);
    std::fs::write(bundle.join("artifacts/greeting/hello.txt"), "changed\n").unwrap();
    fill(&s.dir.path().join("state").join("filler"));
    let out = s.command(&["run", "./full"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for said in [
        "Error: can't store ",
        "of the artifact '",
        "in the object store, for this run's record of it: ",
        "No space left on device",
        "; free space on the file system that holds the object store, then run again (agent-env deletes no stored objects: `agent-env task prune` deletes old task instance records and leaves the objects their steps wrote",
    ] {
        assert!(stderr.contains(said), "{said}\n{stderr}");
    }
    // Whatever log it points at holds the run; one the disk left empty is said to be so instead.
    for line in stderr.lines() {
        if let Some(path) = line
            .split("The run's log, with each plugin's output: ")
            .nth(1)
        {
            let len = std::fs::metadata(path.trim()).map_or(0, |m| m.len());
            assert!(len > 0, "points at an empty log: {stderr}");
        }
    }
    // The log the full disk left empty is removed, not left behind.
    assert_eq!(empty_logs(&s), 0, "{stderr}");
    assert!(
        stderr.contains("Warning: cannot write the run log ")
            && stderr.contains("No space left on device (os error 28), so this run has no log (the empty file is removed); free space on the file system that holds it for the next run's log"),
        "{stderr}"
    );
}

/// A run whose state folder is on a disk full from the start cannot make the object store's folder:
/// it is told to free space on that file system (or to move the state folder to one with room),
/// not to point it at a writable place, which it is.
#[test]
fn a_state_folder_full_from_the_start_is_told_to_make_room() {
    let s = Sandboxed::new();
    let Some(_mounted) = Mounted::tmpfs(&s.dir.path().join("state"), "1m") else {
        eprintln!("skipped: a tmpfs cannot be mounted here (needs root and mount)");
        return;
    };
    fill(&s.dir.path().join("state").join("filler"));
    let ran = s.run(&["run", "hello"]);
    assert_ne!(ran.code, 0, "{}", ran.both());
    assert!(
        ran.stderr.contains("Cannot create the local state directory ")
            && ran.stderr.contains("No space left on device")
            && ran.stderr.contains("; free space on the file system it is on, or point XDG_STATE_HOME (or the store's config) at a file system with room"),
        "{}",
        ran.both()
    );
    assert!(
        !ran.stderr.contains("at a writable place"),
        "{}",
        ran.both()
    );
}
