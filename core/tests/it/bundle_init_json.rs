//! `bundle init … --json`: one document on stdout naming the folder written and what it holds, or the
//! error document with the command's exit code.

use crate::support::run::{Ran, Sandboxed};

fn json_of(r: &Ran) -> serde_json::Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.both()))
}

/// The document's keys, sorted.
fn keys(doc: &serde_json::Value) -> Vec<&str> {
    let mut keys: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

const KEYS: [&str; 10] = [
    "artifacts",
    "evals",
    "files",
    "folder",
    "format_version",
    "from_bundle",
    "path",
    "run",
    "tasks",
    "warnings",
];

#[test]
fn stored_tasks_written_out_are_described_in_one_document() {
    let s = Sandboxed::new();
    crate::stored_artifacts::put_hello_loading_greeting(&s);
    let r = s.run(&[
        "bundle",
        "init",
        "copy",
        "--from-task",
        "team/hello",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.both());
    let doc = json_of(&r);
    assert_eq!(keys(&doc), KEYS, "{doc}");
    assert_eq!(doc["format_version"], 1);
    assert_eq!(doc["folder"], "copy");
    let path = std::fs::canonicalize(s.home().join("copy")).unwrap();
    assert_eq!(doc["path"], path.to_str().unwrap());
    assert_eq!(doc["from_bundle"], serde_json::Value::Null);
    assert_eq!(
        doc["tasks"],
        serde_json::json!([{"id": "team/hello", "file": "tasks/hello.json"}])
    );
    assert_eq!(doc["evals"], serde_json::json!([]));
    assert_eq!(
        doc["artifacts"],
        serde_json::json!([{"id": "team/greeting", "folder": "artifacts/greeting", "files": 3}])
    );
    assert_eq!(
        doc["files"],
        serde_json::json!([
            "README.md",
            "artifacts/greeting/artifact.toml",
            "artifacts/greeting/check.sh",
            "artifacts/greeting/hello.txt",
            "artifacts/greeting/more/notes.md",
            "tasks/hello.json"
        ])
    );
    assert_eq!(doc["run"], "agent-env run ./copy");
    assert_eq!(doc["warnings"], serde_json::json!([]));
    assert!(!r.stdout.contains("wrote "), "{}", r.stdout);
}

#[test]
fn an_installed_bundle_copied_is_described_in_one_document() {
    let s = Sandboxed::new();
    let r = s.run(&[
        "bundle",
        "init",
        "my-hello",
        "--from-bundle",
        "hello",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.both());
    let doc = json_of(&r);
    assert_eq!(keys(&doc), KEYS, "{doc}");
    assert_eq!(doc["folder"], "my-hello");
    assert_eq!(doc["from_bundle"], "agentenv-framework/hello");
    assert_eq!(doc["tasks"][0]["file"], "tasks/hello.json", "{doc}");
    assert_eq!(doc["artifacts"][0]["folder"], "artifacts/greeting", "{doc}");
    assert_eq!(doc["artifacts"][0]["files"], 2, "{doc}");
    assert_eq!(doc["run"], "agent-env run ./my-hello");
    for file in doc["files"].as_array().unwrap() {
        assert!(
            s.home()
                .join("my-hello")
                .join(file.as_str().unwrap())
                .is_file(),
            "{file}"
        );
    }
}

#[test]
fn a_bundle_init_that_fails_prints_the_error_document() {
    let s = Sandboxed::new();
    let error = |r: &Ran, code: i32| {
        assert_eq!(r.code, code, "{}", r.both());
        let doc = json_of(r);
        assert_eq!(
            keys(&doc),
            ["error", "exit_code", "format_version", "status"],
            "{doc}"
        );
        assert_eq!(doc["status"], "error");
        assert_eq!(doc["exit_code"], code);
        assert!(r.stderr.starts_with("Error: "), "{}", r.stderr);
        doc["error"].as_str().unwrap().to_string()
    };
    s.write("full/keep.txt", "mine");
    let full = s.run(&["bundle", "init", "full", "--from-bundle", "hello", "--json"]);
    assert!(error(&full, 1).contains("exists and is not empty"));
    let gone = s.run(&[
        "bundle",
        "init",
        "out",
        "--from-task",
        "team/nope",
        "--json",
    ]);
    error(&gone, 1);
    assert!(!s.home().join("out").exists());
    let nothing = s.run(&["bundle", "init", "out", "--json"]);
    assert!(error(&nothing, 2).starts_with("name what to write out: "));
}
