//! Two machines, one team: two agent-env homes (two HOMEs, two plugin directories) configured with the
//! same S3 bucket and the same PostgreSQL database. One stores a task and runs it; the other lists the
//! run's instance and reads the object the run wrote, then runs the task itself.

use agent_env_test_support::servers::{shared_postgres, shared_seaweedfs};
use serde_json::Value;

use crate::support::cli::{fixture, stderr, stdout, Sandbox};

/// A home whose configured stores are the shared bucket and database, with the fixture plugin whose
/// step writes an object through the host.
fn home(schema: &str) -> Sandbox {
    let s3 = shared_seaweedfs();
    let pg = shared_postgres();
    let mut home = Sandbox::new();
    home.plugin(
        "agentenv-fixture-works",
        &format!("[\"{}\"]", fixture("fixture-works").display()),
        "[provides.task_steps]\nstore_roundtrip = \"StoreRoundTrip\"\n",
    );
    home.write(
        "work/.agentenv/config.toml",
        &format!(
            r#"[stores.object]
impl = "S3ObjectStore"
config = {{ bucket = "team", endpoint = "{}", access_key_id = "env:TEAM_S3_KEY", secret_access_key = "env:TEAM_S3_SECRET" }}

[stores.document]
impl = "PostgresDocumentStore"
config = {{ dsn = "env:TEAM_PG_DSN", schema = "{schema}" }}
"#,
            s3.value("S3_ENDPOINT")
        ),
    );
    home.set("TEAM_S3_KEY", s3.value("AWS_ACCESS_KEY_ID"))
        .set("TEAM_S3_SECRET", s3.value("AWS_SECRET_ACCESS_KEY"))
        .set("TEAM_PG_DSN", pg.value("PG_DSN"));
    home
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", stdout(out), stderr(out)))
}

#[test]
fn one_home_puts_and_runs_a_task_and_the_other_sees_its_instance_and_objects() {
    let schema = format!("team_{}", std::process::id());
    let alice = home(&schema);
    let bob = home(&schema);

    alice.write(
        "work/roundtrip.json",
        r#"[{"id": "write", "type": "store_roundtrip", "text": "written on alice's machine"}]"#,
    );
    let out = alice.run(&["task", "put", "roundtrip.json", "--id", "team/roundtrip"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(stdout(&out), "team/roundtrip: v1\n");

    let out = alice.run(&["task", "run", "team/roundtrip"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("team/roundtrip v1: unscored"),
        "{}",
        stdout(&out)
    );

    // Bob's machine: nothing of alice's home, only the shared stores.
    let listed = json(&bob.run(&["task", "list", "--task", "team/roundtrip", "--json"]));
    let instances = listed["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 1, "{listed:#}");
    assert_eq!(instances[0]["status"], "completed", "{listed:#}");
    let instance_id = instances[0]["instance_id"].as_str().unwrap().to_string();
    assert!(instance_id.starts_with("team/roundtrip-"), "{instance_id}");

    let instance = json(&bob.run(&["task", "get-instance", &instance_id, "--json"]));
    let url = instance["context"]["metadata"]["roundtrip"]["url"]
        .as_str()
        .unwrap_or_else(|| panic!("no object URL in {instance:#}"))
        .to_string();
    assert!(url.starts_with("s3://team/"), "{url}");
    // The instance records the objects its steps wrote.
    assert_eq!(
        instance["objects"],
        serde_json::json!([url]),
        "{instance:#}"
    );
    let out = bob.run(&["task", "get-instance", &instance_id]);
    assert!(
        stdout(&out).contains(&format!("objects (1):\n  {url}\n")),
        "{}",
        stdout(&out)
    );
    let out = bob.run(&["store", "get", &url]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "written on alice's machine");

    // Bob sees the task itself, and its instances by the task's id.
    let task = json(&bob.run(&["task", "get", "team/roundtrip", "--json"]));
    assert_eq!(task["version"], 1, "{task:#}");
    assert_eq!(task["steps"][0]["type"], "store_roundtrip", "{task:#}");
    let out = bob.run(&["task", "get", "team/roundtrip"]);
    assert!(
        stdout(&out).starts_with("task:      team/roundtrip v1\n"),
        "{}",
        stdout(&out)
    );
    let by_task = json(&bob.run(&["task", "instances", "team/roundtrip", "--json"]));
    assert_eq!(by_task["instances"], listed["instances"]);

    // Removing the plugin the stored task needs: a remote store is read only when asked.
    let out = bob.run(&["plugin", "remove", "agentenv-fixture-works", "--dry-run"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("note: the document store (PostgresDocumentStore) is remote, so stored documents were not checked (--check-usage does)"),
        "{}",
        stdout(&out)
    );
    let out = bob.run(&[
        "plugin",
        "remove",
        "agentenv-fixture-works",
        "--dry-run",
        "--check-usage",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("blocked: 1 stored task in the document store (PostgresDocumentStore) uses its task step types (store_roundtrip): "),
        "{}",
        stderr(&out)
    );

    // Bob writes the stored task out as a bundle of his own and runs it: it runs in his local stores.
    let out = bob.run(&["bundle", "init", "mine", "--from-task", "team/roundtrip"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("wrote mine/tasks/roundtrip.json\n"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).ends_with("Run it with agent-env run ./mine.\n"),
        "{}",
        stdout(&out)
    );
    let out = bob.run(&["run", "./mine"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("tasks/roundtrip.json v1: unscored"),
        "{}",
        stdout(&out)
    );
    let out = bob.run(&["bundle", "init", "mine", "--from-task", "team/roundtrip"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("exists and is not empty"),
        "{}",
        stderr(&out)
    );

    // An eval stored in the shared store (as the original writes them) comes out with its tasks.
    let shared = agent_env_store_postgres::PostgresDocumentStore::new(
        shared_postgres().value("PG_DSN"),
        Some(&schema),
    )
    .unwrap();
    let eval = serde_json::json!({"id": "team/smoke", "version": 1, "type": "eval", "tasks": ["team/roundtrip"]});
    agent_env::stores::DocumentStore::insert(&shared, "evals", eval.as_object().unwrap()).unwrap();
    let out = bob.run(&["bundle", "init", "smoke", "--from-eval", "team/smoke"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let folder = bob.dir().join("work/smoke");
    assert_eq!(
        std::fs::read_to_string(folder.join("evals/smoke.toml")).unwrap(),
        "tasks = [\"roundtrip\"]\n"
    );
    assert!(folder.join("tasks/roundtrip.json").is_file());
    let out = bob.run(&["run", "./smoke", "--dry-run"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));

    // Bob runs the same stored task; both instances are there for both.
    let out = bob.run(&["task", "run", "team/roundtrip", "--runs", "2"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let listed = json(&alice.run(&["task", "list", "--task", "team/roundtrip", "--json"]));
    assert_eq!(
        listed["instances"].as_array().map(Vec::len),
        Some(3),
        "{listed:#}"
    );
}

#[test]
fn a_stored_task_may_not_name_local_ids_and_an_unknown_one_says_how_to_store_it() {
    let alice = home(&format!("team_refusals_{}", std::process::id()));
    alice.write(
        "work/outward.json",
        r#"[{"id": "load", "type": "load_artifact", "artifact": "@local/agentenv-framework/hello/greeting"}]"#,
    );
    let out = alice.run(&["task", "put", "outward.json", "--id", "team/outward"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("'team/outward' is not an @local id, so it can't reference one: steps[0].artifact names an @local id"),
        "{}",
        stderr(&out)
    );
    let out = alice.run(&["task", "put", "outward.json", "--id", "@local/mine/t"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("a stored task has a bare id"),
        "{}",
        stderr(&out)
    );

    let out = alice.run(&["task", "run", "team/nothing-here"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the configured document store has no task 'team/nothing-here'; put one with agent-env task put FILE --id team/nothing-here"),
        "{}",
        stderr(&out)
    );
}

/// An artifact one home puts (files to the shared bucket, its document to the shared database) is
/// loaded by a stored task the other home runs.
#[test]
fn an_artifact_one_home_puts_is_loaded_by_a_task_the_other_runs() {
    let schema = format!("team_artifacts_{}", std::process::id());
    let alice = home(&schema);
    let bob = home(&schema);
    alice.write("work/greeting/hello.txt", "hello from alice\n");
    alice.write(
        "work/greeting/check.sh",
        "grep -q alice \"$(dirname \"$0\")/hello.txt\"\n",
    );
    let out = alice.run(&["artifact", "put", "greeting", "--id", "team/greeting"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(
        stdout(&out),
        "team/greeting: v1 (file_artifact_universe, 2 files)\n"
    );
    alice.write(
        "work/hello.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
 {"id": "load", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "team/greeting",
  "destination_path": "/app/greeting"},
 {"id": "hello", "type": "verify_sandbox", "sandbox_name": "box", "base_dir": "/app/greeting",
  "verifier_id": "hello", "criteria": [
   {"type": "probe_file_contains", "criterion": "greets", "paths": ["hello.txt"], "expected": "hello"},
   {"type": "probe_file_contains", "criterion": "from alice", "paths": ["check.sh"], "expected": "alice"}]}]"#,
    );
    let out = alice.run(&["task", "put", "hello.json", "--id", "team/hello"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));

    let out = bob.run(&["task", "run", "team/hello"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("team/hello v1: passed (hello: 1)"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}
