//! `agent-env task list` and `task get-instance`: past runs' task instances read back from the local
//! store, newest first, filtered by bundle and task, as a table or JSON; one instance with its scores,
//! steps and timings, and the failed step's error.

use serde_json::Value;

use crate::support::run::Sandboxed;

const FAILING: &str = r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
  {"id": "boom", "type": "verify_sandbox", "sandbox_name": "elsewhere", "verifier_id": "v", "criteria": []}]"#;

fn json(s: &Sandboxed, args: &[&str]) -> Value {
    let r = s.run(args);
    assert_eq!(r.code, 0, "{}", r.both());
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.both()))
}

#[test]
fn past_instances_are_listed_newest_first_and_filtered() {
    let s = Sandboxed::new();
    let empty = s.run(&["task", "list"]);
    assert_eq!(empty.code, 0, "{}", empty.both());
    assert!(
        empty.stdout.starts_with("No task instances recorded yet"),
        "{}",
        empty.stdout
    );

    assert_eq!(s.run(&["run", "hello"]).code, 0);
    s.write("broken/tasks/fails.json", FAILING);
    assert_eq!(s.run(&["run", "./broken"]).code, 1);
    assert_eq!(s.run(&["run", "hello"]).code, 0);

    let all = json(&s, &["task", "list", "--json"]);
    assert_eq!(all["format_version"], 1);
    let rows = all["instances"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{all}");
    let statuses: Vec<&str> = rows.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(
        statuses,
        ["completed", "failed", "completed"],
        "newest first: {all}"
    );
    assert_eq!(rows[0]["scores"]["hello"], 1.0);
    assert_eq!(rows[0]["task_id"], "@local/agentenv-framework/hello/hello");
    assert_eq!(rows[0]["task_version"], 1);

    let hello = json(&s, &["task", "list", "--bundle", "hello", "--json"]);
    assert_eq!(hello["instances"].as_array().unwrap().len(), 2, "{hello}");
    let fails = json(&s, &["task", "list", "--task", "fails", "--json"]);
    assert_eq!(fails["instances"].as_array().unwrap().len(), 1, "{fails}");
    assert_eq!(fails["instances"][0]["status"], "failed");
    let one = json(&s, &["task", "list", "--limit", "1", "--json"]);
    assert_eq!(one["instances"].as_array().unwrap().len(), 1);

    let table = s.run(&["task", "list"]);
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert!(lines[0].starts_with("INSTANCE"), "{}", table.stdout);
    assert!(
        lines[1].contains("completed") && lines[1].contains("hello: 1"),
        "{}",
        table.stdout
    );
    assert!(lines[2].contains("failed"), "{}", table.stdout);
    // The TASK column's id is whole, as the INSTANCE column's is: it names the task to the other
    // commands (`task get` reads a bundle's task by its @local id alone).
    assert!(
        lines[1].contains("  @local/agentenv-framework/hello/hello v1  "),
        "{}",
        table.stdout
    );
    for listed in [
        "@local/agentenv-framework/hello/hello",
        "agentenv-framework/hello/hello",
    ] {
        let shown = json(&s, &["task", "instances", listed, "--json"]);
        assert_eq!(shown["instances"].as_array().unwrap().len(), 2, "{shown}");
    }
    let instances = s.run(&["task", "instances", "hello"]);
    assert!(
        instances
            .stdout
            .contains("  @local/agentenv-framework/hello/hello v1  "),
        "{}",
        instances.stdout
    );
    assert_eq!(
        s.run(&["task", "get", "@local/agentenv-framework/hello/hello"])
            .code,
        0
    );

    // A name that names no task at all is a typo, not "none yet": for a person and for a script.
    let typo = s.run(&["task", "instances", "helo"]);
    assert_eq!(typo.code, 1, "{}", typo.both());
    assert!(
        typo.stderr
            .contains("no task 'helo' is recorded in the local or the configured document store"),
        "{}",
        typo.stderr
    );
    let typo = s.run(&["task", "list", "--task", "helo", "--json"]);
    assert_eq!(typo.code, 1, "{}", typo.both());
    let doc: Value = serde_json::from_str(&typo.stdout).unwrap();
    assert!(
        doc["error"].as_str().unwrap().contains("no task 'helo'"),
        "{doc}"
    );
    // A task of another bundle is no typo: the filter just leaves nothing.
    let none = json(
        &s,
        &[
            "task", "list", "--bundle", "hello", "--task", "fails", "--json",
        ],
    );
    assert_eq!(none["instances"], serde_json::json!([]), "{none}");
}

#[test]
fn one_instance_shows_its_steps_timings_and_failure() {
    let s = Sandboxed::new();
    s.write("broken/tasks/fails.json", FAILING);
    assert_eq!(s.run(&["run", "./broken"]).code, 1);
    let listed = json(&s, &["task", "list", "--json"]);
    let full_id = listed["instances"][0]["instance_id"]
        .as_str()
        .unwrap()
        .to_string();
    let short = full_id.rsplit('/').next().unwrap().to_string();

    let r = s.run(&["task", "get-instance", &short]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stdout.contains(&format!("instance:  {full_id}\n")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("status:    failed\n"), "{}", r.stdout);
    assert!(r.stdout.contains("\n  box success in "), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("failed step boom: RuntimeError: Sandbox 'elsewhere' not found in context.deployed_sandboxes"),
        "{}",
        r.stdout
    );

    let doc = json(&s, &["task", "get-instance", &full_id, "--json"]);
    assert_eq!(doc["instance_id"], full_id.as_str());
    let first = &doc["completed_steps"][0];
    assert_eq!(first["step_id"], "box");
    assert!(first["duration_seconds"].as_f64().is_some(), "{doc}");

    let missing = s.run(&["task", "get-instance", "nope-12345678"]);
    assert_eq!(missing.code, 1, "{}", missing.both());
    assert!(
        missing.stderr.contains("no task instance 'nope-12345678' in the local or the configured document store; agent-env task list shows the recorded ones"),
        "{}",
        missing.stderr
    );
}

/// The instance of a task that is still running is in the store, `running`, with the steps it has
/// finished: it is written behind the run while the task runs, not only when it ends.
#[test]
fn a_running_tasks_instance_shows_the_steps_it_finished() {
    let s = Sandboxed::new();
    let gate = s.home().join("gate");
    s.write_waiting_bundle(&gate);
    let mut run = s
        .command(&["run", "./slow"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let waited = std::time::Instant::now();
    let running = loop {
        // The store is made by the run's first write.
        let stored = if s.local_db().exists() {
            s.docs("task_instances")
        } else {
            Vec::new()
        };
        let found = stored.into_iter().find(|d| d["current_step"] == 1);
        if let Some(doc) = found {
            break doc;
        }
        if waited.elapsed() > std::time::Duration::from_secs(60) {
            let _ = run.kill();
            panic!("the running task's instance never showed its first step");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    assert_eq!(running["status"], "running", "{running}");
    assert_eq!(running["completed_steps"][0]["step_id"], "box", "{running}");
    std::fs::write(&gate, "").unwrap();
    assert!(run.wait().unwrap().success());
    let done = s.docs("task_instances");
    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!(done[0]["status"], "completed");
    assert_eq!(done[0]["current_step"], 2);
    assert_eq!(done[0]["instance_id"], running["instance_id"]);
}

/// A stored task's id is a path of names: an empty one, or one with empty or `..` segments, is refused
/// before anything is written.
#[test]
fn a_stored_task_id_that_is_no_path_of_names_is_refused() {
    let s = Sandboxed::new();
    let file = s.write(
        "t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );
    let file = file.to_str().unwrap();
    for id in ["", "../up", "team//x/"] {
        let r = s.run(&["task", "put", file, "--id", id]);
        assert_eq!(r.code, 1, "{id:?}: {}", r.both());
        assert!(
            r.stderr.contains(&format!(
                "id '{id}' has an empty, '.' or '..' path segment; a stored task's id is a path of names"
            )),
            "{}",
            r.stderr
        );
    }
    let r = s.run(&["task", "put", file, "--id", "team/box"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert_eq!(s.run(&["task", "get", ""]).code, 1);

    // A one-name id: no instances yet says how to make one; the list shows the id as it is.
    assert_eq!(s.run(&["task", "put", file, "--id", "solo"]).code, 0);
    let none = s.run(&["task", "instances", "solo"]);
    assert!(
        none.stdout.starts_with(
            "No instances of 'solo' recorded yet. Run it with agent-env task run solo"
        ),
        "{}",
        none.both()
    );
    assert_eq!(s.run(&["task", "run", "solo"]).code, 0);
    let listed = s.run(&["task", "list"]);
    assert!(listed.stdout.contains(" solo v1 "), "{}", listed.stdout);
}

/// What `task get ID --json` prints, put again, keeps its id: the document's `id` is the default,
/// before the file's name; `--id` still wins.
#[test]
fn a_stored_task_document_put_again_keeps_its_id() {
    let s = Sandboxed::new();
    let file = s.write(
        "t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );
    let r = s.run(&["task", "put", file.to_str().unwrap(), "--id", "team/box"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let got = s.run(&["task", "get", "team/box", "--json"]);
    assert_eq!(got.code, 0, "{}", got.both());
    let exported = s.write("exported.json", &got.stdout);
    let again = s.run(&["task", "put", exported.to_str().unwrap()]);
    assert_eq!(again.code, 0, "{}", again.both());
    // The same steps: the version it is, stored again as nothing.
    assert_eq!(
        again.stdout,
        "team/box: v1, unchanged (its latest version has the same steps, so nothing was stored)\n"
    );
    let renamed = s.run(&[
        "task",
        "put",
        exported.to_str().unwrap(),
        "--id",
        "team/copy",
    ]);
    assert_eq!(renamed.stdout, "team/copy: v1\n", "{}", renamed.both());
}

/// hello's task loads an artifact from its bundle; as a stored task it can load only what the
/// configured store holds, and the refusal names the task once and says so.
#[test]
fn a_stored_task_naming_an_artifact_the_store_lacks_is_refused_by_its_id() {
    let s = Sandboxed::new();
    let file = s.write(
        "hello.json",
        include_str!("../../bundles/hello/tasks/hello.json"),
    );
    let r = s.run(&["task", "put", file.to_str().unwrap(), "--id", "team/hello"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr.contains(": team/hello: step 'load': artifact_id: there is no artifact 'greeting' in the configured store (a stored task loads only stored artifacts): put one with agent-env artifact put FOLDER --id greeting"),
        "{}",
        r.stderr
    );
}

/// `task run --runs N --json` keeps each run apart: its own instance, steps and outcome, though every
/// run has the same task; the lines a person reads name the run.
#[test]
fn every_run_of_a_stored_task_is_its_own_entry_in_the_json_and_its_own_lines() {
    let s = Sandboxed::new();
    let file = s.write(
        "pass.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "criteria": [{"type": "bash_cmd_succeeds", "criterion": "ok", "bash_cmd": "true"}]}]"#,
    );
    let put = s.run(&["task", "put", file.to_str().unwrap(), "--id", "team/pass"]);
    assert_eq!(put.code, 0, "{}", put.both());
    let r = s.run(&["task", "run", "team/pass", "--runs", "3", "--json"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["status"], "passed", "{doc:#}");
    let tasks = doc["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 3);
    let mut ids: Vec<&str> = tasks
        .iter()
        .map(|t| t["instance_id"].as_str().unwrap())
        .collect();
    for t in tasks {
        assert_eq!(t["outcome"], "passed", "{t:#}");
        let steps: Vec<&str> = t["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["step_id"].as_str().unwrap())
            .collect();
        assert_eq!(steps, ["box", "check"], "{t:#}");
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 3, "one instance per run");
    for run in 1..=3 {
        assert!(
            r.stderr.contains(&format!(
                "[team/pass, run {run}] step 1/2 box (deploy_sandbox)"
            )),
            "{}",
            r.stderr
        );
    }
}

/// A score is keyed the same way wherever it shows: by the id of the step whose `verifier_id` it is
/// under, in `run --json` as in `task list` and `task get-instance`.
#[test]
fn scores_are_keyed_by_the_verifying_step_in_run_and_in_the_instance_views() {
    let s = Sandboxed::new();
    let folder = s.copy_hello("keyed");
    let task = folder.join("tasks/hello.json");
    let text = std::fs::read_to_string(&task)
        .unwrap()
        .replace("\"id\": \"hello\"", "\"id\": \"check\"")
        .replace(
            "\"verifier_id\": \"hello\"",
            "\"verifier_id\": \"greeting-ok\"",
        );
    std::fs::write(&task, text).unwrap();
    let ran = json(&s, &["run", "./keyed", "--json"]);
    assert_eq!(ran["tasks"][0]["scores"], serde_json::json!({"check": 1.0}));
    let listed = json(&s, &["task", "list", "--json"]);
    assert_eq!(
        listed["instances"][0]["scores"],
        serde_json::json!({"check": 1.0})
    );
    let id = listed["instances"][0]["instance_id"].as_str().unwrap();
    let shown = s.run(&["task", "get-instance", id]);
    assert!(
        shown.stdout.contains("scores:    check: 1\n"),
        "{}",
        shown.stdout
    );
    let table = s.run(&["task", "list"]);
    assert!(table.stdout.contains(" check: 1 "), "{}", table.stdout);
}

/// `--bundle` takes the folder as `run` was given it (relative, under `~`, absolute) as well as the
/// bundle's name; a filter that matches nothing says so, not that nothing was recorded.
#[test]
fn task_list_takes_the_bundle_folder_as_run_took_it() {
    let s = Sandboxed::new();
    let folder = s.copy_hello("my-hello");
    assert_eq!(s.run(&["run", "./my-hello"]).code, 0);
    let absolute = folder.to_str().unwrap();
    for bundle in ["./my-hello", "my-hello", absolute, "./my-hello/"] {
        let listed = json(&s, &["task", "list", "--bundle", bundle, "--json"]);
        assert_eq!(
            listed["instances"].as_array().map(Vec::len),
            Some(1),
            "--bundle {bundle}: {listed:#}"
        );
    }
    let other = s.copy_hello("other");
    let none = s.run(&["task", "list", "--bundle", other.to_str().unwrap()]);
    assert_eq!(none.code, 0);
    assert_eq!(
        none.stdout,
        format!(
            "None of the 1 recorded task instances matches --bundle {}; agent-env task list shows them all.\n",
            other.display()
        )
    );
    // A script reads the same in the document's warnings.
    let none = json(
        &s,
        &[
            "task",
            "list",
            "--bundle",
            other.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(none["instances"], serde_json::json!([]), "{none:#}");
    assert_eq!(
        none["warnings"],
        serde_json::json!([format!(
            "None of the 1 recorded task instances matches --bundle {}; agent-env task list shows them all.",
            other.display()
        )]),
        "{none:#}"
    );
    // A folder that is not there is a typo, not a bundle with no runs.
    let typo = s.run(&["task", "list", "--bundle", "./my-helo", "--json"]);
    assert_eq!(typo.code, 1, "{}", typo.both());
    let doc: serde_json::Value = serde_json::from_str(&typo.stdout).unwrap();
    assert!(
        doc["error"]
            .as_str()
            .unwrap()
            .starts_with("--bundle ./my-helo: no such folder"),
        "{doc:#}"
    );
}

/// Writers putting the same id at once each get a version of their own: none is lost, none repeated,
/// none refused.
#[test]
fn concurrent_puts_of_one_id_each_get_their_own_version() {
    let s = Sandboxed::new();
    // Eight different tasks under one id (the same steps would be one version, unchanged).
    let files: Vec<String> = (0..8)
        .map(|i| {
            let steps =
                format!(r#"[{{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box{i}"}}]"#);
            let file = s.write(&format!("t{i}.json"), &steps);
            file.to_str().unwrap().to_string()
        })
        .collect();
    let children: Vec<_> = files
        .iter()
        .map(|file| {
            s.command(&["task", "put", file, "--id", "team/raced"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut versions: Vec<String> = children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        })
        .collect();
    versions.sort_by_key(|v| v.rsplit('v').next().unwrap().parse::<u32>().unwrap());
    let expected: Vec<String> = (1..=8).map(|v| format!("team/raced: v{v}")).collect();
    assert_eq!(versions, expected);
}

#[test]
fn a_shared_store_that_does_not_answer_leaves_this_machines_runs_readable() {
    let s = Sandboxed::new();
    // A port nothing listens on: connecting is refused at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    s.write(
        ".agentenv/config.toml",
        &format!(
            "[stores.document]\nimpl = \"PostgresDocumentStore\"\nconfig = {{ dsn = \"postgresql://u:p@127.0.0.1:{port}/db\" }}\n"
        ),
    );
    let ran = s.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    // What could be read is listed; the exit says the list is not whole.
    let listed = s.run(&["task", "list", "--json"]);
    assert_eq!(listed.code, 1, "{}", listed.both());
    let doc: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(
        doc["instances"].as_array().map(Vec::len),
        Some(1),
        "{doc:#}"
    );
    // A script reads what was left out from the document too.
    assert!(
        doc["warnings"][0]
            .as_str()
            .unwrap_or_default()
            .starts_with("the configured document store can't be read"),
        "{doc:#}"
    );
    // Nothing of a stored task here: no answer (exit 1), not "none recorded", since the store left
    // out may hold its runs; a script reads the same in the error document.
    let stored = s.run(&["task", "instances", "team/t"]);
    assert_eq!(stored.code, 1, "{}", stored.both());
    assert!(
        stored.stderr.contains("cannot list the instances of 'team/t': the configured document store, which records the runs of stored tasks, can't be read: PostgresDocumentStore could not reach"),
        "{}",
        stored.both()
    );
    // The way to find out more said once.
    assert_eq!(
        stored.stderr.matches("config check").count(),
        1,
        "{}",
        stored.both()
    );
    let scripted = s.run(&["task", "instances", "team/t", "--json"]);
    assert_eq!(scripted.code, 1, "{}", scripted.both());
    let error: Value = serde_json::from_str(&scripted.stdout).unwrap();
    assert!(
        error["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("cannot list the instances of 'team/t'"),
        "{error:#}"
    );
    let missing = s.run(&["task", "get-instance", "team-nope"]);
    assert_eq!(missing.code, 1, "{}", missing.both());
    assert!(
        missing.stderr.contains(
            "no task instance 'team-nope' in the local document store, and the configured document store, which records the runs of stored tasks, can't be read: PostgresDocumentStore could not reach"
        ),
        "{}",
        missing.stderr
    );
    assert!(
        listed.stderr.starts_with(
            "Warning: the configured document store can't be read, so stored tasks and their instances are left out: PostgresDocumentStore could not reach"
        ),
        "{}",
        listed.stderr
    );
}

/// A task name two bundles share lists both, saying so; more of the id (its end from a `/`) lists
/// one alone.
#[test]
fn a_name_two_bundles_share_is_said_and_the_end_of_an_id_picks_one() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    assert_eq!(
        s.run(&["bundle", "init", "hello1", "--from-bundle", "hello"])
            .code,
        0
    );
    assert_eq!(s.run(&["run", "./hello1"]).code, 0);
    let both = s.run(&["task", "instances", "hello"]);
    assert_eq!(both.code, 0, "{}", both.both());
    assert!(
        both.stderr.contains("'hello' names 2 tasks ("),
        "{}",
        both.both()
    );
    // The id suggested is as the TASK column prints it.
    assert!(
        both.stderr
            .contains("; give more of an id, such as @local/"),
        "{}",
        both.both()
    );
    // Counted whole, though --limit shows only the newest instance.
    let limited = s.run(&["task", "instances", "hello", "--limit", "1"]);
    assert!(
        limited.stderr.contains("'hello' names 2 tasks ("),
        "{}",
        limited.both()
    );
    let one = s.run(&["task", "instances", "hello1/hello", "--json"]);
    assert_eq!(one.code, 0, "{}", one.both());
    let doc: serde_json::Value = serde_json::from_str(&one.stdout).unwrap();
    let rows = doc["instances"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{doc:#}");
    assert!(rows[0]["task_id"]
        .as_str()
        .unwrap()
        .ends_with("/hello1/hello"));
    assert!(!one.stderr.contains("names 2 tasks"), "{}", one.stderr);
}

/// A task name two bundles share is a warning in the `--json` document too, in the words stderr
/// has: a dashboard fed the document alone mixed the two tasks' instances unawares.
#[test]
fn a_name_two_bundles_share_is_a_warning_in_the_json_document() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    assert_eq!(
        s.run(&["bundle", "init", "hello1", "--from-bundle", "hello"])
            .code,
        0
    );
    assert_eq!(s.run(&["run", "./hello1"]).code, 0);
    let lists: [&[&str]; 3] = [
        &["task", "instances", "hello", "--json", "--limit", "0"],
        &["task", "list", "--task", "hello", "--json"],
        // Counted whole, though the limit lists one task's instance alone.
        &["task", "instances", "hello", "--json", "--limit", "1"],
    ];
    for args in lists {
        let r = s.run(args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.both());
        let doc: Value = serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", r.stdout));
        let warnings: Vec<&str> = doc["warnings"]
            .as_array()
            .unwrap_or_else(|| panic!("{args:?}: no warnings: {doc:#}"))
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(warnings.len(), 1, "{args:?}: {doc:#}");
        assert!(
            warnings[0].starts_with("'hello' names 2 tasks ("),
            "{args:?}: {doc:#}"
        );
        assert!(
            r.stderr.contains(&format!("Warning: {}\n", warnings[0])),
            "{args:?}: {}",
            r.both()
        );
    }
    let one = json(&s, &["task", "instances", "hello1/hello", "--json"]);
    assert!(one.get("warnings").is_none(), "{one:#}");
}

/// `task get` reads a task a bundle run recorded by its @local id from the local store, as `task
/// instances` reads its runs: it looked in the configured store alone, which never holds one.
#[test]
fn task_get_reads_a_bundle_task_by_its_local_id() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello", "-q"]).code, 0);
    let id = "@local/agentenv-framework/hello/hello";
    let shown = s.run(&["task", "get", id]);
    assert_eq!(shown.code, 0, "{}", shown.both());
    assert!(
        shown.stdout.starts_with(&format!("task:      {id} v1\n")),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("  hello (verify_sandbox)\n"),
        "{}",
        shown.stdout
    );
    // Run again as a bundle's task, not as a stored one.
    assert!(
        shown
            .stdout
            .ends_with("Run it with agent-env run agentenv-framework/hello --task hello.\n"),
        "{}",
        shown.stdout
    );
    let doc = json(&s, &["task", "get", id, "--json"]);
    assert_eq!(doc["id"], id, "{doc:#}");
    assert_eq!(doc["version"], 1, "{doc:#}");
    let older = s.run(&["task", "get", id, "--version", "2"]);
    assert_eq!(older.code, 1, "{}", older.both());
    assert!(
        older.stderr.contains(&format!(
            "no task '{id}' v2 in the local document store; its newest version is v1"
        )),
        "{}",
        older.stderr
    );
    let missing = s.run(&["task", "get", "@local/agentenv-framework/hello/nope"]);
    assert_eq!(missing.code, 1, "{}", missing.both());
    assert!(
        missing
            .stderr
            .contains("no task '@local/agentenv-framework/hello/nope' in the local document store"),
        "{}",
        missing.stderr
    );
}

/// A name other bundles' tasks share is no warning when `--bundle` narrows it to one task, though
/// the limit cuts the list: the warning counted every task of that name, whatever the bundle.
#[test]
fn a_name_the_bundle_narrows_to_one_task_is_no_warning_when_the_limit_cuts() {
    let s = Sandboxed::new();
    for bundle in ["b1", "b2", "b3"] {
        s.write(
            &format!("{bundle}/tasks/files.json"),
            r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
        );
        let r = s.run(&["run", &format!("./{bundle}"), "-q"]);
        assert_eq!(r.code, 0, "{}", r.both());
    }
    assert_eq!(s.run(&["run", "./b2", "-q"]).code, 0);
    let narrowed = [
        "task", "list", "--bundle", "b2", "--task", "files", "--limit", "1",
    ];
    let text = s.run(&narrowed);
    assert_eq!(text.code, 0, "{}", text.both());
    assert!(
        text.stdout.contains("1 shown, the newest"),
        "{}",
        text.both()
    );
    assert!(!text.stderr.contains("names"), "{}", text.both());
    let doc = json(&s, &[&narrowed[..], &["--json"]].concat());
    assert_eq!(doc["instances"].as_array().unwrap().len(), 1, "{doc:#}");
    assert!(doc.get("warnings").is_none(), "{doc:#}");
    // Without --bundle the name still names all three.
    let shared = s.run(&["task", "list", "--task", "files", "--limit", "1"]);
    assert!(
        shared.stderr.contains("'files' names 3 tasks ("),
        "{}",
        shared.both()
    );
}

/// Each instance listed says how it came out in `run --json`'s words (`outcome`), as the table says
/// it (`completed (scored below 1)`), and `task get-instance --json` says the same: the documents
/// said only `completed` and the scores, leaving a script to judge them.
#[test]
fn each_instance_says_how_it_came_out_as_run_json_and_the_table_do() {
    let s = Sandboxed::new();
    let folder = s.copy_hello("below");
    std::fs::write(folder.join("artifacts/greeting/hello.txt"), "goodbye\n").unwrap();
    s.write("broken/tasks/fails.json", FAILING);
    // Each run's instance and its outcome, as run --json says them.
    let mut ran = Vec::new();
    for (bundle, code) in [("hello", 0), ("./below", 0), ("./broken", 1)] {
        let r = s.run(&["run", bundle, "--json"]);
        assert_eq!(r.code, code, "{}", r.both());
        let doc: Value = serde_json::from_str(&r.stdout).unwrap();
        let task = &doc["tasks"][0];
        ran.push((
            task["instance_id"].as_str().unwrap().to_string(),
            task["outcome"].as_str().unwrap().to_string(),
        ));
    }
    let outcomes: Vec<&str> = ran.iter().map(|(_, o)| o.as_str()).collect();
    assert_eq!(outcomes, ["passed", "scored_below_one", "failed"]);
    let listed = json(&s, &["task", "list", "--json"]);
    let rows = listed["instances"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{listed:#}");
    // Newest first.
    for (row, (id, outcome)) in rows.iter().zip(ran.iter().rev()) {
        assert_eq!(row["instance_id"], id.as_str(), "{listed:#}");
        assert_eq!(row["outcome"], outcome.as_str(), "{listed:#}");
        let shown = json(&s, &["task", "get-instance", id, "--json"]);
        assert_eq!(shown["outcome"], outcome.as_str(), "{shown:#}");
    }
    // The keys there were are all still there.
    assert_eq!(rows[1]["status"], "completed", "{listed:#}");
    assert_eq!(rows[1]["scores"]["hello"], 0.0, "{listed:#}");
    let below = json(&s, &["task", "instances", "below/hello", "--json"]);
    assert_eq!(
        below["instances"][0]["outcome"], "scored_below_one",
        "{below:#}"
    );
    let table = s.run(&["task", "list"]);
    let row_of = |id: &str| {
        table
            .stdout
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("{id}: {}", table.stdout))
            .to_string()
    };
    assert!(
        row_of(&ran[0].0).contains("completed (passed)"),
        "{}",
        table.stdout
    );
    assert!(
        row_of(&ran[1].0).contains("completed (scored below 1)"),
        "{}",
        table.stdout
    );
    assert!(row_of(&ran[2].0).contains("failed"), "{}", table.stdout);
}

/// `task list --json` is written as it is read, an instance at a time, in the very bytes of the
/// whole document pretty-printed at once (what it printed when it held the whole document): keys in
/// the same order, the same indentation, `warnings` after the instances; and a shared task name is
/// still said on stderr.
#[test]
fn a_listed_document_written_as_it_is_read_is_the_whole_one_pretty_printed() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    s.write("broken/tasks/fails.json", FAILING);
    assert_eq!(s.run(&["run", "./broken"]).code, 1);
    assert_eq!(
        s.run(&["bundle", "init", "hello1", "--from-bundle", "hello"])
            .code,
        0
    );
    assert_eq!(s.run(&["run", "./hello1"]).code, 0);
    let lists: [&[&str]; 5] = [
        &["task", "list", "--json", "--limit", "0"],
        &["task", "list", "--json"],
        &["task", "list", "--json", "--limit", "2"],
        &["task", "instances", "hello", "--json", "--limit", "0"],
        &[
            "task", "list", "--bundle", "hello", "--task", "fails", "--json",
        ],
    ];
    for args in lists {
        let r = s.run(args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.both());
        let doc: Value = serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", r.stdout));
        let whole = format!("{}\n", serde_json::to_string_pretty(&doc).unwrap());
        assert_eq!(r.stdout, whole, "{args:?}");
        let keys: Vec<&str> = doc
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let expected: &[&str] = match doc.get("warnings") {
            Some(_) => &["format_version", "instances", "warnings"],
            None => &["format_version", "instances"],
        };
        assert_eq!(keys, expected, "{args:?}");
    }
    let whole = json(&s, &["task", "list", "--json", "--limit", "0"]);
    assert_eq!(
        whole["instances"].as_array().map(Vec::len),
        Some(3),
        "{whole:#}"
    );
    assert!(s
        .run(&["task", "list", "--json", "--limit", "2"])
        .stdout
        .starts_with(
            "{\n  \"format_version\": 1,\n  \"instances\": [\n    {\n      \"completed_at_utc\": "
        ));
    let none = s.run(&[
        "task", "list", "--bundle", "hello", "--task", "fails", "--json",
    ]);
    assert!(
        none.stdout.starts_with(
            "{\n  \"format_version\": 1,\n  \"instances\": [],\n  \"warnings\": [\n    \"None of the 3 recorded"
        ),
        "{}",
        none.stdout
    );
    let shared = s.run(&["task", "instances", "hello", "--json", "--limit", "0"]);
    assert!(
        shared.stderr.contains("'hello' names 2 tasks ("),
        "{}",
        shared.both()
    );
}

/// A task file with a byte order mark is put as a bundle reads one, and a task's name typed in
/// another Unicode form (a combining accent) names the same task.
#[test]
fn a_byte_order_mark_and_another_unicode_form_are_no_obstacle() {
    let s = Sandboxed::new();
    s.write(
        "bom.json",
        "\u{feff}[{\"id\": \"b\", \"type\": \"deploy_sandbox\", \"sandbox_name\": \"b\"}]",
    );
    let put = s.run(&["task", "put", "bom.json", "--id", "team/bom"]);
    assert_eq!(put.code, 0, "{}", put.both());

    let composed = "caf\u{e9}";
    let decomposed = "cafe\u{301}";
    let folder = s.copy_hello("nf");
    std::fs::rename(
        folder.join("tasks/hello.json"),
        folder.join(format!("tasks/{decomposed}.json")),
    )
    .unwrap();
    assert_eq!(s.run(&["run", "./nf", "-q"]).code, 0);
    for name in [composed, decomposed] {
        let listed = s.run(&["task", "instances", name, "--json"]);
        assert_eq!(listed.code, 0, "{name:?}: {}", listed.both());
        let doc: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
        assert_eq!(doc["instances"].as_array().unwrap().len(), 1, "{doc:#}");
    }
}

/// A stored task's run notes what its steps do not read, as a bundle run does, once however many
/// runs it makes; a retry_config's keys are checked too.
#[test]
fn a_stored_tasks_run_says_its_typos_once() {
    let s = Sandboxed::new();
    let file = s.write(
        "typo.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box", "sandbox_mod": "vm"},
            {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "retry_config": {"max_retry": 2},
             "criteria": [{"type": "bash_cmd_succeeds", "bash_cmd": "true"}]}]"#,
    );
    let put = s.run(&["task", "put", file.to_str().unwrap(), "--id", "team/typo"]);
    assert_eq!(put.code, 0, "{}", put.both());
    let r = s.run(&["task", "run", "team/typo", "--runs", "2"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let said = "'sandbox_mod' is not a field it reads: did you mean 'sandbox_mode'?";
    assert_eq!(r.stderr.matches(said).count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("step 'check' retry_config: 'max_retry' is not a field it reads: did you mean 'max_retries'?"),
        "{}",
        r.stderr
    );
}

/// A local store that may not be looked for (here a file stands where its folder would be; a folder
/// this user may not enter does the same) is an error, not a store with no runs.
#[test]
fn task_list_fails_when_the_local_store_cannot_be_looked_for() {
    let s = Sandboxed::new();
    let blocker = s.home().join("not-a-folder");
    std::fs::write(&blocker, "").unwrap();
    let out = s
        .command(&["task", "list", "--json"])
        .env("XDG_STATE_HOME", blocker.join("state"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["status"], "error", "{doc:#}");
    assert!(
        doc["error"]
            .as_str()
            .unwrap()
            .contains("cannot read the recorded task instances: looking for "),
        "{doc:#}"
    );
}

/// A stored task put from a file of one passing step pair, as `team/<name>`.
fn put_passing(s: &Sandboxed, id: &str) {
    let file = s.write(
        "passing.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "criteria": [{"type": "bash_cmd_succeeds", "criterion": "ok", "bash_cmd": "true"}]}]"#,
    );
    let put = s.run(&["task", "put", file.to_str().unwrap(), "--id", id]);
    assert_eq!(put.code, 0, "{}", put.both());
}

/// `--runs` past the bound is refused before anything is planned, naming the bound: ten million
/// runs were each planned before the first started, and the machine ran out of memory.
#[test]
fn too_many_runs_are_refused_naming_the_bound() {
    let s = Sandboxed::new();
    put_passing(&s, "team/soak");
    for runs in ["10001", "99999999999"] {
        let r = s.run(&["task", "run", "team/soak", "--runs", runs]);
        assert_eq!(r.code, 2, "{}", r.both());
        assert!(
            r.stderr.contains(&format!(
                "--runs {runs}: at most 10000 runs in one run group"
            )),
            "{}",
            r.stderr
        );
    }
    let docs = s.run(&["task", "instances", "team/soak", "--json"]);
    assert!(docs.stdout.contains("\"instances\": []"), "{}", docs.both());
    // The help says the bound before a run is refused by it.
    let help = s.run(&["task", "run", "--help"]);
    assert!(help.stdout.contains("(at most 10000)"), "{}", help.both());
}

/// The binary run with `input` on stdin.
fn run_with_stdin(s: &Sandboxed, args: &[&str], input: &str) -> crate::support::run::Ran {
    use std::io::Write;
    let mut child = s
        .command(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    crate::support::run::Ran::from(child.wait_with_output().unwrap())
}

/// `task put -` reads the task from stdin, as `store get -o -` writes to stdout; with no file name
/// to take its id from, it needs `--id` or an id in the document.
#[test]
fn a_task_is_put_from_stdin() {
    let s = Sandboxed::new();
    let steps = r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#;
    let r = run_with_stdin(&s, &["task", "put", "-", "--id", "team/piped"], steps);
    assert_eq!(r.code, 0, "{}", r.both());
    assert_eq!(r.stdout, "team/piped: v1\n");
    let named = format!(r#"{{"id": "team/named", "steps": {steps}}}"#);
    let r = run_with_stdin(&s, &["task", "put", "-"], &named);
    assert_eq!(r.code, 0, "{}", r.both());
    assert_eq!(r.stdout, "team/named: v1\n");
    let r = run_with_stdin(&s, &["task", "put", "-"], steps);
    assert_eq!(r.code, 2, "{}", r.both());
    assert!(
        r.stderr.contains(
            "stdin: a task read from stdin has no file name to be its id: give one with --id"
        ),
        "{}",
        r.stderr
    );
    let r = run_with_stdin(&s, &["task", "put", "-", "--id", "team/empty"], "");
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr
            .contains("stdin was empty: pipe the task's JSON into it"),
        "{}",
        r.stderr
    );
}

/// A table the limit cut says so under it, and one that shows everything does not.
#[test]
fn a_list_cut_by_its_limit_says_so() {
    let s = Sandboxed::new();
    put_passing(&s, "team/few");
    let r = s.run(&["task", "run", "team/few", "--runs", "3"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let said = "2 shown, the newest; more are recorded: --limit 0 shows them all.\n";
    let cut = s.run(&["task", "instances", "team/few", "--limit", "2"]);
    assert!(cut.stdout.contains(said), "{}", cut.stdout);
    assert_eq!(cut.stdout.lines().count(), 1 + 2 + 2, "{}", cut.stdout);
    let listed = s.run(&["task", "list", "--limit", "2"]);
    assert!(listed.stdout.contains(said), "{}", listed.stdout);
    for whole in [
        vec!["task", "instances", "team/few", "--limit", "3"],
        vec!["task", "list"],
    ] {
        let r = s.run(&whole);
        assert!(!r.stdout.contains(" shown, "), "{whole:?}: {}", r.stdout);
    }
    // A script's JSON is as it was: the instances, no line about them.
    let doc = json(&s, &["task", "list", "--limit", "2", "--json"]);
    assert_eq!(doc["instances"].as_array().unwrap().len(), 2, "{doc:#}");
    assert!(doc.get("warnings").is_none(), "{doc:#}");
}

/// Instances started at the same moment are listed in the order of their ids, so a page of a long
/// list ends at a place of its own, the next one read from right after it (each once, past a page of
/// ties too); they came in the order the store happened to keep them.
#[test]
fn instances_started_at_the_same_moment_are_listed_by_id() {
    use agent_env::stores::DocumentStore;
    let s = Sandboxed::new();
    let configured = agent_env::stores::LocalSqliteDocumentStore::new(
        s.state().join("document_store").join("documents.db"),
    );
    let ids: Vec<String> = (0..210).map(|n| format!("team/tied-{n:04}")).collect();
    for id in ids.iter().rev() {
        let doc = serde_json::json!({"instance_id": id, "task_id": "team/tied", "task_version": 1,
            "status": "completed", "started_at_utc": "2026-12-07T05:00:00.000000Z",
            "ended_at_utc": "2026-12-07T05:00:01.000000Z"});
        configured
            .insert("task_instances", doc.as_object().unwrap())
            .unwrap();
    }
    drop(configured);
    let listed = json(&s, &["task", "list", "--json", "--limit", "0"]);
    let listed: Vec<&str> = listed["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["instance_id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ids, "{listed:?}");
}

/// The summary of `task run --runs N` names each run after the task's version, and how many there
/// were (`team/x v1, run 2 of 3`); it read `team/x, run 2 v1`. The JSON keeps its keys and values: a
/// run's `path` names it as the lines of its steps do.
#[test]
fn the_summary_of_several_runs_names_each_run_of_how_many() {
    let s = Sandboxed::new();
    put_passing(&s, "team/soak");
    let r = s.run(&["task", "run", "team/soak", "--runs", "3"]);
    assert_eq!(r.code, 0, "{}", r.both());
    for run in 1..=3 {
        assert!(
            r.stdout.contains(&format!(
                "\n  team/soak v1, run {run} of 3: passed (check: 1), "
            )),
            "{}",
            r.stdout
        );
        assert!(
            r.stdout
                .contains(&format!("[team/soak, run {run}] step 1/2 box")),
            "{}",
            r.stdout
        );
    }
    assert!(!r.stdout.contains(" v1:"), "{}", r.stdout);
    // Each run's last line counts runs, not tasks.
    assert!(r.stdout.contains(" (3 of 3 runs ended)\n"), "{}", r.stdout);
    assert!(!r.stdout.contains("tasks ended"), "{}", r.stdout);
    // One run keeps the task's own name.
    let once = s.run(&["task", "run", "team/soak"]);
    assert!(
        once.stdout
            .contains("\n  team/soak v1: passed (check: 1), "),
        "{}",
        once.stdout
    );
    let r = s.run(&["task", "run", "team/soak", "--runs", "2", "--json"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let paths: Vec<&str> = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["team/soak, run 1", "team/soak, run 2"], "{doc:#}");
    assert_eq!(doc["tasks"][1]["version"], 1, "{doc:#}");
}

/// The id a run prints is the id the lists print, and their words agree: `task run --runs 3` counts
/// runs, and a completed instance says how it came out, as the run did.
#[test]
fn runs_and_lists_show_the_same_instance_ids_and_outcomes() {
    let s = Sandboxed::new();
    put_passing(&s, "team/check");
    let r = s.run(&["task", "run", "team/check", "--runs", "3"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(r.stdout.contains("\n  3 runs: 3 passed\n"), "{}", r.stdout);
    let printed: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| l.split(", instance ").nth(1))
        .collect();
    assert_eq!(printed.len(), 3, "{}", r.stdout);
    let listed = s.run(&["task", "instances", "team/check"]);
    assert_eq!(listed.code, 0, "{}", listed.both());
    for id in &printed {
        assert!(id.starts_with("team/check-"), "{id}");
        let row = listed
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("{id} is not listed: {}", listed.stdout));
        assert!(row.contains(" completed (passed) "), "{row}");
    }
    let shown = s.run(&["task", "get-instance", printed[0]]);
    assert!(
        shown.stdout.contains("status:    completed (passed)\n"),
        "{}",
        shown.both()
    );
    // The JSON keeps the status the store holds.
    let doc = json(&s, &["task", "instances", "team/check", "--json"]);
    assert_eq!(doc["instances"][0]["status"], "completed", "{doc:#}");
}

/// A command a message suggests can be pasted: an id a shell would split is quoted.
#[test]
fn suggested_commands_quote_what_a_shell_would_split() {
    let s = Sandboxed::new();
    let r = s.run(&["task", "get", "team/hello wörld"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr
            .contains("put one with agent-env task put FILE --id 'team/hello wörld'"),
        "{}",
        r.stderr
    );
    let r = s.run(&["artifact", "get", "team/my files"]);
    assert!(
        r.stderr
            .contains("put one with agent-env artifact put FOLDER --id 'team/my files'"),
        "{}",
        r.both()
    );
    // An instance of a bundle in a folder with a space: shown quoted by the run and the list, and
    // the quoted id pastes into get-instance.
    s.copy_hello("my hello");
    let r = s.run(&["run", "./my hello"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let quoted = r
        .stdout
        .lines()
        .find_map(|l| l.split(", instance ").nth(1))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(
        quoted.starts_with("'@local/~/my hello/hello-") && quoted.ends_with('\''),
        "{quoted}"
    );
    let listed = s.run(&["task", "list"]);
    assert!(listed.stdout.contains(quoted), "{}", listed.stdout);
    let unquoted = quoted.trim_matches('\'');
    let shown = s.run(&["task", "get-instance", unquoted]);
    assert_eq!(shown.code, 0, "{}", shown.both());
}

/// The TASK column of `task list` is quoted as its INSTANCE column is: a task id a shell would split
/// (a space, a quote) pastes into `task instances` as shown. It was shown bare.
#[test]
fn the_task_column_quotes_an_id_a_shell_would_split_as_the_instance_column_does() {
    let s = Sandboxed::new();
    s.copy_hello("my hello");
    let passing = r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
         "criteria": [{"type": "bash_cmd_succeeds", "criterion": "ok", "bash_cmd": "true"}]}]"#;
    s.write("quotes/tasks/it's.json", passing);
    for bundle in ["./my hello", "./quotes"] {
        let r = s.run(&["run", bundle]);
        assert_eq!(r.code, 0, "{}", r.both());
    }
    let listed = s.run(&["task", "list"]);
    assert_eq!(listed.code, 0, "{}", listed.both());
    for (task, instance) in [
        ("'@local/~/my hello/hello' v1", "'@local/~/my hello/hello-"),
        (
            r"'@local/~/quotes/it'\''s' v1",
            r"'@local/~/quotes/it'\''s-",
        ),
    ] {
        let row = listed
            .stdout
            .lines()
            .find(|l| l.starts_with(instance))
            .unwrap_or_else(|| panic!("no row of {instance}: {}", listed.stdout));
        assert!(row.contains(&format!("  {task}  ")), "{row}");
    }
    // What the column shows, read by a shell, names the task.
    let shown = s.run(&["task", "instances", "@local/~/my hello/hello"]);
    assert_eq!(shown.code, 0, "{}", shown.both());
    assert!(
        shown.stdout.contains("'@local/~/my hello/hello' v1"),
        "{}",
        shown.stdout
    );
}

/// Writes a journal a run on this machine left behind, named for its run group, with `lines`.
fn left_journal(s: &Sandboxed, group: &str, lines: &[String]) {
    let runs = s.state().join("locks").join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::write(
        runs.join(format!("{group}.journal")),
        lines.join("\n") + "\n",
    )
    .unwrap();
}

/// A stored task's instance whose start the store never took (it was down when the task began)
/// lives only in the journal that keeps its end: `task get-instance` with the id the run printed
/// (or its end) shows it from there, and `task list` and `task instances` list it, its end waiting
/// here. They said no such instance was recorded and left it out.
#[test]
fn an_instance_only_this_machines_journal_keeps_is_shown_from_it() {
    let s = Sandboxed::new();
    let id = "team/slow-oayqbz31";
    let end = serde_json::json!({"instance_id": id, "task_id": "team/slow", "task_version": 1,
        "status": "completed", "started_at_utc": "2026-12-07T05:00:00.000000Z",
        "ended_at_utc": "2026-12-07T05:00:09.000000Z",
        "completed_steps": [{"step_id": "wait", "status": "success"}],
        "context": {"metadata": {"run_group_id": "run-gone",
            "verifications": {"w": {"score": 1.0}}}}});
    left_journal(
        &s,
        "run-gone",
        &[
            "instances\tconfigured".to_string(),
            format!("unrecorded\t{id}"),
            format!("final\t{end}"),
            "ended".to_string(),
        ],
    );
    let waiting = "its end is waiting in this machine's journal (the store did not take it); the next agent-env task run here writes it";
    for asked in [id, "slow-oayqbz31"] {
        let shown = s.run(&["task", "get-instance", asked]);
        assert_eq!(shown.code, 0, "{}", shown.both());
        assert!(
            shown
                .stdout
                .contains(&format!("status:    completed ({waiting})")),
            "{}",
            shown.both()
        );
    }
    let doc = json(&s, &["task", "get-instance", id, "--json"]);
    assert_eq!(doc["end_waiting_here"], true, "{doc}");
    assert_eq!(doc["status"], "completed", "{doc}");
    assert_eq!(doc["outcome"], "end_waiting_here", "{doc}");
    let listed = json(&s, &["task", "list", "--json"]);
    assert_eq!(listed["instances"][0]["instance_id"], id, "{listed}");
    assert_eq!(listed["instances"][0]["end_waiting_here"], true, "{listed}");
    assert_eq!(
        listed["instances"][0]["outcome"], "end_waiting_here",
        "{listed}"
    );
    let table = s.run(&["task", "instances", "team/slow"]);
    assert_eq!(table.code, 0, "{}", table.both());
    assert!(
        table.stdout.contains(id) && table.stdout.contains(waiting),
        "{}",
        table.both()
    );
}

/// A run on this machine that was killed leaves its instances `running` in the configured store,
/// their heartbeat not yet stale: this machine knows the run is over (its journal is no longer
/// held), and says so as it does of a bundle run's, not plain `running` for the next two minutes.
#[test]
fn a_killed_runs_instances_say_so_on_its_machine_whichever_store_holds_them() {
    use agent_env::stores::DocumentStore;
    let s = Sandboxed::new();
    let now = |ago: u64| {
        agent_env::clock::rfc3339_utc(
            std::time::SystemTime::now() - std::time::Duration::from_secs(ago),
        )
    };
    let configured = agent_env::stores::LocalSqliteDocumentStore::new(
        s.state().join("document_store").join("documents.db"),
    );
    let local = agent_env::stores::LocalSqliteDocumentStore::local_namespace(s.local_db());
    for (store, id, task) in [
        (&configured, "team/slow-k1", "team/slow"),
        (&local, "@local/b/slow/slow-k2", "@local/b/slow/slow"),
    ] {
        let doc = serde_json::json!({"instance_id": id, "task_id": task, "task_version": 1,
            "status": "running", "started_at_utc": now(20), "heartbeat_at_utc": now(5),
            "context": {"metadata": {"run_group_id": "run-killed"}}});
        store
            .insert("task_instances", doc.as_object().unwrap())
            .unwrap();
    }
    drop((configured, local));
    left_journal(
        &s,
        "run-killed",
        &[
            "instances\tconfigured".to_string(),
            "sandbox\t/nowhere".to_string(),
        ],
    );
    let over = "running (its run on this machine ended without finishing it; the next agent-env task run here marks it failed)";
    let table = s.run(&["task", "list"]);
    assert_eq!(table.code, 0, "{}", table.both());
    assert_eq!(table.stdout.matches(over).count(), 2, "{}", table.both());
    let listed = json(&s, &["task", "list", "--json"]);
    for row in listed["instances"].as_array().unwrap() {
        assert_eq!(row["stale"], true, "{listed}");
        assert_eq!(row["outcome"], "stale", "{listed}");
    }
    let shown = s.run(&["task", "get-instance", "team/slow-k1"]);
    assert!(
        shown.stdout.contains(&format!("status:    {over}")),
        "{}",
        shown.both()
    );
    let doc = json(&s, &["task", "get-instance", "team/slow-k1", "--json"]);
    assert_eq!(doc["stale"], true, "{doc}");
    assert_eq!(doc["outcome"], "stale", "{doc}");
}

/// A killed run's instances another machine's run marked failed (their heartbeat stopped) no longer
/// show as running, though this machine keeps the run's journal: `task list` says only what is still
/// true, the sandboxes it left here, and nothing once they are gone. It said the instances showed as
/// running until the next run marked them, beside a table showing them failed.
#[test]
fn a_killed_run_whose_instances_were_marked_elsewhere_is_warned_of_for_its_sandboxes_alone() {
    use agent_env::stores::DocumentStore;
    let s = Sandboxed::new();
    let configured = agent_env::stores::LocalSqliteDocumentStore::new(
        s.state().join("document_store").join("documents.db"),
    );
    let doc = serde_json::json!({"instance_id": "team/slow-m1", "task_id": "team/slow",
        "task_version": 1, "status": "failed", "started_at_utc": "2026-12-07T05:00:00.000000Z",
        "error": "its run stopped sending signs of life; a later run marked it failed",
        "context": {"metadata": {"run_group_id": "run-marked"}}});
    configured
        .insert("task_instances", doc.as_object().unwrap())
        .unwrap();
    drop(configured);
    let sandbox = s.sandboxes().join("agent-env-local-run-marked");
    std::fs::create_dir_all(&sandbox).unwrap();
    left_journal(
        &s,
        "run-marked",
        &[
            "instances\tconfigured".to_string(),
            format!("sandbox\t{}", sandbox.display()),
        ],
    );
    let said = "1 earlier run that ended without finishing left sandboxes on this machine, which the next agent-env task run here removes; none of the task instances it left shows as running any more";
    let table = s.run(&["task", "list"]);
    assert_eq!(table.code, 0, "{}", table.both());
    assert!(table.stdout.contains("failed"), "{}", table.both());
    assert_eq!(
        table.stderr,
        format!("Warning: {said}\n"),
        "{}",
        table.both()
    );
    let listed = json(&s, &["task", "list", "--json"]);
    assert_eq!(listed["warnings"], serde_json::json!([said]), "{listed:#}");
    // The sandboxes gone too, nothing is left to say.
    std::fs::remove_dir_all(&sandbox).unwrap();
    let table = s.run(&["task", "list"]);
    assert_eq!(table.code, 0, "{}", table.both());
    assert_eq!(table.stderr, "", "{}", table.both());
    let listed = json(&s, &["task", "list", "--json"]);
    assert!(listed.get("warnings").is_none(), "{listed:#}");
}

/// A bundle run's task or instance id given without its @local/ (which `task instances` and `task
/// list --task` take) is not in the configured store: `task get` and `task get-instance` say which
/// one the local store has.
#[test]
fn an_id_without_its_at_local_says_the_one_the_local_store_has() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello", "-q"]).code, 0);
    let task = s.run(&["task", "get", "agentenv-framework/hello/hello"]);
    assert_eq!(task.code, 1, "{}", task.both());
    assert!(
        task.stderr.trim_end().ends_with(
            "; or did you mean @local/agentenv-framework/hello/hello, the task a bundle run recorded in the local store?"
        ),
        "{}",
        task.both()
    );
    let instance = s.docs("task_instances")[0]["instance_id"]
        .as_str()
        .unwrap()
        .to_string();
    let bare = instance.strip_prefix("@local/").unwrap();
    let got = s.run(&["task", "get-instance", bare]);
    assert_eq!(got.code, 1, "{}", got.both());
    assert!(
        got.stderr.trim_end().ends_with(&format!(
            "; or did you mean {instance}, an instance a bundle run recorded in the local store?"
        )),
        "{}",
        got.both()
    );
    // An id the local store has no task of is told as before.
    let other = s.run(&["task", "get", "team/nothing"]);
    assert!(!other.stderr.contains("did you mean"), "{}", other.both());
}

/// Runs `args` as a user the state folder's permissions stop, with `folder` (under the sandbox's
/// state) at `mode` for this user: as root (whom permission bits do not stop), the command runs as
/// `nobody` (uid 65534) and `folder` keeps its own mode, owned by root; else as this user, with
/// `folder` at `others_mode` while the command runs.
pub(crate) fn as_a_user_the_folder_stops(
    s: &Sandboxed,
    args: &[&str],
    folder: &std::path::Path,
    own_mode: u32,
    others_mode: u32,
) -> crate::support::run::Ran {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let set = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let mut cmd = s.command(args);
    // SAFETY: geteuid only reads this process's effective user id.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        // nobody may reach the sandbox, its home and the state root, not `folder`'s insides.
        for open in [s.dir.path().to_path_buf(), s.home(), s.state()] {
            if open.exists() {
                set(&open, 0o755);
            }
        }
        if let Some(parent) = s.state().parent() {
            set(parent, 0o755);
        }
        set(folder, own_mode);
        cmd.uid(65534).gid(65534);
    } else {
        set(folder, others_mode);
    }
    let ran = crate::support::run::Ran::from(cmd.output().expect("run agent-env"));
    set(folder, 0o700);
    ran
}

/// Another user (or one whose state folder is closed to it) is told which folder it may not enter,
/// that the records there are not its to read, and what to do, not an OS error about a file.
#[test]
fn records_this_user_may_not_read_say_which_folder_and_what_to_do() {
    let s = Sandboxed::new();
    let ran = s.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let folder = s.state().join("document_store");
    for args in [
        &["task", "list"][..],
        &["task", "get-instance", "hello-0000"][..],
    ] {
        let ran = as_a_user_the_folder_stops(&s, args, &folder, 0o700, 0o000);
        assert_eq!(ran.code, 1, "{args:?}: {}", ran.both());
        assert!(
            ran.stderr.contains(&format!(
                "{} can't be read: this user may not enter {}, so it may not read the records kept there; let this user in",
                folder.join("local.db").display(),
                folder.display()
            )),
            "{args:?}: {}",
            ran.stderr
        );
        assert!(
            ran.stderr.contains("point XDG_STATE_HOME"),
            "{args:?}: {}",
            ran.stderr
        );
        assert!(!ran.stderr.contains("os error"), "{args:?}: {}", ran.stderr);
    }
}

/// A local.db cut to 0 bytes (a full disk, a bad copy) is said, with what to do, not listed as no
/// runs; a read leaves it as it is, so the next command says it too. A store agent-env makes
/// itself is said nothing of.
#[test]
fn an_emptied_local_store_is_said_and_left_as_it_is() {
    let s = Sandboxed::new();
    let fresh = s.run(&["task", "list"]);
    assert_eq!(fresh.code, 0, "{}", fresh.both());
    assert!(!fresh.stderr.contains("0 bytes"), "{}", fresh.both());
    let ran = s.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let db = s.local_db();
    std::fs::write(&db, "").unwrap();
    for aside in ["local.db-wal", "local.db-shm"] {
        let _ = std::fs::remove_file(db.with_file_name(aside));
    }
    let said = format!(
        "{} is empty (0 bytes), so the records it held are not there",
        db.display()
    );
    for _ in 0..2 {
        let listed = s.run(&["task", "list"]);
        assert!(listed.stderr.contains(&said), "{}", listed.both());
        assert!(
            listed
                .stderr
                .contains("put it back from a backup, or remove it"),
            "{}",
            listed.both()
        );
        assert_eq!(std::fs::metadata(&db).unwrap().len(), 0);
    }
    let as_json = s.run(&["task", "list", "--json"]);
    assert!(
        as_json.stdout.contains("is empty (0 bytes)"),
        "{}",
        as_json.both()
    );
    // A run writes a store there again: from then on it holds records, and nothing is said.
    let ran = s.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let listed = s.run(&["task", "list"]);
    assert!(!listed.stderr.contains("0 bytes"), "{}", listed.both());
    assert!(
        listed.stdout.contains("completed (passed)"),
        "{}",
        listed.both()
    );
}

/// `task get-instance` on a local.db cut to 0 bytes says the instance can't be looked up there, as
/// the warning says the store is empty, not that no such instance exists.
#[test]
fn get_instance_on_an_emptied_local_store_says_it_cannot_look_there() {
    let s = Sandboxed::new();
    let ran = s.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let db = s.local_db();
    std::fs::write(&db, "").unwrap();
    for aside in ["local.db-wal", "local.db-shm"] {
        let _ = std::fs::remove_file(db.with_file_name(aside));
    }
    let got = s.run(&["task", "get-instance", "hello-0000"]);
    assert_eq!(got.code, 1, "{}", got.both());
    assert!(got.stderr.contains("is empty (0 bytes)"), "{}", got.both());
    assert!(
        got.stderr.contains(
            "task instance 'hello-0000' can't be looked up in the local document store, which is empty (see the warning above)"
        ),
        "{}",
        got.both()
    );
    assert!(!got.stderr.contains("no task instance"), "{}", got.both());
    assert!(!got.stderr.contains("task list shows"), "{}", got.both());
    assert_eq!(std::fs::metadata(&db).unwrap().len(), 0);
}

/// A run on a local.db cut to 0 bytes says so as one of its warnings, on the terminal, in --json's
/// warnings and in its log, before it writes a new store there: its earlier records are not found.
#[test]
fn a_run_on_an_emptied_local_store_warns_of_it() {
    let s = Sandboxed::new();
    let ran = s.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    assert!(!ran.stderr.contains("0 bytes"), "{}", ran.both());
    let db = s.local_db();
    std::fs::write(&db, "").unwrap();
    for aside in ["local.db-wal", "local.db-shm"] {
        let _ = std::fs::remove_file(db.with_file_name(aside));
    }
    let said = format!(
        "{} is empty (0 bytes), so the records it held are not there: it was probably cut short by a full disk or a bad copy; put it back from a backup, or remove it",
        db.display()
    );
    let ran = s.run(&["run", "hello", "--json"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    assert!(
        ran.stderr.contains(&format!("Warning: {said}")),
        "{}",
        ran.both()
    );
    let doc: Value = serde_json::from_str(&ran.stdout).unwrap();
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w["path"].is_null() && w["message"].as_str().unwrap().starts_with(&said)),
        "{doc}"
    );
    let log = std::fs::read_to_string(doc["log"].as_str().unwrap()).unwrap();
    assert!(log.contains(&format!("Warning: {said}")), "{log}");
    // The run wrote a store there: the next one finds it and says nothing.
    let again = s.run(&["run", "hello", "-q"]);
    assert_eq!(again.code, 0, "{}", again.both());
    assert!(!again.stderr.contains("0 bytes"), "{}", again.both());
}

/// A local.db cut to 0 bytes next to a write-ahead log that still holds the runs' records (a run
/// can leave them there): a read says so, with how to get them back, and leaves both files as they
/// are (SQLite would throw the log away on open); a run refuses to write a new store over them; the
/// steps the warning gives get the records back.
#[test]
fn an_emptied_local_store_with_its_log_left_is_never_opened_and_can_be_got_back() {
    let s = Sandboxed::new();
    for _ in 0..2 {
        let ran = s.run(&["run", "hello", "-q"]);
        assert_eq!(ran.code, 0, "{}", ran.both());
    }
    let db = s.local_db();
    let wal = db.with_file_name("local.db-wal");
    // The records in the log, as a run whose log was not folded in leaves them: VACUUM writes every
    // page there, copied aside before the connection's close folds it in.
    let aside = db.with_file_name("log-aside");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("PRAGMA wal_autocheckpoint=0; VACUUM")
            .unwrap();
        std::fs::copy(&wal, &aside).unwrap();
    }
    std::fs::write(&db, "").unwrap();
    std::fs::rename(&aside, &wal).unwrap();
    let _ = std::fs::remove_file(db.with_file_name("local.db-shm"));
    let log_bytes = std::fs::metadata(&wal).unwrap().len();
    assert!(log_bytes > 0);
    let said = format!(
        "{} is empty (0 bytes), but its write-ahead log ({log_bytes} bytes) may still hold some of the records",
        db.display()
    );
    for _ in 0..2 {
        let listed = s.run(&["task", "list"]);
        assert_eq!(listed.code, 0, "{}", listed.both());
        assert!(listed.stderr.contains(&said), "{}", listed.both());
        assert!(
            listed.stderr.contains("PRAGMA journal_mode=WAL"),
            "{}",
            listed.both()
        );
        assert!(
            !listed.stdout.contains("No task instances recorded yet"),
            "{}",
            listed.both()
        );
        assert!(
            listed.stdout.contains("No task instances can be read"),
            "{}",
            listed.both()
        );
        assert_eq!(std::fs::metadata(&db).unwrap().len(), 0);
        assert_eq!(std::fs::metadata(&wal).unwrap().len(), log_bytes);
    }
    let ran = s.run(&["run", "hello", "-q"]);
    assert_ne!(ran.code, 0, "{}", ran.both());
    assert!(
        ran.stderr
            .contains("nothing was written there, as a new store would throw the log away"),
        "{}",
        ran.both()
    );
    assert_eq!(std::fs::metadata(&db).unwrap().len(), 0);
    assert_eq!(std::fs::metadata(&wal).unwrap().len(), log_bytes);
    // The warning's steps, with rusqlite for sqlite3: on copies in recovered/, then the move.
    let recovered = db.with_file_name("recovered");
    std::fs::create_dir(&recovered).unwrap();
    let copy = recovered.join("local.db");
    {
        let conn = rusqlite::Connection::open(&copy).unwrap();
        conn.execute_batch("PRAGMA page_size=4096").unwrap();
        conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .unwrap();
    }
    std::fs::copy(&wal, recovered.join("local.db-wal")).unwrap();
    {
        let conn = rusqlite::Connection::open(&copy).unwrap();
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        let counted: i64 = conn
            .query_row("SELECT count(*) FROM docs_task_instances", [], |r| r.get(0))
            .unwrap();
        assert_eq!(counted, 2);
    }
    assert_eq!(std::fs::metadata(&wal).unwrap().len(), log_bytes);
    std::fs::rename(&wal, db.with_file_name("local.db-wal.cut")).unwrap();
    std::fs::rename(&copy, &db).unwrap();
    let listed = s.run(&["task", "list", "--json"]);
    assert_eq!(listed.code, 0, "{}", listed.both());
    assert!(!listed.stderr.contains("0 bytes"), "{}", listed.both());
    let doc: Value = serde_json::from_str(&listed.stdout).unwrap();
    let instances = doc["instances"].as_array().or(doc.as_array()).unwrap();
    assert_eq!(instances.len(), 2, "{doc}");
}

/// A run in a state folder this user may not write: when the folder is another user's (as root,
/// the run is made as nobody), whose it is and what to do, not chmod u+w, which its owner alone
/// may do; when it is this user's own, to give it back its write permission.
#[test]
fn a_run_in_a_state_folder_it_may_not_write_says_whose_it_is() {
    let s = Sandboxed::new();
    let ran = s.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let locks = s.state().join("locks");
    assert!(locks.is_dir());
    let ran = as_a_user_the_folder_stops(&s, &["run", "hello", "-q"], &locks, 0o755, 0o500);
    assert_ne!(ran.code, 0, "{}", ran.both());
    // SAFETY: geteuid only reads this process's effective user id.
    if unsafe { libc::geteuid() } == 0 {
        assert!(
            ran.stderr.contains(&format!(
                "agent-env's state folder {} belongs to root, not to this user (",
                s.state().display()
            )),
            "{}",
            ran.stderr
        );
        assert!(
            ran.stderr.contains(
                "run agent-env as root, or point XDG_STATE_HOME at a place of this user's"
            ),
            "{}",
            ran.stderr
        );
        assert!(!ran.stderr.contains("chmod u+w"), "{}", ran.stderr);
    } else {
        assert!(
            ran.stderr
                .contains("give it back its write permission (chmod u+w"),
            "{}",
            ran.stderr
        );
    }
}

/// A run in a state folder this user may not write, where the locks folder is not made yet: its
/// making fails with the same advice a lock's does (as root, the run is made as nobody, and whose
/// the folder is and `sudo chown` are said), not only that it must be a folder agent-env can write.
#[test]
fn a_locks_folder_that_cannot_be_made_says_whose_the_state_folder_is() {
    let s = Sandboxed::new();
    let ran = s.run(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let locks = s.state().join("locks");
    std::fs::remove_dir_all(&locks).unwrap();
    let ran = as_a_user_the_folder_stops(&s, &["run", "hello", "-q"], &s.state(), 0o755, 0o500);
    assert_ne!(ran.code, 0, "{}", ran.both());
    assert!(
        ran.stderr.contains(&format!(
            "can't make the locks folder {}: Permission denied",
            locks.display()
        )),
        "{}",
        ran.stderr
    );
    assert!(
        !ran.stderr
            .contains("it must be a folder agent-env can write"),
        "{}",
        ran.stderr
    );
    // SAFETY: geteuid only reads this process's effective user id.
    if unsafe { libc::geteuid() } == 0 {
        assert!(
            ran.stderr.contains(&format!(
                "agent-env's state folder {} belongs to root, not to this user (",
                s.state().display()
            )),
            "{}",
            ran.stderr
        );
        assert!(ran.stderr.contains("(sudo chown -R "), "{}", ran.stderr);
        assert!(!ran.stderr.contains("chmod u+w"), "{}", ran.stderr);
    } else {
        assert!(
            ran.stderr
                .contains("give it back its write permission (chmod u+w"),
            "{}",
            ran.stderr
        );
    }
}
