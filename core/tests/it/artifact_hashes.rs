//! An artifact's files are held to the sha256 recorded when they were written to the object store:
//! an object changed in the store since (other bytes of the same length) fails the step that loads
//! it, and the copy `bundle init --from-task` makes, instead of reaching the graders.

use sha2::{Digest, Sha256};

use crate::stored_artifacts::put_hello_loading_greeting;
use crate::support::run::Sandboxed;

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Every file below `dir`.
fn files_below(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| match e.path() {
            path if path.is_dir() => files_below(&path),
            path => vec![path],
        })
        .collect()
}

/// The one object of the local object store whose name is `name`.
fn stored_object(s: &Sandboxed, name: &str) -> std::path::PathBuf {
    let found: Vec<_> = files_below(&s.state().join("object_store/artifacts"))
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == name))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.into_iter().next().unwrap()
}

#[test]
fn a_stored_artifact_whose_object_changed_in_place_is_not_loaded_nor_copied() {
    let s = Sandboxed::new();
    put_hello_loading_greeting(&s);
    let object = stored_object(&s, "hello.txt");
    // Same length, other bytes: the size recorded does not tell them apart.
    std::fs::write(&object, "HELLO THERE\n").unwrap();

    let ran = s.run(&["task", "run", "team/hello"]);
    assert_eq!(ran.code, 1, "{}", ran.both());
    let said = format!(
        "the file hello.txt of the artifact 'team/greeting' v1 is not as it was put: file://{} has the sha256 {}, but the artifact recorded {}; the object store's copy was changed or damaged since, so it is not loaded; put its files again with agent-env artifact put FOLDER --id team/greeting",
        object.display(),
        sha256(b"HELLO THERE\n"),
        sha256(b"hello there\n"),
    );
    assert!(ran.stdout.contains(&said), "{}", ran.both());
    assert!(!ran.stdout.contains("load done"), "{}", ran.stdout);

    let out = s.home().join("copy");
    let init = s.run(&[
        "bundle",
        "init",
        out.to_str().unwrap(),
        "--from-task",
        "team/hello",
    ]);
    assert_eq!(init.code, 1, "{}", init.both());
    assert!(
        init.stderr.contains(
            "the file hello.txt of the artifact 'team/greeting' v1 is not as it was put: "
        ) && init
            .stderr
            .contains("so it is not copied; put its files again"),
        "{}",
        init.both()
    );
    assert!(!out.exists());

    // Put again, the artifact loads.
    let put = s.run(&[
        "artifact",
        "put",
        s.home().join("greeting").to_str().unwrap(),
        "--id",
        "team/greeting",
    ]);
    assert_eq!(put.code, 0, "{}", put.both());
    let ran = s.run(&["task", "run", "team/hello"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    assert!(ran.stdout.contains("passed (hello: 1)"), "{}", ran.stdout);
}

#[test]
fn a_bundles_artifact_whose_object_changed_says_how_the_next_run_writes_it_anew() {
    let s = Sandboxed::new();
    let first = s.run(&["run", "hello"]);
    assert_eq!(first.code, 0, "{}", first.both());
    let object = stored_object(&s, "hello.txt");
    std::fs::write(&object, "HELLO\n").unwrap();

    let ran = s.run(&["run", "hello"]);
    assert_eq!(ran.code, 1, "{}", ran.both());
    assert!(
        ran.stdout.contains(&format!(
            "has the sha256 {}, but the artifact recorded {}",
            sha256(b"HELLO\n"),
            sha256(b"hello\n")
        )) && ran.stdout.contains(
            "so it is not loaded; delete that object from the object store, and the bundle's next run writes the artifact's files anew"
        ),
        "{}",
        ran.both()
    );

    // As said: with the object gone, the next run writes a new version and loads it.
    std::fs::remove_file(&object).unwrap();
    let ran = s.run(&["run", "hello"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    assert!(ran.stdout.contains("passed (hello: 1)"), "{}", ran.stdout);
}

/// `artifact get --verify` reads each of the version's files from the object store and holds it
/// to its record, so a file changed in place (same size, other bytes) or gone is found without
/// running a task: each said as a load would say it, exit 1, and in `--json` each file `verified`
/// with the `problems` listed. Without `--verify`, `get` reads only the record, as before.
#[test]
fn artifact_get_verify_finds_a_changed_and_a_missing_file() {
    let s = Sandboxed::new();
    put_hello_loading_greeting(&s);
    let fine = s.run(&["artifact", "get", "team/greeting", "--verify"]);
    assert_eq!(fine.code, 0, "{}", fine.both());
    assert!(
        fine.stdout.contains(
            "verified: 3 files read from the object store, as they were put (sizes and sha256 as recorded)\n"
        ),
        "{}",
        fine.both()
    );
    let fine = s
        .command(&["artifact", "get", "team/greeting", "--verify", "--json"])
        .output()
        .unwrap();
    assert_eq!(fine.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&fine.stdout).unwrap();
    assert_eq!(doc["problems"], serde_json::json!([]), "{doc:#}");
    assert!(
        doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["verified"] == true),
        "{doc:#}"
    );

    let changed = stored_object(&s, "hello.txt");
    std::fs::write(&changed, "HELLO THERE\n").unwrap();
    let gone = stored_object(&s, "check.sh");
    std::fs::remove_file(&gone).unwrap();

    let plain = s.run(&["artifact", "get", "team/greeting"]);
    assert_eq!(plain.code, 0, "{}", plain.both());
    assert!(!plain.stdout.contains("verified"), "{}", plain.both());

    let checked = s.run(&["artifact", "get", "team/greeting", "--verify"]);
    assert_eq!(checked.code, 1, "{}", checked.both());
    let changed_said = format!(
        "problem: the file hello.txt of the artifact 'team/greeting' v1 is not as it was put: file://{} has the sha256 {}, but the artifact recorded {}; the object store's copy was changed or damaged since, so a task that loads it fails; put its files again with agent-env artifact put FOLDER --id team/greeting",
        changed.display(),
        sha256(b"HELLO THERE\n"),
        sha256(b"hello there\n"),
    );
    assert!(checked.stderr.contains(&changed_said), "{}", checked.both());
    assert!(
        checked.stderr.contains(&format!(
            "problem: can't read the file check.sh: the object store does not hold it, though the artifact 'team/greeting' v1 lists it (No object at file://{})",
            gone.display()
        )) && checked
            .stderr
            .contains("; put its files again with agent-env artifact put FOLDER --id team/greeting"),
        "{}",
        checked.both()
    );
    assert!(
        checked.stderr.ends_with(
            "Error: 2 of the 3 files of the artifact 'team/greeting' v1 are not as they were put (each said above)\n"
        ),
        "{}",
        checked.both()
    );

    let out = s
        .command(&["artifact", "get", "team/greeting", "--verify", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let verified: Vec<(&str, bool)> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap(),
                f["verified"].as_bool().unwrap(),
            )
        })
        .collect();
    let mut verified = verified;
    verified.sort();
    assert_eq!(
        verified,
        [
            ("check.sh", false),
            ("hello.txt", false),
            ("more/notes.md", true)
        ],
        "{doc:#}"
    );
    let problems = doc["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 2, "{doc:#}");
    assert!(
        problems
            .iter()
            .any(|p| format!("problem: {}", p.as_str().unwrap()) == changed_said),
        "{doc:#}"
    );
}
