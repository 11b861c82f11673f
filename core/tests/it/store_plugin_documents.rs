//! A plugin's document store through the pipe: `agent-env store check document` with `[stores.document]
//! impl = "agentenv-fixture-documents:DiskDocumentStore"`. The fixture keeps each collection as a file
//! under its `root`, so what the check leaves behind is on disk once the plugin has exited: a store that
//! drops collections (`store.document.drop_collection`) leaves none; one that cannot has each collection
//! emptied one document at a time by the host, and keeps its empty files.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{IsolatedDirs, AGENT_ENV};

/// Installs the fixture and a config selecting its store over `root`, `drop` as given; the work dir.
fn setup(dir: &Path, root: &Path, drop: Option<&str>) -> PathBuf {
    crate::support::install_store_fixture(
        &dir.join("data/agent-env/plugins"),
        "documents",
        ("agentenv-fixture-documents", "0.1.0"),
        "fixture-documents",
        ("DiskDocumentStore", "document"),
    );
    let work = dir.join("work");
    std::fs::create_dir_all(work.join(".agentenv")).unwrap();
    let drop = drop
        .map(|d| format!(", drop = \"{d}\""))
        .unwrap_or_default();
    std::fs::write(
        work.join(".agentenv/config.toml"),
        format!(
            "[stores.document]\nimpl = \"agentenv-fixture-documents:DiskDocumentStore\"\nconfig = {{ root = \"{}\"{drop} }}\n",
            root.display()
        ),
    )
    .unwrap();
    work
}

/// Runs `agent-env store check document --json` in `work`; the exit code and the report.
fn check(dir: &Path, work: &Path) -> (Option<i32>, serde_json::Value, String) {
    let mut cmd = Command::new(AGENT_ENV);
    cmd.env_clear();
    let out = IsolatedDirs {
        home: dir.join("home"),
        xdg_data: dir.join("data"),
        xdg_state: dir.join("state"),
        xdg_config: dir.join("home/.config"),
        plugins: dir.join("data/agent-env/plugins"),
    }
    .apply(&mut cmd)
    .args(["store", "check", "document", "--json"])
    .current_dir(work)
    .env("PATH", "/usr/bin:/bin")
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}):\n{stdout}\n{stderr}"));
    (out.status.code(), report, stderr)
}

/// The names of the collection files the store kept under `root`, sorted.
fn collection_files(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

/// The lines the store wrote to `<root>/.drops`, one per `drop_collection` it was sent.
fn drops(root: &Path) -> Vec<String> {
    std::fs::read_to_string(root.join(".drops"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Asserts the check passed every case; the number of cases.
fn assert_all_passed(code: Option<i32>, report: &serde_json::Value, stderr: &str) -> usize {
    let cases = report["cases"].as_array().expect("cases");
    let failed: Vec<&serde_json::Value> =
        cases.iter().filter(|c| c["outcome"] != "passed").collect();
    assert!(failed.is_empty(), "{failed:#?}\n{stderr}");
    assert_eq!(code, Some(0), "{report:#}\n{stderr}");
    cases.len()
}

#[test]
fn a_plugin_store_that_drops_collections_is_sent_drop_collection_and_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("docs");
    let work = setup(dir.path(), &root, Some("own"));
    let (code, report, stderr) = check(dir.path(), &work);
    let cases = assert_all_passed(code, &report, &stderr);
    assert_eq!(cases, 45, "{report:#}");
    assert_eq!(
        collection_files(&root),
        Vec::<String>::new(),
        "the kit left collections"
    );
    let drops = drops(&root);
    // Every case drops its collection, and collections_are_separate the two beside it.
    assert_eq!(drops.len(), cases + 2, "{drops:#?}");
    assert!(
        drops
            .iter()
            .all(|d| d.starts_with("dropped kit_") && d.contains("__")),
        "{drops:#?}"
    );
    assert!(
        drops
            .iter()
            .any(|d| d.ends_with("__collections_are_separate_left")),
        "{drops:#?}"
    );
}

#[test]
fn a_plugin_store_that_cannot_drop_collections_has_them_emptied_and_is_asked_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("docs");
    let work = setup(dir.path(), &root, Some("refuse"));
    let (code, report, stderr) = check(dir.path(), &work);
    let cases = assert_all_passed(code, &report, &stderr);
    let drops = drops(&root);
    assert_eq!(
        drops.len(),
        1,
        "asked again after not-supported: {drops:#?}"
    );
    assert!(drops[0].starts_with("refused kit_"), "{drops:#?}");
    // What the store keeps for an empty collection stays, emptied.
    let files = collection_files(&root);
    assert!(files.len() >= cases, "{files:#?}");
    for name in &files {
        let held = std::fs::read_to_string(root.join(name)).unwrap();
        assert_eq!(held, "[]", "{name} was not emptied");
    }
}
