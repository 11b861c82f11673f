//! A long-lived explorer keeps its runs that are still going and the newest finished ones; older
//! finished runs are let go, a group of runs whole, and the API then tells them from the store as it
//! tells the runs of an explorer since restarted.

use serde_json::{json, Value};

use crate::api_runs::{slow_bundle, start_group, start_slow};
use crate::support::http::Response;
use crate::support::{seg, Explorer, World};

const HELLO_TASK: &str = "@local/agentenv-framework/hello/hello";

/// Starts one run of the hello task and waits for it to finish; its workflow and instance ids.
fn hello_run(server: &Explorer) -> (String, String) {
    let started = server
        .post(&format!("/api/v1/tasks/{}/run", seg(HELLO_TASK)), "{}")
        .expect(200)
        .json();
    let workflow = started["workflow_id"].as_str().unwrap().to_string();
    let done = server.poll(&format!("/api/v1/workflows/{workflow}"), |w| {
        w["done"] == true
    });
    assert_eq!(done["status"], "finished", "{done}");
    let instance = done["instances"][0]["instance_id"]
        .as_str()
        .unwrap()
        .to_string();
    (workflow, instance)
}

fn ids(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["workflow_id"].as_str().unwrap().to_string())
        .collect()
}

#[track_caller]
fn let_go(answer: &Response) {
    answer.expect(404);
    let detail = answer.detail();
    let said = detail.as_str().unwrap_or_default();
    assert!(
        said.contains("lets a finished one go once 2 newer have finished")
            && said.contains("/api/v1/task-instances"),
        "{detail}"
    );
}

#[test]
fn the_oldest_finished_runs_are_let_go_and_told_from_the_store() {
    let world = World::new();
    let (_, slow_task) = slow_bundle(&world);
    let server = Explorer::start_with_env(&world, &[("AGENT_ENV_EXPLORER_KEPT_RUNS", "2")]);

    // The oldest run goes on throughout: a run still going is never let go.
    let slow_instance = start_slow(&server, &slow_task);
    let slow = server
        .get(&format!("/api/v1/task-instances/{}", seg(&slow_instance)))
        .json()["summary"]["workflow_id"]
        .as_str()
        .unwrap()
        .to_string();

    // A group of two runs, then three single runs, each waited for: three finished runs are one
    // more than kept, so the group went when the first single run finished (a group goes whole),
    // and the first single run when the third finished.
    let group = start_group(&server, HELLO_TASK, 2);
    let group_id = group["run_group_id"].as_str().unwrap().to_string();
    let in_group: Vec<String> = group["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["workflow_id"].as_str().unwrap().to_string())
        .collect();
    let group_path = format!("/api/v1/run-groups/{group_id}");
    let whole = server.poll(&group_path, |g| g["complete"] == true);
    assert_eq!(whole["workflows"].as_array().unwrap().len(), 2, "{whole}");
    let (first, first_instance) = hello_run(&server);
    let (second, second_instance) = hello_run(&server);
    let (third, _) = hello_run(&server);

    // Kept: the runs still going and the newest two finished, newest first.
    let listed = server.get("/api/v1/workflows").expect(200).json();
    assert_eq!(
        ids(&listed),
        [third.clone(), second.clone(), slow.clone()],
        "{listed}"
    );
    let going = server.get(&format!("/api/v1/workflows/{slow}")).json();
    assert_eq!(going["status"], "running", "{going}");
    let newest = server.get(&format!("/api/v1/workflows/{third}")).json();
    assert!(!newest["lines"].as_array().unwrap().is_empty(), "{newest}");

    // A run let go is a 404 saying why, for its page, its log and a cancel alike.
    for id in in_group.iter().chain([&first]) {
        let_go(&server.get(&format!("/api/v1/workflows/{id}")));
        let_go(&server.get(&format!("/api/v1/workflows/{id}/log")));
        let_go(&server.post(&format!("/api/v1/workflows/{id}/cancel"), "{}"));
    }

    // Its instances stay in the store, naming no workflow, as after a restart; a kept run's name it.
    let one = |instance: &str| {
        server
            .get(&format!("/api/v1/task-instances/{}", seg(instance)))
            .expect(200)
            .json()
    };
    let gone = one(&first_instance);
    assert_eq!(gone["summary"]["outcome"], "passed", "{gone}");
    assert_eq!(gone["summary"]["workflow_id"], Value::Null, "{gone}");
    assert_eq!(gone["workflow"], Value::Null, "{gone}");
    let kept = one(&second_instance);
    assert_eq!(kept["summary"]["workflow_id"], json!(second), "{kept}");
    assert_eq!(kept["workflow"]["workflow_id"], json!(second), "{kept}");

    // The group let go is told from the store alone: its two runs, none of them a workflow.
    let told = server.get(&group_path).expect(200).json();
    assert_eq!(told["total"], 2, "{told}");
    assert_eq!(told["complete"], true, "{told}");
    assert_eq!(told["workflows"], json!([]), "{told}");
    assert_eq!(told["errors"], json!([]), "{told}");
    let rows = told["runs"]["items"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{told}");
    for row in rows {
        assert_eq!(row["workflow"], Value::Null, "{told}");
        assert_eq!(row["instance"]["workflow_id"], Value::Null, "{told}");
        assert_eq!(row["instance"]["outcome"], "passed", "{told}");
    }

    // The run that went on, once it ends, is the oldest finished: it is let go in turn.
    server
        .post(&format!("/api/v1/workflows/{slow}/cancel"), "{}")
        .expect(200);
    let path = format!("/api/v1/workflows/{slow}");
    server.poll(&path, |w| w["done"] == true || w["detail"].is_string());
    let_go(&server.get(&path));
    let listed = server.get("/api/v1/workflows").expect(200).json();
    assert_eq!(ids(&listed), [third, second], "{listed}");
}

#[test]
fn a_kept_runs_variable_that_cannot_be_read_stops_the_start_naming_it() {
    let world = World::new();
    for value in ["0", "many", "100001"] {
        let out = world
            .command(std::path::Path::new(crate::support::server::EXPLORER))
            .args(["--port", "0"])
            .env("AGENT_ENV_EXPLORER_KEPT_RUNS", value)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!("AGENT_ENV_EXPLORER_KEPT_RUNS is '{value}'"))
                && stderr.contains("fix or unset it"),
            "{stderr}"
        );
    }
}
