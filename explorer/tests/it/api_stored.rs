//! Stored tasks (`agent-env task put`) and their runs (`agent-env task run`) live in the configured
//! document store, not the @local one: the explorer shows them beside the bundle runs, as
//! `agent-env task list` does.

use serde_json::Value;

use crate::support::{seg, shell_documents, Explorer, World};

const PASS: &str = r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
    {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
     "criteria": [{"type": "bash_cmd_succeeds", "criterion": "ok", "bash_cmd": "true"}]}]"#;

/// `task put` of the passing task as `team/stored`, then one `task run` of it.
fn put_and_run_stored(world: &World) {
    let file = world.root.join("stored.json");
    std::fs::write(&file, PASS).expect("task file");
    let put = world.agent_env(&["task", "put", "--id", "team/stored", file.to_str().unwrap()]);
    assert_eq!(put.code, 0, "{}", put.both());
    let ran = world.agent_env(&["task", "run", "team/stored"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
}

#[test]
fn runs_of_stored_tasks_are_seen_beside_bundle_runs() {
    let world = World::new();
    world.run_hello();
    put_and_run_stored(&world);
    let listed = world.agent_env(&["task", "list", "--json"]);
    let listed: Value = serde_json::from_str(&listed.stdout).expect("task list --json");
    let stored_instance = listed["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["task_id"] == "team/stored")
        .expect("task list shows the stored task's run")["instance_id"]
        .as_str()
        .unwrap()
        .to_string();

    let server = Explorer::start(&world);
    let task = server
        .get(&format!("/api/v1/tasks/{}", seg("team/stored")))
        .expect(200)
        .json();
    assert_eq!(task["version"], 1);
    let tasks = server.get("/api/v1/tasks?limit=500").expect(200).json();
    assert_eq!(
        tasks["total"], 2,
        "hello's task and the stored one: {tasks}"
    );

    let one = server
        .get(&format!("/api/v1/task-instances/{}", seg(&stored_instance)))
        .expect(200)
        .json();
    assert_eq!(one["summary"]["outcome"], "passed");
    assert_eq!(one["progress"]["total_steps"], 2);

    let all = server.get("/api/v1/task-instances").expect(200).json();
    assert_eq!(
        all["total"], 2,
        "the bundle run and the stored task's: {all}"
    );
    let of_task = server
        .get(&format!("/api/v1/tasks/{}/runs", seg("team/stored")))
        .expect(200)
        .json();
    assert_eq!(of_task["total"], 1);
    assert_eq!(of_task["items"][0]["instance_id"], stored_instance.as_str());

    // A stored task comes from no bundle; the answer says how to run it.
    let refused = server
        .post(&format!("/api/v1/tasks/{}/run", seg("team/stored")), "{}")
        .expect(409)
        .json();
    let detail = refused["detail"].as_str().unwrap();
    assert!(
        detail.contains("agent-env task run team/stored"),
        "{detail}"
    );
}

/// The same with PostgreSQL as the configured document store, which blocks on the explorer's own
/// runtime: every read of it must happen on the blocking pool, the summaries of a task's runs too.
#[test]
fn a_stored_tasks_runs_are_listed_from_postgres() {
    let world = World::new();
    let dsn = agent_env_test_support::servers::shared_postgres()
        .value("PG_DSN")
        .to_string();
    let schema = format!("explorer_runs_{}", std::process::id());
    world.config(&format!(
        "[stores.document]\nimpl = \"PostgresDocumentStore\"\n\n[stores.document.config]\ndsn = \"{dsn}\"\nschema = \"{schema}\"\n"
    ));
    put_and_run_stored(&world);

    let server = Explorer::start(&world);
    let runs = server
        .get(&format!("/api/v1/tasks/{}/runs", seg("team/stored")))
        .expect(200)
        .json();
    assert_eq!(runs["total"], 1, "{runs}");
    assert_eq!(runs["items"][0]["outcome"], "passed", "{runs}");
}

/// A configured document store that cannot be read when the explorer starts is left out with a
/// notice, and tried again later: once it can be read (and the retry interval passed), its stored
/// tasks and their runs are there, and the notice is gone.
#[test]
fn a_document_store_that_fails_at_start_is_read_once_it_recovers() {
    let world = World::new();
    let shared = world.root.join("shared");
    let away = world.root.join("shared.away");
    world.config(&format!(
        "[explorer]\nstore_retry_seconds = 0.5\n\n[stores.document]\nimpl = \"LocalSqliteDocumentStore\"\n\n[stores.document.config]\npath = \"{}\"\n",
        shared.join("documents.db").display()
    ));
    put_and_run_stored(&world);
    // The store's database is moved away, and a folder stands where it was: SQLite cannot open it.
    std::fs::rename(&shared, &away).unwrap();
    std::fs::create_dir_all(shared.join("documents.db")).unwrap();

    let server = Explorer::start(&world);
    let tasks = server.get("/api/v1/tasks").expect(200).json();
    assert_eq!(tasks["total"], 0, "{tasks}");
    let notice = tasks["warnings"][0]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        notice.contains("the configured document store can't be read")
            && notice.ends_with("; tried again every 0.5 s"),
        "the list says what it left out: {tasks}"
    );
    let instances = server.get("/api/v1/task-instances").expect(200).json();
    assert_eq!(instances["total"], 0, "{instances}");
    assert_eq!(instances["warnings"][0], notice.as_str(), "{instances}");
    // The Config page says so too, though the config itself has no problem to show.
    let config = server.get("/api/v1/config").expect(200).json();
    assert_eq!(
        config["stores_left_out"],
        serde_json::json!([notice]),
        "{config}"
    );
    let missing = server
        .get(&format!("/api/v1/tasks/{}", seg("team/stored")))
        .expect(404)
        .json();
    assert!(
        missing["detail"]
            .as_str()
            .unwrap()
            .contains("the configured document store can't be read"),
        "{missing}"
    );

    // The store comes back.
    std::fs::remove_dir_all(&shared).unwrap();
    std::fs::rename(&away, &shared).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    let tasks = server.get("/api/v1/tasks").expect(200).json();
    assert_eq!(tasks["total"], 1, "the stored task is read now: {tasks}");
    assert_eq!(tasks["items"][0]["id"], "team/stored");
    assert!(tasks.get("warnings").is_none(), "{tasks}");
    let runs = server
        .get(&format!("/api/v1/tasks/{}/runs", seg("team/stored")))
        .expect(200)
        .json();
    assert_eq!(runs["total"], 1, "{runs}");
    assert_eq!(runs["items"][0]["outcome"], "passed", "{runs}");

    let stopped = server.stop();
    assert!(
        stopped
            .stderr
            .contains("warning: the configured document store can't be read"),
        "the start still warns: {}",
        stopped.stderr
    );
}

/// A configured object store that cannot be built as the explorer starts (a credential it names is
/// not set) is named in a warning, and a URL of it is a 404 that says the store is left out; once
/// the config is mended, the store is built again and asked.
#[test]
fn an_object_store_that_cannot_be_built_at_start_is_tried_again() {
    let world = World::new();
    let s3 = |key: &str| {
        format!(
            "[explorer]\nstore_retry_seconds = 0.5\n\n[stores.object]\nimpl = \"S3ObjectStore\"\n\n[stores.object.config]\nbucket = \"b\"\nendpoint = \"http://127.0.0.1:9\"\naccess_key_id = \"{key}\"\nsecret_access_key = \"s\"\ntimeout_seconds = 2\n"
        )
    };
    world.config(&s3("env:TEAM_KEY_NOT_SET"));
    let server = Explorer::start(&world);
    let url = format!(
        "/api/v1/objects/metadata?object_url={}",
        seg("s3://b/replays/game.html")
    );
    let missing = server.get(&url).expect(404).json();
    let detail = missing["detail"].as_str().unwrap_or_default().to_string();
    assert!(
        detail.starts_with("'s3://b/replays/game.html' is not a URL of the local object store; it may be in the store left out: the configured object store can't be used")
            && detail.contains("TEAM_KEY_NOT_SET"),
        "{detail}"
    );
    // A variable set now would not reach the running explorer: the answer says to restart it.
    assert!(
        detail.contains("set TEAM_KEY_NOT_SET and restart `agent-env up`")
            && !detail.contains("; tried again every"),
        "{detail}"
    );
    let config = server.get("/api/v1/config").expect(200).json();
    assert!(
        config["stores_left_out"][0]
            .as_str()
            .unwrap_or_default()
            .contains("set TEAM_KEY_NOT_SET and restart"),
        "{config}"
    );

    // The config is mended: the next request past the interval builds the store and asks its server
    // (none listens there, so the answer is a 503 saying it did not answer, not that it is left out).
    world.config(&s3("key"));
    std::thread::sleep(std::time::Duration::from_millis(600));
    let asked = server.get(&url);
    let detail = asked.detail().as_str().unwrap_or_default().to_string();
    assert_eq!(asked.status, 503, "{detail}");
    assert!(!detail.contains("left out"), "{detail}");
    assert!(
        detail.starts_with("the configured object store did not answer")
            && detail.contains("127.0.0.1:9"),
        "{detail}"
    );

    let stopped = server.stop();
    assert!(
        stopped
            .stderr
            .contains("warning: the configured object store can't be used"),
        "{}",
        stopped.stderr
    );
}

/// A configured document store that answered when the explorer started and stops answering later
/// (its server stopped under a running `up`) is left out as one down at start is: lists answer this
/// machine's runs with a warning naming the store's error, a lookup only that store could answer is
/// a 503 that says it did not answer and will be tried again, the Config page says it is left out,
/// and once it answers again (past the retry interval) its stored task is back.
#[test]
fn a_document_store_that_stops_answering_is_left_out_until_it_answers_again() {
    let world = World::new();
    world.run_hello();
    let down = shell_documents::install(&world);
    world.config(&format!(
        "[explorer]\nstore_retry_seconds = 0.5\n\n[stores.document]\nimpl = \"{}\"\n",
        shell_documents::IMPL
    ));
    let server = Explorer::start(&world);
    let tasks = server.get("/api/v1/tasks").expect(200).json();
    assert_eq!(
        tasks["total"], 2,
        "hello's task and the stored one: {tasks}"
    );
    assert!(tasks.get("warnings").is_none(), "{tasks}");
    let instances = server.get("/api/v1/task-instances").expect(200).json();
    let local_instance = instances["items"][0]["instance_id"]
        .as_str()
        .unwrap_or_else(|| panic!("hello's run: {instances}"))
        .to_string();

    // The store's server stops: the first request that needs the stored task can't be answered.
    std::fs::write(&down, "").unwrap();
    let stored = format!("/api/v1/tasks/{}", seg("team/stored"));
    let lookup = server.get(&stored);
    let detail = lookup.detail().as_str().unwrap_or_default().to_string();
    assert_eq!(lookup.status, 503, "{detail}");
    assert!(
        detail.starts_with("the configured document store did not answer")
            && detail.contains(shell_documents::REFUSAL)
            && detail.contains("the explorer tries it again after 0.5 s"),
        "{detail}"
    );

    // The lists answer this machine's runs, and say what they left out and why.
    let tasks = server.get("/api/v1/tasks").expect(200).json();
    assert_eq!(tasks["total"], 1, "{tasks}");
    assert_eq!(tasks["items"][0]["name"], "hello", "{tasks}");
    let notice = tasks["warnings"][0]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        notice.contains("stored tasks and their instances are left out")
            && notice.contains(shell_documents::REFUSAL)
            && notice.ends_with("; tried again every 0.5 s"),
        "{tasks}"
    );
    let instances = server.get("/api/v1/task-instances").expect(200).json();
    assert_eq!(instances["total"], 1, "{instances}");
    assert_eq!(
        instances["items"][0]["instance_id"],
        local_instance.as_str()
    );
    assert!(
        instances["warnings"][0]
            .as_str()
            .unwrap_or_default()
            .contains(shell_documents::REFUSAL),
        "{instances}"
    );
    let one = server
        .get(&format!("/api/v1/task-instances/{}", seg(&local_instance)))
        .expect(200)
        .json();
    assert_eq!(one["summary"]["outcome"], "passed", "{one}");
    assert!(
        one["warnings"][0]
            .as_str()
            .unwrap_or_default()
            .contains(shell_documents::REFUSAL),
        "{one}"
    );
    let config = server.get("/api/v1/config").expect(200).json();
    assert!(
        config["stores_left_out"][0]
            .as_str()
            .unwrap_or_default()
            .contains(shell_documents::REFUSAL),
        "the Config page says the store is left out: {}",
        config["stores_left_out"]
    );

    // The server is back: past the interval, the store is read again.
    std::fs::remove_file(&down).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    let tasks = server.get("/api/v1/tasks").expect(200).json();
    assert_eq!(tasks["total"], 2, "the stored task is back: {tasks}");
    assert!(tasks.get("warnings").is_none(), "{tasks}");
    server.get(&stored).expect(200);
    let config = server.get("/api/v1/config").expect(200).json();
    assert_eq!(config["stores_left_out"], serde_json::json!([]), "{config}");
}

/// Lookups that go through a task's id as `agent-env task list` prints it, and a run group's event
/// stream, answer a store that stops answering as the other lookups do: a 503 saying the configured
/// document store did not answer, not "not found" (what was asked for may be in that store).
#[test]
fn a_store_that_stops_answering_is_a_503_for_a_tasks_runs_and_a_groups_stream() {
    let world = World::new();
    world.run_hello();
    let down = shell_documents::install(&world);
    world.config(&format!(
        "[explorer]\nstore_retry_seconds = 0.5\n\n[stores.document]\nimpl = \"{}\"\n",
        shell_documents::IMPL
    ));
    let server = Explorer::start(&world);
    let runs = format!("/api/v1/tasks/{}/runs", seg("team/stored"));
    server.get(&runs).expect(200);

    // The first request that needs the store after it stopped: the task's id can't be looked up.
    std::fs::write(&down, "").unwrap();
    let lookup = server.get(&runs);
    let detail = lookup.detail().as_str().unwrap_or_default().to_string();
    assert_eq!(lookup.status, 503, "{detail}");
    assert!(
        detail.starts_with("the configured document store did not answer")
            && detail.contains(shell_documents::REFUSAL)
            && detail.contains("Task 'team/stored' not found in the other stores"),
        "{detail}"
    );

    // Back, then away again: a group's stream opened then can't tell the group is unknown.
    std::fs::remove_file(&down).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    server.get(&runs).expect(200);
    std::fs::write(&down, "").unwrap();
    let stream = format!(
        "/api/v1/tasks/{}/run-groups/rg-000000000000/stream",
        seg("@local/agentenv-framework/hello/hello")
    );
    let refused = server.get(&stream);
    let detail = refused.detail().as_str().unwrap_or_default().to_string();
    assert_eq!(refused.status, 503, "{}", refused.text());
    assert!(
        detail.starts_with("the configured document store did not answer")
            && detail.contains("Run group 'rg-000000000000' of task"),
        "{detail}"
    );
}
