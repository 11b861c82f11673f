//! `/openapi.json` matches what is served: every route of the original is documented, and every
//! documented route answers (not the router's "Not Found" or "Method Not Allowed").

use serde_json::Value;

use crate::support::{Explorer, World};

/// The original's routes under `/api/v1`, and ours beyond them.
const EXPECTED: &[(&str, &str)] = &[
    ("get", "/api/v1/artifacts"),
    ("get", "/api/v1/artifacts/{entity_id}"),
    ("get", "/api/v1/artifacts/{entity_id}/versions"),
    ("get", "/api/v1/envs"),
    ("get", "/api/v1/envs/{entity_id}"),
    ("get", "/api/v1/envs/{entity_id}/versions"),
    ("get", "/api/v1/tasks"),
    ("get", "/api/v1/tasks/{entity_id}"),
    ("get", "/api/v1/tasks/{entity_id}/versions"),
    ("get", "/api/v1/agents"),
    ("get", "/api/v1/agents/{entity_id}"),
    ("get", "/api/v1/agents/{entity_id}/versions"),
    ("get", "/api/v1/evals"),
    ("get", "/api/v1/evals/{entity_id}"),
    ("get", "/api/v1/evals/{entity_id}/versions"),
    ("get", "/api/v1/objects/content"),
    ("get", "/api/v1/objects/metadata"),
    ("post", "/api/v1/tasks/{task_id}/run"),
    ("post", "/api/v1/tasks/{task_id}/runs"),
    ("post", "/api/v1/tasks/{task_id}/cancel-run"),
    ("get", "/api/v1/tasks/{task_id}/runs"),
    ("get", "/api/v1/tasks/{task_id}/instances"),
    ("get", "/api/v1/tasks/{task_id}/instances/{instance_id}"),
    (
        "get",
        "/api/v1/tasks/{task_id}/instances/{instance_id}/progress",
    ),
    (
        "get",
        "/api/v1/tasks/{task_id}/instances/{instance_id}/triggers",
    ),
    ("get", "/api/v1/tasks/{task_id}/run-groups"),
    ("get", "/api/v1/tasks/{task_id}/run-groups/{run_group_id}"),
    (
        "get",
        "/api/v1/tasks/{task_id}/run-groups/{run_group_id}/stream",
    ),
    (
        "get",
        "/api/v1/task-instances/{task_instance_id}/conversations",
    ),
    ("get", "/api/v1/task-instances"),
    ("get", "/api/v1/task-instances/{task_instance_id}"),
    ("get", "/api/v1/run-groups/{run_group_id}"),
    ("get", "/api/v1/bundles"),
    ("post", "/api/v1/bundles/{bundle}/run"),
    ("get", "/api/v1/workflows"),
    ("get", "/api/v1/workflows/{workflow_id}"),
    ("post", "/api/v1/workflows/{workflow_id}/cancel"),
    ("get", "/api/v1/plugin-report"),
    ("get", "/api/v1/plugin-report/{package}"),
    ("get", "/api/v1/explorer-plugins"),
    ("get", "/api/v1/config"),
    ("get", "/api/v1/health"),
];

fn documented(doc: &Value) -> Vec<(String, String)> {
    let mut all = Vec::new();
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        for method in ops.as_object().expect("operations").keys() {
            all.push((method.clone(), path.clone()));
        }
    }
    all.sort();
    all
}

/// `path` with each `{param}` replaced by a sample value.
fn sample(path: &str) -> String {
    path.split('/')
        .map(|part| {
            if part.starts_with('{') {
                "sample%2Fid"
            } else {
                part
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[test]
fn the_document_lists_exactly_the_routes_served() {
    let world = World::new();
    let server = Explorer::start(&world);
    let doc = server.get("/openapi.json").expect(200).json();
    assert_eq!(doc["info"]["title"], "agent-env explorer");
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));

    let mut expected: Vec<(String, String)> = EXPECTED
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    expected.sort();
    assert_eq!(documented(&doc), expected);

    for (method, path) in documented(&doc) {
        let url = sample(&path);
        let url = if path.ends_with("/stream") {
            format!("{url}?probe=1")
        } else {
            url
        };
        if path.ends_with("/stream") {
            // A stream of a group nobody knows says so in its first event; it is still served.
            let (_, events) = crate::support::http::events_until(server.port, &url, &["not_found"]);
            assert_eq!(events.last().map(|e| e.name.as_str()), Some("not_found"));
            continue;
        }
        let r = server.request(
            &method.to_uppercase(),
            &url,
            &[("Content-Type", "application/json")],
            b"{}",
        );
        let unrouted = r.status == 404
            && r.json()["detail"]
                .as_str()
                .is_some_and(|d| d.starts_with("Not Found: no API route"));
        let routed = !unrouted && r.status != 405;
        assert!(
            routed,
            "{method} {path} is documented but not served: {} {}",
            r.status,
            r.text()
        );
        assert_ne!(r.status, 500, "{method} {path}: {}", r.text());
    }

    // Something not documented is not served.
    let r = server.get("/api/v1/tasks/a/b/c/d");
    assert_eq!(r.status, 404);
    assert!(r
        .detail()
        .as_str()
        .unwrap()
        .starts_with("Not Found: no API route"));
}
