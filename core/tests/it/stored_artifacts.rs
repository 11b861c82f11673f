//! `agent-env artifact put`: a folder's files as a stored artifact in the configured stores, which a
//! stored task's `load_artifact` step then loads (`task put`, `task run`).

use crate::support::run::Sandboxed;

/// hello's task with its load step naming the stored artifact `id`.
fn hello_loading(s: &Sandboxed, id: &str) -> std::path::PathBuf {
    let task = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/hello/tasks/hello.json"),
    )
    .unwrap()
    .replace("\"greeting\"", &format!("\"{id}\""));
    s.write("hello.json", &task)
}

fn greeting(s: &Sandboxed, text: &str) -> std::path::PathBuf {
    let folder = s.home().join("greeting");
    std::fs::create_dir_all(folder.join("more")).unwrap();
    std::fs::write(folder.join("hello.txt"), text).unwrap();
    std::fs::write(
        folder.join("check.sh"),
        "#!/usr/bin/env bash\ngrep -q hello \"$(dirname \"$0\")/hello.txt\"\n",
    )
    .unwrap();
    std::fs::write(folder.join("more/notes.md"), "notes").unwrap();
    // Left out, as a bundle leaves dot entries out of an artifact.
    std::fs::write(folder.join(".DS_Store"), "junk").unwrap();
    folder
}

#[test]
fn a_stored_task_loads_an_artifact_put_before_it_and_each_put_is_a_new_version() {
    let s = Sandboxed::new();
    let folder = greeting(&s, "hello there\n");
    let task = hello_loading(&s, "team/greeting");

    let refused = s.run(&["task", "put", task.to_str().unwrap(), "--id", "team/hello"]);
    assert_eq!(refused.code, 1, "{}", refused.both());
    assert!(
        refused
            .stderr
            .contains("put one with agent-env artifact put FOLDER --id team/greeting"),
        "{}",
        refused.stderr
    );

    let put = s.run(&[
        "artifact",
        "put",
        folder.to_str().unwrap(),
        "--id",
        "team/greeting",
    ]);
    assert_eq!(put.code, 0, "{}", put.both());
    assert_eq!(
        put.stdout,
        "team/greeting: v1 (file_artifact_universe, 3 files)\n"
    );
    let put = s.run(&["task", "put", task.to_str().unwrap(), "--id", "team/hello"]);
    assert_eq!(put.code, 0, "{}", put.both());
    let ran = s.run(&["task", "run", "team/hello"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    assert!(
        ran.stdout.contains("team/hello v1: passed (hello: 1)"),
        "{}",
        ran.stdout
    );

    // A second put is v2, and the task loads the latest: a greeting without "hello" fails its check.
    greeting(&s, "goodbye\n");
    let put = s.run(&[
        "artifact",
        "put",
        folder.to_str().unwrap(),
        "--id",
        "team/greeting",
    ]);
    assert_eq!(
        put.stdout,
        "team/greeting: v2 (file_artifact_universe, 3 files; hello.txt changed)\n",
        "{}",
        put.both()
    );
    let shown = s.run(&["artifact", "get", "team/greeting"]);
    assert_eq!(shown.code, 0, "{}", shown.both());
    assert!(
        shown
            .stdout
            .starts_with("artifact:  team/greeting v2 (file_artifact_universe)\n"),
        "{}",
        shown.stdout
    );
    // One column each for the paths, the sizes and the URLs.
    let rows: Vec<&str> = shown
        .stdout
        .lines()
        .skip_while(|l| *l != "files:")
        .skip(1)
        .collect();
    assert_eq!(rows.len(), 3, "{}", shown.stdout);
    let column = |needle: &str| {
        rows.iter()
            .map(|r| r.find(needle).unwrap_or(usize::MAX))
            .collect::<Vec<_>>()
    };
    let urls = column("file://");
    assert!(urls.iter().all(|at| *at == urls[0]), "{}", shown.stdout);
    assert!(
        rows.iter().any(|r| r.starts_with("  hello.txt "))
            && rows.iter().any(|r| r.contains(" 8 bytes  file://")),
        "{}",
        shown.stdout
    );
    assert!(
        rows.iter().any(|r| r.starts_with("  more/notes.md ")),
        "{}",
        shown.stdout
    );
    let first = s.run(&[
        "artifact",
        "get",
        "team/greeting",
        "--version",
        "1",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&first.stdout).unwrap();
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["files"].as_array().map(Vec::len), Some(3), "{doc}");
    let missing = s.run(&["artifact", "get", "team/greeting", "--version", "9"]);
    assert_eq!(missing.code, 1, "{}", missing.both());
    assert!(
        missing
            .stderr
            .ends_with("has no artifact 'team/greeting' v9; its newest version is v2\n"),
        "{}",
        missing.stderr
    );
    let ran = s.run(&["task", "run", "team/hello"]);
    assert!(
        ran.stdout
            .contains("team/hello v1: scored below 1 (hello: 0)"),
        "{}",
        ran.both()
    );
}

/// `artifact put FOLDER --id ID` fails (exit 1) with a message containing `says`.
fn refused(s: &Sandboxed, folder: &std::path::Path, id: &str, says: &str) {
    let r = s.run(&["artifact", "put", folder.to_str().unwrap(), "--id", id]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(r.stderr.contains(says), "{}", r.stderr);
}

#[test]
fn what_a_put_cannot_store_is_refused_saying_why() {
    let s = Sandboxed::new();
    // A `file` artifact of several files, as a bundle's is refused.
    let several = s.home().join("several");
    std::fs::create_dir_all(several.join("sub")).unwrap();
    std::fs::write(several.join("artifact.toml"), "type = \"file\"\n").unwrap();
    std::fs::write(several.join("one.txt"), "1").unwrap();
    std::fs::write(several.join("sub/two.txt"), "2").unwrap();
    refused(
        &s,
        &several,
        "team/several",
        "type = \"file\" is one file, and this folder has 2 (one.txt, sub/two.txt)",
    );
    let empty = s.home().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    refused(
        &s,
        &empty,
        "team/e",
        "has no files: put the artifact's files in it",
    );
    refused(&s, &empty, "@local/x", "a stored entity has a bare id");

    let image = s.home().join("image");
    std::fs::create_dir_all(&image).unwrap();
    std::fs::write(image.join("Dockerfile"), "FROM scratch\n").unwrap();
    // A Dockerfile makes an image artifact, as in a bundle, with or without artifact.toml saying so.
    refused(
        &s,
        &image,
        "team/img",
        "is an artifact of type 'docker_image', which a stored task could not load",
    );
    std::fs::write(image.join("artifact.toml"), "type = \"docker_image\"\n").unwrap();
    refused(&s, &image, "team/img", "of type 'docker_image'");
    refused(
        &s,
        std::path::Path::new("/nonexistent-folder"),
        "team/x",
        "/nonexistent-folder does not exist: give the folder that holds the artifact's files",
    );
    let file = s.home().join("big.bin");
    std::fs::write(&file, "x").unwrap();
    refused(
        &s,
        &file,
        "team/big",
        "big.bin is not a folder: give the folder that holds the artifact's files",
    );
}

/// `bundle init --from-task` copies the stored artifacts the task loads into the bundle's
/// `artifacts/`, and the task names them by folder: the bundle runs without the shared stores.
#[test]
fn a_bundle_written_out_from_a_stored_task_carries_the_artifacts_it_loads() {
    let s = Sandboxed::new();
    let folder = greeting(&s, "hello there\n");
    let task = hello_loading(&s, "team/greeting");
    assert_eq!(
        s.run(&[
            "artifact",
            "put",
            folder.to_str().unwrap(),
            "--id",
            "team/greeting"
        ])
        .code,
        0
    );
    assert_eq!(
        s.run(&["task", "put", task.to_str().unwrap(), "--id", "team/hello"])
            .code,
        0
    );
    let out = s.home().join("copy");
    let r = s.run(&[
        "bundle",
        "init",
        out.to_str().unwrap(),
        "--from-task",
        "team/hello",
    ]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stdout
            .contains("/artifacts/greeting/ (team/greeting, 3 files)\n"),
        "{}",
        r.stdout
    );
    assert!(!r.stderr.contains("note:"), "{}", r.stderr);
    // The README names the folder it is in, not the one it was written in before the move.
    let name = out.file_name().unwrap().to_str().unwrap();
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(readme.starts_with(&format!("# {name}\n")), "{readme}");
    assert!(!readme.contains("partial"), "{readme}");
    let copied = out.join("artifacts/greeting");
    assert_eq!(
        std::fs::read_to_string(copied.join("hello.txt")).unwrap(),
        "hello there\n"
    );
    assert_eq!(
        std::fs::read_to_string(copied.join("more/notes.md")).unwrap(),
        "notes"
    );
    assert_eq!(
        std::fs::read_to_string(copied.join("artifact.toml")).unwrap(),
        "type = \"file_artifact_universe\"\n"
    );
    let written = std::fs::read_to_string(out.join("tasks/hello.json")).unwrap();
    assert!(
        written.contains("\"artifact_id\": \"greeting\""),
        "{written}"
    );
    let ran = s.run(&["run", out.to_str().unwrap()]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    assert!(
        ran.stdout.contains("v1: passed (hello: 1)"),
        "{}",
        ran.stdout
    );
}

/// Stores the artifact `team/greeting` (its `hello.txt` saying `hello there`) and the task
/// `team/hello` that loads it.
pub(crate) fn put_hello_loading_greeting(s: &Sandboxed) {
    let folder = greeting(s, "hello there\n");
    let task = hello_loading(s, "team/greeting");
    let put = s.run(&[
        "artifact",
        "put",
        folder.to_str().unwrap(),
        "--id",
        "team/greeting",
    ]);
    assert_eq!(put.code, 0, "{}", put.both());
    let put = s.run(&["task", "put", task.to_str().unwrap(), "--id", "team/hello"]);
    assert_eq!(put.code, 0, "{}", put.both());
}

/// A stored task whose artifact's files have left the object store fails at its load step saying so
/// and how to put them back.
#[test]
fn a_stored_artifact_whose_files_are_gone_says_how_to_put_them_back() {
    let s = Sandboxed::new();
    put_hello_loading_greeting(&s);
    std::fs::remove_dir_all(s.state().join("object_store/artifacts")).unwrap();
    let ran = s.run(&["task", "run", "team/hello"]);
    assert_eq!(ran.code, 1, "{}", ran.both());
    assert!(
        ran.stdout.contains(
            "the object store does not hold it, though the artifact 'team/greeting' v1 lists it"
        ) && ran.stdout.contains(
            "; put its files again with agent-env artifact put FOLDER --id team/greeting"
        ),
        "{}",
        ran.stdout
    );
}

/// A stored artifact put through another object store (another bucket, another root) is not said
/// to be missing: the run says the configured store is not the one it was put through.
#[test]
fn a_stored_artifact_put_through_another_object_store_says_so() {
    let s = Sandboxed::new();
    put_hello_loading_greeting(&s);
    let elsewhere = s.dir.path().join("other-objects");
    s.write(
        ".agentenv/config.toml",
        &format!(
            "[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = {{ root = \"{}\" }}\n",
            elsewhere.display()
        ),
    );
    let ran = s.run(&["task", "run", "team/hello"]);
    assert_eq!(ran.code, 1, "{}", ran.both());
    assert!(
        ran.stdout.contains("the artifact 'team/greeting' v1 lists it, but it is no URL of the configured object store (")
            && ran.stdout.contains("so the artifact was put through another one (another bucket or server); point [stores.object] at that store, or put its files again"),
        "{}",
        ran.stdout
    );
    // `bundle init --from-task` gives the same advice, the store's own text inside a sentence
    // that goes on.
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
        init.stderr.contains("into the bundle: the artifact 'team/greeting' v1 lists it, but it is no URL of the configured object store (")
            && init.stderr.contains("so the artifact was put through another one (another bucket or server); point [stores.object] at that store, or put its files again with agent-env artifact put FOLDER --id team/greeting; nothing was written")
            && !init.stderr.contains(".;"),
        "{}",
        init.both()
    );
    assert!(!out.exists());
}

/// A document store that cannot be reached is found before any file is written: nothing is left
/// in the object store that no version names.
#[test]
fn a_put_whose_document_store_is_down_writes_no_file() {
    let s = Sandboxed::new();
    let folder = greeting(&s, "hello there\n");
    s.write(
        ".agentenv/config.toml",
        "[stores.document]\nimpl = \"PostgresDocumentStore\"\n[stores.document.config]\ndsn = \"postgres://u:p@127.0.0.1:9/db?connect_timeout=2\"\n",
    );
    let put = s.run(&[
        "artifact",
        "put",
        folder.to_str().unwrap(),
        "--id",
        "team/greeting",
    ]);
    assert_eq!(put.code, 1, "{}", put.both());
    assert!(
        put.stderr
            .contains("the configured document store, which records the artifact: ")
            && put.stderr.contains("; nothing was written"),
        "{}",
        put.both()
    );
    let objects = s.state().join("object_store");
    let written: Vec<_> = walk(&objects);
    assert!(written.is_empty(), "{written:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| {
            let path = e.path();
            if path.is_dir() {
                walk(&path)
            } else {
                vec![path]
            }
        })
        .collect()
}

/// Puts the greeting artifact and hello's task loading it (`team/hello`); the stored object of
/// hello.txt (outside the home folder the artifact was put from).
fn stored_hello(s: &Sandboxed) -> std::path::PathBuf {
    let folder = greeting(s, "hello there\n");
    let task = hello_loading(s, "team/greeting");
    let put = s.run(&[
        "artifact",
        "put",
        folder.to_str().unwrap(),
        "--id",
        "team/greeting",
    ]);
    assert_eq!(put.code, 0, "{}", put.both());
    let put = s.run(&["task", "put", task.to_str().unwrap(), "--id", "team/hello"]);
    assert_eq!(put.code, 0, "{}", put.both());
    walk(s.dir.path())
        .into_iter()
        .find(|p| !p.starts_with(s.home()) && p.ends_with("hello.txt"))
        .expect("the stored object")
}

/// A `bundle init` that fails halfway (an artifact's object gone) leaves no folder, so the same
/// command runs again once the object is back.
#[test]
fn a_bundle_init_that_fails_halfway_leaves_nothing() {
    let s = Sandboxed::new();
    let object = stored_hello(&s);
    let kept = std::fs::read(&object).unwrap();
    std::fs::remove_file(&object).unwrap();
    let out = s.home().join("copy");
    let init = |s: &Sandboxed| {
        s.run(&[
            "bundle",
            "init",
            out.to_str().unwrap(),
            "--from-task",
            "team/hello",
        ])
    };
    let r = init(&s);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(r.stderr.contains("; nothing was written"), "{}", r.both());
    assert!(!out.exists(), "half a bundle left");
    let partial: Vec<_> = std::fs::read_dir(s.home())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("partial"))
        .collect();
    assert!(partial.is_empty(), "{partial:?}");
    std::fs::write(&object, kept).unwrap();
    let r = init(&s);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(out.join("artifacts/greeting/hello.txt").is_file());
}

/// An object that changed after its artifact was put (another size than recorded) is not loaded as
/// the artifact's.
#[test]
fn an_object_changed_after_the_put_is_not_loaded() {
    let s = Sandboxed::new();
    let object = stored_hello(&s);
    std::fs::write(&object, "TAMPERED, and longer\n").unwrap();
    let r = s.run(&["task", "run", "team/hello"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stdout.contains("of the artifact 'team/greeting' v1 is not as it was put: ")
            && r.stdout.contains("holds 21 bytes, but the artifact recorded 12; the object store's copy was changed or damaged since"),
        "{}",
        r.both()
    );
    // Nor is it copied into a bundle.
    let out = s.home().join("copy");
    let r = s.run(&[
        "bundle",
        "init",
        out.to_str().unwrap(),
        "--from-task",
        "team/hello",
    ]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr
            .contains("of the artifact 'team/greeting' v1 is not as it was put: "),
        "{}",
        r.both()
    );
    assert!(!out.exists());
}

/// Ctrl-C during `artifact put` lets the file being written finish, then stops: exit 130, no version
/// recorded, and what it wrote under which prefix said.
/// Starts `artifact put FOLDER --id team/greeting` against an object store plugin that takes half
/// a second a file, sends it Ctrl-C as its first file is being written, and returns how it ended.
fn put_stopped_during_its_first_file(
    s: &Sandboxed,
    folder: &std::path::Path,
) -> std::process::Output {
    use crate::support::shell_store::{ShellStore, REFUSE};
    let started = s.dir.path().join("put-started");
    let on_call = format!(
        r#"case "$line" in
        *'"method":"store.object.put_file"'*) touch {}; sleep 0.5
          printf '{{"jsonrpc":"2.0","id":%s,"result":{{"url":"slow://b/x"}}}}\n' "$id" ;;
        *) {REFUSE} ;;
      esac"#,
        started.display()
    );
    ShellStore {
        package: "agentenv-slow-objects",
        class: "SlowObjects",
        kind: "object",
        on_open: "",
        on_call: &on_call,
    }
    .install(&s.plugins(), "slow");
    s.write(
        ".agentenv/config.toml",
        "[stores.object]\nimpl = \"agentenv-slow-objects:SlowObjects\"\n",
    );
    let child = s
        .command(&[
            "artifact",
            "put",
            folder.to_str().unwrap(),
            "--id",
            "team/greeting",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !started.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(started.exists(), "the put never began");
    // SAFETY: sends a signal to the child this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_put_stopped_by_a_signal_records_nothing_and_says_what_it_wrote() {
    let s = Sandboxed::new();
    let folder = greeting(&s, "hello there\n");
    let out = put_stopped_during_its_first_file(&s, &folder);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("stopped by a signal after writing 1 of 3 files to the object store under artifacts/file_artifact_universe/team/greeting/")
            && stderr.contains("no version was recorded"),
        "{stderr}"
    );
    let got = s.run(&["artifact", "get", "team/greeting"]);
    assert_eq!(got.code, 1, "no version recorded: {}", got.both());
}

/// A signal while the folder's only (or last) file is written: the file is finished, and no version
/// is recorded all the same.
#[test]
fn a_put_stopped_during_its_last_file_records_nothing() {
    let s = Sandboxed::new();
    let folder = s.dir.path().join("work/one-file");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("model.bin"), b"weights").unwrap();
    let out = put_stopped_during_its_first_file(&s, &folder);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("stopped by a signal after writing 1 of 1 file to the object store under ")
            && stderr.contains("no version was recorded"),
        "{stderr}"
    );
    let got = s.run(&["artifact", "get", "team/greeting"]);
    assert_eq!(got.code, 1, "no version recorded: {}", got.both());
}

/// A put whose first file the store refuses says, as any other failed put, that no version was
/// recorded and what to do.
#[test]
fn a_put_whose_first_file_fails_says_nothing_was_recorded() {
    use crate::support::shell_store::{ShellStore, REFUSE};
    let s = Sandboxed::new();
    let folder = greeting(&s, "hello there\n");
    ShellStore {
        package: "agentenv-full-objects",
        class: "FullObjects",
        kind: "object",
        on_open: "",
        on_call: &format!(
            r#"case "$line" in
        *'"method":"store.object.put_file"'*)
          printf '{{"jsonrpc":"2.0","id":%s,"error":{{"code":-32000,"message":"the bucket is full","data":{{"kind":"io-error"}}}}}}\n' "$id" ;;
        *) {REFUSE} ;;
      esac"#
        ),
    }
    .install(&s.plugins(), "full");
    s.write(
        ".agentenv/config.toml",
        "[stores.object]\nimpl = \"agentenv-full-objects:FullObjects\"\n",
    );
    let r = s.run(&[
        "artifact",
        "put",
        folder.to_str().unwrap(),
        "--id",
        "team/greeting",
    ]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr.contains("the bucket is full; it stopped with none of its 3 files written whole to the object store under artifacts/file_artifact_universe/team/greeting/")
            && r.stderr.contains("no version was recorded; put the folder again"),
        "{}",
        r.stderr
    );
}

/// `artifact put --json` and `task put --json` tell a script the version each put stored; a `task
/// put` that fails part-way still names the tasks it stored before the failure.
#[test]
fn puts_tell_a_script_the_versions_they_stored() {
    let s = Sandboxed::new();
    let folder = greeting(&s, "hello there\n");
    let task = hello_loading(&s, "team/greeting");
    let json = |args: &[&str]| -> serde_json::Value {
        let r = s.run(args);
        assert_eq!(r.code, 0, "{}", r.both());
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.both()))
    };
    let folder_path = folder.clone();
    let folder = folder.to_str().unwrap();
    for (version, unchanged, why) in [
        (1, false, serde_json::Value::Null),
        (1, true, serde_json::Value::Null),
        (2, false, serde_json::json!("hello.txt changed")),
    ] {
        if version == 2 {
            std::fs::write(folder_path.join("hello.txt"), "hello again\n").unwrap();
        }
        let put = json(&["artifact", "put", folder, "--id", "team/greeting", "--json"]);
        assert_eq!(put["id"], "team/greeting", "{put}");
        assert_eq!(put["version"], version, "{put}");
        assert_eq!(put["unchanged"], unchanged, "{put}");
        assert_eq!(put["why"], why, "{put}");
        // A folder of several files, with no artifact.toml, is a universe of files.
        assert_eq!(put["type"], "file_artifact_universe", "{put}");
        assert_eq!(put["files"], 3, "{put}");
        // Both stores on this machine: nothing to warn of.
        assert!(put.get("warnings").is_none(), "{put}");
    }
    let task = task.to_str().unwrap();
    let put = json(&["task", "put", task, "--id", "team/hello", "--json"]);
    assert_eq!(
        put["tasks"],
        serde_json::json!([{"id": "team/hello", "version": 1, "file": task, "unchanged": false}]),
        "{put}"
    );

    let missing = s.home().join("missing.json");
    let partly = s.run(&[
        "task",
        "put",
        task,
        missing.to_str().unwrap(),
        task,
        "--json",
    ]);
    assert_eq!(partly.code, 1, "{}", partly.both());
    let doc: serde_json::Value = serde_json::from_str(&partly.stdout).unwrap();
    assert_eq!(doc["status"], "error", "{doc}");
    assert_eq!(doc["tasks"].as_array().unwrap().len(), 1, "{doc}");
    assert!(
        doc["error"].as_str().unwrap().contains("missing.json"),
        "{doc}"
    );
    // The put stops at the file that failed, and says so of the ones after it.
    assert!(
        partly.stderr.contains(&format!(
            "the files after it were not stored either ({task})"
        )),
        "{}",
        partly.both()
    );
}

/// A put of a task whose steps are those of its latest version stores nothing and says the version
/// it still is, in text and JSON; a changed task is the next version, as before.
#[test]
fn task_put_of_an_unchanged_task_stores_nothing_and_says_its_version() {
    let s = Sandboxed::new();
    let steps = r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
 {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "check",
  "criteria": [{"type": "bash_cmd_succeeds", "command": "test -d ."}]}]"#;
    let file = s.write("check.json", steps);
    let file = file.to_str().unwrap();
    let put = s.run(&["task", "put", file, "--id", "team/check"]);
    assert_eq!(put.code, 0, "{}", put.both());
    assert_eq!(put.stdout, "team/check: v1\n");

    let again = s.run(&["task", "put", file, "--id", "team/check"]);
    assert_eq!(again.code, 0, "{}", again.both());
    assert_eq!(
        again.stdout,
        "team/check: v1, unchanged (its latest version has the same steps, so nothing was stored)\n"
    );
    let v2 = s.run(&["task", "get", "team/check", "--version", "2"]);
    assert_eq!(v2.code, 1, "{}", v2.both());
    assert!(
        v2.stderr.contains("its newest version is v1"),
        "{}",
        v2.stderr
    );

    // The same steps written another way (the object form, keys in another order) are the same task.
    let reordered = s.write(
        "check-object.json",
        r#"{"steps": [{"type": "deploy_sandbox", "sandbox_name": "box", "id": "box"},
 {"criteria": [{"command": "test -d .", "type": "bash_cmd_succeeds"}], "verifier_id": "check",
  "sandbox_name": "box", "type": "verify_sandbox", "id": "check"}]}"#,
    );
    let json = s.run(&[
        "task",
        "put",
        reordered.to_str().unwrap(),
        "--id",
        "team/check",
        "--json",
    ]);
    assert_eq!(json.code, 0, "{}", json.both());
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["tasks"][0]["version"], 1, "{doc}");
    assert_eq!(doc["tasks"][0]["unchanged"], true, "{doc}");

    // A changed task is the next version, and says it is not unchanged.
    let changed = s.write("check.json", &steps.replace("test -d .", "test -d /"));
    let json = s.run(&[
        "task",
        "put",
        changed.to_str().unwrap(),
        "--id",
        "team/check",
        "--json",
    ]);
    assert_eq!(json.code, 0, "{}", json.both());
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["tasks"][0]["version"], 2, "{doc}");
    assert_eq!(doc["tasks"][0]["unchanged"], false, "{doc}");
    // Putting the first version's steps back is a new version too: only the latest is compared.
    let back = s.write("check.json", steps);
    let put = s.run(&["task", "put", back.to_str().unwrap(), "--id", "team/check"]);
    assert_eq!(put.stdout, "team/check: v3\n", "{}", put.both());
}

/// A put of a folder whose files are its artifact's latest version stores nothing and says the
/// version it still is; the same files once their objects are gone from the store, or with the
/// object store configured elsewhere since, are stored again as the next version.
#[test]
fn artifact_put_of_unchanged_files_stores_nothing_unless_the_store_lost_them() {
    let s = Sandboxed::new();
    let folder = greeting(&s, "hello there\n");
    let folder = folder.to_str().unwrap();
    let put = |says: &str| {
        let r = s.run(&["artifact", "put", folder, "--id", "team/greeting"]);
        assert_eq!((r.code, r.stdout.as_str()), (0, says), "{}", r.both());
    };
    put("team/greeting: v1 (file_artifact_universe, 3 files)\n");
    let objects = walk(&s.state().join("object_store/artifacts"));
    put("team/greeting: v1, unchanged (its latest version has the same files, so nothing was stored)\n");
    assert_eq!(walk(&s.state().join("object_store/artifacts")), objects);

    std::fs::remove_dir_all(s.state().join("object_store/artifacts")).unwrap();
    put("team/greeting: v2 (file_artifact_universe, 3 files; its v1 objects are not in the configured object store as they were put)\n");

    let elsewhere = s.dir.path().join("other-objects");
    s.write(
        ".agentenv/config.toml",
        &format!(
            "[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = {{ root = \"{}\" }}\n",
            elsewhere.display()
        ),
    );
    put("team/greeting: v3 (file_artifact_universe, 3 files; its v2 objects are not in the configured object store as they were put)\n");
    put("team/greeting: v3, unchanged (its latest version has the same files, so nothing was stored)\n");
}

/// A put that stores a new version says why its latest one would not do: the files added, removed or
/// changed, the settings or the type changed.
#[test]
fn artifact_put_of_a_changed_folder_says_what_changed() {
    let s = Sandboxed::new();
    let folder = s.home().join("words");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("a.txt"), "a").unwrap();
    let path = folder.to_str().unwrap();
    let put = |says: &str| {
        let r = s.run(&["artifact", "put", path, "--id", "team/words"]);
        assert_eq!((r.code, r.stdout.as_str()), (0, says), "{}", r.both());
    };
    put("team/words: v1 (file, 1 file)\n");
    std::fs::write(folder.join("b.txt"), "b").unwrap();
    put("team/words: v2 (file_artifact_universe, 2 files; type changed: file → file_artifact_universe; b.txt added)\n");
    std::fs::rename(folder.join("b.txt"), folder.join("c.txt")).unwrap();
    // The same size, other bytes: changed all the same.
    std::fs::write(folder.join("a.txt"), "A").unwrap();
    put("team/words: v3 (file_artifact_universe, 2 files; c.txt added, b.txt removed, a.txt changed)\n");
    std::fs::write(
        folder.join("artifact.toml"),
        "type = \"file_artifact_universe\"\nmode = \"strict\"\n",
    )
    .unwrap();
    put("team/words: v4 (file_artifact_universe, 2 files; settings changed: mode)\n");
    put("team/words: v4, unchanged (its latest version has the same files, so nothing was stored)\n");
}

/// A document store other machines may share (here a plugin's) with the built-in local object
/// store: what an artifact put records points at this machine's files. `config check` notes what to
/// do if other machines share it (nothing says they do), and each `artifact put` warns of it once, in
/// its JSON document too.
#[test]
fn a_put_recording_local_files_in_a_shared_document_store_warns() {
    let s = Sandboxed::new();
    crate::support::install_store_fixture(
        &s.plugins(),
        "documents",
        ("agentenv-fixture-documents", "0.1.0"),
        "fixture-documents",
        ("DiskDocumentStore", "document"),
    );
    s.write(
        ".agentenv/config.toml",
        &format!(
            "[stores.document]\nimpl = \"agentenv-fixture-documents:DiskDocumentStore\"\nconfig = {{ root = \"{}\" }}\n",
            s.dir.path().join("team-docs").display()
        ),
    );
    let says = "the document store is DiskDocumentStore ([stores.document]), which other machines may share, but the object store is LocalFilesystemObjectStore (the built-in default), which keeps its files on this machine: artifacts put through the shared document store will point at this machine's local files (file:// URLs), which teammates cannot read (their task run fails at its load_artifact step); set [stores.object] to a shared store (S3ObjectStore, or a plugin's)";

    let check = s.run(&["config", "check"]);
    assert_eq!(check.code, 0, "{}", check.both());
    assert!(
        check.stdout.contains("note: if other machines share the document store DiskDocumentStore ([stores.document]), a plugin's, set [stores.object] to a shared store too"),
        "{}",
        check.both()
    );
    assert!(!check.stdout.contains(says), "{}", check.both());

    let folder = greeting(&s, "hello there\n");
    let folder = folder.to_str().unwrap();
    let put = s.run(&["artifact", "put", folder, "--id", "team/greeting"]);
    assert_eq!(put.code, 0, "{}", put.both());
    assert_eq!(put.stderr.matches(says).count(), 1, "{}", put.stderr);
    let put = s.run(&["artifact", "put", folder, "--id", "team/greeting", "--json"]);
    assert_eq!(put.code, 0, "{}", put.both());
    let doc: serde_json::Value = serde_json::from_str(&put.stdout).unwrap();
    assert_eq!(doc["warnings"], serde_json::json!([says]), "{doc}");
}

/// A link in the folder that leads outside it is named before its files are stored, as a run names
/// a bundle's: a file read through it (stored as the artifact's own) and a folder (left out).
#[test]
fn a_link_leading_outside_the_folder_is_named_before_it_is_stored() {
    let s = Sandboxed::new();
    let folder = greeting(&s, "hello\n");
    let secret = s.write("secret.txt", "not for sharing");
    std::os::unix::fs::symlink(&secret, folder.join("more/out.txt")).unwrap();
    let outdir = s.home().join("outdir");
    std::fs::create_dir_all(&outdir).unwrap();
    std::os::unix::fs::symlink(&outdir, folder.join("od")).unwrap();
    std::os::unix::fs::symlink("hello.txt", folder.join("near.txt")).unwrap();
    let shown = folder.to_str().unwrap();
    let put = s.run(&["artifact", "put", shown, "--id", "team/linked", "--json"]);
    assert_eq!(put.code, 0, "{}", put.both());
    let file_note = "more/out.txt of ";
    assert!(
        put.stderr
            .contains(&format!("note: {file_note}{shown} is a symbolic link to ")),
        "{}",
        put.stderr
    );
    assert!(
        put.stderr
            .contains("outside the folder: artifact put stores that file as the artifact's own"),
        "{}",
        put.stderr
    );
    assert!(
        put.stderr.contains(&format!(
            "note: od of {shown} is a symbolic link to the folder "
        )),
        "{}",
        put.stderr
    );
    assert!(!put.stderr.contains("near.txt"), "{}", put.stderr);
    let doc: serde_json::Value = serde_json::from_str(&put.stdout).unwrap();
    let warnings = doc["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 2, "{doc:#}");
    assert!(
        warnings[0].as_str().unwrap().starts_with(file_note),
        "{doc:#}"
    );
}

/// A read of the configured document store where it was never made, on a state folder this user
/// may not write (read-only), finds nothing, as it does on a writable disk: it creates no database,
/// and says no such artifact or task, not that the database cannot be opened.
#[test]
fn a_read_of_a_store_never_made_on_a_read_only_folder_finds_nothing() {
    let s = Sandboxed::new();
    let ran = s.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let folder = s.state().join("document_store");
    for (args, said) in [
        (
            &["artifact", "get", "team/art1"][..],
            "no artifact 'team/art1'",
        ),
        (&["task", "get", "team/x"][..], "no task 'team/x'"),
    ] {
        let ran =
            crate::task_instances::as_a_user_the_folder_stops(&s, args, &folder, 0o755, 0o555);
        assert_eq!(ran.code, 1, "{args:?}: {}", ran.both());
        assert!(ran.stderr.contains(said), "{args:?}: {}", ran.both());
        assert!(
            !ran.stderr.contains("unable to open"),
            "{args:?}: {}",
            ran.both()
        );
        assert!(!folder.join("documents.db").exists(), "{args:?}");
    }
}

/// The files of the object store's `artifacts/` folder, relative to the store.
fn stored_objects(s: &Sandboxed) -> Vec<std::path::PathBuf> {
    let root = s.state().join("object_store");
    let mut found: Vec<_> = walk(&root.join("artifacts"))
        .into_iter()
        .map(|p| p.strip_prefix(&root).unwrap().to_path_buf())
        .collect();
    found.sort();
    found
}

/// A put stopped part-way (here by the store refusing its last file) is gone on with by the next
/// put of the same folder, which writes only the files not written yet and records one version; a
/// file unchanged since the latest version is not stored again.
#[test]
fn a_put_stopped_part_way_is_gone_on_with_and_an_unchanged_file_is_stored_once() {
    let s = Sandboxed::new();
    let folder = greeting(&s, "hello there\n");
    let folder = folder.to_str().unwrap();
    // Where the files go depends on them alone: a put of the same files elsewhere shows where.
    let elsewhere = Sandboxed::new();
    let other = greeting(&elsewhere, "hello there\n");
    let r = elsewhere.run(&[
        "artifact",
        "put",
        other.to_str().unwrap(),
        "--id",
        "team/greeting",
    ]);
    assert_eq!(r.code, 0, "{}", r.both());
    let keys = stored_objects(&elsewhere);
    assert_eq!(keys.len(), 3, "{keys:?}");
    let notes = keys.iter().find(|k| k.ends_with("more/notes.md")).unwrap();
    // A file where the folder `more` of more/notes.md's key goes: the store refuses that file.
    let blocker = s.state().join("object_store").join(notes.parent().unwrap());
    std::fs::create_dir_all(blocker.parent().unwrap()).unwrap();
    std::fs::write(&blocker, "in the way").unwrap();
    let stopped = s.run(&["artifact", "put", folder, "--id", "team/greeting"]);
    assert_eq!(stopped.code, 1, "{}", stopped.both());
    assert!(
        stopped.stderr.contains("after writing 2 of 3 files to the object store under ")
            && stopped.stderr.contains("; no version was recorded, so nothing uses them yet, and a put of the same folder goes on from them (it writes only the files not there); put the folder again"),
        "{}",
        stopped.stderr
    );
    std::fs::remove_file(&blocker).unwrap();
    let before = stored_objects(&s);
    assert_eq!(before.len(), 2, "{before:?}");

    let put = |says: &str| {
        let r = s.run(&["artifact", "put", folder, "--id", "team/greeting"]);
        assert_eq!((r.code, r.stdout.as_str()), (0, says), "{}", r.both());
    };
    put("team/greeting: v1 (file_artifact_universe, 3 files)\n");
    assert_eq!(stored_objects(&s), keys, "written again, or elsewhere");

    // hello.txt changed: only it is stored.
    std::fs::write(s.home().join("greeting/hello.txt"), "hello again\n").unwrap();
    put("team/greeting: v2 (file_artifact_universe, 3 files; hello.txt changed)\n");
    assert_eq!(stored_objects(&s).len(), 4, "{:?}", stored_objects(&s));
    // Back as v1 had it: nothing is stored, v1's object serves again.
    std::fs::write(s.home().join("greeting/hello.txt"), "hello there\n").unwrap();
    put("team/greeting: v3 (file_artifact_universe, 3 files; hello.txt changed)\n");
    assert_eq!(stored_objects(&s).len(), 4, "{:?}", stored_objects(&s));

    // Each version loads as it was put.
    let task = hello_loading(&s, "team/greeting");
    let r = s.run(&["task", "put", task.to_str().unwrap(), "--id", "team/hello"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let ran = s.run(&["task", "run", "team/hello"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
}

/// An object of the latest version changed in the store since its put, its size the same, is not
/// named by the next version though its file is unchanged: the file is written anew, the new
/// version says why, and it verifies and loads whole.
#[test]
fn an_object_changed_in_the_store_at_its_size_is_not_named_by_the_next_version() {
    let s = Sandboxed::new();
    let folder = greeting(&s, "hello there\n");
    let folder = folder.to_str().unwrap();
    let put = |says: &str| {
        let r = s.run(&["artifact", "put", folder, "--id", "team/greeting"]);
        assert_eq!((r.code, r.stdout.as_str()), (0, says), "{}", r.both());
    };
    put("team/greeting: v1 (file_artifact_universe, 3 files)\n");
    let root = s.state().join("object_store");
    let check = stored_objects(&s)
        .into_iter()
        .find(|k| k.ends_with("check.sh"))
        .unwrap();
    let text = std::fs::read_to_string(root.join(&check)).unwrap();
    std::fs::write(root.join(&check), text.to_uppercase()).unwrap();
    std::fs::write(s.home().join("greeting/hello.txt"), "hello again\n").unwrap();
    put("team/greeting: v2 (file_artifact_universe, 3 files; hello.txt changed; its v1 objects are not in the configured object store as they were put)\n");
    let got = s.run(&["artifact", "get", "team/greeting", "--verify"]);
    assert_eq!(got.code, 0, "{}", got.both());
    // v1's object is left as it was found (objects are write-once).
    assert_eq!(
        std::fs::read_to_string(root.join(&check)).unwrap(),
        text.to_uppercase()
    );
    let task = hello_loading(&s, "team/greeting");
    let r = s.run(&["task", "put", task.to_str().unwrap(), "--id", "team/hello"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let ran = s.run(&["task", "run", "team/hello"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
}

/// The same for an object a stopped put left under the prefix the files go to: one changed since
/// is not taken as the file's.
#[test]
fn an_object_a_stopped_put_left_that_changed_since_is_written_anew() {
    let s = Sandboxed::new();
    let folder = greeting(&s, "hello there\n");
    let elsewhere = Sandboxed::new();
    let other = greeting(&elsewhere, "hello there\n");
    let r = elsewhere.run(&[
        "artifact",
        "put",
        other.to_str().unwrap(),
        "--id",
        "team/greeting",
    ]);
    assert_eq!(r.code, 0, "{}", r.both());
    // What a stopped put left at hello.txt's key, damaged since at its size.
    let hello = stored_objects(&elsewhere)
        .into_iter()
        .find(|k| k.ends_with("hello.txt"))
        .unwrap();
    let left = s.state().join("object_store").join(&hello);
    std::fs::create_dir_all(left.parent().unwrap()).unwrap();
    std::fs::write(&left, "HELLO THERE\n").unwrap();
    let r = s.run(&[
        "artifact",
        "put",
        folder.to_str().unwrap(),
        "--id",
        "team/greeting",
    ]);
    assert_eq!(r.code, 0, "{}", r.both());
    let got = s.run(&["artifact", "get", "team/greeting", "--verify"]);
    assert_eq!(got.code, 0, "{}", got.both());
    assert_eq!(std::fs::read_to_string(&left).unwrap(), "HELLO THERE\n");
}

/// A put stopped part-way counts, as written under its prefix, only the files there: the files
/// unchanged since the latest version, whose objects it names again, are said apart.
#[test]
fn a_stopped_put_counts_apart_the_files_the_latest_version_stores() {
    let s = Sandboxed::new();
    let folder = greeting(&s, "hello there\n");
    let folder = folder.to_str().unwrap();
    let r = s.run(&["artifact", "put", folder, "--id", "team/greeting"]);
    assert_eq!(r.code, 0, "{}", r.both());
    // Where the changed files go: a put of them elsewhere shows it.
    let elsewhere = Sandboxed::new();
    let other = greeting(&elsewhere, "hello again\n");
    std::fs::write(other.join("more/notes.md"), "new notes").unwrap();
    let r = elsewhere.run(&[
        "artifact",
        "put",
        other.to_str().unwrap(),
        "--id",
        "team/greeting",
    ]);
    assert_eq!(r.code, 0, "{}", r.both());
    let notes = stored_objects(&elsewhere)
        .into_iter()
        .find(|k| k.ends_with("more/notes.md"))
        .unwrap();
    // A file where the folder `more` goes: the store refuses more/notes.md, the last file.
    let blocker = s.state().join("object_store").join(notes.parent().unwrap());
    std::fs::create_dir_all(blocker.parent().unwrap()).unwrap();
    std::fs::write(&blocker, "in the way").unwrap();
    std::fs::write(s.home().join("greeting/hello.txt"), "hello again\n").unwrap();
    std::fs::write(s.home().join("greeting/more/notes.md"), "new notes").unwrap();
    let stopped = s.run(&["artifact", "put", folder, "--id", "team/greeting"]);
    assert_eq!(stopped.code, 1, "{}", stopped.both());
    assert!(
        stopped.stderr.contains("it stopped after writing 1 of 3 files to the object store under artifacts/file_artifact_universe/team/greeting/")
            && stopped.stderr.contains(" (1 more is the latest version's, stored already); no version was recorded, so nothing uses it yet, and a put of the same folder goes on from it"),
        "{}",
        stopped.stderr
    );
}

/// Ctrl-C while `artifact put` hashes a large file stops the hashing where it is (the notice says
/// that is what it stops, not a file being written), rather than after the file's last byte: exit
/// 130, nothing written, no version recorded. The file is a sparse terabyte, whose whole sha256 no
/// test would wait for.
#[test]
fn a_put_signalled_while_it_hashes_a_large_file_stops_the_hashing() {
    let s = Sandboxed::new();
    let folder = s.home().join("huge");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::File::create(folder.join("huge.bin"))
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    let (mut child, screen) = agent_env_test_support::terminal::stderr_on_a_terminal(s.command(&[
        "artifact",
        "put",
        folder.to_str().unwrap(),
        "--id",
        "team/huge",
    ]));
    // Looked at for up to a minute; a put that never hashes is stopped here, not left reading.
    let hashing = (0..600).any(|_| {
        let seen = screen.so_far().contains("Hashing huge.bin (1 of 1, ");
        if !seen {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        seen
    });
    if !hashing {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the hashing was never shown: {:?}", screen.finish());
    }
    // SAFETY: sends a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let stopped = (0..1200).find_map(|_| {
        let status = child.try_wait().unwrap();
        if status.is_none() {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        status
    });
    if stopped.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let shown = screen.finish().replace("\r\n", "\n");
    let status = stopped.unwrap_or_else(|| panic!("the hashing went on after Ctrl-C: {shown:?}"));
    assert_eq!(status.code(), Some(130), "{shown:?}");
    assert!(
        shown.contains(
            "Stopping the hashing of huge.bin; nothing was written; another Ctrl-C stops at once\n"
        ),
        "{shown:?}"
    );
    assert!(!shown.contains("file being written"), "{shown:?}");
    assert!(
        shown.contains("stopped by a signal before writing any file; nothing was written"),
        "{shown:?}"
    );
    let got = s.run(&["artifact", "get", "team/huge"]);
    assert_eq!(got.code, 1, "no version recorded: {}", got.both());
}
