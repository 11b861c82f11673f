//! What `agent-env run` (and its `--dry-run`) says of a task file or an eval a bundle author got
//! wrong, before any step runs: every problem of the file in one pass, each saying what was found
//! and what to write instead.

use serde_json::Value;

use crate::support::run::Sandboxed;

/// The problems a `run --dry-run --json` of `./bundle` lists, each without the bundle's folder.
fn problems_of(s: &Sandboxed) -> Vec<String> {
    let r = s.run(&["run", "--dry-run", "--json", "./bundle"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc: Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", r.both()));
    doc["problems"]
        .as_array()
        .unwrap_or_else(|| panic!("no problems: {doc}"))
        .iter()
        .map(|p| {
            let p = p.as_str().unwrap();
            p.strip_prefix("~/bundle/").unwrap_or(p).to_string()
        })
        .collect()
}

fn assert_says(problems: &[String], said: &str) {
    assert!(
        problems.iter().any(|p| p == said),
        "{said}\nnot among:\n{problems:#?}"
    );
}

/// Keys given twice do not hide each other or the file's other problems: each is said, with its
/// step and its line and column (a one-line file's "line 1" says nothing), beside the rest.
#[test]
fn every_key_given_twice_is_said_with_the_files_other_problems() {
    let s = Sandboxed::new();
    s.write(
        "bundle/tasks/t.json",
        r#"[{"id":"a","type":"deploy_sandbox","sandbox_name":"b","sandbox_name":"c"},{"id":"a","type":"deploy_sandbox","sandbox_name":"z","depends_on":["nope"]},{"id":"v","type":"verify_sandbox","verifier_id":"x","sandbox_name":"b","criteria":[{"type":"probe_dir_exists","paths":["."],"paths":["/app"]}]},{"id":"w","type":"verify_sandbox","verifier_id":"y","sandbox_name":"b","criteria":[],"retry_config":{"max_retries":"3"}}]"#,
    );
    let problems = problems_of(&s);
    for said in [
        "tasks/t.json: step 1 ('a') has the key 'sandbox_name' twice (line 1, column 55), and only the last would be read: keep the one you mean",
        "tasks/t.json: step 3 ('v') has the key 'paths' twice in one object of its 'criteria' (line 1, column 275), and only the last would be read: keep the one you mean",
        "tasks/t.json: two steps have the id 'a'; step ids must be unique in a task",
        "tasks/t.json: step 'a' depends on 'nope', which is not an earlier step of this task",
        "tasks/t.json: step 'w': retry_config.max_retries must be a whole number of 0 or more",
    ] {
        assert_says(&problems, said);
    }
    assert_eq!(problems.len(), 5, "{problems:#?}");
}
