//! The versioned collections: the envelope, pagination, filters, percent-encoded ids, 404s and 422s.

use agent_env::run::local_stores;
use serde_json::{json, Value};

use crate::support::{seg, Explorer, World};

/// Writes `n` versions of each of `ids` to the world's @local store's `collection`.
fn seed(world: &World, collection: &str, ids: &[(&str, &str)], versions: i64) {
    let stores = local_stores::open(&world.state_root());
    for (id, kind) in ids {
        for v in 1..=versions {
            let doc = json!({
                "id": id, "type": kind, "version": v, "name": id,
                "created_at_utc": format!("2026-01-0{v}T00:00:00Z"),
            });
            let Value::Object(doc) = doc else {
                unreachable!()
            };
            stores.documents.insert(collection, &doc).expect("seeded");
        }
    }
}

#[test]
fn lists_answer_the_envelope_and_page_through_the_newest_versions() {
    let world = World::new();
    let ids: Vec<String> = (0..7).map(|i| format!("@local/demo/a{i}")).collect();
    let pairs: Vec<(&str, &str)> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), if i % 2 == 0 { "file" } else { "image" }))
        .collect();
    seed(&world, "artifacts", &pairs, 2);
    let server = Explorer::start(&world);

    let page = server
        .get("/api/v1/artifacts?limit=3&offset=0&sort_by=id&descending=false")
        .json();
    assert_eq!(page["total"], 7);
    assert_eq!(page["limit"], 3);
    assert_eq!(page["offset"], 0);
    assert_eq!(page["has_more"], true);
    let first: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        first,
        ["@local/demo/a0", "@local/demo/a1", "@local/demo/a2"]
    );
    assert!(
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["version"] == 2),
        "newest versions only"
    );

    let last = server
        .get("/api/v1/artifacts?limit=3&offset=6&sort_by=id&descending=false")
        .json();
    assert_eq!(last["items"].as_array().unwrap().len(), 1);
    assert_eq!(last["has_more"], false);

    let images = server.get("/api/v1/artifacts?type=image").json();
    assert_eq!(images["total"], 3);
    let both = server.get("/api/v1/artifacts?type=image&type=file").json();
    assert_eq!(both["total"], 7, "type repeats as a union");
    let by_id = server.get("/api/v1/artifacts?id=a4").json();
    assert_eq!(by_id["total"], 1);
    assert_eq!(by_id["items"][0]["id"], "@local/demo/a4");

    let defaults = server.get("/api/v1/envs").json();
    assert_eq!(
        defaults,
        json!({"items": [], "total": 0, "limit": 50, "offset": 0, "has_more": false})
    );
}

#[test]
fn ids_are_one_percent_encoded_segment_and_versions_list_newest_first() {
    let world = World::new();
    seed(&world, "evals", &[("@local/demo/with/slashes", "eval")], 3);
    let server = Explorer::start(&world);
    let id = seg("@local/demo/with/slashes");
    assert!(id.contains("%2F"));

    let latest = server
        .get(&format!("/api/v1/evals/{id}"))
        .expect(200)
        .json();
    assert_eq!(latest["id"], "@local/demo/with/slashes");
    assert_eq!(latest["version"], 3);
    let second = server.get(&format!("/api/v1/evals/{id}?version=2")).json();
    assert_eq!(second["version"], 2);

    let versions = server
        .get(&format!("/api/v1/evals/{id}/versions?limit=2"))
        .json();
    assert_eq!(versions["total"], 3);
    assert_eq!(versions["limit"], 2);
    assert_eq!(versions["has_more"], true);
    let numbers: Vec<i64> = versions["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["version"].as_i64().unwrap())
        .collect();
    assert_eq!(numbers, [3, 2]);
}

#[test]
fn unknown_ids_are_404_and_bad_parameters_422() {
    let world = World::new();
    let server = Explorer::start(&world);
    let r = server.get(&format!("/api/v1/tasks/{}", seg("@local/nope")));
    r.expect(404);
    assert_eq!(r.detail(), "Task '@local/nope' (latest) not found");
    let r = server.get(&format!("/api/v1/agents/{}?version=4", seg("x")));
    assert_eq!(r.expect(404).detail(), "Agent 'x' version 4 not found");
    // Every version of a task that has none: the task is not found, no "(latest)" about it.
    let r = server.get(&format!("/api/v1/tasks/{}/versions", seg("@local/nope")));
    assert_eq!(
        r.expect(404).detail(),
        "Task '@local/nope' not found: no version of it is stored"
    );

    for (query, param) in [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("offset=-1", "offset"),
        ("limit=ten", "limit"),
        ("descending=perhaps", "descending"),
        ("sort_by=a%3Bb", "sort_by"),
        ("sort_by=nosuch", "sort_by"),
    ] {
        let r = server.get(&format!("/api/v1/tasks?{query}"));
        r.expect(422);
        assert_eq!(r.detail()[0]["loc"], json!(["query", param]), "{query}");
    }
    // A field to sort by is one the documents have, and the 422 names them.
    let r = server.get("/api/v1/tasks?sort_by=nosuch&descending=false");
    assert_eq!(
        r.expect(422).detail()[0]["msg"],
        "sort_by can't be 'nosuch': it should be one of 'created_at_utc', 'id', 'name', 'type', 'version'"
    );
    server.get("/api/v1/tasks?sort_by=name").expect(200);
    let r = server.get(&format!("/api/v1/tasks/{}?version=x", seg("t")));
    assert_eq!(
        r.expect(422).detail()[0]["loc"],
        json!(["query", "version"])
    );

    let r = server.get("/api/v1/nothing-here");
    assert!(r
        .expect(404)
        .detail()
        .as_str()
        .unwrap()
        .starts_with("Not Found: no API route serves GET /api/v1/nothing-here"));
    // An id with a '/' left unencoded splits into two segments: the answer says how to write it.
    let r = server.get("/api/v1/tasks/team/stored");
    let detail = r.expect(404).detail();
    assert!(
        detail
            .as_str()
            .unwrap()
            .contains("write a '/' in it as %2F"),
        "{detail}"
    );
    let r = server.request("DELETE", "/api/v1/tasks", &[], b"");
    assert_eq!(
        r.expect(405).detail(),
        "Method Not Allowed: this path does not take DELETE; it takes GET, HEAD"
    );
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
    // As it says: HEAD is served where GET is.
    server
        .request("HEAD", "/api/v1/tasks", &[], b"")
        .expect(200);
    // Outside /api too, the 405 says what the path takes, in one form of `Allow`.
    for path in ["/openapi.json", "/"] {
        let r = server.request("POST", path, &[], b"");
        assert_eq!(
            r.expect(405).detail(),
            "Method Not Allowed: this path does not take POST; it takes GET, HEAD",
            "{path}"
        );
        assert_eq!(r.header("allow"), Some("GET, HEAD"), "{path}");
        assert_eq!(r.header("content-type"), Some("application/json"), "{path}");
    }
    let r = server.get(&format!("/api/v1/tasks/{}/run", seg("t")));
    assert!(r
        .expect(405)
        .detail()
        .as_str()
        .unwrap()
        .ends_with("it takes POST"));
}

#[test]
fn a_body_too_large_is_refused_in_the_apis_shape() {
    let world = World::new();
    let server = Explorer::start(&world);
    let big = vec![b' '; 3 * 1024 * 1024];
    let r = server.request(
        "POST",
        &format!("/api/v1/tasks/{}/run", seg("t")),
        &[("Content-Type", "application/json")],
        &big,
    );
    assert_eq!(
        r.expect(413).detail(),
        "the request body is larger than the 2 MB the API reads; send a smaller one"
    );
}

/// A task id as `agent-env task list` prints it (a bundle run's task without `@local/`) names the same
/// task in every task route and the instance filter.
#[test]
fn a_task_id_as_the_cli_prints_it_is_the_stored_task() {
    let world = World::new();
    let ran = world.agent_env(&["run", "hello", "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let server = Explorer::start(&world);
    let printed = "agentenv-framework/hello/hello";
    let task = server
        .get(&format!("/api/v1/tasks/{}", seg(printed)))
        .expect(200)
        .json();
    assert_eq!(
        task["id"], "@local/agentenv-framework/hello/hello",
        "{task}"
    );
    let versions = server
        .get(&format!("/api/v1/tasks/{}/versions", seg(printed)))
        .expect(200)
        .json();
    assert_eq!(versions["total"], 1, "{versions}");
    let runs = server
        .get(&format!("/api/v1/tasks/{}/instances", seg(printed)))
        .expect(200)
        .json();
    assert_eq!(runs["total"], 1, "{runs}");
    let filtered = server
        .get(&format!("/api/v1/task-instances?task_id={}", seg(printed)))
        .expect(200)
        .json();
    assert_eq!(filtered["total"], 1, "{filtered}");
    // An id no task has is still not found, under the name it was given.
    let missing = server.get(&format!(
        "/api/v1/tasks/{}/instances",
        seg("nobody/nothing")
    ));
    assert_eq!(
        missing.expect(404).detail(),
        "Task 'nobody/nothing' not found"
    );
}

#[test]
fn a_path_ending_in_a_slash_is_told_so_and_the_path_without_it() {
    let world = World::new();
    let server = Explorer::start(&world);
    for (path, without) in [
        ("/api/v1/tasks/", "/api/v1/tasks"),
        ("/api/v1/health/", "/api/v1/health"),
    ] {
        let detail = server.get(path).expect(404).detail();
        let detail = detail.as_str().unwrap();
        assert!(
            detail.contains(&format!("no API path ends in '/': ask for {without};")),
            "{detail}"
        );
        assert!(!detail.contains("%2F"), "{detail}");
    }
    let detail = server.get("/api/v1/nothing-here/").expect(404).detail();
    let detail = detail.as_str().unwrap();
    assert!(detail.contains("no API path ends in '/';"), "{detail}");
    assert!(!detail.contains("ask for"), "{detail}");
}

#[test]
fn a_404_cuts_a_very_long_id_short_naming_its_length() {
    let world = World::new();
    let server = Explorer::start(&world);
    let long = "x".repeat(60_000);
    for (method, path) in [
        ("GET", format!("/api/v1/tasks/{long}")),
        ("GET", format!("/api/v1/tasks/{long}/versions")),
        ("GET", format!("/api/v1/task-instances/{long}")),
        ("GET", format!("/api/v1/workflows/{long}")),
        ("GET", format!("/api/v1/run-groups/{long}")),
        ("POST", format!("/api/v1/tasks/{long}/run")),
        ("POST", format!("/api/v1/bundles/{long}/run")),
        ("GET", format!("/api/v1/nothing/{long}")),
    ] {
        let r = server.request(
            method,
            &path,
            &[("Content-Type", "application/json")],
            b"{}",
        );
        let detail = r.expect(404).detail();
        let detail = detail.as_str().unwrap();
        assert!(
            detail.len() < 2_000,
            "{method} {}: {} bytes",
            &path[..30],
            detail.len()
        );
        // The id, or for a path no route serves, the path.
        assert!(
            detail.contains("… (60000 characters)") || detail.contains("… (60016 characters)"),
            "{detail}"
        );
    }
}
