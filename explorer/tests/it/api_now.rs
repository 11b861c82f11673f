//! The explorer sees this machine as it is now, not as it was when it started: plugins installed
//! (or removed) since, an `agent-env run` under way, and a run that was killed (or left running a day
//! ago by an older agent-env, which recorded no heartbeat).

use std::process::Stdio;
use std::time::{Duration, Instant};

use agent_env::run::liveness::{InstancesIn, RunJournal};
use agent_env_test_support::{fixture, workspace_binary};
use serde_json::{json, Value};

use crate::support::http::events_until;
use crate::support::{seg, Explorer, World};

/// The working fixture plugin, which provides the `echo_step` step type.
fn install_works(world: &World) {
    world.install_manifest(
        "works",
        &format!(
            "[plugin]\nname = \"agentenv-fixture-works\"\nversion = \"0.3.0\"\nexec = [\"{}\"]\nprotocol = [1, 1]\n\n[provides.task_steps]\necho_step = \"EchoStep\"\n",
            fixture("fixture-works").display()
        ),
    );
}

/// A folder bundle `echo` whose one task runs the plugin's `echo_step`.
fn echo_bundle(world: &World) -> String {
    let folder = world.dirs.home.join("echo");
    std::fs::create_dir_all(folder.join("tasks")).unwrap();
    let task = json!([{"id": "say", "type": "echo_step"}]);
    std::fs::write(folder.join("tasks/echo.json"), task.to_string()).unwrap();
    "@local/~/echo/echo".to_string()
}

#[test]
fn a_plugin_installed_after_the_explorer_started_runs_its_steps() {
    let world = World::new();
    let task = echo_bundle(&world);
    install_works(&world);
    let ran = world.agent_env(&["run", "./echo"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    // The explorer starts without the plugin.
    let plugin = world.dirs.plugins.join("works");
    std::fs::remove_dir_all(&plugin).unwrap();
    let server = Explorer::start(&world);
    let run = format!("/api/v1/tasks/{}/run", seg(&task));
    let refused = server.post(&run, "{}").expect(409).detail();
    assert!(
        refused
            .as_str()
            .is_some_and(|d| d.contains("'echo_step' is not a known step type")),
        "{refused}"
    );

    // Installed while it serves: the next run finds it.
    install_works(&world);
    let started = server.post(&run, "{}").expect(200).json();
    let instance = started["instance_id"].as_str().expect("an instance id");
    let done = server.poll(&format!("/api/v1/task-instances/{}", seg(instance)), |v| {
        v["summary"]["outcome"] != "running"
    });
    assert_eq!(done["instance"]["status"], "completed", "{done}");
    assert_eq!(done["progress"]["steps"][0]["state"], "succeeded", "{done}");
    let echoed = &done["instance"]["context"]["metadata"]["echo"]["step"]["type"];
    assert_eq!(echoed, "echo_step", "{done}");

    // And removed again, it is gone for the next one.
    std::fs::remove_dir_all(&plugin).unwrap();
    server.post(&run, "{}").expect(409);
}

/// A folder bundle with one quick task, run once by the CLI: its run group.
fn one_quick_run(world: &World) -> (String, String) {
    let folder = world.dirs.home.join("quick");
    std::fs::create_dir_all(folder.join("tasks")).unwrap();
    let task = json!([
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
         "criteria": [{"type": "bash_cmd_succeeds", "criterion": "ok", "bash_cmd": "true"}]}
    ]);
    std::fs::write(folder.join("tasks/quick.json"), task.to_string()).unwrap();
    let ran = world.agent_env(&["run", "./quick"]);
    assert_eq!(ran.code, 0, "{}", ran.both());
    let db = world.state_root().join("document_store/local.db");
    let stored = agent_env_test_support::documents(&db, "task_instances");
    let group = stored[0]["context"]["metadata"]["run_group_id"]
        .as_str()
        .unwrap()
        .to_string();
    (group, "@local/~/quick/quick".to_string())
}

/// A bundle run under way between two tasks (none running) is not complete: its journal, locked
/// while its process lives, says it goes on. The stream keeps sending snapshots until it ends.
#[test]
fn a_run_group_whose_run_goes_on_is_not_complete_between_its_tasks() {
    let world = World::new();
    let (group, task) = one_quick_run(&world);
    let server = Explorer::start(&world);
    // What a run under way holds: its journal, locked (by this test's process here).
    let journal = RunJournal::begin(
        &world.state_root().join("locks"),
        &group,
        InstancesIn::Local,
        &world.state_root().join("sandboxes"),
    )
    .expect("a journal");
    let state = server
        .get(&format!("/api/v1/run-groups/{group}"))
        .expect(200)
        .json();
    assert_eq!(state["complete"], false, "{state}");
    assert_eq!(state["run_live"], true, "{state}");
    assert_eq!(
        state["total"],
        Value::Null,
        "not known while it runs: {state}"
    );
    assert_eq!(state["recorded"], 1);
    assert_eq!(state["outcomes"], json!({"passed": 1}));

    let port = server.port;
    let path = format!("/api/v1/tasks/{}/run-groups/{group}/stream", seg(&task));
    let stream = std::thread::spawn(move || {
        events_until(port, &path, &["complete", "not_found", "timeout", "error"]).1
    });
    // Two snapshots (every 2 s) while the run goes on, then it ends.
    std::thread::sleep(Duration::from_millis(2500));
    drop(journal);
    let events = stream.join().unwrap();
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert!(names.len() >= 3, "{names:?}");
    assert_eq!(names.last(), Some(&"complete"), "{names:?}");
    assert!(names[..names.len() - 1].iter().all(|n| *n == "snapshot"));
    assert_eq!(events[0].data["run_live"], true);
    let last = &events[events.len() - 1].data;
    assert_eq!(
        (last["total"].clone(), last["run_live"].clone()),
        (json!(1), json!(false))
    );
}

/// A folder bundle whose check writes its shell's pid to `pid_file` and sleeps: killed mid-run, it
/// leaves its instance `running`.
fn sleepy_bundle(world: &World, pid_file: &std::path::Path) {
    let folder = world.dirs.home.join("sleepy");
    std::fs::create_dir_all(folder.join("tasks")).unwrap();
    let command = format!("echo $$ > {}; exec sleep 60", pid_file.display());
    let task = json!([
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "wait", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "w",
         "criteria": [{"type": "bash_cmd_succeeds", "criterion": "slow", "bash_cmd": command}]},
        {"id": "after", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "a",
         "criteria": [{"type": "bash_cmd_succeeds", "criterion": "never", "bash_cmd": "true"}]}
    ]);
    std::fs::write(folder.join("tasks/sleepy.json"), task.to_string()).unwrap();
}

#[test]
fn an_instance_a_killed_run_left_running_is_shown_interrupted() {
    let world = World::new();
    let pid_file = world.root.join("step.pid");
    sleepy_bundle(&world, &pid_file);
    let server = Explorer::start(&world);
    let said = world.root.join("run.err");
    let mut run = world
        .command(&workspace_binary("agent-env", "agent-env"))
        .args(["run", "./sleepy"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&said).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !pid_file.exists() {
        let ended = run.try_wait().unwrap().is_some();
        assert!(
            !ended && Instant::now() < deadline,
            "the step never started: {}",
            std::fs::read_to_string(&said).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let running = server.poll("/api/v1/task-instances?status=running", |page| {
        page["items"][0]["current_step"] == 1
    });
    let summary = &running["items"][0];
    assert_eq!(summary["outcome"], "running", "{summary}");
    let instance = summary["instance_id"].as_str().unwrap().to_string();
    let group = summary["run_group_id"].as_str().unwrap().to_string();

    // kill -9: the run's journal is left behind, unlocked; the step's shell goes too.
    run.kill().unwrap();
    run.wait().unwrap();
    let step: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    end_process(step);

    let seen = server
        .get(&format!("/api/v1/task-instances/{}", seg(&instance)))
        .expect(200)
        .json();
    assert_eq!(seen["instance"]["status"], "running", "as recorded");
    assert_eq!(seen["summary"]["outcome"], "interrupted", "{seen}");
    let warning = seen["summary"]["warning"].as_str().unwrap_or("");
    assert!(warning.contains("ended without finishing"), "{seen}");
    assert_eq!(seen["progress"]["finished"], true);
    let states: Vec<&str> = seen["progress"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["succeeded", "interrupted", "not run"]);
    let state = server.get(&format!("/api/v1/run-groups/{group}")).json();
    assert_eq!(state["complete"], true, "{state}");
    assert_eq!(state["outcomes"], json!({"interrupted": 1}), "{state}");
    // The CLI says the same of it.
    let listed = world.agent_env(&["task", "list"]);
    assert!(
        listed
            .stderr
            .contains("1 earlier run ended without finishing"),
        "{}",
        listed.both()
    );
}

/// What an agent-env from before instances recorded heartbeats left `running` of a stored task's run
/// in group `group`: a start, `started` ago, and nothing since. Written to the configured document
/// store (the default one); its start as recorded.
fn old_style_instance(world: &World, group: &str, started: Duration) -> String {
    use agent_env_store::document::DocumentStore;
    let at = agent_env::clock::rfc3339_utc(std::time::SystemTime::now() - started);
    let doc = json!({"instance_id": format!("team/old-{group}"), "task_id": "team/old",
        "task_version": 1, "total_steps": 1, "status": "running", "current_step": 0,
        "created_at_utc": "2020-01-01 00:00 UTC", "started_at_utc": at, "completed_at_utc": null,
        "context": {"metadata": {"run_group_id": group}}});
    let configured = agent_env::stores::local::LocalSqliteDocumentStore::new(
        world.state_root().join("document_store/documents.db"),
    );
    configured
        .insert("task_instances", doc.as_object().unwrap())
        .unwrap();
    at
}

/// A stored task's instance that an older agent-env left `running` (it records no heartbeat) and
/// that started two days ago is `interrupted`, saying so, and its run group complete: its stream
/// ends. One that started a minute ago may still run. The old one's group showed `running` for
/// ever, and its stream sent snapshots until it timed out.
#[test]
fn an_instance_an_older_agent_env_left_running_a_day_ago_is_interrupted() {
    let world = World::new();
    let day = Duration::from_secs(24 * 60 * 60);
    let started = old_style_instance(&world, "run-old", 2 * day);
    old_style_instance(&world, "run-young", Duration::from_secs(60));
    let server = Explorer::start(&world);

    let state = server.get("/api/v1/run-groups/run-old").expect(200).json();
    assert_eq!(state["outcomes"], json!({"interrupted": 1}), "{state}");
    assert_eq!(state["running"], 0, "{state}");
    assert_eq!(state["complete"], true, "{state}");
    let warning = state["runs"]["items"][0]["instance"]["warning"]
        .as_str()
        .unwrap_or("");
    assert_eq!(
        warning,
        format!("this run of the task records no heartbeat: an older agent-env or another tool wrote it; its last sign of life, its start at {started} (2 days ago), is more than 24 hours old, so it is taken to have ended without finishing: it shows as running until the next run that records to its document store marks it failed"),
        "{state}"
    );
    let path = format!(
        "/api/v1/tasks/{}/run-groups/run-old/stream",
        seg("team/old")
    );
    let (_, events) = events_until(
        server.port,
        &path,
        &["complete", "not_found", "timeout", "error"],
    );
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names.last(), Some(&"complete"), "{names:?}");

    let young = server
        .get("/api/v1/run-groups/run-young")
        .expect(200)
        .json();
    assert_eq!(young["outcomes"], json!({"running": 1}), "{young}");
    assert_eq!(young["complete"], false, "{young}");
}

/// Ends the process `pid` (the step's `sleep`, which outlives the killed run).
fn end_process(pid: i32) {
    let _ = std::process::Command::new("kill")
        .arg(pid.to_string())
        .status();
}

/// A bundle a plugin brings, installed after the explorer started, is listed: the bundle listing
/// reads the plugins as they are now, as runs do.
#[test]
fn a_bundle_installed_after_the_explorer_started_is_listed() {
    let world = World::new();
    let server = Explorer::start(&world);
    let names = || -> Vec<String> {
        let bundles = server.get("/api/v1/bundles").expect(200).json();
        bundles["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["name"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert!(!names().contains(&"late".to_string()));

    let plugin = world.dirs.plugins.join("late");
    std::fs::create_dir_all(plugin.join("bundles/late/tasks")).unwrap();
    std::fs::write(
        plugin.join("agent-env-plugin.toml"),
        "[plugin]\nname = \"agentenv-late\"\nversion = \"1.0.0\"\nexec = [\"./late\"]\nprotocol = [1, 1]\n\n[provides.bundles]\nlate = \"bundles/late\"\n",
    )
    .unwrap();
    let task = json!([
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "check", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
         "criteria": [{"type": "bash_cmd_succeeds", "criterion": "ok", "bash_cmd": "true"}]}
    ]);
    std::fs::write(plugin.join("bundles/late/tasks/t.json"), task.to_string()).unwrap();
    assert!(names().contains(&"late".to_string()), "{:?}", names());
    // A plugin's bundle is a folder, not built in.
    let bundles = server.get("/api/v1/bundles").expect(200).json();
    let late = bundles["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "late")
        .cloned()
        .unwrap();
    assert_eq!(late["built_in"], false, "{late:#}");
    let folder = late["folder"].as_str().unwrap_or_default();
    assert!(folder.ends_with("late/bundles/late"), "{late:#}");
}
