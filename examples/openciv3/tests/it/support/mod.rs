//! What the OpenCiv3 tests share: [`pipe`] starts the installed plugin with the core's host code;
//! for the multi-process tests, a store on a root, a check that every blob is whole, and child
//! processes that are this very test binary re-run with a job in the environment (an entry is named
//! by its module path, e.g. `gc::churning_writer`).

pub mod pipe;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agentenv_openciv3::cas::{
    hash_bytes, is_digest, CasConfig, ContentAddressedObjectStore, STAGED_PREFIX,
};

/// The variable that turns a test binary run into a child writer.
pub const CHILD_JOB: &str = "OPENCIV3_CAS_CHILD_JOB";

pub fn store_at(root: &Path) -> ContentAddressedObjectStore {
    ContentAddressedObjectStore::new(
        CasConfig::new(root.to_str().expect("utf-8 path"), "openciv3").expect("config"),
    )
}

/// Every file under `<root>/blobs` is a blob named by its content's sha256; returns how many there are.
/// With `allow_staged` false, a leftover staged file fails the check too.
pub fn assert_blobs_intact(root: &Path, allow_staged: bool) -> usize {
    let mut blobs = 0;
    let Ok(shards) = std::fs::read_dir(root.join("blobs")) else {
        return 0;
    };
    for shard in shards {
        let shard = shard.unwrap().path();
        for entry in std::fs::read_dir(&shard).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            if name.starts_with(STAGED_PREFIX) {
                assert!(allow_staged, "staged file left behind: {}", path.display());
                continue;
            }
            assert!(is_digest(&name), "unexpected file {}", path.display());
            assert_eq!(&name[..2], shard.file_name().unwrap().to_str().unwrap());
            let content = std::fs::read(&path).unwrap();
            assert_eq!(
                hash_bytes(&content),
                name,
                "blob {} does not match its digest",
                path.display()
            );
            blobs += 1;
        }
    }
    blobs
}

/// Starts this test binary running only `entry`, with `job` (a JSON text) in [`CHILD_JOB`].
pub fn spawn_child(entry: &str, job: &str) -> Child {
    Command::new(std::env::current_exe().expect("test binary path"))
        .args(["--exact", entry, "--nocapture", "--test-threads=1", "-q"])
        .env(CHILD_JOB, job)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child test process")
}

/// Waits for every child and asserts each exited 0.
pub fn wait_all(children: Vec<Child>) {
    let statuses: Vec<_> = children
        .into_iter()
        .map(|mut child| child.wait().expect("wait for child"))
        .collect();
    for status in statuses {
        assert!(status.success(), "a child writer failed: {status}");
    }
}

/// Blocks until `go` exists, so children start writing together (bounded: a lost parent cannot hang us).
pub fn wait_for_start(go: &Path) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !go.exists() {
        assert!(
            Instant::now() < deadline,
            "the start signal {} never came",
            go.display()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

pub fn results_path(dir: &Path, writer: usize) -> PathBuf {
    dir.join(format!("writer-{writer}.json"))
}
