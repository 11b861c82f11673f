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

/// A criterion's pattern that is not a string says so, with what it got; a field given under both
/// its names (ours and the Python original's, or `path` beside `paths`) saying two things is
/// refused, not read as one of them in silence; under both names saying one thing it is read.
#[test]
fn a_criterion_says_its_wrong_pattern_and_may_not_give_one_field_twice() {
    let s = Sandboxed::new();
    s.write(
        "bundle/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "aggregator": "all_pass", "score_aggregator": "any_pass",
             "criteria": [
               {"type": "probe_file_contains", "path": "a", "expected": 5},
               {"type": "bash_cmd_succeeds", "command": "true", "bash_cmd": "false"},
               {"type": "probe_file_exists", "path": "a", "paths": ["b"]},
               {"type": "probe_file_contains", "paths": ["a"], "expected": "x", "value": "y"},
               {"type": "probe_file_contains", "path": "a", "paths": ["a"], "expected": "x", "value": "x"}
             ]}]"#,
    );
    let problems = problems_of(&s);
    let step = "tasks/t.json: step 'v': verify_sandbox can't read it";
    for said in [
        format!("{step} (criterion 1 (probe_file_contains): 'expected' must be a string (a regular expression), got 5)"),
        format!("{step} (criterion 2 (bash_cmd_succeeds) gives both 'command' and 'bash_cmd', two names of one field, and they differ: keep one (only 'command' would be read))"),
        format!("{step} (criterion 3 (probe_file_exists) gives both 'paths' and 'path', two names of one field, and they differ: keep one (only 'paths' would be read))"),
        format!("{step} (criterion 4 (probe_file_contains) gives both 'expected' and 'value', two names of one field, and they differ: keep one (only 'expected' would be read))"),
        format!("{step} (the step gives both 'aggregator' and 'score_aggregator', two names of one field, and they differ: keep one (only 'aggregator' would be read))"),
    ] {
        assert_says(&problems, &said);
    }
    assert_eq!(problems.len(), 5, "{problems:#?}");
}

/// A field of two names given as null under one is not given there, as everywhere: the other name
/// is read (`"command": null` beside `"bash_cmd": "true"` runs `true`), for a criterion's command,
/// its pattern and the step's aggregator alike.
#[test]
fn a_null_under_one_name_of_a_field_leaves_the_other_to_be_read() {
    let s = Sandboxed::new();
    s.write(
        "bundle/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box", "sandbox_mode": "vm", "sandbox_type": "local"},
            {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "aggregator": null, "score_aggregator": "any_pass",
             "criteria": [
               {"type": "bash_cmd_succeeds", "command": null, "bash_cmd": "true"},
               {"type": "probe_file_contains", "path": "a", "expected": null, "value": "x"}
             ]}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./bundle"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(!r.stderr.contains("can't read it"), "{}", r.both());
}

/// A value of the wrong kind is quoted, with what to write when that is plain: one step id for
/// `depends_on`'s list, one task name for an eval's.
#[test]
fn a_value_of_the_wrong_kind_is_quoted_with_what_to_write() {
    let s = Sandboxed::new();
    s.write(
        "bundle/tasks/t.json",
        r#"[{"id": "v", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "w", "type": "deploy_sandbox", "sandbox_name": "b2", "depends_on": "v",
             "fail_task_on_error": "no"},
            {"id": "x", "type": "deploy_sandbox", "sandbox_name": "b3", "depends_on": ["v", 5]}]"#,
    );
    s.write("bundle/evals/e.toml", "tasks = \"t\"\n");
    s.write("bundle/evals/f.toml", "tasks = []\n");
    let problems = problems_of(&s);
    for said in [
        r#"tasks/t.json: step 'w': depends_on must be a list of step ids, got "v": write ["v"]"#,
        r#"tasks/t.json: step 'w': fail_task_on_error must be true or false, got "no""#,
        "tasks/t.json: step 'x': depends_on must be a list of step ids, and it holds 5",
        r#"evals/e.toml: tasks must be a non-empty list of task names or ids, got a string: write tasks = ["t"]"#,
        "evals/f.toml: tasks must be a non-empty list of task names or ids, got an empty list",
    ] {
        assert_says(&problems, said);
    }
    assert_eq!(problems.len(), 5, "{problems:#?}");
}

/// A task file that is empty, or holds a comment, is told so: not the JSON reader's "EOF while
/// parsing a value at line 1 column 0" or "expected value".
#[test]
fn an_empty_task_file_and_a_comment_in_one_are_said_as_such() {
    let s = Sandboxed::new();
    s.write("bundle/tasks/empty.json", "\n");
    s.write(
        "bundle/tasks/commented.json",
        "[\n  // the sandbox\n  {\"id\": \"box\", \"type\": \"deploy_sandbox\", \"sandbox_name\": \"box\"}\n]",
    );
    let problems = problems_of(&s);
    assert_eq!(
        problems,
        [
            "tasks/commented.json: isn't valid JSON: JSON allows no comments, and one starts at line 2, column 3: remove it",
            "tasks/empty.json: is empty: a task file holds its steps, as a JSON array of step objects ([{\"id\": …, \"type\": …}, …]) or an object with a \"steps\" array",
        ]
    );
}

/// A task file in the object form with a key nothing reads (a near miss of `steps`, a `name`) says
/// so in a note, rather than ignoring it in silence; the keys of the document `task get ID --json`
/// prints are read without a note.
#[test]
fn a_key_of_a_task_file_object_that_nothing_reads_is_noted() {
    let s = Sandboxed::new();
    s.write(
        "bundle/tasks/t.json",
        r#"{"steps": [{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}],
            "step": [], "title": "x", "type": "task", "version": 2, "created_at_utc": "2026-01-01T00:00:00Z"}"#,
    );
    let r = s.run(&["run", "--dry-run", "./bundle"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let notes: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("note: tasks/t.json"))
        .collect();
    assert_eq!(
        notes,
        [
            "note: tasks/t.json gives the key 'step', which a task file does not read: did you mean 'steps'?",
            "note: tasks/t.json gives the key 'title', which a task file does not read (it reads 'steps', and the 'id' agent-env task put takes)",
        ],
        "{}",
        r.both()
    );
}

/// What `task get ID --json` prints, for a task a bundle run recorded (@local, with its `name` and
/// `bundle`) and for a stored one, is a task file a bundle run reads without a note of any key.
#[test]
fn what_task_get_json_prints_is_a_task_file_with_no_unread_key() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    let local = s.run(&[
        "task",
        "get",
        "@local/agentenv-framework/hello/hello",
        "--json",
    ]);
    assert_eq!(local.code, 0, "{}", local.both());
    s.write("bundle/tasks/local.json", &local.stdout);
    s.write(
        "stored.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );
    let put = s.run(&["task", "put", "./stored.json", "--id", "team/stored"]);
    assert_eq!(put.code, 0, "{}", put.both());
    let stored = s.run(&["task", "get", "team/stored", "--json"]);
    assert_eq!(stored.code, 0, "{}", stored.both());
    s.write("bundle/tasks/stored.json", &stored.stdout);
    s.write("bundle/artifacts/greeting/hello.txt", "hello\n");
    s.write("bundle/artifacts/greeting/check.sh", "true\n");
    let r = s.run(&["run", "--dry-run", "./bundle"]);
    let notes: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("which a task file does not read"))
        .collect();
    assert!(notes.is_empty(), "{}", r.both());
}

/// What a bundle's parse notes (a task file's key nothing reads, its own `id`, a file in a kind
/// folder that is not of its kind) is in `run --json`'s warnings too, with the file's path, as it is
/// on stderr.
#[test]
fn what_a_bundle_run_does_not_read_is_among_the_json_warnings() {
    let s = Sandboxed::new();
    s.write(
        "bundle/tasks/t.json",
        r#"{"id": "team/t", "step": [], "steps": [{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]}"#,
    );
    s.write("bundle/tasks/notes.yaml", "x: 1\n");
    let r = s.run(&["run", "--dry-run", "--json", "./bundle"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let warnings: Vec<(String, String)> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["path"].as_str().unwrap_or("null").to_string(),
                w["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (path, message) in [
        ("tasks/notes.yaml", "tasks/notes.yaml is not read: a task is a .json file"),
        ("tasks/t.json", "tasks/t.json gives the id 'team/t', which a bundle run does not read: a bundle's task is named by its file, so this one is 't' (agent-env task put reads the id)"),
        ("tasks/t.json", "tasks/t.json gives the key 'step', which a task file does not read: did you mean 'steps'?"),
    ] {
        assert!(
            warnings.contains(&(path.to_string(), message.to_string())),
            "{message}\nnot among {warnings:#?}"
        );
        assert!(r.stderr.contains(&format!("note: {message}")), "{}", r.stderr);
    }
    // Said once on the terminal.
    assert_eq!(
        r.stderr.matches("did you mean 'steps'?").count(),
        1,
        "{}",
        r.stderr
    );
}

/// An artifact type one letter off a known one (`fil`) says which it likely means, beside the
/// known ones.
#[test]
fn an_artifact_type_near_a_known_one_says_which() {
    let s = Sandboxed::new();
    s.write("bundle/artifacts/g/artifact.toml", "type = \"fil\"\n");
    s.write("bundle/artifacts/g/f.txt", "x\n");
    s.write(
        "bundle/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );
    let problems = problems_of(&s);
    assert_says(
        &problems,
        "artifacts/g/artifact.toml: 'fil' is not a known artifact type; the known ones are cli, docker_image, environment, environment_universe, file, file_artifact_universe, skill; did you mean 'file'?",
    );
}

/// `task put` of a file with keys given twice says every one, with its step and line:column, as a
/// bundle run says them of the same file, and the file's other problems with them.
#[test]
fn task_put_says_every_key_given_twice_as_a_run_does() {
    let s = Sandboxed::new();
    let text = "[{\"id\": \"box\", \"type\": \"deploy_sandbox\", \"sandbox_name\": \"a\",\n  \"sandbox_name\": \"b\"},\n {\"id\": \"v\", \"type\": \"verify_sandbox\", \"sandbox_name\": \"b\", \"criteria\": [], \"criteria\": []},\n \"stray\"]";
    let file = s.write("dup.json", text);
    s.write("bundle/tasks/dup.json", text);
    let put = s.run(&["task", "put", file.to_str().unwrap(), "--id", "team/dup"]);
    assert_eq!(put.code, 1, "{}", put.both());
    let problems = problems_of(&s);
    for said in [
        "step 1 ('box') has the key 'sandbox_name' twice (line 2, column 3), and only the last would be read: keep the one you mean",
        "step 2 ('v') has the key 'criteria' twice (line 3, column 77), and only the last would be read: keep the one you mean",
    ] {
        assert_says(&problems, &format!("tasks/dup.json: {said}"));
        assert!(
            put.stderr.contains(&format!("dup.json: {said}")),
            "{said}\n{}",
            put.both()
        );
    }
    assert!(
        put.stderr
            .contains("dup.json: step 3 is \"stray\", not a step object"),
        "{}",
        put.both()
    );
}

/// An eval names its tasks in the forms `run --task` takes (a name, a path in the bundle, an id),
/// and one near a task's name says which it likely means, as `run --task` does.
#[test]
fn an_eval_takes_a_tasks_path_and_says_the_name_it_likely_means() {
    let s = Sandboxed::new();
    for name in ["hello", "other"] {
        s.write(
            &format!("bundle/tasks/{name}.json"),
            r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
        );
    }
    s.write(
        "bundle/evals/e.toml",
        "tasks = [\"helo\", \"tasks/other.json\", \"./tasks/hello.json\", \"tasks/othr.json\"]\n",
    );
    let problems = problems_of(&s);
    assert_eq!(
        problems,
        [
            "evals/e.toml: 'helo' is not a task of this bundle; an eval in a bundle runs the bundle's own tasks; did you mean 'hello'?",
            "evals/e.toml: 'othr' is not a task of this bundle; an eval in a bundle runs the bundle's own tasks; did you mean 'other'?",
        ]
    );
    s.write(
        "bundle/evals/e.toml",
        "tasks = [\"tasks/other.json\", \"./tasks/hello.json\"]\n",
    );
    let r = s.run(&["run", "--dry-run", "--json", "./bundle"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let paths: Vec<&str> = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["tasks/hello.json", "tasks/other.json"], "{doc:#}");
}

/// One file's problems come in the order of its keys and steps, not sorted by their text; files in
/// the order their tasks run (t2 before t10).
#[test]
fn one_files_problems_come_in_the_order_they_are_found() {
    let s = Sandboxed::new();
    s.write(
        "bundle/tasks/t1.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );
    s.write("bundle/evals/e10.toml", "tasks = [\"zeta\", \"alpha\"]\n");
    s.write("bundle/evals/e2.toml", "tasks = [\"yak\", \"bee\"]\n");
    let names: Vec<String> = problems_of(&s)
        .iter()
        .map(|p| p.split('\'').nth(1).unwrap_or_default().to_string())
        .collect();
    assert_eq!(names, ["yak", "bee", "zeta", "alpha"]);
}

/// A folder named near a kind folder (task/ for tasks/) says which it likely means: in the problem
/// of a folder that has no kind folder, and beside the kind folders in a note (and `--json`'s
/// warnings), since what it holds is not read.
#[test]
fn a_folder_named_near_a_kind_folder_says_which_it_likely_means() {
    let s = Sandboxed::new();
    let step = r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#;
    s.write("bundle/task/t.json", step);
    s.write("bundle/artifact/g/f.txt", "x\n");
    s.write("bundle/notes/n.txt", "x\n");
    assert_eq!(
        problems_of(&s),
        ["~/bundle: not a bundle: it has none of envs/, agents/, artifacts/, skills/, tasks/, evals/; did you mean artifacts/ for artifact/, tasks/ for task/?"]
    );
    s.write("bundle/tasks/t.json", step);
    let r = s.run(&["run", "--dry-run", "--json", "./bundle"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let said = [
        "artifact/ is not read: a bundle's folders are envs/, agents/, artifacts/, skills/, tasks/, evals/; did you mean artifacts/?",
        "task/ is not read: a bundle's folders are envs/, agents/, artifacts/, skills/, tasks/, evals/; did you mean tasks/?",
    ];
    for sentence in said {
        assert!(
            r.stderr.contains(&format!("note: {sentence}")),
            "{}",
            r.both()
        );
    }
    assert!(!r.stderr.contains("notes/"), "{}", r.both());
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let warnings: Vec<(&str, &str)> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["path"].as_str().unwrap_or("null"),
                w["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        warnings,
        [("artifact", said[0]), ("task", said[1])],
        "{doc:#}"
    );
}

/// A name that is not UTF-8 is refused for what it names: in an artifact's folder, a file of the
/// artifact, whose name its record could not hold (no id is made of it); as an artifact's folder,
/// an id, refused on its own: the artifacts beside it are read, so a task loading one of them is
/// not told that the bundle has none.
#[test]
fn a_name_that_is_not_utf8_is_refused_for_what_it_names() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let s = Sandboxed::new();
    s.write(
        "bundle/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "greeting", "destination_path": "/app"}]"#,
    );
    s.write("bundle/artifacts/greeting/a.txt", "hello\n");
    let artifacts = s.home().join("bundle/artifacts");
    let in_artifact = artifacts
        .join("greeting")
        .join(OsStr::from_bytes(b"caf\xe9.txt"));
    std::fs::write(&in_artifact, "x").unwrap();
    assert_eq!(
        problems_of(&s),
        [
            r#"artifacts/greeting: can't be read: the name $'caf\xe9.txt' is not UTF-8 text, and an artifact's record lists each of its files by its path as UTF-8 text, which can't hold this name; rename the file"#
        ]
    );
    std::fs::remove_file(&in_artifact).unwrap();
    let folder = artifacts.join(OsStr::from_bytes(b"gr\xfc"));
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("a.txt"), "x").unwrap();
    assert_eq!(
        problems_of(&s),
        [
            r#"artifacts: the name $'gr\xfc' is not UTF-8 text; rename the folder (task and artifact ids are made of file names)"#
        ]
    );
}

/// A bundle whose artifacts/ folder can't be read (here a named pipe in it, which refuses the
/// listing as root too; a folder this user may not read does the same) says that, why and what to
/// do, and only that: a task loading one of its artifacts is not told that the bundle has none, nor
/// that the name is no artifact of the bundle, which no one knows until the folder is read.
#[test]
fn an_artifacts_folder_that_cannot_be_read_is_not_said_to_hold_no_artifacts() {
    let s = Sandboxed::new();
    s.write(
        "bundle/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "greeting", "destination_path": "/app"}]"#,
    );
    s.write("bundle/artifacts/greeting/a.txt", "hello\n");
    let pipe = s.home().join("bundle/artifacts/p");
    let made = std::process::Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .unwrap();
    assert!(made.success());
    let problems = problems_of(&s);
    assert_eq!(
        problems,
        [format!(
            "artifacts: can't be read: {} is a named pipe (FIFO), not a regular file; a bundle or an artifact holds files and folders only, so remove it",
            pipe.display()
        )]
    );
}

/// An artifacts/ folder this user may not read (chmod 000; as root, the run is made as nobody, who
/// then owns the temp folders) is said to be one, with the permission to give, and a task loading one
/// of its artifacts is not told that the bundle has none.
#[test]
fn an_artifacts_folder_this_user_may_not_read_says_which_permission_it_lacks() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let s = Sandboxed::new();
    s.write(
        "bundle/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "greeting", "destination_path": "/app"}]"#,
    );
    s.write("bundle/artifacts/greeting/a.txt", "hello\n");
    let mut cmd = s.command(&["run", "--dry-run", "--json", "./bundle"]);
    // SAFETY: geteuid only reads this process's effective user id.
    if unsafe { libc::geteuid() } == 0 {
        const NOBODY: u32 = 65534;
        fn chown_all(path: &std::path::Path) {
            std::os::unix::fs::lchown(path, Some(NOBODY), Some(NOBODY)).unwrap();
            if path.is_dir() && !path.is_symlink() {
                for entry in std::fs::read_dir(path).unwrap() {
                    chown_all(&entry.unwrap().path());
                }
            }
        }
        chown_all(s.dir.path());
        cmd.uid(NOBODY).gid(NOBODY);
    }
    let artifacts = s.home().join("bundle/artifacts");
    std::fs::set_permissions(&artifacts, std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = cmd.output().unwrap();
    std::fs::set_permissions(&artifacts, std::fs::Permissions::from_mode(0o755)).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        doc["problems"],
        serde_json::json!([
            "~/bundle/artifacts: can't be read: this user may not list the folder (Permission denied (os error 13)); let it read and enter artifacts/ (chmod a+rx artifacts, as the folder's owner)"
        ]),
        "{doc:#}"
    );
}
