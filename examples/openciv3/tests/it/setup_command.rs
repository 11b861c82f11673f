//! `agent-env openciv3 setup` as agent-env runs it: the plugin in command mode (`cli.run`), its
//! `host.store.object.put_file` answered by the core's `HostStoreDispatcher`, whose configured object
//! store is the CAS store served by a second plugin process. The scenario runs in a child process (this
//! test binary again) so that the command's terminal output can be read.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use crate::support::pipe::{install, open_store, root_config, start, start_command_mode};
use crate::support::CHILD_JOB;
use agent_env::stores::{AnyStore, HostStoreDispatcher, StoreSet};
use agentenv_openciv3::cas::{CasConfig, ContentAddressedObjectStore};
use serde_json::{json, Value};

/// The child: runs `openciv3 <argv>` through `cli.run` and prints `exit_code=<n>` last.
#[test]
fn setup_host() {
    let Ok(job) = std::env::var(CHILD_JOB) else {
        return;
    };
    let job: Value = serde_json::from_str(&job).unwrap();
    let dir = PathBuf::from(job["dir"].as_str().unwrap());
    let plugins = dir.join("plugins");
    let store_process = start(&plugins);
    let store = Arc::new(open_store(&store_process, root_config(&dir.join("cas"))).unwrap());
    let stores = Arc::new(StoreSet::new(move |_| Ok(AnyStore::Object(store.clone()))));
    let manifest = install(&plugins);
    let command = start_command_mode(&manifest, Arc::new(HostStoreDispatcher::new(stores)));
    let result = command
        .call(
            "cli.run",
            json!({"command": "openciv3", "argv": job["argv"], "interactive": false}),
        )
        .expect("cli.run answered");
    println!("exit_code={}", result["exit_code"]);
}

fn run_setup(dir: &Path, argv: &[&str], path: Option<&str>) -> (i64, String, String) {
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "--exact",
            "setup_command::setup_host",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env(CHILD_JOB, json!({"dir": dir, "argv": argv}).to_string())
        .stdin(Stdio::null());
    if let Some(path) = path {
        child.env("PATH", path);
    }
    let output = child.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    let code = stdout
        .lines()
        .find_map(|l| l.strip_prefix("exit_code="))
        .and_then(|c| c.trim().parse().ok())
        .unwrap_or_else(|| panic!("no exit code; stdout: {stdout}\nstderr: {stderr}"));
    (code, stdout, stderr)
}

#[test]
fn setup_stores_a_tarball_through_the_configured_cas_store_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let tarball = dir.path().join("image.tar.gz");
    let mut bytes = vec![0x1f, 0x8b];
    bytes.extend((0..3_000_000u32).map(|i| (i % 251) as u8));
    std::fs::write(&tarball, &bytes).unwrap();
    let (code, stdout, stderr) = run_setup(
        dir.path(),
        &["setup", "--tarball", tarball.to_str().unwrap()],
        None,
    );
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let url =
        "cas://openciv3/artifacts/docker_image/mcp-server-openciv3/1/mcp-server-openciv3-v1.tar.gz";
    assert!(stdout.lines().any(|l| l == url), "stdout: {stdout}");
    assert!(
        stdout.contains(&format!(
            "Next: agent-env store get {url} -o mcp-server-openciv3-v1.tar.gz\n"
        )),
        "{stdout}"
    );
    assert!(!stdout.contains("--task smoke"), "{stdout}");
    let library = ContentAddressedObjectStore::new(
        CasConfig::new(dir.path().join("cas").to_str().unwrap(), "openciv3").unwrap(),
    );
    assert_eq!(library.get(url).unwrap(), bytes);

    // A second setup stores version 2 and shares the blob.
    let (code, stdout, _) = run_setup(
        dir.path(),
        &["setup", "--tarball", tarball.to_str().unwrap()],
        None,
    );
    assert_eq!(code, 0);
    assert!(
        stdout.contains("/2/mcp-server-openciv3-v2.tar.gz"),
        "{stdout}"
    );
    assert_eq!(library.blob_count().unwrap(), 1);
}

#[test]
fn setup_without_docker_buildx_fails_and_builds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let empty_path = dir.path().join("no-docker");
    std::fs::create_dir_all(&empty_path).unwrap();
    let (code, stdout, stderr) =
        run_setup(dir.path(), &["setup"], Some(empty_path.to_str().unwrap()));
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stderr.contains("sudo apt-get install docker-buildx"),
        "{stderr}"
    );
    assert!(stderr.contains("--tarball FILE"), "{stderr}");
    let library = ContentAddressedObjectStore::new(
        CasConfig::new(dir.path().join("cas").to_str().unwrap(), "openciv3").unwrap(),
    );
    assert!(library.list("").unwrap().is_empty());
}

#[test]
fn setup_refuses_a_missing_tarball_and_unknown_flags() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run_setup(
        dir.path(),
        &["setup", "--tarball", "/nonexistent/x.tar"],
        None,
    );
    assert_eq!(code, 1);
    assert!(
        stderr.contains("--tarball /nonexistent/x.tar: no such file"),
        "{stderr}"
    );
    let (code, _, stderr) = run_setup(dir.path(), &["setup", "--compress"], None);
    assert_eq!(code, 2);
    assert!(stderr.contains("--compress"), "{stderr}");
}

#[test]
fn gc_runs_as_an_openciv3_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("cas");
    let library = ContentAddressedObjectStore::new(
        CasConfig::new(root.to_str().unwrap(), "openciv3").unwrap(),
    );
    library.put("k", b"one", "text/plain", false).unwrap();
    let (code, stdout, _) = run_setup(
        dir.path(),
        &["gc", "--root", root.to_str().unwrap(), "--json"],
        None,
    );
    assert_eq!(code, 0);
    let report: Value =
        serde_json::from_str(stdout.lines().find(|l| l.starts_with('{')).unwrap()).unwrap();
    assert_eq!(report["blobs_seen"], 1);
    assert_eq!(report["blobs_removed"], 0);
}
