//! Two machines, one document store: a stored task's run on one is killed outright (SIGKILL), and the
//! other, which has no journal of it, tells it by its heartbeat stopping. Its readers show the instance
//! stale while it still says `running`, and its next run marks it failed, naming the machine.
//!
//! The machines are two homes whose configured document store is one SQLite file.
//!
//! An instance an agent-env from before heartbeats left `running` records none: it is judged by the
//! latest time it records, stale a day after it, and swept and pruned as a killed run's.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::support::run::Sandboxed;

/// A home whose configured document store is the SQLite file `db`.
fn machine(db: &Path) -> Sandboxed {
    let s = Sandboxed::new();
    s.write(
        ".agentenv/config.toml",
        &format!(
            "[stores.document]\nimpl = \"LocalSqliteDocumentStore\"\nconfig = {{ path = \"{}\" }}\n",
            db.display()
        ),
    );
    s
}

fn put(s: &Sandboxed, id: &str, steps: &str) {
    let file = s.write("task.json", steps);
    let r = s.run(&["task", "put", file.to_str().unwrap(), "--id", id]);
    assert_eq!(r.code, 0, "{}", r.both());
}

/// The instances of `team/slow`, as `task list --json` on `s` shows them.
fn listed(s: &Sandboxed) -> Vec<Value> {
    let r = s.run(&["task", "instances", "team/slow", "--json"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    doc["instances"].as_array().cloned().unwrap_or_default()
}

fn wait_for(what: &str, ready: impl Fn() -> bool) {
    agent_env_test_support::deadline::wait_until(Duration::from_secs(120), what, ready);
}

#[test]
fn a_run_killed_on_one_machine_is_seen_stale_and_marked_failed_by_another() {
    let shared = tempfile::tempdir().unwrap();
    let db = shared.path().join("team.db");
    let release = shared.path().join("release");
    let alice = machine(&db);
    let bob = machine(&db);
    put(
        &alice,
        "team/slow",
        &format!(
            r#"[{{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}},
                {{"id": "wait", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "w",
                  "criteria": [{{"type": "bash_cmd_succeeds",
                                 "command": "while [ ! -e '{}' ]; do sleep 0.05; done"}}]}}]"#,
            release.display()
        ),
    );
    put(
        &alice,
        "team/quick",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );

    let mut run = alice
        .command(&["task", "run", "team/slow"])
        .env("AGENT_ENV_HEARTBEAT_SECONDS", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stored = || {
        agent_env_test_support::documents(&db, "task_instances")
            .into_iter()
            .find(|d| d["task_id"] == "team/slow")
    };
    wait_for("the run's instance in the shared store", || {
        stored().is_some_and(|d| d["running_steps"] == serde_json::json!(["wait"]))
    });
    let first = stored().unwrap();
    assert_eq!(first["heartbeat_seconds"], 1.0, "{first}");
    let host = first["run_host"]
        .as_str()
        .expect("the run's machine")
        .to_string();
    // The heartbeat moves on while the run lives, though its one step says nothing.
    wait_for("a later heartbeat", || {
        stored().is_some_and(|d| d["heartbeat_at_utc"] != first["heartbeat_at_utc"])
    });
    let seen = listed(&bob);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["status"], "running");

    run.kill().unwrap();
    run.wait().unwrap();
    let last = stored().unwrap()["heartbeat_at_utc"].clone();

    // Bob has no journal of Alice's run: the heartbeat alone tells him it stopped.
    wait_for("the instance seen stale", || {
        listed(&bob)[0]["stale"] == true
    });
    let seen = &listed(&bob)[0];
    assert_eq!(seen["status"], "running", "{seen}");
    assert_eq!(seen["heartbeat_at_utc"], last, "{seen}");
    let id = seen["instance_id"].as_str().unwrap().to_string();
    let table = bob.run(&["task", "list"]);
    assert!(
        table.stdout.contains(&format!(
            "running (no sign of life since {})",
            last.as_str().unwrap()
        )),
        "{}",
        table.both()
    );
    let shown = bob.run(&["task", "get-instance", &id]);
    assert!(
        shown.stdout.contains(&format!(
            "status:    running (no sign of life since {}; its run was probably killed on machine {host}",
            last.as_str().unwrap()
        )),
        "{}",
        shown.both()
    );
    let json = bob.run(&["task", "get-instance", &id, "--json"]);
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["stale"], true, "{doc:#}");

    let next = bob.run(&["task", "run", "team/quick"]);
    assert_eq!(next.code, 0, "{}", next.both());
    assert!(
        next.stderr.contains(&format!(
            "note: 1 task instance whose runs stopped sending signs of life (probably killed on machine {host}) marked failed"
        )),
        "{}",
        next.both()
    );
    let marked = stored().unwrap();
    assert_eq!(marked["status"], "failed", "{marked}");
    assert_eq!(
        marked["error"],
        format!(
            "its run stopped sending signs of life at {}; it was probably killed on machine {host} (or its machine stopped); a later run marked it failed",
            last.as_str().unwrap()
        ),
        "{marked}"
    );
    assert_eq!(marked["running_steps"], serde_json::json!([]), "{marked}");
    let seen = &listed(&bob)[0];
    assert_eq!(
        (&seen["status"], &seen["stale"]),
        (&"failed".into(), &false.into())
    );
    // Marked once: the run after has nothing to say of it.
    let again = bob.run(&["task", "run", "team/quick"]);
    assert!(!again.stderr.contains("signs of life"), "{}", again.both());
    std::fs::write(&release, "").unwrap();
}

/// Every run looks for the instances still running to sweep the stale ones: the store holds an index
/// to find them by their status, so a run does not read every instance the store ever recorded.
#[test]
fn the_instances_are_indexed_by_status_for_the_sweep_every_run_makes() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    let db = rusqlite::Connection::open(s.local_db()).unwrap();
    let indexes: Vec<String> = db
        .prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'docs_task_instances'")
        .unwrap()
        .query_map([], |row| row.get::<_, Option<String>>(0))
        .unwrap()
        .filter_map(|sql| sql.unwrap())
        .collect();
    assert!(
        indexes
            .iter()
            .any(|sql| sql.contains(r#"json_extract(doc, '$."status"')"#)),
        "{indexes:?}"
    );
}

/// What an agent-env from before instances recorded heartbeats left `running` when its run was
/// killed: a start, `started` ago, and nothing since (no heartbeat, no interval, no machine). Written
/// to the @local store, as a bundle run records; its id.
fn old_style_instance(s: &Sandboxed, name: &str, started: Duration) -> (String, String) {
    let (id, at) = old_style_instance_as(
        s,
        name,
        started,
        "running",
        serde_json::json!([{"step_id": "box", "status": "success"}]),
    );
    (id, agent_env::clock::rfc3339_utc(at))
}

/// [`old_style_instance`] with `status` and `completed_steps` of its own; its id and start.
fn old_style_instance_as(
    s: &Sandboxed,
    name: &str,
    started: Duration,
    status: &str,
    completed_steps: Value,
) -> (String, std::time::SystemTime) {
    use agent_env::stores::DocumentStore;
    // To the second, as the times an instance records are read back.
    let start = std::time::SystemTime::now() - started;
    let start = std::time::UNIX_EPOCH
        + Duration::from_secs(
            start
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs(),
        );
    let at = agent_env::clock::rfc3339_utc(start);
    let id = format!("@local/~/old/old-{name}");
    let doc = serde_json::json!({"instance_id": id, "task_id": "@local/~/old/old",
        "task_version": 1, "total_steps": 2, "status": status, "error": null,
        "created_at_utc": "2020-01-01 00:00 UTC", "started_at_utc": at, "completed_at_utc": null,
        "current_step": 1, "completed_steps": completed_steps,
        "context": {"metadata": {"run_group_id": format!("run-{name}")}}});
    let local = agent_env::stores::LocalSqliteDocumentStore::local_namespace(s.local_db());
    local
        .insert("task_instances", doc.as_object().unwrap())
        .unwrap();
    (id, start)
}

/// An instance an older agent-env left `running` (it records no heartbeat) that started two days ago
/// is shown stale, saying so; the next run marks it failed, and a prune then takes it. One that
/// started a minute ago may still run: it stays `running`. The old one showed `running` for ever,
/// no run marked it, and every prune kept it as still running.
#[test]
fn an_instance_an_older_agent_env_left_running_is_stale_after_a_day_and_swept() {
    let s = Sandboxed::new();
    let day = Duration::from_secs(24 * 60 * 60);
    let (old, started) = old_style_instance(&s, "gone", 2 * day);
    let (recent, _) = old_style_instance(&s, "young", Duration::from_secs(60));

    let listed = s.run(&["task", "list", "--json"]);
    assert_eq!(listed.code, 0, "{}", listed.both());
    let doc: Value = serde_json::from_str(&listed.stdout).unwrap();
    let row = |id: &str| {
        doc["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["instance_id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no {id}: {doc:#}"))
    };
    assert_eq!(
        (&row(&old)["stale"], &row(&old)["outcome"]),
        (&true.into(), &"stale".into()),
        "{doc:#}"
    );
    assert_eq!(
        (&row(&recent)["stale"], &row(&recent)["outcome"]),
        (&false.into(), &"running".into()),
        "{doc:#}"
    );
    let table = s.run(&["task", "list"]);
    assert!(
        table.stdout.contains(&format!(
            "running (records no heartbeat; last sign of life at {started}, 2 days ago)"
        )),
        "{}",
        table.both()
    );
    let shown = s.run(&["task", "get-instance", &old]);
    assert!(
        shown.stdout.contains(&format!(
            "status:    running (records no heartbeat: an older agent-env or another tool wrote it; its last sign of life, its start at {started} (2 days ago), is more than 24 hours old; the next agent-env run (of a bundle) on this machine marks it failed)\n"
        )),
        "{}",
        shown.both()
    );
    let young = s.run(&["task", "get-instance", &recent]);
    assert!(
        young.stdout.contains("status:    running\n"),
        "{}",
        young.both()
    );
    // A prune keeps both, telling the stale one apart and what lets it go.
    let kept = s.run(&["task", "prune", "--keep-last", "0"]);
    assert_eq!(kept.code, 0, "{}", kept.both());
    assert!(
        kept.stdout.contains("kept 2 task instances (1 still running, which a later prune can take once ended; 1 stale, showing running though its run is over: the next run marks it failed, and a later prune can take it then)"),
        "{}",
        kept.both()
    );

    let next = s.run(&["run", "hello"]);
    assert_eq!(next.code, 0, "{}", next.both());
    assert!(
        next.stderr.contains("note: 1 task instance that records no heartbeat (an older agent-env or another tool wrote it) and whose last sign of life was more than 24 hours old marked failed"),
        "{}",
        next.both()
    );
    let stored = |id: &str| {
        s.docs("task_instances")
            .into_iter()
            .find(|d| d["instance_id"] == id)
    };
    let marked = stored(&old).expect("still recorded");
    assert_eq!(marked["status"], "failed", "{marked}");
    assert_eq!(
        marked["error"],
        format!("it records no heartbeat (an older agent-env or another tool wrote it) and its last sign of life, at {started}, was more than 24 hours before a later run looked, so its run was taken to have ended without finishing it; a later run marked it failed"),
        "{marked}"
    );
    assert_eq!(stored(&recent).expect("recorded")["status"], "running");
    let shown = s.run(&["task", "get-instance", &old]);
    assert!(
        shown.stdout.contains("status:    failed\n"),
        "{}",
        shown.both()
    );

    // Now a prune takes it (and the hello run's); the young one stays, still running.
    let pruned = s.run(&["task", "prune", "--keep-last", "0", "--json"]);
    assert_eq!(pruned.code, 0, "{}", pruned.both());
    let pruned: Value = serde_json::from_str(&pruned.stdout).unwrap();
    assert_eq!(pruned["deleted"], 2, "{pruned:#}");
    assert_eq!(
        (&pruned["kept_running"], &pruned["kept_stale"]),
        (&1.into(), &0.into()),
        "{pruned:#}"
    );
    assert!(stored(&old).is_none());
    assert_eq!(stored(&recent).expect("kept")["status"], "running");
}

/// An instance an older agent-env left `running` is judged by its start plus the durations its
/// completed steps record (that agent-env records no time after the start): one that started 30
/// hours ago whose steps took 10 hours may still run; one that started 3 days ago whose steps took
/// 2 hours is stale, said by that last sign of life, not as one that recorded nothing since its
/// start. Both were judged by their start alone, said to have recorded nothing since.
#[test]
fn an_instance_an_older_agent_env_left_running_is_judged_by_its_steps_too() {
    let s = Sandboxed::new();
    let hour = Duration::from_secs(60 * 60);
    let steps = |hours: f64| {
        serde_json::json!([{"step_id": "box", "status": "success", "duration_seconds": hours * 1800.0},
            {"step_id": "check", "status": "success", "duration_seconds": hours * 1800.0}])
    };
    let (busy, _) = old_style_instance_as(&s, "busy", 30 * hour, "running", steps(10.0));
    let (gone, started) = old_style_instance_as(&s, "gone", 72 * hour, "running", steps(2.0));
    let listed = s.run(&["task", "list", "--json"]);
    assert_eq!(listed.code, 0, "{}", listed.both());
    let doc: Value = serde_json::from_str(&listed.stdout).unwrap();
    let stale_of = |id: &str| {
        doc["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["instance_id"] == id)
            .map(|r| r["stale"].clone())
    };
    let busy_shown = s.run(&["task", "get-instance", &busy]);
    assert_eq!(
        stale_of(&busy),
        Some(false.into()),
        "{doc:#} {}",
        busy_shown.both()
    );
    assert_eq!(stale_of(&gone), Some(true.into()), "{doc:#}");
    let shown = s.run(&["task", "get-instance", &gone]);
    let last = agent_env::clock::rfc3339_utc(started + 2 * hour);
    assert!(
        shown.stdout.contains(&format!(
            "status:    running (records no heartbeat: an older agent-env or another tool wrote it; its last sign of life, as its steps' records show, at {last} (2 days ago), is more than 24 hours old;"
        )),
        "{}",
        shown.both()
    );
    assert!(
        !shown.stdout.contains("recorded nothing"),
        "{}",
        shown.both()
    );
}

/// A `queued` instance that records no heartbeat is not judged stale, however old: the sweep and
/// `task prune` take `running` instances only, and every reader agrees with them. It was shown
/// stale and promised to be marked failed by the next run, which never did.
#[test]
fn a_queued_instance_that_records_no_heartbeat_is_not_called_stale() {
    let s = Sandboxed::new();
    let day = Duration::from_secs(24 * 60 * 60);
    let (queued, _) = old_style_instance_as(&s, "waiting", 3 * day, "queued", Value::Array(vec![]));
    let listed = s.run(&["task", "list", "--json"]);
    assert_eq!(listed.code, 0, "{}", listed.both());
    let doc: Value = serde_json::from_str(&listed.stdout).unwrap();
    let row = doc["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["instance_id"] == queued.as_str())
        .cloned()
        .unwrap_or_else(|| panic!("no {queued}: {doc:#}"));
    assert_eq!(row["stale"], false, "{doc:#}");
    let shown = s.run(&["task", "get-instance", &queued]);
    assert!(
        !shown.stdout.contains("records no heartbeat"),
        "{}",
        shown.both()
    );
    assert!(
        !shown.stdout.contains("marks it failed"),
        "{}",
        shown.both()
    );
}
