//! Runs from the API: one run, a group with its event stream, a bundle by name, cancel, the stop of
//! the server mid-run, and the requests refused. Every run goes through the same engine as
//! `agent-env run`, so the instance it records is the one the CLI's store holds.

use serde_json::{json, Value};

use crate::support::http::events_until;
use crate::support::{seg, Explorer, World};

const HELLO_TASK: &str = "@local/agentenv-framework/hello/hello";

fn finished(v: &Value) -> bool {
    v["summary"]["outcome"]
        .as_str()
        .is_some_and(|o| o != "running")
}

#[test]
fn a_run_started_from_the_api_is_recorded_as_agent_env_run_records_it() {
    let world = World::new();
    world.run_hello();
    let server = Explorer::start(&world);
    let task = seg(HELLO_TASK);
    let started = server
        .post(&format!("/api/v1/tasks/{task}/run"), "{}")
        .expect(200)
        .json();
    assert_eq!(started["status"], "queued");
    let workflow = started["workflow_id"].as_str().unwrap().to_string();
    let instance = started["instance_id"]
        .as_str()
        .expect("an instance id")
        .to_string();
    assert!(instance.starts_with(HELLO_TASK), "{instance}");

    let done = server.poll(
        &format!("/api/v1/task-instances/{}", seg(&instance)),
        finished,
    );
    assert_eq!(done["summary"]["outcome"], "passed");
    assert_eq!(done["summary"]["scores"], json!({"hello": 1.0}));
    assert_eq!(done["workflow"]["workflow_id"], workflow.as_str());
    assert_eq!(done["progress"]["total_steps"], 3);
    let states: Vec<&str> = done["progress"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["succeeded", "succeeded", "succeeded"]);
    for step in done["progress"]["steps"].as_array().unwrap() {
        assert!(step["duration_seconds"].is_number(), "{step}");
    }

    let progress = server
        .get(&format!(
            "/api/v1/tasks/{task}/instances/{}/progress",
            seg(&instance)
        ))
        .expect(200)
        .json();
    assert_eq!(progress["fraction"], 1.0);
    assert_eq!(progress["finished"], true);
    let doc = server
        .get(&format!(
            "/api/v1/tasks/{task}/instances/{}",
            seg(&instance)
        ))
        .expect(200)
        .json();
    assert_eq!(doc["status"], "completed");
    // Summaries keep the recorded minute and give the start to the microsecond, as task list does.
    let listed = server.get("/api/v1/task-instances").json();
    let mine = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["instance_id"] == instance.as_str())
        .expect("listed");
    assert_eq!(mine["started_at_utc"], doc["started_at_utc"]);
    assert!(
        mine["started_at_utc"].as_str().unwrap().contains('T'),
        "{mine}"
    );
    assert_eq!(mine["created_at_utc"], doc["created_at_utc"]);

    // The CLI's side: the same document is in the local store agent-env run writes.
    let db = world.state_root().join("document_store/local.db");
    let stored = agent_env_test_support::documents(&db, "task_instances");
    let row = stored
        .iter()
        .find(|d| d["instance_id"] == instance.as_str())
        .expect("in local.db");
    assert_eq!(row["status"], "completed");
    assert_eq!(stored.len(), 2, "the CLI's run and the explorer's");

    let runs = server.get(&format!("/api/v1/tasks/{task}/runs")).json();
    assert_eq!(runs["total"], 2);
    assert_eq!(
        runs["items"][0]["instance_id"],
        instance.as_str(),
        "newest first"
    );
    assert_eq!(runs["items"][0]["workflow_id"], workflow.as_str());
    assert_eq!(
        runs["items"][1]["workflow_id"],
        Value::Null,
        "the CLI's run"
    );

    let lines = server.poll(&format!("/api/v1/workflows/{workflow}"), |w| {
        w["done"] == true
    });
    assert_eq!(lines["status"], "finished");
    let text: Vec<&str> = lines["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert!(
        text.iter()
            .any(|l| l.contains("[tasks/hello.json] passed in")),
        "{text:?}"
    );
    let later = server
        .get(&format!("/api/v1/workflows/{workflow}?since=3"))
        .json();
    assert_eq!(later["lines"][0]["seq"], 3);

    let home = server.get("/api/v1/task-instances?limit=1").json();
    assert_eq!(home["total"], 2);
    assert_eq!(home["items"][0]["outcome"], "passed");
}

#[test]
fn a_group_of_runs_streams_snapshots_until_it_completes() {
    let world = World::new();
    world.run_hello();
    let server = Explorer::start(&world);
    let task = seg(HELLO_TASK);
    let group = server
        .post(&format!("/api/v1/tasks/{task}/runs"), r#"{"count": 2}"#)
        .expect(200)
        .json();
    let id = group["run_group_id"].as_str().unwrap().to_string();
    assert!(id.starts_with("rg-") && id.len() == 15, "{id}");
    assert_eq!(group["total"], 2);
    assert_eq!(group["task_version"], 1);
    assert_eq!(group["runs"][1]["index"], 1);
    assert_eq!(group["runs"][1]["error"], Value::Null);

    let (headers, events) = events_until(
        server.port,
        &format!("/api/v1/tasks/{task}/run-groups/{id}/stream"),
        &["complete", "not_found", "timeout", "error"],
    );
    assert!(headers
        .iter()
        .any(|(n, v)| n == "content-type" && v.starts_with("text/event-stream")));
    let last = events.last().expect("events");
    assert_eq!(last.name, "complete", "{events:?}");
    assert!(events[..events.len() - 1]
        .iter()
        .all(|e| e.name == "snapshot"));
    assert_eq!(last.data["total"], 2);
    assert_eq!(last.data["outcomes"]["passed"], 2);

    let groups = server
        .get(&format!("/api/v1/tasks/{task}/run-groups"))
        .json();
    assert_eq!(groups["total"], 2, "the CLI's run group and this one");
    assert_eq!(groups["items"][0]["run_group_id"], id.as_str());
    let one = server
        .get(&format!("/api/v1/tasks/{task}/run-groups/{id}"))
        .expect(200)
        .json();
    assert_eq!(one["complete"], true);
    assert_eq!(one["runs"]["items"].as_array().unwrap().len(), 2);
    // The scores' spread over the runs, and each run beside the explorer's run that recorded it.
    let hello = json!({"hello": {"runs": 2, "mean": 1.0, "min": 1.0, "max": 1.0}});
    assert_eq!(one["score_spread"], hello);
    assert_eq!(one["score_spread_by_task"], json!({ HELLO_TASK: hello }));
    let mut started: Vec<&str> = group["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["workflow_id"].as_str().unwrap())
        .collect();
    let mut recorded: Vec<&str> = one["runs"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["instance"]["workflow_id"]
                .as_str()
                .expect("a workflow id")
        })
        .collect();
    started.sort_unstable();
    recorded.sort_unstable();
    assert_eq!(recorded, started);
    assert_eq!(groups["items"][0]["score_spread"], one["score_spread"]);
    server.get(&format!("/api/v1/run-groups/{id}")).expect(200);
    // The stream of a group finished already sends its snapshot, then complete.
    let (_, events) = events_until(
        server.port,
        &format!("/api/v1/tasks/{task}/run-groups/{id}/stream"),
        &["complete", "not_found", "timeout", "error"],
    );
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["snapshot", "complete"]);
    assert_eq!(events[0].data["outcomes"]["passed"], 2);
    let missing = server.get(&format!("/api/v1/tasks/{task}/run-groups/rg-000000000000"));
    assert_eq!(
        missing.expect(404).detail(),
        format!("Run group 'rg-000000000000' of task '{HELLO_TASK}' not found")
    );
    let (_, events) = events_until(
        server.port,
        &format!("/api/v1/tasks/{task}/run-groups/rg-000000000000/stream"),
        &["not_found"],
    );
    assert_eq!(events.len(), 1);
}

/// A group's runs come a page at a time, as the lists do, filtered by outcome when asked, while its
/// counts, outcomes and scores' spread are over the whole group; the stream's snapshots are paged the
/// same way.
#[test]
fn a_groups_runs_are_paged_while_its_summary_covers_the_whole_group() {
    let world = World::new();
    world.run_hello();
    let server = Explorer::start(&world);
    let task = seg(HELLO_TASK);
    let group = server
        .post(&format!("/api/v1/tasks/{task}/runs"), r#"{"count": 3}"#)
        .expect(200)
        .json();
    let id = group["run_group_id"].as_str().unwrap().to_string();
    let first = server.poll(&format!("/api/v1/run-groups/{id}?limit=2"), |g| {
        g["complete"] == true
    });
    assert_eq!(first["outcomes"], json!({"passed": 3}), "{first}");
    assert_eq!(first["score_spread"]["hello"]["runs"], 3, "{first}");
    assert_eq!(first["run_words"], json!({"passed": 3}), "{first}");
    let page = &first["runs"];
    assert_eq!(
        (
            &page["total"],
            &page["limit"],
            &page["offset"],
            &page["has_more"]
        ),
        (&json!(3), &json!(2), &json!(0), &json!(true)),
        "{page}"
    );
    let places = |p: &Value| -> Vec<u64> {
        p["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["place"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(places(page), [1, 2]);
    assert!(
        first.get("instances").is_none(),
        "no list of every run: {first}"
    );

    let rest = server
        .get(&format!(
            "/api/v1/tasks/{task}/run-groups/{id}?limit=2&offset=2"
        ))
        .expect(200)
        .json();
    assert_eq!(places(&rest["runs"]), [3]);
    assert_eq!(rest["runs"]["has_more"], false);
    assert_eq!(rest["outcomes"], first["outcomes"]);
    assert_eq!(rest["runs"]["items"][0]["instance"]["outcome"], "passed");
    assert_eq!(rest["runs"]["items"][0]["workflow"]["index"], 2);

    let failed = server
        .get(&format!("/api/v1/run-groups/{id}?outcome=failed"))
        .expect(200)
        .json();
    assert_eq!(failed["runs"]["total"], 0, "{failed}");
    assert_eq!(failed["outcomes"]["passed"], 3, "{failed}");
    server
        .get(&format!("/api/v1/run-groups/{id}?limit=0"))
        .expect(422);

    let (_, events) = events_until(
        server.port,
        &format!("/api/v1/tasks/{task}/run-groups/{id}/stream?limit=1&offset=1"),
        &["complete", "not_found", "timeout", "error"],
    );
    assert_eq!(events[0].data["runs"]["total"], 3, "{events:?}");
    assert_eq!(places(&events[0].data["runs"]), [2], "{events:?}");
}

#[test]
fn run_requests_that_cannot_be_done_are_refused_with_the_reason() {
    let world = World::new();
    world.run_hello();
    let server = Explorer::start(&world);
    let task = seg(HELLO_TASK);
    let run = format!("/api/v1/tasks/{task}/run");
    let runs = format!("/api/v1/tasks/{task}/runs");

    let r = server.post(&run, r#"{"agent_modle": "x"}"#);
    assert_eq!(r.expect(422).detail()[0]["type"], "extra_forbidden");
    assert_eq!(r.detail()[0]["loc"], json!(["body", "agent_modle"]));
    // The limit is the one the API's document gives, which the UI's form reads: the two can't drift.
    let document = server.get("/openapi.json").expect(200).json();
    let request = &document["components"]["schemas"]["RunGroupRequest"]["properties"];
    assert_eq!(request["count"]["maximum"], 100, "{request}");
    assert_eq!(request["seeds"]["maxItems"], 100, "{request}");
    // Too many runs is a problem of the field that asked for them, in the list every 422 gives.
    let r = server.post(&runs, r#"{"count": 101}"#);
    assert_eq!(
        r.expect(422).detail(),
        json!([{"loc": ["body", "count"], "msg": "at most 100 runs per request (got 101)", "type": "less_than_equal"}])
    );
    let seeds: Vec<Value> = (0..101).map(|i| json!({"n": i})).collect();
    let r = server.post(&runs, &json!({"seeds": seeds, "count": 1}).to_string());
    assert_eq!(
        r.expect(422).detail(),
        json!([{"loc": ["body", "seeds"], "msg": "at most 100 runs per request (got 101)", "type": "too_long"}])
    );
    server.post(&runs, r#"{"seeds": [1]}"#).expect(422);
    // A model's name is a name: one of a megabyte was written into every instance started.
    let long = "m".repeat(257);
    for (path, body, field) in [
        (&run, json!({"agent_model": long}), "agent_model"),
        (
            &runs,
            json!({"judge_model": long, "count": 2}),
            "judge_model",
        ),
        (
            &run,
            json!({"agent_artifact_id": long}),
            "agent_artifact_id",
        ),
    ] {
        let r = server.post(path, &body.to_string());
        assert_eq!(r.expect(422).detail()[0]["loc"], json!(["body", field]));
        assert_eq!(r.detail()[0]["type"], "string_too_long");
    }
    let r = server.post(&run, "[]");
    assert_eq!(r.expect(422).detail()[0]["loc"], json!(["body"]));
    assert!(!r.detail()[0]["msg"].as_str().unwrap().contains("RunBody"));
    let r = server.post(&run, r#"{"seed": "x"}"#);
    assert_eq!(r.expect(422).detail()[0]["loc"], json!(["body", "seed"]));
    assert_eq!(
        r.detail()[0]["msg"],
        "should be an object, not the string \"x\""
    );
    let r = server.post(&run, r#"{"version": "1"}"#);
    assert_eq!(r.expect(422).detail()[0]["loc"], json!(["body", "version"]));
    assert_eq!(
        r.detail()[0]["msg"],
        "should be a whole number, not the string \"1\""
    );
    server.post(&runs, r#"{"count": 0}"#).expect(422);
    server.post(&run, "{not json").expect(422);

    let r = server.post(&format!("/api/v1/tasks/{}/run", seg("@local/nope")), "{}");
    assert_eq!(
        r.expect(404).detail(),
        "Task '@local/nope' (latest) not found"
    );
    let r = server.post(&run, r#"{"version": 2}"#);
    assert_eq!(
        r.expect(404).detail(),
        format!("Task '{HELLO_TASK}' version 2 not found")
    );

    server
        .post(&format!("/api/v1/tasks/{task}/cancel-run"), "{}")
        .expect(422);
    let r = server.post(
        &format!("/api/v1/tasks/{task}/cancel-run"),
        r#"{"workflow_id": "wf-nope"}"#,
    );
    r.expect(404);
    assert!(r.detail().as_str().unwrap().contains("no run of task"));
    // A run `agent-env run` started, which has ended, is said to have ended (more in
    // api_cancel_elsewhere).
    let instances = server
        .get(&format!("/api/v1/tasks/{task}/instances"))
        .expect(200)
        .json();
    let instance = instances["items"][0]["instance_id"].as_str().unwrap();
    let r = server.post(
        &format!("/api/v1/tasks/{task}/cancel-run"),
        &json!({"instance_id": instance}).to_string(),
    );
    let detail = r.expect(409).detail();
    assert!(
        detail
            .as_str()
            .unwrap()
            .contains("has already ended, so there is nothing to cancel"),
        "{detail}"
    );
    // A path id whose percent-encoding is not UTF-8 is a 422 naming the path's parameter, as such a
    // query value is.
    let r = server.get("/api/v1/tasks/%C3%28");
    assert_eq!(
        r.expect(422).detail()[0]["loc"][0],
        "path",
        "{}",
        r.detail()
    );
    assert_eq!(r.detail()[0]["type"], "value_error");
    // A run group's outcome filter takes the words its runs are said in, and no other.
    for path in [
        "/api/v1/run-groups/rg-nope?outcome=zzz".to_string(),
        format!("/api/v1/tasks/{task}/run-groups/rg-nope?outcome=zzz"),
        format!("/api/v1/tasks/{task}/run-groups/rg-nope/stream?outcome=zzz"),
    ] {
        let r = server.get(&path);
        assert_eq!(
            r.expect(422).detail()[0]["loc"],
            json!(["query", "outcome"]),
            "{path}"
        );
        let msg = r.detail()[0]["msg"].as_str().unwrap().to_string();
        assert!(
            msg.contains("'passed'") && msg.contains("'queued'"),
            "{msg}"
        );
    }
    server
        .get(&format!("/api/v1/tasks/{}/instances", seg("@local/nope")))
        .expect(404);
    server
        .get(&format!(
            "/api/v1/tasks/{task}/instances/{}",
            seg("@local/x-1")
        ))
        .expect(404);
    server
        .post(&format!("/api/v1/bundles/{}/run", seg("no-such")), "{}")
        .expect(404);
    let r = server.post(&format!("/api/v1/bundles/{}/run", seg("./mine")), "{}");
    let detail = r.expect(404).detail();
    assert!(
        detail
            .as_str()
            .unwrap()
            .contains("run it once with agent-env run ./mine, then run its tasks with POST /api/v1/tasks/{task_id}/run"),
        "{detail}"
    );
    let r = server.post(
        "/api/v1/bundles/hello/run",
        r#"{"tasks": ["hello", "nope"]}"#,
    );
    assert_eq!(
        r.expect(422).detail()[0]["loc"],
        json!(["body", "tasks", "1"])
    );
    let msg = r.detail()[0]["msg"].as_str().unwrap().to_string();
    assert!(
        msg.contains("no task named 'nope'") && msg.contains("'hello'"),
        "{msg}"
    );
    assert!(!msg.contains("--task"), "{msg}");
    let r = server.post("/api/v1/bundles/hello/run", r#"{"evals": ["nope"]}"#);
    assert_eq!(
        r.expect(422).detail()[0]["loc"],
        json!(["body", "evals", "0"])
    );
    assert_eq!(
        r.detail()[0]["msg"],
        "bundle 'hello' has no evals, so none named 'nope'"
    );
    // A task that is not there is said to be missing, whatever the body names.
    for body in ["{}", r#"{"workflow_id": "wf-nope"}"#] {
        let r = server.post(
            &format!("/api/v1/tasks/{}/cancel-run", seg("@local/nope")),
            body,
        );
        assert_eq!(r.expect(404).detail(), "Task '@local/nope' not found");
    }
    assert_eq!(
        server.get("/api/v1/workflows").json()["total"],
        0,
        "nothing started"
    );
}

#[test]
fn a_bundle_runs_by_its_name() {
    let world = World::new();
    // A folder of the bundle's name where the explorer runs: the API runs the installed bundle, not
    // a folder it was not asked for by its path.
    let here = world.dirs.home.join("hello/tasks");
    std::fs::create_dir_all(&here).unwrap();
    std::fs::write(here.join("hello.json"), "not a task").unwrap();
    let server = Explorer::start(&world);
    let bundles = server.get("/api/v1/bundles").json();
    let hello = bundles["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "hello")
        .expect("the built-in bundle is listed");
    assert_eq!(hello["tasks"][0]["id"], HELLO_TASK);
    // A built-in bundle has no folder: null, never prose, as `agent-env run --json` lists it.
    assert_eq!(hello["folder"], Value::Null, "{hello:#}");
    assert_eq!(hello["built_in"], true, "{hello:#}");

    let workflow = server
        .post("/api/v1/bundles/hello/run", "{}")
        .expect(200)
        .json();
    // A whole bundle's run lists the tasks it runs.
    assert_eq!(workflow["tasks"], json!(["hello"]), "{workflow}");
    let id = workflow["workflow_id"].as_str().unwrap();
    let done = server.poll(&format!("/api/v1/workflows/{id}"), |w| w["done"] == true);
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(done["instances"][0]["outcome"], "passed");
    let instance = done["instances"][0]["instance_id"].as_str().unwrap();
    assert!(instance.starts_with(HELLO_TASK), "{done}");
    // When it left the queue, between its creation and its end.
    let started = done["started_at_utc"].as_str().unwrap();
    assert!(
        done["created_at_utc"].as_str().unwrap() <= started,
        "{done}"
    );
    assert!(
        started <= done["finished_at_utc"].as_str().unwrap(),
        "{done}"
    );
    let listed = server.get("/api/v1/workflows").json();
    assert_eq!(listed["items"][0]["workflow_id"], id);
}

/// A folder bundle whose task waits while `marker` exists, so it can be run fast once (to store it)
/// and slow afterwards.
pub(crate) fn slow_bundle(world: &World) -> (std::path::PathBuf, String) {
    let folder = world.dirs.home.join("slowpoke");
    let marker = world.root.join("slow-now");
    std::fs::create_dir_all(folder.join("tasks")).unwrap();
    let command = format!(
        "if [ -e {} ]; then sleep 120 & echo $! > sleeper.pid; wait; fi",
        marker.display()
    );
    let task = json!([
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "wait", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "w",
         "criteria": [{"type": "bash_cmd_succeeds", "command": command}]}
    ]);
    std::fs::write(folder.join("tasks/slow.json"), task.to_string()).unwrap();
    let ran = world.agent_env(&["run", "./slowpoke"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    std::fs::write(&marker, "").unwrap();
    (folder, "@local/~/slowpoke/slow".to_string())
}

pub(crate) fn start_slow(server: &Explorer, task: &str) -> String {
    let started = server
        .post(&format!("/api/v1/tasks/{}/run", seg(task)), "{}")
        .expect(200)
        .json();
    let instance = started["instance_id"]
        .as_str()
        .expect("an instance")
        .to_string();
    server.poll(&format!("/api/v1/task-instances/{}", seg(&instance)), |v| {
        v["progress"]["steps"][0]["state"] == "succeeded"
    });
    instance
}

/// Four runs go at once; a fifth cancelled while it waits for a slot records no instance, and its
/// group counts it as cancelled with the four cancelled running.
#[test]
fn a_run_cancelled_while_queued_counts_as_cancelled_in_its_group() {
    let world = World::new();
    let (_, task) = slow_bundle(&world);
    let server = Explorer::start(&world);
    let group = start_group(&server, &task, 5);
    let id = group["run_group_id"].as_str().unwrap().to_string();
    let queued = group["runs"][4]["workflow_id"]
        .as_str()
        .unwrap()
        .to_string();
    server
        .post(&format!("/api/v1/workflows/{}/cancel", seg(&queued)), "{}")
        .expect(200);
    server
        .post(
            &format!("/api/v1/tasks/{}/cancel-run", seg(&task)),
            &json!({"run_group_id": id}).to_string(),
        )
        .expect(200);
    let done = server.poll(
        &format!("/api/v1/tasks/{}/run-groups/{id}", seg(&task)),
        |v| v["complete"] == true && v["outcomes"]["cancelled"] == 5,
    );
    assert_eq!(done["total"], 5, "{done:#}");
}

/// A task's list of run groups tells a group the explorer started as the group's own page does: its
/// planned total, with the runs still waiting their turn (the store knows only those that began).
#[test]
fn a_tasks_run_groups_give_the_planned_total_of_the_explorers_own() {
    let world = World::new();
    let (_, task) = slow_bundle(&world);
    let server = Explorer::start(&world);
    let group = start_group(&server, &task, 6);
    let id = group["run_group_id"].as_str().unwrap().to_string();
    // Some of its runs have recorded their instances, the rest wait for a slot.
    let listed = server.poll(&format!("/api/v1/tasks/{}/run-groups", seg(&task)), |v| {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["run_group_id"] == id.as_str() && g["running"].as_u64() > Some(0))
    });
    let mine = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["run_group_id"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(mine["total"], 6, "{mine:#}");
    assert!(mine.get("instances").is_none(), "{mine:#}");
    server
        .post(
            &format!("/api/v1/tasks/{}/cancel-run", seg(&task)),
            &json!({"run_group_id": id}).to_string(),
        )
        .expect(200);
    server.poll(
        &format!("/api/v1/tasks/{}/run-groups/{id}", seg(&task)),
        |v| v["complete"] == true,
    );
}

#[test]
fn a_run_of_a_folder_bundle_can_be_cancelled_and_its_sandbox_is_torn_down() {
    let world = World::new();
    let (_, task) = slow_bundle(&world);
    let server = Explorer::start(&world);
    let instance = start_slow(&server, &task);
    // The step running now is said to be running, not pending.
    server.poll(&format!("/api/v1/task-instances/{}", seg(&instance)), |v| {
        v["progress"]["steps"][1]["state"] == "running"
    });

    let r = server
        .post(
            &format!("/api/v1/tasks/{}/cancel-run", seg(&task)),
            &json!({"instance_id": instance}).to_string(),
        )
        .expect(200)
        .json();
    assert_eq!(r["cancelled"].as_array().unwrap().len(), 1);
    // Asked again, the run is not counted as cancelled a second time: it is stopping, or ended.
    let again = server
        .post(
            &format!("/api/v1/tasks/{}/cancel-run", seg(&task)),
            &json!({"instance_id": instance}).to_string(),
        )
        .expect(200)
        .json();
    assert_eq!(again["cancelled"], json!([]), "{again}");
    let elsewhere = [&again["already_stopping"], &again["already_finished"]];
    assert_eq!(
        elsewhere
            .iter()
            .map(|l| l.as_array().unwrap().len())
            .sum::<usize>(),
        1,
        "{again}"
    );
    // The instance is recorded as cancelled before the run's thread returns: wait for both.
    let done = server.poll(&format!("/api/v1/task-instances/{}", seg(&instance)), |v| {
        finished(v) && v["workflow"]["done"] == true
    });
    assert_eq!(done["summary"]["outcome"], "cancelled");
    assert_eq!(done["workflow"]["status"], "cancelled");
    let steps = &done["progress"]["steps"];
    assert_eq!(steps[0]["state"], "succeeded");
    assert!(steps[0]["duration_seconds"].is_number(), "{steps}");
    assert_eq!(steps[1]["state"], "cancelled", "{steps}");
    assert_eq!(done["progress"]["fraction"], 0.5);
    let torn = &done["instance"]["context"]["metadata"]["torn_down_sandbox_ids"];
    assert_eq!(torn.as_array().map(Vec::len), Some(1), "{done}");
}

#[test]
fn stopping_the_server_cancels_its_runs_and_tears_them_down() {
    let world = World::new();
    let (_, task) = slow_bundle(&world);
    let server = Explorer::start(&world);
    let instance = start_slow(&server, &task);
    let stopped = server.stop();
    assert_eq!(stopped.code, Some(0), "{stopped:?}");
    assert!(stopped.stdout.contains("Stopped."), "{stopped:?}");
    let db = world.state_root().join("document_store/local.db");
    let stored = agent_env_test_support::documents(&db, "task_instances");
    let row = stored
        .iter()
        .find(|d| d["instance_id"] == instance.as_str())
        .unwrap();
    assert_eq!(row["status"], "cancelled");
    let sandboxes = world.dirs.home.join(".agent-env-sandboxes");
    let left: Vec<_> = std::fs::read_dir(&sandboxes)
        .map(|d| d.flatten().collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "sandboxes left: {left:?}");
}

/// A stream open when the server stops ends with `shutdown`, so a client can tell it from a dropped
/// connection.
#[test]
fn a_group_stream_open_when_the_server_stops_ends_with_shutdown() {
    let world = World::new();
    let (_, task) = slow_bundle(&world);
    let server = Explorer::start(&world);
    let group = start_group(&server, &task, 1);
    let id = group["run_group_id"].as_str().unwrap();
    let mut stream = crate::support::http::EventStream::open(
        server.port,
        &format!("/api/v1/tasks/{}/run-groups/{id}/stream", seg(&task)),
    );
    let first = stream.next_event().expect("a first event");
    assert_eq!(first.name, "snapshot", "{first:?}");
    let stopped = server.stop();
    assert_eq!(stopped.code, Some(0), "{stopped:?}");
    let mut names = Vec::new();
    while let Some(event) = stream.next_event() {
        names.push(event.name);
    }
    assert_eq!(
        names.last().map(String::as_str),
        Some("shutdown"),
        "{names:?}"
    );
}

/// A folder bundle with one quick task, run once with the CLI so its task is stored (version 1).
fn quick_bundle(world: &World, criterion: &str) -> String {
    let folder = world.dirs.home.join("quick");
    std::fs::create_dir_all(folder.join("tasks")).unwrap();
    let task = json!([
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
         "criteria": [{"type": "bash_cmd_succeeds", "criterion": criterion, "bash_cmd": "true"}]}
    ]);
    std::fs::write(folder.join("tasks/quick.json"), task.to_string()).unwrap();
    "@local/~/quick/quick".to_string()
}

#[test]
fn a_run_reports_the_version_it_records_and_a_version_asked_for_is_the_one_that_runs() {
    let world = World::new();
    let task = quick_bundle(&world, "first");
    let ran = world.agent_env(&["run", "./quick"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    quick_bundle(&world, "edited");
    let server = Explorer::start(&world);
    let t = seg(&task);

    // The bundle changed since version 1 was stored, so a run now records version 2.
    let r = server.post(&format!("/api/v1/tasks/{t}/run"), r#"{"version": 1}"#);
    let detail = r.expect(422).detail();
    assert_eq!(detail[0]["loc"], json!(["body", "version"]), "{detail}");
    let detail = detail[0]["msg"].as_str().unwrap();
    assert!(
        detail.starts_with("only the newest version of a task can run")
            && detail.contains("version 2"),
        "{detail}"
    );
    server
        .post(&format!("/api/v1/tasks/{t}/run"), r#"{"version": 3}"#)
        .expect(404);
    let group = server
        .post(
            &format!("/api/v1/tasks/{t}/runs"),
            r#"{"count": 1, "version": 2}"#,
        )
        .expect(200)
        .json();
    assert_eq!(group["task_version"], 2, "{group}");
    let id = group["run_group_id"].as_str().unwrap();
    let done = server.poll(&format!("/api/v1/tasks/{t}/run-groups/{id}"), |g| {
        g["complete"] == true
    });
    assert_eq!(
        done["runs"]["items"][0]["instance"]["task_version"], 2,
        "{done}"
    );

    // Unchanged since: version 2 is the one that runs, and is reported.
    let one = server
        .post(&format!("/api/v1/tasks/{t}/run"), r#"{"version": 2}"#)
        .expect(200)
        .json();
    assert_eq!(one["task_version"], 2, "{one}");
    let instance = one["instance_id"].as_str().unwrap();
    let done = server.poll(
        &format!("/api/v1/task-instances/{}", seg(instance)),
        finished,
    );
    assert_eq!(done["summary"]["task_version"], 2);
}

#[test]
fn a_run_that_waits_its_turn_answers_at_once_and_its_workflow_names_its_instance_later() {
    let world = World::new();
    let (_, task) = slow_bundle(&world);
    let server = Explorer::start(&world);
    let t = seg(&task);
    let group = server
        .post(&format!("/api/v1/tasks/{t}/runs"), r#"{"count": 4}"#)
        .expect(200)
        .json();
    let id = group["run_group_id"].as_str().unwrap().to_string();
    server.poll(&format!("/api/v1/run-groups/{id}"), |g| g["running"] == 4);

    let queued = server
        .post(&format!("/api/v1/tasks/{t}/run"), "{}")
        .expect(200)
        .json();
    assert_eq!(queued["status"], "queued");
    assert_eq!(queued["instance_id"], Value::Null);
    let workflow = queued["workflow_id"].as_str().unwrap();
    let w = server.get(&format!("/api/v1/workflows/{workflow}")).json();
    assert_eq!(w["status"], "queued", "{w}");
    assert_eq!(w["instances"], json!([]));

    // Once a slot frees, the run starts and its workflow names its instance.
    server
        .post(
            &format!("/api/v1/tasks/{t}/cancel-run"),
            &json!({"run_group_id": id}).to_string(),
        )
        .expect(200);
    let w = server.poll(&format!("/api/v1/workflows/{workflow}"), |w| {
        w["instances"].as_array().is_some_and(|i| !i.is_empty())
    });
    assert!(w["instances"][0]["instance_id"]
        .as_str()
        .is_some_and(|i| i.starts_with(&task)));
}

#[test]
fn a_group_whose_runs_all_stopped_with_an_error_says_why() {
    let world = World::new();
    let (_, slow) = slow_bundle(&world);
    let quick = quick_bundle(&world, "ok");
    let ran = world.agent_env(&["run", "./quick"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let server = Explorer::start(&world);
    let busy = start_group(&server, &slow, 4);
    let busy = busy["run_group_id"].as_str().unwrap().to_string();
    server.poll(&format!("/api/v1/run-groups/{busy}"), |g| g["running"] == 4);

    // Queued behind them, the quick runs find their bundle broken when their turn comes.
    let q = seg(&quick);
    let group = server
        .post(&format!("/api/v1/tasks/{q}/runs"), r#"{"count": 2}"#)
        .expect(200)
        .json();
    let id = group["run_group_id"].as_str().unwrap().to_string();
    std::fs::write(world.dirs.home.join("quick/tasks/quick.json"), "[not json").unwrap();
    server
        .post(
            &format!("/api/v1/tasks/{}/cancel-run", seg(&slow)),
            &json!({"run_group_id": busy}).to_string(),
        )
        .expect(200);
    let done = server.poll(&format!("/api/v1/tasks/{q}/run-groups/{id}"), |g| {
        g["complete"] == true
    });
    assert_eq!(done["recorded"], 0, "{done}");
    assert_eq!(done["outcomes"], json!({"error": 2}), "{done}");
    assert_eq!(done["task_id"], quick.as_str());
    let errors = done["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{done}");
    assert!(errors[0].as_str().unwrap().contains("quick.json"), "{done}");

    // The task's run groups list it, with its error, though it recorded no instance.
    let groups = server.get(&format!("/api/v1/tasks/{q}/run-groups")).json();
    let listed = groups["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["run_group_id"] == id.as_str())
        .expect("listed");
    assert_eq!(listed["errors"], done["errors"]);
}

#[test]
fn a_run_whose_bundle_changed_while_it_waited_runs_nothing_and_says_why() {
    let world = World::new();
    let (_, slow) = slow_bundle(&world);
    let quick = quick_bundle(&world, "ok");
    let ran = world.agent_env(&["run", "./quick"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let server = Explorer::start(&world);
    let busy = start_group(&server, &slow, 4);
    let busy = busy["run_group_id"].as_str().unwrap().to_string();
    server.poll(&format!("/api/v1/run-groups/{busy}"), |g| g["running"] == 4);

    let queued = server
        .post(&format!("/api/v1/tasks/{}/run", seg(&quick)), "{}")
        .expect(200)
        .json();
    assert_eq!(queued["task_version"], 1);
    let workflow = queued["workflow_id"].as_str().unwrap().to_string();
    quick_bundle(&world, "changed while it waited");
    server
        .post(
            &format!("/api/v1/tasks/{}/cancel-run", seg(&slow)),
            &json!({"run_group_id": busy}).to_string(),
        )
        .expect(200);
    let done = server.poll(&format!("/api/v1/workflows/{workflow}"), |w| {
        w["done"] == true
    });
    assert_eq!(done["status"], "error", "{done}");
    let error = done["error"].as_str().unwrap();
    assert!(
        error.contains(
            "a run now records version 2 of '@local/~/quick/quick', not version 1; nothing ran and nothing was written"
        ),
        "{error}"
    );
    assert_eq!(done["instances"], json!([]), "{done}");
    // It wrote nothing either: no version 2 that no run used.
    let t = seg(&quick);
    let versions = server.get(&format!("/api/v1/tasks/{t}/versions")).json();
    assert_eq!(versions["total"], 1, "{versions}");
    // With the file as it was, a run records version 1 again (not a version 3).
    quick_bundle(&world, "ok");
    let again = server
        .post(&format!("/api/v1/tasks/{t}/run"), "{}")
        .expect(200)
        .json();
    assert_eq!(again["task_version"], 1, "{again}");
    let versions = server.get(&format!("/api/v1/tasks/{t}/versions")).json();
    assert_eq!(versions["total"], 1, "{versions}");
}

#[test]
fn a_run_started_from_the_api_writes_the_run_log_the_cli_writes() {
    let world = World::new();
    let server = Explorer::start(&world);
    let started = server
        .post("/api/v1/bundles/hello/run", "{}")
        .expect(200)
        .json();
    let id = started["workflow_id"].as_str().unwrap();
    let done = server.poll(&format!("/api/v1/workflows/{id}"), |w| w["done"] == true);
    assert_eq!(done["status"], "finished", "{done}");
    let log = done["log"].as_str().expect("the run log's path");
    let logs = world.state_root().join("logs");
    assert!(
        std::path::Path::new(log).starts_with(&logs),
        "{log} is not in {}",
        logs.display()
    );
    let text = std::fs::read_to_string(log).unwrap();
    assert!(text.contains("[tasks/hello.json] started v1"), "{text}");
    assert!(text.contains(" finished in "), "{text}");
    // The list says where it is too.
    let listed = server.get("/api/v1/workflows").json();
    assert_eq!(listed["items"][0]["log"], log);
    // And the API serves its text, which the Run page links.
    let served = server.get(&format!("/api/v1/workflows/{id}/log"));
    served.expect(200);
    assert_eq!(
        served.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert_eq!(served.text(), std::fs::read_to_string(log).unwrap());
    // A workflow it does not know, and one whose log is gone, are 404s that say so.
    let unknown = server
        .get("/api/v1/workflows/nothing/log")
        .expect(404)
        .detail();
    assert!(
        unknown
            .as_str()
            .unwrap()
            .contains("Workflow 'nothing' not found"),
        "{unknown}"
    );
    std::fs::remove_file(log).unwrap();
    let gone = server
        .get(&format!("/api/v1/workflows/{id}/log"))
        .expect(404)
        .detail();
    assert!(gone.as_str().unwrap().contains("has no run log"), "{gone}");
}

/// A folder bundle of two quick tasks, `one` and `two`, run once with the CLI (one run group).
fn pair_bundle(world: &World) -> (String, String) {
    let folder = world.dirs.home.join("pair");
    std::fs::create_dir_all(folder.join("tasks")).unwrap();
    let task = json!([
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
         "criteria": [{"type": "bash_cmd_succeeds", "criterion": "ok", "bash_cmd": "true"}]}
    ]);
    for name in ["one", "two"] {
        std::fs::write(folder.join(format!("tasks/{name}.json")), task.to_string()).unwrap();
    }
    let ran = world.agent_env(&["run", "./pair"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    (
        "@local/~/pair/one".to_string(),
        "@local/~/pair/two".to_string(),
    )
}

#[test]
fn a_run_group_of_several_tasks_names_them_all() {
    let world = World::new();
    let (one, two) = pair_bundle(&world);
    world.run_hello();
    let server = Explorer::start(&world);
    let listed = server
        .get(&format!("/api/v1/task-instances?task_id={}", seg(&one)))
        .json();
    let group = listed["items"][0]["run_group_id"].as_str().unwrap();
    let state = server
        .get(&format!("/api/v1/run-groups/{group}"))
        .expect(200)
        .json();
    assert_eq!(state["task_id"], Value::Null, "{state}");
    assert_eq!(state["task_ids"], json!([one, two]), "{state}");
    assert_eq!(state["recorded"], 2);
    // A group of one task names it both ways.
    let listed = server
        .get(&format!(
            "/api/v1/task-instances?task_id={}",
            seg(HELLO_TASK)
        ))
        .json();
    let group = listed["items"][0]["run_group_id"].as_str().unwrap();
    let state = server.get(&format!("/api/v1/run-groups/{group}")).json();
    assert_eq!(state["task_id"], HELLO_TASK, "{state}");
    assert_eq!(state["task_ids"], json!([HELLO_TASK]), "{state}");
}

/// A group of two tasks whose verifying steps share the id `grade` (an eval run's commonest case):
/// each task's scores are spread apart, over its own runs, and the one-task `score_spread` is null,
/// as the group's `task_id` is.
#[test]
fn a_run_group_of_several_tasks_spreads_each_tasks_scores_apart() {
    let world = World::new();
    let folder = world.dirs.home.join("graded");
    std::fs::create_dir_all(folder.join("tasks")).unwrap();
    let check = |passes: bool| {
        let cmd = if passes { "true" } else { "false" };
        json!({"type": "bash_cmd_succeeds", "criterion": cmd, "bash_cmd": cmd})
    };
    let verify = |id: &str, criteria: Value| {
        json!({"id": id, "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": id,
               "criteria": criteria})
    };
    let deploy = json!({"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"});
    // `one` passes its `grade`, `two` fails its own (mixed, the group's `grade` would read 0.5).
    let one = json!([deploy, verify("grade", json!([check(true)]))]);
    let two = json!([
        deploy,
        verify("grade", json!([check(false)])),
        verify("grade2", json!([check(true)]))
    ]);
    for (name, task) in [("one", one), ("two", two)] {
        std::fs::write(folder.join(format!("tasks/{name}.json")), task.to_string()).unwrap();
    }
    let ran = world.agent_env(&["run", "./graded"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let (one, two) = ("@local/~/graded/one", "@local/~/graded/two");
    let server = Explorer::start(&world);
    let listed = server
        .get(&format!("/api/v1/task-instances?task_id={}", seg(one)))
        .json();
    let group = listed["items"][0]["run_group_id"].as_str().unwrap();
    let state = server
        .get(&format!("/api/v1/run-groups/{group}"))
        .expect(200)
        .json();
    let spread = |mean: f64| json!({"runs": 1, "mean": mean, "min": mean, "max": mean});
    assert_eq!(
        state["score_spread_by_task"],
        json!({
            one: {"grade": spread(1.0)},
            two: {"grade": spread(0.0), "grade2": spread(1.0)},
        }),
        "{state}"
    );
    assert_eq!(state["score_spread"], Value::Null, "{state}");
    // Under one task, the group is that task's runs alone: its spread is that task's.
    let under_two = server
        .get(&format!("/api/v1/tasks/{}/run-groups/{group}", seg(two)))
        .expect(200)
        .json();
    assert_eq!(
        under_two["score_spread"],
        json!({"grade": spread(0.0), "grade2": spread(1.0)}),
        "{under_two}"
    );
    let listed = server
        .get(&format!("/api/v1/tasks/{}/run-groups", seg(one)))
        .json();
    assert_eq!(
        listed["items"][0]["score_spread"],
        json!({"grade": spread(1.0)}),
        "{listed}"
    );
}

#[test]
fn a_task_whose_file_was_removed_is_refused_in_the_apis_words() {
    let world = World::new();
    let (_, two) = pair_bundle(&world);
    std::fs::remove_file(world.dirs.home.join("pair/tasks/two.json")).unwrap();
    let server = Explorer::start(&world);
    // A run the request is valid for but the bundle stops is a 409 in a sentence: every 422 is a
    // list of problems.
    let r = server.post(&format!("/api/v1/tasks/{}/run", seg(&two)), "{}");
    let detail = r.expect(409).detail();
    let detail = detail.as_str().unwrap();
    assert!(!detail.contains("--task"), "{detail}");
    assert!(
        detail.contains("no longer has a task named 'two' (its tasks are 'one')")
            && detail.contains("agent-env run "),
        "{detail}"
    );
}

#[test]
fn an_instance_is_found_by_the_short_id_task_list_prints() {
    let world = World::new();
    world.run_hello();
    let server = Explorer::start(&world);
    let listed = server.get("/api/v1/task-instances").json();
    let whole = listed["items"][0]["instance_id"].as_str().unwrap();
    let short = whole.rsplit('/').next().unwrap();
    assert_ne!(short, whole);
    let found = server
        .get(&format!("/api/v1/task-instances/{short}"))
        .expect(200)
        .json();
    assert_eq!(found["instance"]["instance_id"], whole);
    let task = seg(HELLO_TASK);
    let doc = server
        .get(&format!("/api/v1/tasks/{task}/instances/{short}"))
        .expect(200)
        .json();
    assert_eq!(doc["instance_id"], whole);
    server
        .get(&format!("/api/v1/tasks/{task}/instances/{short}/progress"))
        .expect(200);
    // One that is no instance's: the 404 says how an id is written.
    let r = server.get("/api/v1/task-instances/hello-nosuch00");
    let detail = r.expect(404).detail();
    assert!(
        detail.as_str().unwrap().contains("give its whole id"),
        "{detail}"
    );
}

#[test]
fn instances_filter_by_status_or_outcome_and_refuse_other_words() {
    let world = World::new();
    world.run_hello();
    let server = Explorer::start(&world);
    let task = seg(HELLO_TASK);
    for (words, total) in [
        ("status=completed", 1),
        ("status=passed", 1),
        ("status=scored%20below%201", 0),
        ("status=interrupted", 0),
        ("status=failed&status=passed", 1),
    ] {
        let all = server.get(&format!("/api/v1/task-instances?{words}"));
        assert_eq!(all.expect(200).json()["total"], total, "{words}");
        let of_task = server.get(&format!("/api/v1/tasks/{task}/instances?{words}"));
        assert_eq!(of_task.expect(200).json()["total"], total, "{words}");
    }
    for path in [
        "/api/v1/task-instances?status=bogus".to_string(),
        format!("/api/v1/tasks/{task}/instances?status=bogus"),
    ] {
        let r = server.get(&path);
        let detail = r.expect(422).detail();
        assert_eq!(detail[0]["loc"], json!(["query", "status"]), "{path}");
        let msg = detail[0]["msg"].as_str().unwrap();
        assert!(
            msg.contains("'bogus'") && msg.contains("'completed'") && msg.contains("'passed'"),
            "{msg}"
        );
    }
}

/// Starts `count` runs of `task` as one group (`POST /tasks/{task}/runs`); the group's answer.
pub(crate) fn start_group(server: &Explorer, task: &str, count: usize) -> Value {
    server
        .post(
            &format!("/api/v1/tasks/{}/runs", seg(task)),
            &format!(r#"{{"count": {count}}}"#),
        )
        .expect(200)
        .json()
}

/// A state folder the explorer can't use (here its locks folder is a file) is said at start, in the
/// lists' `warnings`, and as a 503 to a request to start runs: no run starts to fail later.
#[test]
fn an_unusable_state_folder_is_warned_of_and_starting_runs_is_a_503() {
    let world = World::new();
    world.run_hello();
    let locks = world.state_root().join("locks");
    let _ = std::fs::remove_dir_all(&locks);
    std::fs::write(&locks, "not a folder").unwrap();
    let server = Explorer::start(&world);
    let task = seg(HELLO_TASK);

    let list = server.get("/api/v1/tasks").expect(200).json();
    let warning = list["warnings"][0].as_str().unwrap_or_default().to_string();
    assert!(
        warning.starts_with(&format!(
            "Cannot create the local state directory {}",
            locks.display()
        )) && warning.contains(&format!("{} is not a folder", locks.display()))
            && warning.contains("point XDG_STATE_HOME"),
        "{list}"
    );
    for (path, body) in [
        (format!("/api/v1/tasks/{task}/run"), "{}"),
        (format!("/api/v1/tasks/{task}/runs"), r#"{"count": 2}"#),
        ("/api/v1/bundles/hello/run".to_string(), "{}"),
    ] {
        let r = server.post(&path, body);
        let detail = r.expect(503).detail();
        assert_eq!(
            detail.as_str().unwrap(),
            format!("no run was started, since the explorer can't use its state folder: {warning}; then ask again"),
            "{path}"
        );
    }
    assert_eq!(server.get("/api/v1/workflows").json()["total"], 0);
    let stopped = server.stop();
    assert!(
        stopped.stderr.contains(&format!("warning: {warning}")),
        "{}",
        stopped.stderr
    );
}

#[test]
fn a_seed_naming_a_token_no_step_has_is_refused_with_the_tokens_there_are() {
    let world = World::new();
    // The criterion's name takes the seed: `<who>`, the one token of the task.
    let task = quick_bundle(&world, "greets <who>");
    let ran = world.agent_env(&["run", "./quick"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let server = Explorer::start(&world);
    let t = seg(&task);
    let said = "no step of the task has the token <whoo>, so its value would change nothing; its steps' tokens are <who>";

    let r = server.post(
        &format!("/api/v1/tasks/{t}/run"),
        r#"{"seed": {"whoo": "ann"}}"#,
    );
    assert_eq!(
        r.expect(422).detail(),
        json!([{"loc": ["body", "seed", "whoo"], "msg": said, "type": "value_error"}])
    );
    // In a group, a key is named once, at the first seed that gives it; nothing is started.
    let r = server.post(
        &format!("/api/v1/tasks/{t}/runs"),
        r#"{"seeds": [{"who": "ann"}, {"whoo": "bo"}, {"whoo": "cy"}]}"#,
    );
    assert_eq!(
        r.expect(422).detail(),
        json!([{"loc": ["body", "seeds", "1", "whoo"], "msg": said, "type": "value_error"}])
    );
    assert_eq!(server.get("/api/v1/workflows").json()["total"], 0);

    // hello has no token at all, and says so.
    world.run_hello();
    let r = server.post(
        &format!("/api/v1/tasks/{}/run", seg(HELLO_TASK)),
        r#"{"seed": {"who": "ann"}}"#,
    );
    let detail = r.expect(422).detail();
    assert!(
        detail[0]["msg"]
            .as_str()
            .unwrap()
            .ends_with("its steps have no <key> tokens, so it takes no seed"),
        "{detail}"
    );

    // The token the task has is taken, and fills it in.
    let started = server
        .post(
            &format!("/api/v1/tasks/{t}/run"),
            r#"{"seed": {"who": "ann"}}"#,
        )
        .expect(200)
        .json();
    let workflow = started["workflow_id"].as_str().unwrap();
    let done = server.poll(&format!("/api/v1/workflows/{workflow}"), |w| {
        w["done"] == true
    });
    assert_eq!(done["status"], "finished", "{done}");
}

/// A seed value is put into a `bash_cmd_succeeds` command as shell text: one holding more than
/// plain word text (`;`, `$(…)`, a space, a leading `-`) is refused before anything runs, naming the
/// seed, where it lands, the character and what is allowed; in a criterion's name it is only text.
#[test]
fn a_seed_value_that_would_run_as_shell_code_is_refused_and_nothing_runs() {
    let world = World::new();
    let folder = world.dirs.home.join("greet");
    std::fs::create_dir_all(folder.join("tasks")).unwrap();
    let proof = world.dirs.home.join("injected");
    let task = json!([
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
         "criteria": [{"type": "bash_cmd_succeeds", "criterion": "greets <who>",
                       "bash_cmd": "echo hello <who>"}]}
    ]);
    std::fs::write(folder.join("tasks/greet.json"), task.to_string()).unwrap();
    let ran = world.agent_env(&["run", "./greet"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let server = Explorer::start(&world);
    let t = seg("@local/~/greet/greet");

    let attack = format!("x; touch {}; echo", proof.display());
    let r = server.post(
        &format!("/api/v1/tasks/{t}/run"),
        &json!({"seed": {"who": attack}}).to_string(),
    );
    assert_eq!(
        r.expect(422).detail(),
        json!([{"loc": ["body", "seed", "who"],
                "msg": "seed <who> lands in the bash_cmd of step 'check', criterion 1 (bash_cmd_succeeds), which bash runs, and its value holds ';'; a seed value filled into a command may hold only letters, digits and - _ . , : / @ + = % (at least one of them, no space, no - at its start, and no .. path segment), so that a shell reads it as plain text",
                "type": "value_error"}])
    );
    // A group names each refused value at the first seed that has it, and starts none of them.
    let r = server.post(
        &format!("/api/v1/tasks/{t}/runs"),
        r#"{"seeds": [{"who": "ann"}, {"who": "$(id)"}, {"who": "a b"}, {"who": "-n"}]}"#,
    );
    let detail = r.expect(422).detail();
    let said: Vec<(&str, &str)> = detail
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["loc"][2].as_str().unwrap(), p["msg"].as_str().unwrap()))
        .collect();
    assert_eq!(said.len(), 3, "{detail}");
    assert!(
        said[0].0 == "1" && said[0].1.contains("its value holds '$'"),
        "{detail}"
    );
    assert!(
        said[1].0 == "2" && said[1].1.contains("its value holds ' '"),
        "{detail}"
    );
    assert!(
        said[2].0 == "3" && said[2].1.contains("its value starts with '-'"),
        "{detail}"
    );
    assert_eq!(server.get("/api/v1/workflows").json()["total"], 0);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!proof.exists(), "the seed's command ran");

    // Plain word text is taken, and the run fills it in.
    let started = server
        .post(
            &format!("/api/v1/tasks/{t}/run"),
            r#"{"seed": {"who": "ann-lee@example.org"}}"#,
        )
        .expect(200)
        .json();
    let workflow = started["workflow_id"].as_str().unwrap();
    let done = server.poll(&format!("/api/v1/workflows/{workflow}"), |w| {
        w["done"] == true
    });
    assert_eq!(done["status"], "finished", "{done}");
}

/// A task whose one command takes the seeds `<who>` and `<dir>` (and whose criterion's name takes
/// `<note>`), stored by a run; the explorer on it and the task's `run` route.
fn explorer_on_a_seeded_command(world: &World) -> (Explorer, String) {
    let folder = world.dirs.home.join("wipe");
    std::fs::create_dir_all(folder.join("tasks")).unwrap();
    let task = json!([
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
         "criteria": [{"type": "bash_cmd_succeeds", "criterion": "<note>",
                       "command": "test -n <who> && echo /data/<dir>"}]}
    ]);
    std::fs::write(folder.join("tasks/wipe.json"), task.to_string()).unwrap();
    let ran = world.agent_env(&["run", "./wipe"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let server = Explorer::start(world);
    let t = seg("@local/~/wipe/wipe");
    (server, t)
}

/// An empty value that would land in a command is refused: it drops the word its token stood for
/// (`rm -rf /data/<dir>` given nothing aims at all of `/data/`). Outside a command it is taken.
#[test]
fn an_empty_seed_value_in_a_command_is_refused() {
    let world = World::new();
    let (server, t) = explorer_on_a_seeded_command(&world);
    let r = server.post(
        &format!("/api/v1/tasks/{t}/run"),
        r#"{"seed": {"who": "ann", "dir": "", "note": ""}}"#,
    );
    let detail = r.expect(422).detail();
    assert_eq!(detail.as_array().unwrap().len(), 1, "{detail}");
    assert_eq!(detail[0]["loc"], json!(["body", "seed", "dir"]), "{detail}");
    let said = detail[0]["msg"].as_str().unwrap();
    assert!(
        said.starts_with("seed <dir> lands in the command of step 'check', criterion 1 (bash_cmd_succeeds), which bash runs, and its value is empty"),
        "{said}"
    );
    assert_eq!(server.get("/api/v1/workflows").json()["total"], 0);
}

/// A seed value is text: null, a list or an object is a 422 at its key, where it was put in as its
/// JSON (`test -n null`); a number or true/false is put in as written.
#[test]
fn a_seed_value_that_is_no_text_is_refused() {
    let world = World::new();
    let (server, t) = explorer_on_a_seeded_command(&world);
    let run = format!("/api/v1/tasks/{t}/run");
    let not_text = "a seed value is the text put in place of its token: a string, or a whole number or true/false, which is put in as written; not null, a list, an object, or a number with a fraction or an exponent, which would not be put in as written (send it as a string: \"1.50\")";
    // A number JSON would not write back as sent (1.50 as 1.5, 1e2 as 100.0, a whole number past
    // 64 bits rounded) is refused with them.
    for value in [
        "null",
        "[\"ann\"]",
        "{\"a\": 1}",
        "1.50",
        "1e2",
        "12345678901234567890123",
    ] {
        let r = server.post(
            &run,
            &format!(r#"{{"seed": {{"who": {value}, "dir": "x"}}}}"#),
        );
        assert_eq!(
            r.expect(422).detail(),
            json!([{"loc": ["body", "seed", "who"], "msg": not_text, "type": "value_error"}]),
            "{value}"
        );
    }
    let r = server.post(
        &format!("/api/v1/tasks/{t}/runs"),
        r#"{"seeds": [{"who": "ann", "dir": "x"}, {"who": null, "dir": "x"}]}"#,
    );
    assert_eq!(
        r.expect(422).detail(),
        json!([{"loc": ["body", "seeds", "1", "who"], "msg": not_text, "type": "value_error"}])
    );
    assert_eq!(server.get("/api/v1/workflows").json()["total"], 0);

    let started = server
        .post(&run, r#"{"seed": {"who": 5, "dir": true}}"#)
        .expect(200)
        .json();
    let workflow = started["workflow_id"].as_str().unwrap();
    let done = server.poll(&format!("/api/v1/workflows/{workflow}"), |w| {
        w["done"] == true
    });
    assert_eq!(done["status"], "finished", "{done}");
}

/// A run whose log finds no room (its folder on a full disk) says so in the workflow's lines, as
/// `agent-env run` says it, and its `log` names no file, since the one made holds nothing of it.
#[test]
fn a_run_log_a_full_disk_cut_short_is_warned_of_and_not_pointed_at() {
    use std::process::Command;
    let world = World::new();
    let logs = world.state_root().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&logs)
        .output()
        .is_ok_and(|out| out.status.success());
    if !mounted {
        eprintln!("skipped: a tmpfs cannot be mounted here (needs root and mount)");
        return;
    }
    /// Unmounts the tmpfs at the end, whatever the test finds.
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(logs.clone());
    {
        use std::io::Write;
        let mut filler = std::fs::File::create(logs.join("filler")).unwrap();
        let block = vec![0u8; 4096];
        while filler.write_all(&block).is_ok() {}
        let _ = filler.sync_all();
    }
    let server = Explorer::start(&world);
    let started = server
        .post("/api/v1/bundles/hello/run", "{}")
        .expect(200)
        .json();
    let id = started["workflow_id"].as_str().unwrap();
    let done = server.poll(&format!("/api/v1/workflows/{id}"), |w| w["done"] == true);
    assert_eq!(done["status"], "finished", "{done}");
    let text: Vec<&str> = done["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert!(
        text.iter().any(|l| l.starts_with("warning: cannot write the run log ")
            && l.contains("No space left on device")
            && l.contains("so it holds nothing of this run; free space on the file system that holds it for the next run's log")),
        "{text:?}"
    );
    assert_eq!(done["log"], Value::Null, "{done}");
}

/// The instance list on a local.db cut to 0 bytes says so in its warnings, rather than showing an
/// empty list as if no run had been recorded.
#[test]
fn the_instance_list_on_an_emptied_local_store_says_so() {
    let world = World::new();
    world.run_hello();
    let db = world.state_root().join("document_store").join("local.db");
    std::fs::write(&db, "").unwrap();
    for aside in ["local.db-wal", "local.db-shm"] {
        let _ = std::fs::remove_file(db.with_file_name(aside));
    }
    let server = Explorer::start(&world);
    let listed = server.get("/api/v1/task-instances").expect(200).json();
    let warnings = listed["warnings"].to_string();
    assert!(
        warnings.contains(&format!("{} is empty (0 bytes)", db.display())),
        "{listed}"
    );
    assert_eq!(std::fs::metadata(&db).unwrap().len(), 0);
}

/// A run on a local.db cut to 0 bytes says so in its workflow's lines and its log, as `agent-env
/// run` does, before it writes a new store there.
#[test]
fn a_run_on_an_emptied_local_store_warns_of_it() {
    let world = World::new();
    world.run_hello();
    let db = world.state_root().join("document_store").join("local.db");
    std::fs::write(&db, "").unwrap();
    for aside in ["local.db-wal", "local.db-shm"] {
        let _ = std::fs::remove_file(db.with_file_name(aside));
    }
    let server = Explorer::start(&world);
    let started = server
        .post("/api/v1/bundles/hello/run", "{}")
        .expect(200)
        .json();
    let id = started["workflow_id"].as_str().unwrap();
    let done = server.poll(&format!("/api/v1/workflows/{id}"), |w| w["done"] == true);
    assert_eq!(done["status"], "finished", "{done}");
    let said = format!(
        "warning: {} is empty (0 bytes), so the records it held are not there",
        db.display()
    );
    let text: Vec<&str> = done["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert!(text.iter().any(|l| l.starts_with(&said)), "{text:?}");
    let log = std::fs::read_to_string(done["log"].as_str().unwrap()).unwrap();
    assert!(
        log.contains(&format!("Warning: {}", &said["warning: ".len()..])),
        "{log}"
    );
}

/// A `[stores.document]` naming a plugin's store no installed plugin provides stops no bundle run
/// (which reads its documents from the local store), but a run the explorer starts warns of it in its
/// workflow's lines and its log, as `agent-env run` does.
#[test]
fn a_run_warns_of_a_plugin_store_it_does_not_read_that_no_plugin_provides() {
    let world = World::new();
    world.config("[stores.document]\nimpl = \"nosuch:Thing\"\n");
    let server = Explorer::start(&world);
    let started = server
        .post("/api/v1/bundles/hello/run", "{}")
        .expect(200)
        .json();
    let id = started["workflow_id"].as_str().unwrap();
    let done = server.poll(&format!("/api/v1/workflows/{id}"), |w| w["done"] == true);
    assert_eq!(done["status"], "finished", "{done}");
    let said = "warning: [stores.document] Cannot import impl 'nosuch:Thing': no installed plugin package named 'nosuch'";
    let text: Vec<&str> = done["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert!(text.iter().any(|l| l.starts_with(said)), "{text:?}");
    let log = std::fs::read_to_string(done["log"].as_str().unwrap()).unwrap();
    assert!(
        log.contains(&format!("Warning: {}", &said["warning: ".len()..])),
        "{log}"
    );
}

#[test]
fn a_bundles_task_no_run_has_stored_yet_runs_by_its_id() {
    let world = World::new();
    let server = Explorer::start(&world);
    let r = server.post(&format!("/api/v1/tasks/{}/run", seg(HELLO_TASK)), "{}");
    let started = r.expect(200).json();
    assert_eq!(started["task_version"], 1, "{started}");
    let id = started["workflow_id"].as_str().unwrap();
    let done = server.poll(&format!("/api/v1/workflows/{id}"), |w| w["done"] == true);
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(done["instances"][0]["outcome"], "passed", "{done}");
    // A task no bundle has is still unknown.
    let r = server.post(&format!("/api/v1/tasks/{}/run", seg("@local/nope")), "{}");
    assert_eq!(
        r.expect(404).detail(),
        "Task '@local/nope' (latest) not found"
    );
}

#[test]
fn a_version_below_1_is_a_422_in_a_body_as_in_a_query() {
    let world = World::new();
    world.run_hello();
    let server = Explorer::start(&world);
    let task = seg(HELLO_TASK);
    for v in [0, -1] {
        let r = server.post(
            &format!("/api/v1/tasks/{task}/run"),
            &json!({"version": v}).to_string(),
        );
        assert_eq!(r.expect(422).detail()[0]["loc"], json!(["body", "version"]));
        assert_eq!(r.detail()[0]["type"], "greater_than_equal");
        // One sentence for the rule wherever it is broken, the query's and a group's count's.
        assert_eq!(
            r.detail()[0]["msg"],
            "Input should be greater than or equal to 1"
        );
        let r = server.post(
            &format!("/api/v1/tasks/{task}/runs"),
            &json!({"version": v}).to_string(),
        );
        assert_eq!(r.expect(422).detail()[0]["loc"], json!(["body", "version"]));
        let r = server.get(&format!("/api/v1/tasks/{task}?version={v}"));
        assert_eq!(
            r.expect(422).detail()[0]["loc"],
            json!(["query", "version"])
        );
        assert_eq!(r.detail()[0]["type"], "greater_than_equal");
        assert_eq!(
            r.detail()[0]["msg"],
            "Input should be greater than or equal to 1"
        );
    }
    assert_eq!(
        server.get("/api/v1/workflows").json()["total"],
        0,
        "nothing started"
    );
}

#[test]
fn a_body_giving_a_key_twice_is_refused_as_an_unknown_key_is() {
    let world = World::new();
    let server = Explorer::start(&world);
    let r = server.post(
        &format!("/api/v1/tasks/{}/run", seg(HELLO_TASK)),
        r#"{"version":1,"version":1}"#,
    );
    assert_eq!(r.expect(422).detail()[0]["loc"], json!(["body", "version"]));
    assert_eq!(r.detail()[0]["type"], "duplicate_key");
    let msg = r.detail()[0]["msg"].as_str().unwrap().to_string();
    assert!(msg.contains("given twice"), "{msg}");
    let r = server.post(
        "/api/v1/bundles/hello/run",
        r#"{"tasks":[],"tasks":["hello"]}"#,
    );
    assert_eq!(r.expect(422).detail()[0]["loc"], json!(["body", "tasks"]));
    assert_eq!(
        server.get("/api/v1/workflows").json()["total"],
        0,
        "nothing started"
    );
}

#[test]
fn an_agent_artifact_no_store_holds_is_refused_naming_it() {
    let world = World::new();
    world.run_hello();
    let server = Explorer::start(&world);
    let task = seg(HELLO_TASK);
    for path in [
        format!("/api/v1/tasks/{task}/run"),
        format!("/api/v1/tasks/{task}/runs"),
    ] {
        let r = server.post(&path, r#"{"agent_artifact_id": "nope"}"#);
        let detail = r.expect(404).detail();
        assert!(
            detail
                .as_str()
                .unwrap()
                .contains("agent_artifact_id 'nope' names no stored artifact"),
            "{detail}"
        );
    }
    assert_eq!(
        server.get("/api/v1/workflows").json()["total"],
        0,
        "nothing started"
    );
}

#[test]
fn an_instance_names_its_workflow_only_while_this_explorer_knows_it() {
    let world = World::new();
    let task = seg(HELLO_TASK);
    let server = Explorer::start(&world);
    let started = server
        .post(&format!("/api/v1/tasks/{task}/run"), "{}")
        .expect(200)
        .json();
    let (workflow, instance) = (
        started["workflow_id"].as_str().unwrap().to_string(),
        started["instance_id"].as_str().unwrap().to_string(),
    );
    let one = format!("/api/v1/task-instances/{}", seg(&instance));
    server.poll(&one, finished);
    // Every summary of it says which run recorded it: the task's runs, the list of all instances
    // and the instance's own.
    let summaries = |server: &Explorer| {
        [
            server.get(&format!("/api/v1/tasks/{task}/runs")).json()["items"][0]["workflow_id"]
                .clone(),
            server.get("/api/v1/task-instances").json()["items"][0]["workflow_id"].clone(),
            server.get(&one).json()["summary"]["workflow_id"].clone(),
        ]
    };
    assert_eq!(
        summaries(&server),
        [json!(workflow), json!(workflow), json!(workflow)]
    );
    server.stop();
    // Started again, the explorer does not know that workflow (its page is a 404): no summary
    // names it.
    let server = Explorer::start(&world);
    server
        .get(&format!("/api/v1/workflows/{workflow}"))
        .expect(404);
    assert_eq!(summaries(&server), [Value::Null, Value::Null, Value::Null]);
}

#[test]
fn a_group_the_explorer_did_not_start_has_errors_in_a_tasks_list_as_at_its_own_route() {
    let world = World::new();
    world.run_hello();
    let server = Explorer::start(&world);
    let task = seg(HELLO_TASK);
    let listed = server
        .get(&format!("/api/v1/tasks/{task}/run-groups"))
        .expect(200)
        .json();
    let item = &listed["items"][0];
    assert_eq!(item["errors"], json!([]), "{item}");
    let id = item["run_group_id"].as_str().unwrap();
    let own = server
        .get(&format!("/api/v1/run-groups/{id}"))
        .expect(200)
        .json();
    assert_eq!(own["errors"], json!([]), "{own}");
}

#[test]
fn a_body_sent_as_anything_but_json_is_a_415_and_nothing_runs() {
    let world = World::new();
    let server = Explorer::start(&world);
    let run = format!("/api/v1/tasks/{}/run", seg(HELLO_TASK));
    for (path, headers) in [
        (run.as_str(), vec![("Content-Type", "text/plain")]),
        (
            run.as_str(),
            vec![("Content-Type", "application/x-www-form-urlencoded")],
        ),
        (
            "/api/v1/bundles/hello/run",
            vec![("Content-Type", "text/plain")],
        ),
        ("/api/v1/bundles/hello/run", vec![]),
    ] {
        let r = server.request("POST", path, &headers, b"{}");
        let detail = r.expect(415).detail();
        assert!(
            detail
                .as_str()
                .unwrap()
                .contains("send it with Content-Type: application/json"),
            "{detail}"
        );
    }
    assert_eq!(
        server.get("/api/v1/workflows").json()["total"],
        0,
        "nothing started"
    );
    // A request with no body is served whatever type it names: a GET, a HEAD, and a cancel.
    for (method, path) in [
        ("GET", "/api/v1/health"),
        ("HEAD", "/api/v1/health"),
        ("GET", "/api/v1/tasks?limit=1"),
    ] {
        server
            .request(method, path, &[("Content-Type", "text/plain")], b"")
            .expect(200);
    }
    // JSON with its charset is JSON.
    let started = server
        .request(
            "POST",
            "/api/v1/bundles/hello/run",
            &[("Content-Type", "application/json; charset=utf-8")],
            b"{}",
        )
        .expect(200)
        .json();
    let id = started["workflow_id"].as_str().unwrap();
    server
        .request(
            "POST",
            &format!("/api/v1/workflows/{id}/cancel"),
            &[("Content-Type", "text/plain")],
            b"",
        )
        .expect(200);
}
