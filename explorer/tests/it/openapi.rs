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
    ("get", "/api/v1/workflows/{workflow_id}/log"),
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

/// `schema` with its `$ref` followed and an `allOf` merged into one object schema (later members'
/// properties over earlier ones').
fn resolved(doc: &Value, schema: &Value) -> Value {
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.trim_start_matches("#/components/schemas/");
        let target = &doc["components"]["schemas"][name];
        assert!(!target.is_null(), "{r} is not in the document");
        return resolved(doc, target);
    }
    let Some(members) = schema["allOf"].as_array() else {
        return schema.clone();
    };
    let mut merged = serde_json::json!({"type": "object", "properties": {}, "required": []});
    for member in members {
        let member = resolved(doc, member);
        if let Some(props) = member["properties"].as_object() {
            for (k, v) in props {
                merged["properties"][k] = v.clone();
            }
        }
        if let Some(required) = member["required"].as_array() {
            merged["required"]
                .as_array_mut()
                .unwrap()
                .extend(required.iter().cloned());
        }
    }
    merged
}

fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        other => panic!("a schema type the check does not know: {other}"),
    }
}

/// What of `value`, at `at`, `schema` does not describe. An object schema that lists properties
/// and says nothing of others is taken as listing them all, so a field an answer gains undocumented
/// is found.
fn mismatches(doc: &Value, schema: &Value, value: &Value, at: &str, found: &mut Vec<String>) {
    let schema = resolved(doc, schema);
    if let Some(options) = schema["anyOf"].as_array() {
        let fits = options.iter().any(|o| {
            let mut none = Vec::new();
            mismatches(doc, o, value, at, &mut none);
            none.is_empty()
        });
        if !fits {
            found.push(format!("{at}: {value} fits none of {}", schema["anyOf"]));
        }
        return;
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !types.is_empty() && !types.iter().any(|t| has_type(value, t)) {
        found.push(format!("{at}: {value} is not {types:?}"));
        return;
    }
    if let Some(words) = schema["enum"].as_array() {
        if !words.contains(value) {
            found.push(format!("{at}: {value} is not one of {words:?}"));
        }
    }
    if let (Some(items), Some(values)) = (schema.get("items"), value.as_array()) {
        for (i, v) in values.iter().enumerate() {
            mismatches(doc, items, v, &format!("{at}[{i}]"), found);
        }
    }
    let Some(object) = value.as_object() else {
        return;
    };
    for key in schema["required"].as_array().into_iter().flatten() {
        let key = key.as_str().unwrap();
        if !object.contains_key(key) {
            found.push(format!("{at}: no '{key}'"));
        }
    }
    let properties = schema["properties"].as_object();
    for (key, v) in object {
        let place = format!("{at}.{key}");
        match (
            properties.and_then(|p| p.get(key)),
            schema.get("additionalProperties"),
        ) {
            (Some(s), _) => mismatches(doc, s, v, &place, found),
            (None, Some(Value::Bool(true))) => {}
            (None, Some(other)) if other.is_object() => mismatches(doc, other, v, &place, found),
            (None, _) if properties.is_some() => found.push(format!("{place} is not documented")),
            (None, _) => {}
        }
    }
}

/// Asks `method url` (of the document's `path`) and checks that the status is one the document
/// lists for the operation and that the body fits the schema it gives for that status.
fn answers_as_documented(
    server: &Explorer,
    doc: &Value,
    method: &str,
    path: &str,
    url: &str,
    body: &str,
) -> Value {
    let r = server.request(
        &method.to_uppercase(),
        url,
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    );
    let response = &doc["paths"][path][method]["responses"][r.status.to_string()];
    assert!(
        !response.is_null(),
        "{method} {url} answered {}, which the document does not list: {}",
        r.status,
        r.text()
    );
    let schema = &response["content"]["application/json"]["schema"];
    let body = r.json();
    let mut found = Vec::new();
    mismatches(doc, schema, &body, "answer", &mut found);
    assert!(
        found.is_empty(),
        "{method} {url}:\n{}\n{body}",
        found.join("\n")
    );
    body
}

const HELLO_TASK: &str = "@local/agentenv-framework/hello/hello";

/// What the API answers is what its document says it answers: each route's answer fits the
/// schema of its status, and that status is one it lists (a field added to an answer and not to
/// the document fails here).
#[test]
fn every_answer_fits_the_schema_the_document_gives_it() {
    use crate::support::seg;
    let world = World::new();
    world.run_hello();
    let server = Explorer::start(&world);
    let doc = server.get("/openapi.json").expect(200).json();
    let check = |method: &str, path: &str, url: &str, body: &str| {
        answers_as_documented(&server, &doc, method, path, url, body)
    };
    let task = seg(HELLO_TASK);

    for path in [
        "/api/v1/health",
        "/api/v1/config",
        "/api/v1/plugin-report",
        "/api/v1/explorer-plugins",
        "/api/v1/bundles",
        "/api/v1/task-instances",
        "/api/v1/artifacts",
        "/api/v1/envs",
        "/api/v1/tasks",
        "/api/v1/agents",
        "/api/v1/evals",
    ] {
        check("get", path, path, "");
    }
    check(
        "get",
        "/api/v1/tasks/{entity_id}",
        &format!("/api/v1/tasks/{task}"),
        "",
    );
    check(
        "get",
        "/api/v1/tasks/{entity_id}/versions",
        &format!("/api/v1/tasks/{task}/versions"),
        "",
    );

    // A group of one run, started here: its group, its workflow, its instance.
    let started = check(
        "post",
        "/api/v1/tasks/{task_id}/runs",
        &format!("/api/v1/tasks/{task}/runs"),
        r#"{"count": 1}"#,
    );
    let group = started["run_group_id"].as_str().unwrap().to_string();
    let workflow = started["runs"][0]["workflow_id"]
        .as_str()
        .unwrap()
        .to_string();
    let done = server.poll(&format!("/api/v1/run-groups/{group}"), |g| {
        g["complete"] == true
    });
    let instance = seg(done["runs"]["items"][0]["instance"]["instance_id"]
        .as_str()
        .unwrap());

    for (path, url) in [
        (
            "/api/v1/run-groups/{run_group_id}",
            format!("/api/v1/run-groups/{group}"),
        ),
        (
            "/api/v1/tasks/{task_id}/run-groups/{run_group_id}",
            format!("/api/v1/tasks/{task}/run-groups/{group}?outcome=passed"),
        ),
        (
            "/api/v1/tasks/{task_id}/run-groups",
            format!("/api/v1/tasks/{task}/run-groups"),
        ),
        (
            "/api/v1/tasks/{task_id}/runs",
            format!("/api/v1/tasks/{task}/runs"),
        ),
        (
            "/api/v1/tasks/{task_id}/instances",
            format!("/api/v1/tasks/{task}/instances"),
        ),
        (
            "/api/v1/tasks/{task_id}/instances/{instance_id}",
            format!("/api/v1/tasks/{task}/instances/{instance}"),
        ),
        (
            "/api/v1/tasks/{task_id}/instances/{instance_id}/progress",
            format!("/api/v1/tasks/{task}/instances/{instance}/progress"),
        ),
        (
            "/api/v1/tasks/{task_id}/instances/{instance_id}/triggers",
            format!("/api/v1/tasks/{task}/instances/{instance}/triggers"),
        ),
        (
            "/api/v1/task-instances/{task_instance_id}",
            format!("/api/v1/task-instances/{instance}"),
        ),
        (
            "/api/v1/task-instances/{task_instance_id}/conversations",
            format!("/api/v1/task-instances/{instance}/conversations"),
        ),
        ("/api/v1/workflows", "/api/v1/workflows".to_string()),
        (
            "/api/v1/workflows/{workflow_id}",
            format!("/api/v1/workflows/{workflow}"),
        ),
    ] {
        check("get", path, &url, "");
    }
    let group_doc = check(
        "get",
        "/api/v1/run-groups/{run_group_id}",
        &format!("/api/v1/run-groups/{group}"),
        "",
    );
    assert!(
        group_doc["created_at_utc"]
            .as_str()
            .is_some_and(|t| t.ends_with(" UTC")),
        "a group's created_at_utc is the minute its first instance records: {group_doc}"
    );
    // The run log is text: its 200 is documented as text/plain, and it is served as that.
    let log = server.get(&format!("/api/v1/workflows/{workflow}/log"));
    assert_eq!(log.status, 200, "{}", log.text());
    assert_eq!(
        log.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert!(
        doc["paths"]["/api/v1/workflows/{workflow_id}/log"]["get"]["responses"]["200"]["content"]
            ["text/plain"]["schema"]["type"]
            == "string",
        "the log's 200 is not documented as text/plain"
    );
    check(
        "get",
        "/api/v1/workflows/{workflow_id}/log",
        "/api/v1/workflows/nothing/log",
        "",
    );
    check(
        "post",
        "/api/v1/workflows/{workflow_id}/cancel",
        &format!("/api/v1/workflows/{workflow}/cancel"),
        "",
    );
    check(
        "post",
        "/api/v1/tasks/{task_id}/cancel-run",
        &format!("/api/v1/tasks/{task}/cancel-run"),
        &format!(r#"{{"workflow_id": "{workflow}"}}"#),
    );

    // Failures answer as documented too: a bound, a word, a body, an id.
    check("get", "/api/v1/tasks", "/api/v1/tasks?limit=100000", "");
    check("get", "/api/v1/tasks", "/api/v1/tasks?sort_by=nothing", "");
    check(
        "get",
        "/api/v1/task-instances",
        "/api/v1/task-instances?status=nothing",
        "",
    );
    check(
        "get",
        "/api/v1/task-instances",
        "/api/v1/task-instances?cursor=nothing",
        "",
    );
    check(
        "post",
        "/api/v1/tasks/{task_id}/runs",
        &format!("/api/v1/tasks/{task}/runs"),
        r#"{"count": 101}"#,
    );
    check(
        "get",
        "/api/v1/run-groups/{run_group_id}",
        "/api/v1/run-groups/rg-000000000000",
        "",
    );
    check(
        "get",
        "/api/v1/workflows/{workflow_id}",
        "/api/v1/workflows/nothing",
        "",
    );
    check(
        "get",
        "/api/v1/objects/metadata",
        "/api/v1/objects/metadata?object_url=file%3A%2F%2F%2Fnothing",
        "",
    );
    check(
        "get",
        "/api/v1/objects/metadata",
        "/api/v1/objects/metadata",
        "",
    );
}

/// The check above finds a field an answer has and its schema does not list, a missing one, and a
/// word outside an enum.
#[test]
fn the_schema_check_finds_what_an_answer_adds_or_lacks() {
    let doc = serde_json::json!({"components": {"schemas": {"G": {
        "type": "object",
        "properties": {"id": {"type": "string"}, "state": {"type": "string", "enum": ["a", "b"]}},
        "required": ["id"],
    }}}});
    let schema = serde_json::json!({"$ref": "#/components/schemas/G"});
    let found = |value: Value| {
        let mut found = Vec::new();
        mismatches(&doc, &schema, &value, "answer", &mut found);
        found
    };
    assert!(found(serde_json::json!({"id": "x", "state": "a"})).is_empty());
    assert_eq!(
        found(serde_json::json!({"id": "x", "created_at_utc": "t"})),
        ["answer.created_at_utc is not documented"]
    );
    assert_eq!(found(serde_json::json!({"state": "c"})).len(), 2);
}
