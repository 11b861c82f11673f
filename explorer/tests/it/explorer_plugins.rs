//! Explorer plugins as child processes: routes declared over the protocol and matched before the
//! explorer's own, requests forwarded and answers relayed, and the plugins that fail, conflict, hang,
//! crash or answer garbage — each against the real fixture plugin.

use std::time::{Duration, Instant};

use agent_env_test_support::fixture;
use serde_json::Value;

use crate::support::{Explorer, World};

fn manifest(package: &str, extra: &str) -> String {
    format!(
        "[plugin]\nname = \"{package}\"\nversion = \"0.1.0\"\nexec = [\"{}\", \"{package}\"{extra}]\nprotocol = [1, 1]\n\n[provides.explorer_plugins]\nfx = \"FixtureExplorer\"\n",
        fixture("fixture-explorer").display()
    )
}

fn world_with_fixture(config: &str) -> World {
    let world = World::new();
    world.install_manifest("fx", &manifest("agentenv-fixture-explorer", ""));
    world.config(config);
    world
}

fn listing(server: &Explorer) -> Vec<Value> {
    let r = server.get("/api/v1/explorer-plugins");
    r.expect(200);
    r.json()["plugins"].as_array().cloned().unwrap_or_default()
}

#[test]
fn routes_are_forwarded_and_answers_relayed() {
    let world = world_with_fixture("");
    let server = Explorer::start(&world);

    let page = server.get("/ext/fx");
    page.expect(200);
    assert!(
        page.text().contains("<h1 id=\"fx\">Fixture page</h1>"),
        "{}",
        page.text()
    );
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    // The explorer's own security headers hold for plugin pages too.
    assert!(page
        .header("content-security-policy")
        .is_some_and(|v| v.contains("frame-ancestors 'none'")));

    let item = server.get("/ext/fx/item/a%2Fb?q=two+words");
    item.expect(200);
    let item = item.json();
    assert_eq!(item["id"], "a/b");
    assert_eq!(item["raw"], "a%2Fb");
    assert_eq!(item["q"], "two words");

    let echo = server.request(
        "POST",
        "/ext/fx/echo",
        &[("X-Test", "seen"), ("Content-Type", "text/plain")],
        b"hello body",
    );
    echo.expect(201);
    assert_eq!(echo.text(), "hello body");
    assert_eq!(echo.header("x-method"), Some("POST"));
    assert_eq!(echo.header("x-seen"), Some("seen"));
    assert_eq!(
        echo.header("content-type"),
        Some("application/octet-stream")
    );

    // A literal path under a core prefix is the plugin's; its neighbours stay the core's.
    let literal = server.get("/api/v1/envs/from-plugin");
    literal.expect(200);
    assert_eq!(literal.json()["served_by"], "fixture-explorer");
    server.get("/api/v1/envs/another").expect(404);
    server.get("/api/v1/health").expect(200);
    // A method the plugin does not serve on its path, which no core route serves either, is a 405
    // naming the methods the plugin's route takes.
    let r = server.request("DELETE", "/ext/fx", &[], b"");
    assert_eq!(
        r.expect(405).detail(),
        "Method Not Allowed: this path does not take DELETE; it takes GET, HEAD"
    );
    assert_eq!(r.header("allow"), Some("GET, HEAD"));

    // The plugin reaches the configured stores through host calls.
    let url = server.get("/ext/fx/object");
    url.expect(200);
    assert!(url.text().starts_with("file://"), "{}", url.text());

    // The OpenAPI document lists the plugin's routes with the explorer's own.
    let doc = server.get("/openapi.json").json();
    assert_eq!(
        doc["paths"]["/ext/fx/item/{id}"]["get"]["tags"][0],
        "explorer plugins"
    );
    assert_eq!(
        doc["paths"]["/ext/fx/echo"]["post"]["parameters"],
        serde_json::json!([])
    );
    assert!(doc["paths"]["/api/v1/health"]["get"].is_object());

    let plugins = listing(&server);
    assert_eq!(plugins.len(), 1, "{plugins:?}");
    assert_eq!(plugins[0]["name"], "fx");
    assert_eq!(plugins[0]["package"], "agentenv-fixture-explorer");
    assert_eq!(plugins[0]["page"], "/ext/fx");
    assert_eq!(plugins[0]["title"], "Fixture page");
    assert!(plugins[0]["error"].is_null());
    server.stop();
}

#[test]
fn a_hanging_request_gets_504_and_blocks_nothing_else() {
    let world = world_with_fixture("[explorer]\nplugin_timeout_seconds = 1\n");
    let server = Explorer::start(&world);
    server.get("/ext/fx").expect(200);
    let port = server.port;
    let hanging = std::thread::spawn(move || {
        let started = Instant::now();
        let r = crate::support::http::request(port, "GET", "/ext/fx/hang", &[], b"");
        (r, started.elapsed())
    });
    std::thread::sleep(Duration::from_millis(200));
    // While it hangs, the plugin's other routes and the core's answer.
    server.get("/ext/fx/item/x").expect(200);
    server.get("/api/v1/health").expect(200);
    let (r, took) = hanging.join().unwrap();
    r.expect(504);
    let detail = r.detail();
    assert!(
        detail
            .as_str()
            .unwrap()
            .contains("did not answer within 1s"),
        "{detail}"
    );
    assert!(took < Duration::from_secs(30), "{took:?}");
    server.get("/ext/fx/item/y").expect(200);
    server.stop();
}

#[test]
fn a_crashed_plugin_is_started_again_on_the_next_request_until_the_crash_loop_rule() {
    let world = world_with_fixture("");
    let server = Explorer::start(&world);
    let first = server.get("/ext/fx/item/x").json()["pid"].clone();
    let crash = server.get("/ext/fx/crash");
    crash.expect(502);
    assert!(
        crash
            .detail()
            .as_str()
            .unwrap()
            .contains("explorer plugin 'fx'"),
        "{}",
        crash.detail()
    );
    let again = server.get("/ext/fx/item/x");
    again.expect(200);
    assert_ne!(again.json()["pid"], first, "a new process answers");
    // Crash after crash: the crash-loop rule gives up on it, and says so.
    server.get("/ext/fx/crash").expect(502);
    server.get("/ext/fx/item/x").expect(200);
    server.get("/ext/fx/crash").expect(502);
    let given_up = server.get("/ext/fx/item/x");
    given_up.expect(503);
    let detail = given_up.detail();
    assert!(
        detail.as_str().unwrap().contains("is not available"),
        "{detail}"
    );
    assert!(detail.as_str().unwrap().contains("crash"), "{detail}");
    server.stop();
}

#[test]
fn garbage_and_panics_are_502_with_a_reason() {
    let world = world_with_fixture("");
    let server = Explorer::start(&world);
    let garbage = server.get("/ext/fx/garbage");
    garbage.expect(502);
    assert!(
        garbage.detail().as_str().unwrap().contains("status 999"),
        "{}",
        garbage.detail()
    );
    let panic = server.get("/ext/fx/panic");
    panic.expect(502);
    assert!(
        panic
            .detail()
            .as_str()
            .unwrap()
            .contains("the fixture panics"),
        "{}",
        panic.detail()
    );
    server.get("/ext/fx/item/x").expect(200);
    server.stop();
}

#[test]
fn an_idle_plugin_is_stopped_and_started_again_on_demand() {
    let world = world_with_fixture("[explorer]\nplugin_idle_seconds = 0.5\n");
    let server = Explorer::start(&world);
    let pid = server.get("/ext/fx/item/x").json()["pid"].as_u64().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            Instant::now() < deadline,
            "the idle plugin {pid} was never stopped"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let again = server.get("/ext/fx/item/x");
    again.expect(200);
    assert_ne!(again.json()["pid"].as_u64().unwrap(), pid);
    server.stop();
}

#[test]
fn stopping_the_explorer_stops_its_plugins() {
    let world = world_with_fixture("");
    let server = Explorer::start(&world);
    let pid = server.get("/ext/fx/item/x").json()["pid"].as_u64().unwrap();
    let stopped = server.stop();
    assert_eq!(stopped.code, Some(0), "{}", stopped.stdout);
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the plugin {pid} outlived the explorer"
    );
}

#[test]
fn conflicting_explorer_plugins_serve_nothing_and_say_why() {
    let world = World::new();
    world.install_manifest("fx-a", &manifest("agentenv-fx-a", ""));
    world.install_manifest("fx-b", &manifest("agentenv-fx-b", ""));
    let server = Explorer::start(&world);
    server.get("/ext/fx").expect(404);
    server.get("/api/v1/envs/from-plugin").expect(404);
    let plugins = listing(&server);
    assert_eq!(plugins.len(), 2, "{plugins:?}");
    for p in &plugins {
        let error = p["error"].as_str().unwrap_or("");
        assert!(error.starts_with("conflict:"), "{p}");
    }
    server.stop();
}

#[test]
fn a_plugin_that_cannot_start_serves_nothing_and_the_rest_still_works() {
    let world = World::new();
    world.install_manifest(
        "broken",
        "[plugin]\nname = \"agentenv-broken-explorer\"\nversion = \"0.1.0\"\nexec = [\"/nonexistent/explorer\"]\nprotocol = [1, 1]\n\n[provides.explorer_plugins]\nbroken = \"Broken\"\n",
    );
    let server = Explorer::start(&world);
    server.get("/api/v1/health").expect(200);
    server.get("/").expect(200);
    let plugins = listing(&server);
    assert_eq!(plugins.len(), 1, "{plugins:?}");
    assert!(
        plugins[0]["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{plugins:?}"
    );
    // `up` warned of it once its plugins had loaded, in one line.
    let stopped = server.stop();
    let warnings: Vec<&str> = stopped
        .stderr
        .lines()
        .filter(|l| l.contains("explorer plugin"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", stopped.stderr);
    assert!(
        warnings[0].starts_with(
            "warning: the explorer plugin 'broken' of agentenv-broken-explorer serves nothing: "
        ),
        "{}",
        stopped.stderr
    );
}

/// Explorer plugin routes are bound as `up` starts: one installed since is not served, and the
/// answer says so, and what to do, rather than list nothing.
#[test]
fn an_explorer_plugin_added_since_up_started_is_named_as_not_served_until_a_restart() {
    let world = World::new();
    let server = Explorer::start(&world);
    let before = server.get("/api/v1/explorer-plugins").json();
    assert_eq!(
        before["added_since_start"],
        serde_json::json!([]),
        "{before}"
    );
    assert!(before["note"].is_null(), "{before}");
    world.install_manifest("fx", &manifest("agentenv-fixture-explorer", ""));
    let after = server.get("/api/v1/explorer-plugins").json();
    assert_eq!(after["plugins"], serde_json::json!([]), "{after}");
    assert_eq!(
        after["added_since_start"],
        serde_json::json!([{"name": "fx", "package": "agentenv-fixture-explorer"}]),
        "{after}"
    );
    assert_eq!(
        after["note"],
        "started when agent-env up started; restart it to serve plugins added since"
    );
    server.get("/ext/fx").expect(404);
    // Started again, the explorer serves it.
    server.stop();
    let again = Explorer::start(&world);
    again.get("/ext/fx").expect(200);
    let served = again.get("/api/v1/explorer-plugins").json();
    assert_eq!(
        served["added_since_start"],
        serde_json::json!([]),
        "{served}"
    );
    again.stop();
}

#[test]
fn routes_the_explorer_cannot_serve_are_listed_not_mounted() {
    let world = World::new();
    world.install_manifest(
        "fx",
        &manifest("agentenv-fixture-explorer", ", \"--bad-routes\""),
    );
    let server = Explorer::start(&world);
    server.get("/ext/fx").expect(200);
    let plugins = listing(&server);
    let not_served: Vec<String> = plugins[0]["not_served"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(not_served.len(), 2, "{not_served:?}");
    assert!(
        not_served[0].contains("must start with '/'"),
        "{not_served:?}"
    );
    assert!(not_served[1].contains("serves it first"), "{not_served:?}");
    server.stop();
}

/// `up` starts the explorer plugins only: a plugin that contributes nothing to the explorer is not
/// started (its "process" would leave a marker), while the explorer plugin beside it serves.
#[test]
fn only_explorer_plugins_are_started() {
    let world = world_with_fixture("");
    let marker = world.root.join("step-plugin-started");
    world.install_manifest(
        "steps",
        &format!(
            "[plugin]\nname = \"agentenv-only-steps\"\nversion = \"0.1.0\"\nexec = [\"/usr/bin/touch\", \"{}\"]\nprotocol = [1, 1]\n\n[provides.task_steps]\nonly_step = \"OnlyStep\"\n",
            marker.display()
        ),
    );
    let server = Explorer::start(&world);
    server.get("/ext/fx").expect(200);
    let plugins = listing(&server);
    assert_eq!(plugins.len(), 1, "{plugins:?}");
    assert!(plugins[0]["error"].is_null(), "{plugins:?}");
    assert!(
        !marker.exists(),
        "up started a plugin with no explorer class"
    );
    server.stop();
}

/// An explorer plugin the manifest lists but the process does not provide serves nothing, and says so
/// in the registry's words; the one beside it in the same process still serves.
#[test]
fn a_listed_class_the_process_does_not_provide_fails_to_load() {
    let world = World::new();
    world.install_manifest(
        "fx",
        &manifest("agentenv-fixture-explorer", "").replace(
            "fx = \"FixtureExplorer\"\n",
            "fx = \"FixtureExplorer\"\nghost = \"Ghost\"\n",
        ),
    );
    let server = Explorer::start(&world);
    server.get("/ext/fx").expect(200);
    let plugins = listing(&server);
    let ghost = plugins
        .iter()
        .find(|p| p["name"] == "ghost")
        .unwrap_or_else(|| panic!("{plugins:?}"));
    assert_eq!(
        ghost["error"],
        "failed to load: Ghost is not provided by the plugin (its explorer_plugins are fx)",
        "{plugins:?}"
    );
    server.stop();
}
