//! Garbage collection: unreferenced blobs and abandoned staged files go, everything referenced stays, and a
//! writer running at the same time (in other processes) never loses a blob it indexed.

use std::collections::HashSet;
use std::fs::{File, FileTimes};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use crate::support::{
    assert_blobs_intact, results_path, spawn_child, store_at, wait_for_start, CHILD_JOB,
};
use agentenv_openciv3::cas::{hash_bytes, CasError, GcOptions, DEFAULT_CONTENT_TYPE};
use serde_json::{json, Value};

const CHURN_KEYS: usize = 100;
const WRITERS: usize = 2;

fn age(path: &Path, by: Duration) {
    let then = SystemTime::now() - by;
    let file = File::options().write(true).open(path).unwrap();
    file.set_times(FileTimes::new().set_modified(then).set_accessed(then))
        .unwrap();
}

fn blob_path(root: &Path, payload: &[u8]) -> PathBuf {
    let digest = hash_bytes(payload);
    root.join("blobs").join(&digest[..2]).join(digest)
}

fn flock(file: &File) {
    // SAFETY: the descriptor is open for the call.
    assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) }, 0);
}

#[test]
fn gc_removes_unreferenced_blobs_and_abandoned_staged_files_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("objects");
    let store = store_at(&root);
    store
        .put("kept", b"kept bytes", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    store
        .put("shared-a", b"shared", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    store
        .put("shared-b", b"shared", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    store
        .put("over", b"old version", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    store
        .put("over", b"new version", DEFAULT_CONTENT_TYPE, true)
        .unwrap();
    // shared-a moves away from the shared blob, which shared-b still references.
    store
        .put("shared-a", b"moved", DEFAULT_CONTENT_TYPE, true)
        .unwrap();
    for payload in [
        b"kept bytes".as_slice(),
        b"shared",
        b"old version",
        b"new version",
        b"moved",
    ] {
        age(&blob_path(&root, payload), Duration::from_secs(60));
    }
    // An unreferenced blob written "after gc started" (mtime in the future) is left for the next run.
    store
        .put("young", b"young bytes", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    store
        .put("young", b"young replaced", DEFAULT_CONTENT_TYPE, true)
        .unwrap();
    age(
        &blob_path(&root, b"young replaced"),
        Duration::from_secs(60),
    );
    let young = blob_path(&root, b"young bytes");
    File::options()
        .write(true)
        .open(&young)
        .unwrap()
        .set_modified(SystemTime::now() + Duration::from_secs(3600))
        .unwrap();

    let shard = root.join("blobs").join("00");
    std::fs::create_dir_all(&shard).unwrap();
    let abandoned = shard.join(".staged-abandoned");
    std::fs::write(&abandoned, b"half a blob").unwrap();
    age(&abandoned, Duration::from_secs(7200));
    // Trash a gc that died left behind goes too, whatever its age.
    let trash = shard.join(format!(".trash-{}", "0".repeat(64)));
    std::fs::write(&trash, b"collected blob").unwrap();
    let fresh = shard.join(".staged-fresh");
    std::fs::write(&fresh, b"being written").unwrap();
    let held = shard.join(".staged-held");
    std::fs::write(&held, b"slow writer").unwrap();
    age(&held, Duration::from_secs(7200));
    let held_lock = File::open(&held).unwrap();
    flock(&held_lock);

    let report = store.gc(&GcOptions::default()).unwrap();
    assert_eq!(report.blobs_removed, 1, "{report:?}");
    assert_eq!(report.bytes_removed, "old version".len() as u64);
    assert_eq!(report.blobs_kept_young, 1);
    assert_eq!(report.staged_removed, 2);
    assert_eq!(report.staged_kept, 2);
    assert_eq!(report.staged_kept_in_use, 1, "the held one");
    assert_eq!(
        report.staged_kept_bytes,
        ("being written".len() + "slow writer".len()) as u64
    );
    assert!(report.dangling_digests.is_empty());
    assert!(!blob_path(&root, b"old version").exists());
    assert!(young.exists());
    assert!(!abandoned.exists() && !trash.exists() && fresh.exists() && held.exists());
    for (key, payload) in [
        ("kept", b"kept bytes".as_slice()),
        ("shared-a", b"moved"),
        ("shared-b", b"shared"),
        ("over", b"new version"),
        ("young", b"young replaced"),
    ] {
        assert_eq!(store.read(key).unwrap(), payload, "{key}");
    }
    drop(held_lock);
    assert_eq!(store.blob_count().unwrap(), 6);
}

#[test]
fn only_one_gc_runs_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_at(dir.path());
    store.put("k", b"v", DEFAULT_CONTENT_TYPE, false).unwrap();
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.path().join("gc.lock"))
        .unwrap();
    flock(&lock);
    let err = store.gc(&GcOptions::default()).unwrap_err();
    assert!(matches!(err, CasError::GcBusy { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "another gc is running on {}; wait for it to finish",
            dir.path().display()
        )
    );
    drop(lock);
    assert_eq!(store.gc(&GcOptions::default()).unwrap().blobs_removed, 0);
}

#[test]
fn gc_of_a_root_that_does_not_exist_is_a_no_op() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("never");
    assert_eq!(
        store_at(&root)
            .gc(&GcOptions::default())
            .unwrap()
            .blobs_seen,
        0
    );
    assert!(!root.exists());
}

/// A child writer: until the stop file appears, points each of its keys back and forth between two
/// payloads with `allow_overwrite`, so every round revives blobs that the last round left unreferenced
/// (the blobs a concurrent gc is busy removing). Records the last payload each key got.
#[test]
fn churning_writer() {
    let Ok(job) = std::env::var(CHILD_JOB) else {
        return;
    };
    let job: Value = serde_json::from_str(&job).unwrap();
    let writer = job["writer"].as_u64().unwrap();
    let store = store_at(Path::new(job["root"].as_str().unwrap()));
    let stop = PathBuf::from(job["stop"].as_str().unwrap());
    wait_for_start(Path::new(job["go"].as_str().unwrap()));
    let mut last = serde_json::Map::new();
    let mut round = 0u64;
    let go = PathBuf::from(job["go"].as_str().unwrap());
    // Stop when told, or when the parent's directory is gone (it failed), or after a bound.
    while round < 2 || (!stop.exists() && go.exists() && round < 5000) {
        for i in 0..CHURN_KEYS {
            let key = format!("churn/{writer}/{i}");
            let payload = if round.is_multiple_of(2) {
                format!("payload {i} even")
            } else {
                format!("payload {i} odd")
            };
            store
                .put(&key, payload.as_bytes(), DEFAULT_CONTENT_TYPE, true)
                .unwrap();
            // Only this writer writes the key, so its row must name a blob on disk from now on.
            assert_eq!(
                store.read(&key).unwrap(),
                payload.as_bytes(),
                "{key} lost its blob"
            );
            last.insert(key, Value::String(payload));
        }
        round += 1;
    }
    last.insert("rounds".to_string(), json!(round));
    std::fs::write(
        job["out"].as_str().unwrap(),
        serde_json::to_vec(&last).unwrap(),
    )
    .unwrap();
}

#[test]
fn gc_running_against_concurrent_writers_loses_no_indexed_blob() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("objects");
    let store = store_at(&root);
    // Start with every "odd" payload stored and unreferenced, and old enough to be collected.
    for i in 0..CHURN_KEYS {
        store
            .put(
                &format!("seed/{i}"),
                format!("payload {i} odd").as_bytes(),
                DEFAULT_CONTENT_TYPE,
                false,
            )
            .unwrap();
        store
            .put(&format!("seed/{i}"), b"seed", DEFAULT_CONTENT_TYPE, true)
            .unwrap();
        age(
            &blob_path(&root, format!("payload {i} odd").as_bytes()),
            Duration::from_secs(60),
        );
    }
    let go = dir.path().join("go");
    let stop = dir.path().join("stop");
    let children: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let job = json!({"root": root, "go": go, "stop": stop, "writer": writer, "out": results_path(dir.path(), writer)});
            spawn_child("gc::churning_writer", &job.to_string())
        })
        .collect();
    std::fs::write(&go, b"go").unwrap();
    // Some runs as separate `agentenv-openciv3 gc` processes, then many quick ones from this process.
    let gc_runs: Vec<_> = (0..4)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_agentenv-openciv3"))
                .args(["gc", "--root", root.to_str().unwrap(), "--json"])
                .output()
                .unwrap()
        })
        .collect();
    let in_process: Vec<_> = (0..300).map(|_| store.gc(&GcOptions::default())).collect();
    std::fs::write(&stop, b"stop").unwrap();
    crate::support::wait_all(children);
    let mut removed_while_writing = 0;
    for output in gc_runs {
        assert!(
            output.status.success(),
            "gc failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(
            report["dangling_digests"],
            json!([]),
            "gc saw an indexed blob missing: {report}"
        );
        removed_while_writing += report["blobs_removed"].as_u64().unwrap();
    }
    for report in in_process {
        let report = report.expect("gc while writers run");
        assert!(
            report.dangling_digests.is_empty(),
            "gc saw an indexed blob missing: {report:?}"
        );
        removed_while_writing += report.blobs_removed as u64;
    }
    assert!(
        removed_while_writing > 0,
        "gc never removed anything while the writers ran"
    );

    let mut referenced = HashSet::new();
    for writer in 0..WRITERS {
        let last: serde_json::Map<String, Value> =
            serde_json::from_slice(&std::fs::read(results_path(dir.path(), writer)).unwrap())
                .unwrap();
        for (key, payload) in last.iter().filter(|(key, _)| key.starts_with("churn/")) {
            let payload = payload.as_str().unwrap();
            assert_eq!(
                store.read(key).unwrap(),
                payload.as_bytes(),
                "{key} lost its blob"
            );
            referenced.insert(payload.to_string());
        }
    }
    referenced.insert("seed".to_string());
    assert_blobs_intact(&root, false);
    let report = store.gc(&GcOptions::default()).unwrap();
    assert!(report.dangling_digests.is_empty(), "{report:?}");
    // With the writers gone, everything they left unreferenced predates this gc and is removed.
    assert_eq!(store.blob_count().unwrap(), referenced.len(), "{report:?}");
    for key in store.list("").unwrap() {
        store.read(&key).unwrap();
    }
}

#[test]
fn the_gc_command_reports_what_it_removed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("objects");
    let store = store_at(&root);
    store
        .put("k", b"first", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    store
        .put("k", b"second", DEFAULT_CONTENT_TYPE, true)
        .unwrap();
    age(&blob_path(&root, b"first"), Duration::from_secs(60));
    let output = Command::new(env!("CARGO_BIN_EXE_agentenv-openciv3"))
        .args(["gc", "--root", root.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8(output.stdout).unwrap().trim(),
        format!("Removed 1 unreferenced blob (5 B) and 0 abandoned staged files from {}; 1 blob stays on disk.", root.display())
    );
    assert_eq!(store.read("k").unwrap(), b"second");
    let missing = Command::new(env!("CARGO_BIN_EXE_agentenv-openciv3"))
        .args(["gc"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--root"));
}

#[test]
fn the_gc_command_says_which_staged_files_it_kept_and_how_to_remove_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("objects");
    let store = store_at(&root);
    store
        .put("k", b"kept", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    let shard = root.join("blobs").join("00");
    std::fs::create_dir_all(&shard).unwrap();
    // A writer killed mid-put a minute ago: younger than the default grace period.
    let left = shard.join(".staged-killed");
    std::fs::write(&left, vec![7u8; 2_000]).unwrap();
    age(&left, Duration::from_secs(60));
    let gc = |extra: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_agentenv-openciv3"))
            .args(["gc", "--root", root.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap();
        assert!(output.status.success());
        String::from_utf8(output.stdout).unwrap()
    };
    let text = gc(&[]);
    assert!(
        text.contains("Kept 1 staged file (2.0 kB): 1 younger than the grace period (3600 s), 0 still being written."),
        "{text}"
    );
    assert!(
        text.contains("`gc --staged-grace-seconds 0` removes them"),
        "{text}"
    );
    assert!(left.exists());
    let text = gc(&["--staged-grace-seconds", "0"]);
    assert!(text.contains("and 1 abandoned staged file from"), "{text}");
    assert!(!text.contains("Kept"), "{text}");
    assert!(!left.exists());
}
