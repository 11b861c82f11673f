//! `POST /tasks/{task_id}/cancel-run` of a run this explorer did not start: one that has ended is a
//! 409 saying so, with how it ended, whatever command ran it; one still running in another process
//! is a 404 saying where it runs and how it is cancelled there, without naming a command the
//! instance does not record.

use serde_json::{json, Value};

use crate::api_runs::slow_bundle;
use crate::support::{seg, Explorer, World};

const HELLO_TASK: &str = "@local/agentenv-framework/hello/hello";

/// The instances of `task` the explorer lists.
fn instances(server: &Explorer, task: &str) -> Vec<Value> {
    server
        .get(&format!("/api/v1/tasks/{}/instances", seg(task)))
        .expect(200)
        .json()["items"]
        .as_array()
        .unwrap()
        .clone()
}

/// A process this test started, sent SIGINT and waited for when dropped (a failed assertion too).
struct Interrupted(std::process::Child);

impl Interrupted {
    /// Sends SIGINT and waits for the exit.
    fn stop(&mut self) -> std::process::ExitStatus {
        // SAFETY: kill(2) on this test's own child.
        unsafe {
            libc::kill(self.0.id() as i32, libc::SIGINT);
        }
        self.0.wait().unwrap()
    }
}

impl Drop for Interrupted {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            self.stop();
        }
    }
}

fn cancel(server: &Explorer, task: &str, body: Value) -> crate::support::http::Response {
    server.post(
        &format!("/api/v1/tasks/{}/cancel-run", seg(task)),
        &body.to_string(),
    )
}

#[test]
fn a_cancel_of_a_run_that_ended_says_it_ended_whatever_command_ran_it() {
    let world = World::new();
    world.run_hello();
    // A stored task's run, by agent-env task run.
    let file = world.root.join("stored.json");
    std::fs::write(
        &file,
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "criteria": [{"type": "bash_cmd_succeeds", "criterion": "ok", "bash_cmd": "true"}]}]"#,
    )
    .unwrap();
    let put = world.agent_env(&["task", "put", "--id", "team/stored", file.to_str().unwrap()]);
    assert_eq!(put.code, 0, "{}", put.both());
    let ran = world.agent_env(&["task", "run", "team/stored"]);
    assert_eq!(ran.code, 0, "{}", ran.both());

    let server = Explorer::start(&world);
    for task in [HELLO_TASK, "team/stored"] {
        let listed = instances(&server, task);
        assert_eq!(listed.len(), 1, "{listed:?}");
        let instance = listed[0]["instance_id"].as_str().unwrap();
        let group = listed[0]["context"]["metadata"]["run_group_id"]
            .as_str()
            .unwrap();
        let said = format!(
            "the run of task '{task}' asked for has already ended, so there is nothing to cancel ('{instance}': it completed)"
        );
        for body in [
            json!({"instance_id": instance}),
            json!({"run_group_id": group}),
        ] {
            let r = cancel(&server, task, body);
            let detail = r.expect(409).detail();
            let detail = detail.as_str().unwrap();
            assert_eq!(detail, said);
            assert!(!detail.contains("Ctrl-C"), "{detail}");
        }
    }
}

#[test]
fn a_cancel_of_a_run_going_in_another_process_says_where_it_runs() {
    let world = World::new();
    let (_, task) = slow_bundle(&world);
    // Its run by agent-env run, in a process of its own, waits until it is stopped.
    let mut run = Interrupted(
        world
            .command(&agent_env_test_support::workspace_binary(
                "agent-env",
                "agent-env",
            ))
            .args(["run", "./slowpoke"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let server = Explorer::start(&world);
    let listed = server.poll(&format!("/api/v1/tasks/{}/instances", seg(&task)), |v| {
        v["items"]
            .as_array()
            .is_some_and(|items| items.iter().any(|i| i["status"] == "running"))
    });
    let running = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["status"] == "running")
        .unwrap()
        .clone();
    let instance = running["instance_id"].as_str().unwrap();
    let host = running["run_host"].as_str().unwrap();
    let group = running["context"]["metadata"]["run_group_id"]
        .as_str()
        .unwrap();
    for body in [
        json!({"instance_id": instance}),
        json!({"run_group_id": group}),
    ] {
        let r = cancel(&server, &task, body);
        let detail = r.expect(404).detail();
        let detail = detail.as_str().unwrap().to_string();
        assert_eq!(
            detail,
            format!(
                "the run of task '{task}' asked for ('{instance}') is running in another agent-env process on the machine '{host}', not in this explorer: it is cancelled from there, by Ctrl-C in the terminal that process runs in (or SIGINT to that process)"
            )
        );
    }

    let status = run.stop();
    assert_eq!(status.code(), Some(130), "{status:?}");
}

/// A running instance of `task` in run group `group`, as a run on `host` (or one recording no
/// machine) records it, started by an explorer when `workflow` is given; written to the configured
/// document store. It records no heartbeat and started now, so it may still run.
fn running_instance(
    world: &World,
    task: &str,
    group: &str,
    name: &str,
    host: Option<&str>,
    workflow: Option<&str>,
) -> String {
    use agent_env_store::document::DocumentStore;
    let id = format!("{task}-{name}");
    let mut metadata = json!({"run_group_id": group});
    if let Some(w) = workflow {
        metadata["explorer_workflow_id"] = json!(w);
    }
    let mut doc = json!({"instance_id": id, "task_id": task,
        "task_version": 1, "total_steps": 1, "status": "running", "current_step": 0,
        "created_at_utc": agent_env::clock::minute_now(),
        "started_at_utc": agent_env::clock::iso_now(), "completed_at_utc": null,
        "context": {"metadata": metadata}});
    if let Some(h) = host {
        doc["run_host"] = json!(h);
    }
    agent_env::stores::local::LocalSqliteDocumentStore::new(
        world.state_root().join("document_store/documents.db"),
    )
    .insert("task_instances", doc.as_object().unwrap())
    .unwrap();
    id
}

/// A cancel of a run group whose runs run in different places says each run's own place: the
/// machine it records, or none, and whether another explorer started it. The places of all its runs
/// were merged, so a run recording no machine was said to run on another run's machine, and all of
/// them to be started by another explorer when one was.
#[test]
fn a_cancel_of_a_run_group_running_in_several_places_says_where_each_runs() {
    let world = World::new();
    let file = world.root.join("stored.json");
    std::fs::write(
        &file,
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    )
    .unwrap();
    let task = "team/spread";
    let put = world.agent_env(&["task", "put", "--id", task, file.to_str().unwrap()]);
    assert_eq!(put.code, 0, "{}", put.both());
    let a = running_instance(&world, task, "g", "a", Some("alpha"), None);
    let b = running_instance(&world, task, "g", "b", None, None);
    let c = running_instance(&world, task, "g", "c", Some("alpha"), None);
    let d = running_instance(&world, task, "g", "d", Some("beta"), Some("wf-1"));
    let server = Explorer::start(&world);

    let detail = cancel(&server, task, json!({"run_group_id": "g"}))
        .expect(404)
        .detail();
    let detail = detail.as_str().unwrap();
    assert_eq!(
        detail,
        format!(
            "the runs of task '{task}' asked for are running elsewhere, none in this explorer: '{a}', '{c}' in another agent-env process on the machine 'alpha'; '{b}' in another agent-env process; '{d}' started by another explorer (another agent-env up) on the machine 'beta'. A run in another agent-env process is cancelled from there, by Ctrl-C in the terminal that process runs in (or SIGINT to that process); a run of another explorer is cancelled from that explorer, or by stopping that agent-env up (its runs are cancelled as it stops)"
        )
    );
    // One that records no machine, alone: said so, with no machine.
    let detail = cancel(&server, task, json!({"instance_id": b}))
        .expect(404)
        .detail();
    assert_eq!(
        detail.as_str().unwrap(),
        format!("the run of task '{task}' asked for ('{b}') is running in another agent-env process, not in this explorer: it is cancelled from there, by Ctrl-C in the terminal that process runs in (or SIGINT to that process)")
    );
}
