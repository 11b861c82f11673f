//! Several processes sharing one store root: writers of the same keys (exactly one winner per key, the
//! others refused) and of different keys (no lost index row, shared payloads deduplicated), and no blob
//! ever partial: every blob's name matches its content's digest, and no staged file is left behind.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use crate::support::{
    assert_blobs_intact, results_path, spawn_child, store_at, wait_all, wait_for_start, CHILD_JOB,
};
use agentenv_openciv3::cas::{CasError, DEFAULT_CONTENT_TYPE};
use serde_json::{json, Value};

const WRITERS: usize = 4;
const CONTESTED_KEYS: usize = 40;
const OWN_KEYS: usize = 60;

/// The entry point of a child writer process. In an ordinary test run the job variable is unset and this
/// returns at once; the tests below re-run this binary with `--exact concurrency::child_writer` and a job.
#[test]
fn child_writer() {
    let Ok(job) = std::env::var(CHILD_JOB) else {
        return;
    };
    let job: Value = serde_json::from_str(&job).expect("job json");
    let root = PathBuf::from(job["root"].as_str().unwrap());
    let out = PathBuf::from(job["out"].as_str().unwrap());
    let writer = job["writer"].as_u64().unwrap() as usize;
    let store = store_at(&root);
    wait_for_start(&PathBuf::from(job["go"].as_str().unwrap()));
    let mut outcomes = BTreeMap::new();
    match job["mode"].as_str().unwrap() {
        "same-keys" => {
            let scratch = tempfile::tempdir().unwrap();
            for k in 0..CONTESTED_KEYS {
                let key = format!("contested/{k}");
                let payload = format!("writer {writer} wrote key {k}");
                let result = if k.is_multiple_of(2) {
                    store.put(&key, payload.as_bytes(), DEFAULT_CONTENT_TYPE, false)
                } else {
                    let file = scratch.path().join(format!("{k}.bin"));
                    std::fs::write(&file, payload.as_bytes()).unwrap();
                    store.put_file(&key, &file, DEFAULT_CONTENT_TYPE)
                };
                let outcome = match result {
                    Ok(_) => "won".to_string(),
                    Err(CasError::AlreadyExists { .. }) => "refused".to_string(),
                    Err(other) => format!("error: {other}"),
                };
                outcomes.insert(key, json!({"outcome": outcome, "payload": payload}));
            }
        }
        "own-keys" => {
            for k in 0..OWN_KEYS {
                let key = format!("writer-{writer}/{k}");
                // Every third payload is the same in all writers, so they race to create shared blobs.
                let payload = if k.is_multiple_of(3) {
                    format!("shared payload {k}")
                } else {
                    format!("{key} payload")
                };
                let outcome = match store.put(&key, payload.as_bytes(), "text/plain", false) {
                    Ok(_) => "won".to_string(),
                    Err(other) => format!("error: {other}"),
                };
                outcomes.insert(key, json!({"outcome": outcome, "payload": payload}));
            }
        }
        other => panic!("unknown mode {other}"),
    }
    std::fs::write(&out, serde_json::to_vec(&outcomes).unwrap()).unwrap();
}

fn run_writers(mode: &str) -> (tempfile::TempDir, Vec<BTreeMap<String, Value>>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("objects");
    let go = dir.path().join("go");
    let children: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let job = json!({
                "root": root, "go": go, "writer": writer, "mode": mode,
                "out": results_path(dir.path(), writer),
            });
            spawn_child("concurrency::child_writer", &job.to_string())
        })
        .collect();
    std::fs::write(&go, b"go").unwrap();
    wait_all(children);
    let results = (0..WRITERS)
        .map(|writer| {
            let text = std::fs::read(results_path(dir.path(), writer)).expect("writer results");
            serde_json::from_slice(&text).unwrap()
        })
        .collect();
    (dir, results)
}

#[test]
fn processes_writing_the_same_keys_have_exactly_one_winner_per_key() {
    let (dir, results) = run_writers("same-keys");
    let root = dir.path().join("objects");
    let store = store_at(&root);
    for k in 0..CONTESTED_KEYS {
        let key = format!("contested/{k}");
        let mut winners = Vec::new();
        for outcomes in &results {
            let entry = &outcomes[&key];
            match entry["outcome"].as_str().unwrap() {
                "won" => winners.push(entry["payload"].as_str().unwrap().to_string()),
                "refused" => {}
                other => panic!("{key}: {other}"),
            }
        }
        assert_eq!(winners.len(), 1, "{key} had winners {winners:?}");
        assert_eq!(
            store.read(&key).unwrap(),
            winners[0].as_bytes(),
            "{key} holds the winner's bytes"
        );
    }
    assert_eq!(store.list("contested/").unwrap().len(), CONTESTED_KEYS);
    // Losers' blobs may stay on disk (gc removes them), but every blob is whole and none is staged.
    let blobs = assert_blobs_intact(&root, false);
    assert!(blobs >= CONTESTED_KEYS);
}

#[test]
fn processes_writing_different_keys_lose_no_row_and_share_blobs() {
    let (dir, results) = run_writers("own-keys");
    let root = dir.path().join("objects");
    let store = store_at(&root);
    let mut payloads = HashSet::new();
    for outcomes in &results {
        for (key, entry) in outcomes {
            assert_eq!(entry["outcome"], "won", "{key}");
            let payload = entry["payload"].as_str().unwrap();
            assert_eq!(store.read(key).unwrap(), payload.as_bytes(), "{key}");
            payloads.insert(payload.to_string());
        }
    }
    assert_eq!(store.list("").unwrap().len(), WRITERS * OWN_KEYS);
    assert_eq!(assert_blobs_intact(&root, false), payloads.len());
    assert_eq!(store.blob_count().unwrap(), payloads.len());
}
