//! Black-box runs of the shipped `hello` bundle (reference scenarios 15, 16, 20, 21, 23).

use crate::support::run::{has_suffix_id, mask_durations, Sandboxed};

const INSTANCE_PREFIX: &str = "@local/agentenv-framework/hello/hello-";

/// A team's shared config names an API key for the tools that use the model; this agent-env reads
/// no `[model]` or `[conversations]`, so a reference there that does not resolve here stops no run,
/// and `config check` still says it.
#[test]
fn a_reference_in_a_section_agent_env_does_not_read_stops_no_run() {
    let s = Sandboxed::new();
    s.write(
        ".agentenv/config.toml",
        "[model]\napi_key = \"env:OPENAI_API_KEY_NOT_SET\"\n[conversations]\ndefault_human_a2a_url = \"env:HUMAN_URL_NOT_SET\"\n",
    );
    let r = s.run(&["run", "hello", "-q"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let check = s.run(&["config", "check"]);
    assert_eq!(check.code, 1, "{}", check.both());
    assert!(
        check.stdout.contains("OPENAI_API_KEY_NOT_SET"),
        "{}",
        check.stdout
    );
}

#[test]
fn a_first_run_of_hello_prints_the_reference_output_and_tears_down() {
    let s = Sandboxed::new();
    let r = s.run(&["run", "hello"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let instance = has_suffix_id(&r.stdout, INSTANCE_PREFIX).expect("an instance id");
    let expected = format!(
        "artifacts/greeting: v1 (new)
tasks/hello.json: v1 (new)
[tasks/hello.json] step 1/3 box (deploy_sandbox)
[tasks/hello.json] step 1/3 box done in N.Ns
[tasks/hello.json] step 2/3 load (load_artifact)
[tasks/hello.json] step 2/3 load done in N.Ns
[tasks/hello.json] step 3/3 hello (verify_sandbox)
[tasks/hello.json] step 3/3 hello done in N.Ns
[tasks/hello.json] passed in N.Ns

Tasks:
  tasks/hello.json v1: passed (hello: 1), N.Ns, instance {instance}

Tore down 1 sandbox.
"
    );
    assert_eq!(mask_durations(&r.stdout), expected);
    assert!(s.sandboxes_left().is_empty(), "{:?}", s.sandboxes_left());
}

#[test]
fn a_second_run_reuses_both_versions_and_records_two_completed_instances() {
    let s = Sandboxed::new();
    let first = s.run(&["run", "hello"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let second = s.run(&["run", "hello"]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(second
        .stdout
        .starts_with("artifacts/greeting: v1, unchanged\ntasks/hello.json: v1, unchanged\n"));
    let a = has_suffix_id(&first.stdout, INSTANCE_PREFIX).unwrap();
    let b = has_suffix_id(&second.stdout, INSTANCE_PREFIX).unwrap();
    assert_ne!(a, b);
    let instances = s.docs("task_instances");
    assert_eq!(instances.len(), 2);
    for i in &instances {
        assert_eq!(i["status"], "completed");
        assert_eq!(i["task_version"], 1);
        // The end to the microsecond, in the form of the start, so the two order and subtract.
        let (started, ended) = (
            i["started_at_utc"].as_str().unwrap(),
            i["ended_at_utc"].as_str().unwrap(),
        );
        assert_eq!(started.len(), ended.len(), "{started} {ended}");
        // Which version of its artifact it loaded.
        let loaded = &i["context"]["metadata"]["loaded_artifacts"][0];
        assert_eq!(
            loaded["artifact_id"], "@local/agentenv-framework/hello/greeting",
            "{i:#}"
        );
        assert_eq!(loaded["version"], 1);
        assert_eq!(loaded["step_id"], "load");
        assert!(
            ended.ends_with('Z') && ended >= started,
            "{started} {ended}"
        );
        assert_eq!(
            i["context"]["metadata"]["verifications"]["hello"]["score"],
            1.0
        );
        let rows = i["context"]["metadata"]["verifications"]["hello"]["results"]
            .as_array()
            .unwrap();
        assert_eq!(rows.len(), 2);
        for (index, row) in rows.iter().enumerate() {
            assert_eq!(row["criterion_index"], index);
            assert_eq!(row["result"], true);
            assert_eq!(row["skipped"], false);
            assert!(row["justification"].is_string());
        }
        let steps: Vec<&str> = i["completed_steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["step_id"].as_str().unwrap())
            .collect();
        assert_eq!(steps, ["box", "load", "hello"]);
    }
    // Nothing was written twice.
    assert_eq!(s.docs("tasks").len(), 1);
    let universes: Vec<_> = s
        .docs("artifacts")
        .into_iter()
        .filter(|d| d["type"] == "file_artifact_universe")
        .collect();
    assert_eq!(universes.len(), 1);
}

#[test]
fn records_go_to_local_db_and_objects_under_the_ids_key_segment() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    assert!(!s.state().join("document_store/documents.db").exists());
    for collection in ["tasks", "artifacts", "task_instances", "bundle_ledger"] {
        assert!(!s.docs(collection).is_empty(), "no {collection}");
    }
    let task = &s.docs("tasks")[0];
    assert_eq!(task["id"], "@local/agentenv-framework/hello/hello");
    assert_eq!(task["type"], "task");
    let steps = task["steps"].as_array().unwrap();
    assert_eq!(
        steps[1]["artifact_id"],
        "@local/agentenv-framework/hello/greeting"
    );
    for step in steps {
        assert_eq!(step["fail_task_on_error"], true);
        assert!(step["version"].is_number());
    }
    let segment = s.state().join(
        "object_store/artifacts/file_artifact_universe/local/agentenv-framework-hello-greeting-cdbe393f04fc",
    );
    let attempts: Vec<String> = std::fs::read_dir(&segment)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(attempts.len(), 1);
    // Named by the files' content, not by chance.
    let attempt = &attempts[0];
    assert!(
        attempt.len() == 32 && attempt.bytes().all(|b| b.is_ascii_hexdigit()),
        "{attempt}"
    );
    assert_eq!(
        std::fs::read_to_string(segment.join(attempt).join("hello.txt")).unwrap(),
        "hello\n"
    );
    let ledger = s.docs("bundle_ledger");
    assert_eq!(ledger.len(), 2);
    assert!(ledger
        .iter()
        .all(|r| r["status"] == "done" && r["bundle"] == "@local/agentenv-framework/hello"));
    // Each file of the universe is a `file` artifact with a derived id.
    let files: Vec<_> = s
        .docs("artifacts")
        .into_iter()
        .filter(|d| d["type"] == "file")
        .collect();
    assert_eq!(files.len(), 2);
    assert!(files.iter().all(|f| f["id"]
        .as_str()
        .unwrap()
        .starts_with("@local/agentenv-framework/hello/greeting__")));
}

/// Started with no PATH at all (`env -i`), agent-env still finds bash for a criterion where
/// execvp(3) would look.
#[test]
fn hello_passes_with_no_path_in_the_environment() {
    let s = Sandboxed::new();
    let out = s.command(&["run", "hello"]).env_remove("PATH").output();
    let r = agent_env_test_support::Ran::from(out.unwrap());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("tasks/hello.json v1: passed (hello: 1)"),
        "{}",
        r.stdout
    );
}

/// `--model` is the context's `agent_model`, where a step reads it; every override is also kept in
/// `metadata.user_overrides`.
#[test]
fn the_model_options_reach_the_task_context() {
    let s = Sandboxed::new();
    let r = s.run(&[
        "run",
        "hello",
        "--model",
        "m-agent",
        "--judge-model",
        "m-judge",
    ]);
    assert_eq!(r.code, 0, "{}", r.both());
    let context = &s.docs("task_instances")[0]["context"];
    assert_eq!(context["agent_model"], "m-agent", "{context:#}");
    assert_eq!(
        context["metadata"]["user_overrides"],
        serde_json::json!({"agent_model": "m-agent", "judge_model": "m-judge"}),
        "{context:#}"
    );
}

#[test]
fn a_dry_run_on_a_clean_state_writes_nothing() {
    let s = Sandboxed::new();
    let r = s.run(&["run", "--dry-run", "hello"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "Dry run: nothing is written or run.
artifacts/greeting: v1 (new)
tasks/hello.json: v1 (new)
Would run:
  tasks/hello.json v1
Dry run: nothing was written or run.
"
    );
    assert!(!s.state().exists(), "the state root was created");
    assert!(s.sandboxes_left().is_empty());
}

#[test]
fn unknown_and_miscased_tasks_are_refused_before_anything_is_written() {
    let s = Sandboxed::new();
    let r = s.run(&["run", "hello", "--task", "nope"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr.trim(),
        "Error: --task 'nope': this bundle has no task with that name or id; its tasks are 'hello'"
    );
    let r = s.run(&["run", "hello", "--task", "Hello"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr.trim(),
        "Error: --task 'Hello' isn't in this bundle, but 'hello' is; names are case-sensitive"
    );
    assert!(!s.state().exists());
    let r = s.run(&[
        "run",
        "hello",
        "--task",
        "@local/agentenv-framework/hello/hello",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn run_without_a_bundle_lists_the_installed_bundles() {
    let s = Sandboxed::new();
    let r = s.run(&["run"]);
    assert_eq!(r.code, 0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].starts_with("NAME  "), "{}", r.stdout);
    assert!(
        lines[0].contains("PACKAGE")
            && lines[0].contains("CONTENTS")
            && lines[0].contains("DESCRIPTION")
    );
    assert!(lines[1].starts_with("hello  agentenv-framework "));
    let cells: Vec<&str> = lines[1]
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(cells[0], "hello");
    assert!(cells[1].starts_with("agentenv-framework "));
    assert_eq!(cells[2], "1 task");
    assert_eq!(
        cells[3],
        "The smallest bundle: load a greeting into a local sandbox and check it."
    );
    let description_column = lines[0].find("DESCRIPTION").unwrap();
    assert_eq!(lines[1].find("The smallest").unwrap(), description_column);
    assert!(lines[2].starts_with("  "));
    assert_eq!(
        lines.last().unwrap(),
        &"Run one with agent-env run NAME. To change one, write a copy with agent-env bundle init FOLDER --from-bundle NAME and run the copy."
    );
    // The advice works as written, for the bundle built into agent-env too.
    let r = s.run(&["bundle", "init", "my-hello", "--from-bundle", "hello"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stdout.contains("wrote my-hello/tasks/hello.json\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .ends_with("Change it and run it with agent-env run ./my-hello.\n"),
        "{}",
        r.stdout
    );
    let r = s.run(&["run", "./my-hello", "-q"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let r = s.run(&["run", "--keep"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("need a BUNDLE"));
}

#[test]
fn unknown_bundles_get_a_suggestion() {
    let s = Sandboxed::new();
    let r = s.run(&["run", "helo"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr.trim(),
        "Error: 'helo' is neither a folder nor an installed bundle; did you mean 'hello'? (agent-env run lists the installed bundles)"
    );
    let r = s.run(&["run", "./missing"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("./missing: no such folder"),
        "{}",
        r.stderr
    );
}

/// A task file given for the bundle gets the command that runs that task of its bundle.
#[test]
fn a_task_file_given_as_the_bundle_gets_the_command_that_runs_it() {
    let s = Sandboxed::new();
    s.copy_hello("my bundle");
    for (given, command) in [
        (
            "./my bundle/tasks/hello.json",
            "agent-env run './my bundle' --task hello",
        ),
        (
            "my bundle/tasks/hello.json",
            "agent-env run 'my bundle' --task hello",
        ),
        ("./tasks/hello.json", "agent-env run . --task hello"),
    ] {
        let cwd = match given {
            "./tasks/hello.json" => s.home().join("my bundle"),
            _ => s.home(),
        };
        let r = agent_env_test_support::Ran::from(
            s.command(&["run", given])
                .current_dir(cwd)
                .output()
                .unwrap(),
        );
        assert_eq!(r.code, 1, "{}", r.both());
        assert_eq!(
            r.stderr.trim(),
            format!("Error: {given}: a task file, not a bundle; a run takes the bundle's folder and the task's name: {command}")
        );
    }
}

/// State agent-env cannot write stops the run with the folder, the reason and what to do.
#[test]
fn a_locks_folder_that_cannot_be_made_is_explained() {
    let s = Sandboxed::new();
    std::fs::create_dir_all(s.state()).unwrap();
    std::fs::write(s.state().join("locks"), "not a folder").unwrap();
    let r = s.run(&["run", "hello"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr.contains("can't make the locks folder ")
            && r.stderr
                .contains("point XDG_STATE_HOME at a writable place"),
        "{}",
        r.stderr
    );
}

/// An unchanged artifact whose files were removed from the object store (its folder cleaned) is
/// written again as a new version, so the task that loads it passes instead of failing on a missing
/// object; the version after that is reused again.
#[test]
fn an_artifact_whose_files_left_the_object_store_is_written_again() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    std::fs::remove_dir_all(s.state().join("object_store")).unwrap();
    let r = s.run(&["run", "hello"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stdout.starts_with(
            "artifacts/greeting: v2 (its v1 files are missing from the object store: check.sh, hello.txt)\ntasks/hello.json: v1, unchanged\n"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("v1: passed (hello: 1)"), "{}", r.stdout);
    let again = s.run(&["run", "hello"]);
    assert!(
        again
            .stdout
            .starts_with("artifacts/greeting: v2, unchanged\n"),
        "{}",
        again.stdout
    );
}

/// The files of the object store's `artifacts/` folder.
fn artifact_objects(s: &Sandboxed) -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            match entry.path() {
                path if path.is_dir() => walk(&path, out),
                path => out.push(path),
            }
        }
    }
    let mut out = Vec::new();
    walk(&s.state().join("object_store/artifacts"), &mut out);
    out.sort();
    out
}

/// A bundle run whose artifact changed stores only its changed files: the new version names the
/// objects of the files unchanged since the latest one, and a run of the same files as an earlier
/// version stores nothing.
#[test]
fn a_new_artifact_version_stores_only_the_files_that_changed() {
    let s = Sandboxed::new();
    let bundle = s.copy_hello("mine");
    let run = |says: &str| {
        let r = s.run(&["run", "./mine"]);
        assert_eq!(r.code, 0, "{}", r.both());
        assert!(r.stdout.starts_with(says), "{}", r.both());
        assert!(r.stdout.contains(": passed (hello: 1)"), "{}", r.stdout);
    };
    run("artifacts/greeting: v1");
    assert_eq!(artifact_objects(&s).len(), 2, "{:?}", artifact_objects(&s));
    let hello = bundle.join("artifacts/greeting/hello.txt");
    std::fs::write(&hello, "hello again\n").unwrap();
    run("artifacts/greeting: v2");
    let objects = artifact_objects(&s);
    assert_eq!(objects.len(), 3, "check.sh stored twice: {objects:?}");
    // Back as v1 had it (a version the run may write anew or take again): nothing more is stored.
    std::fs::write(&hello, "hello\n").unwrap();
    run("artifacts/greeting: v");
    assert_eq!(artifact_objects(&s), objects);
}

/// A local document store file that is not a database says so and how to start afresh, and the run
/// leaves the file as it found it.
#[test]
fn a_damaged_local_document_store_is_explained_and_left_alone() {
    let s = Sandboxed::new();
    let db = s.state().join("document_store/local.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::write(
        &db,
        "not a database at all, but long enough to look like a header",
    )
    .unwrap();
    for args in [&["run", "hello"][..], &["task", "list"]] {
        let r = s.run(args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.both());
        assert!(
            r.stderr.contains("is not a SQLite database or is damaged")
                && r.stderr
                    .contains(&format!("mv {} {}.damaged", db.display(), db.display())),
            "{args:?}: {}",
            r.stderr
        );
    }
    assert_eq!(
        std::fs::read_to_string(&db).unwrap(),
        "not a database at all, but long enough to look like a header"
    );
}

/// The config's `[sandbox] default` chooses the run's sandbox provider as `--sandbox` does: the first
/// available one of the chain, and a chain with none stops the run, naming the config.
#[test]
fn the_configs_sandbox_default_chooses_the_provider() {
    let s = Sandboxed::new();
    s.write(".agentenv/config.toml", "[sandbox]\ndefault = \"docker\"\n");
    let r = s.run(&["run", "hello"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr.contains("[sandbox] default in ")
            && r.stderr.contains("'docker': no sandbox provider of that name is available; the built-in one is 'local'"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("step 1/"), "nothing ran: {}", r.stdout);
    s.write(
        ".agentenv/config.toml",
        "[sandbox]\ndefault = \"docker, local\"\n",
    );
    let r = s.run(&["run", "hello"]);
    assert_eq!(r.code, 0, "{}", r.both());
}

/// A bundle run whose artifact changed does not name an object of the latest version that was
/// changed in the store since (its size the same): the file is stored anew, and the task loads the
/// new version whole.
#[test]
fn a_new_artifact_version_does_not_name_an_object_changed_in_the_store() {
    let s = Sandboxed::new();
    let bundle = s.copy_hello("mine");
    let run = |says: &str| {
        let r = s.run(&["run", "./mine"]);
        assert_eq!(r.code, 0, "{}", r.both());
        assert!(r.stdout.starts_with(says), "{}", r.both());
        assert!(r.stdout.contains(": passed (hello: 1)"), "{}", r.stdout);
    };
    run("artifacts/greeting: v1");
    let check = artifact_objects(&s)
        .into_iter()
        .find(|p| p.ends_with("check.sh"))
        .unwrap();
    let text = std::fs::read_to_string(&check).unwrap();
    std::fs::write(&check, text.to_uppercase()).unwrap();
    std::fs::write(bundle.join("artifacts/greeting/hello.txt"), "hello again\n").unwrap();
    run("artifacts/greeting: v2");
    assert_eq!(artifact_objects(&s).len(), 4, "{:?}", artifact_objects(&s));
}
