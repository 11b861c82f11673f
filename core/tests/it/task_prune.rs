//! `agent-env task prune`: past runs' task instances deleted by age or beyond the newest N of each
//! task, never one still running; `--dry-run` deletes nothing; a prune with no limit deletes nothing.

use serde_json::Value;

use crate::support::run::Sandboxed;

fn json(s: &Sandboxed, args: &[&str]) -> Value {
    let r = s.run(args);
    assert_eq!(r.code, 0, "{}", r.both());
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.both()))
}

fn instance_ids(s: &Sandboxed) -> Vec<String> {
    let mut ids: Vec<String> = s
        .docs("task_instances")
        .iter()
        .map(|d| d["instance_id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

const FAILING: &str = r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
  {"id": "boom", "type": "verify_sandbox", "sandbox_name": "elsewhere", "verifier_id": "v", "criteria": []}]"#;

#[test]
fn the_newest_of_each_task_are_kept_and_a_dry_run_deletes_nothing() {
    let s = Sandboxed::new();
    for _ in 0..3 {
        assert_eq!(s.run(&["run", "hello"]).code, 0);
    }
    s.write("broken/tasks/fails.json", FAILING);
    assert_eq!(s.run(&["run", "./broken"]).code, 1);
    let before = instance_ids(&s);
    assert_eq!(before.len(), 4);

    // Without a limit every instance would go: nothing is deleted, and the user is told what to give.
    let unlimited = s.run(&["task", "prune"]);
    assert_eq!(unlimited.code, 2, "{}", unlimited.both());
    assert!(
        unlimited.stderr.contains("--older-than AGE") && unlimited.stderr.contains("--keep-last N"),
        "{}",
        unlimited.stderr
    );
    assert!(
        unlimited
            .stderr
            .contains("add --dry-run to see what would be deleted first"),
        "{}",
        unlimited.stderr
    );
    assert_eq!(instance_ids(&s), before);
    // A dry run with no limit is not told to add the --dry-run it gave.
    let dry_unlimited = s.run(&["task", "prune", "--dry-run"]);
    assert_eq!(dry_unlimited.code, 2, "{}", dry_unlimited.both());
    assert!(
        dry_unlimited
            .stderr
            .contains("; --dry-run needs one of them too, then lists what they would delete and deletes nothing")
            && !dry_unlimited.stderr.contains("add --dry-run"),
        "{}",
        dry_unlimited.stderr
    );

    let listed = s
        .run(&["task", "list", "--bundle", "hello", "--json"])
        .stdout;
    let newest_hello = serde_json::from_str::<Value>(&listed).unwrap()["instances"][0]
        ["instance_id"]
        .as_str()
        .unwrap()
        .to_string();

    let dry = json(
        &s,
        &["task", "prune", "--keep-last", "1", "--dry-run", "--json"],
    );
    assert_eq!(dry["dry_run"], true, "{dry}");
    assert_eq!(dry["deleted"], 0, "{dry}");
    let chosen: Vec<&str> = dry["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["instance_id"].as_str().unwrap())
        .collect();
    // The two older runs of hello; the one run of `fails` is its newest and stays.
    assert_eq!(chosen.len(), 2, "{dry}");
    assert!(!chosen.contains(&newest_hello.as_str()), "{dry}");
    assert!(chosen.iter().all(|id| id.contains("/hello/")), "{dry}");
    assert_eq!(dry["kept"], 2, "{dry}");
    assert_eq!(instance_ids(&s), before, "a dry run deletes nothing");
    let said = s.run(&["task", "prune", "--keep-last", "1", "--dry-run"]);
    assert!(
        said.stdout
            .contains("Would delete 2 task instances; kept 2 task instances."),
        "{}",
        said.stdout
    );
    // Each row's status as task list shows it: how a completed run came out.
    assert_eq!(
        said.stdout.matches("  completed (passed)  ").count(),
        2,
        "{}",
        said.stdout
    );

    let done = json(&s, &["task", "prune", "--keep-last", "1", "--json"]);
    assert_eq!(done["deleted"], 2, "{done}");
    let after = instance_ids(&s);
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(after.contains(&newest_hello), "{after:?}");
    assert!(after.iter().any(|id| id.contains("/fails-")), "{after:?}");

    // A prune that deleted some says the store does not shrink.
    let by_age = s.run(&["task", "prune", "--older-than", "0m"]);
    assert_eq!(by_age.code, 0, "{}", by_age.both());
    assert!(
        by_age.stdout.contains("Deleted 2 task instances; kept 0 task instances.\nThe document store does not shrink: later runs reuse the space they took."),
        "{}",
        by_age.both()
    );
    assert!(instance_ids(&s).is_empty());
}

#[test]
fn filters_choose_which_tasks_and_a_typo_is_an_error() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    s.write("broken/tasks/fails.json", FAILING);
    assert_eq!(s.run(&["run", "./broken"]).code, 1);

    let typo = s.run(&["task", "prune", "--older-than", "0m", "--task", "helo"]);
    assert_eq!(typo.code, 1, "{}", typo.both());
    assert!(
        typo.stderr.contains("no task 'helo' is recorded")
            && typo.stderr.contains("nothing was deleted"),
        "{}",
        typo.stderr
    );
    assert_eq!(instance_ids(&s).len(), 2);

    let bad_age = s.run(&["task", "prune", "--older-than", "30days"]);
    assert_eq!(bad_age.code, 2, "{}", bad_age.both());
    assert!(
        bad_age.stderr.contains("the unit 'days'"),
        "{}",
        bad_age.stderr
    );

    let done = json(
        &s,
        &[
            "task",
            "prune",
            "--older-than",
            "0m",
            "--bundle",
            "broken",
            "--json",
        ],
    );
    assert_eq!(done["deleted"], 1, "{done}");
    let left = instance_ids(&s);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].contains("/hello/"), "{left:?}");
}

#[test]
fn an_instance_still_running_is_kept() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    let gate = s.home().join("gate");
    s.write_waiting_bundle(&gate);
    let mut run = s
        .command(&["run", "./slow"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let waited = std::time::Instant::now();
    while !s
        .docs("task_instances")
        .iter()
        .any(|d| d["status"] == "running")
    {
        if waited.elapsed() > std::time::Duration::from_secs(60) {
            let _ = run.kill();
            panic!("the slow task's instance never showed as running");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }

    let pruned = json(&s, &["task", "prune", "--older-than", "0m", "--json"]);
    std::fs::write(&gate, "").unwrap();
    assert!(run.wait().unwrap().success());
    assert_eq!(pruned["deleted"], 1, "{pruned}");
    assert_eq!(pruned["kept_running"], 1, "{pruned}");
    let left = s.docs("task_instances");
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(
        left[0]["status"], "completed",
        "the run finished writing it: {left:?}"
    );
    assert!(
        left[0]["instance_id"].as_str().unwrap().contains("/slow-"),
        "{left:?}"
    );
}

/// Makes `n` of the recorded instances look as if they started in 2000.
fn age_instances(s: &Sandboxed, n: usize) {
    let db = rusqlite::Connection::open(s.local_db()).unwrap();
    let changed = db
        .execute(
            "UPDATE docs_task_instances SET doc = json_set(doc, '$.started_at_utc', '2000-01-01T00:00:00.000000Z') WHERE rowid IN (SELECT rowid FROM docs_task_instances ORDER BY rowid LIMIT ?1)",
            [n as i64],
        )
        .unwrap();
    assert_eq!(changed, n);
}

/// A prune by age alone reads only the old instances, and still counts every selected one that
/// stays, with or without filters.
#[test]
fn a_prune_by_age_counts_the_newer_instances_it_keeps() {
    let s = Sandboxed::new();
    for _ in 0..3 {
        assert_eq!(s.run(&["run", "hello"]).code, 0);
    }
    s.write("broken/tasks/fails.json", FAILING);
    assert_eq!(s.run(&["run", "./broken"]).code, 1);
    age_instances(&s, 2);
    for filters in [
        &[][..],
        &["--bundle", "hello"][..],
        &["--task", "hello"][..],
    ] {
        let mut args = vec!["task", "prune", "--older-than", "1d", "--dry-run", "--json"];
        args.extend(filters);
        let dry = json(&s, &args);
        assert_eq!(dry["instances"].as_array().unwrap().len(), 2, "{dry}");
        // The newest hello, and (without a filter) the run of `fails`.
        let kept = if filters.is_empty() { 2 } else { 1 };
        assert_eq!(dry["kept"], kept, "{filters:?}: {dry}");
    }
    let said = s.run(&["task", "prune", "--older-than", "1d", "--bundle", "hello"]);
    assert!(
        said.stdout
            .contains("Deleted 2 task instances; kept 1 task instance."),
        "{}",
        said.both()
    );
    assert_eq!(instance_ids(&s).len(), 2);
}

/// A task name several bundles' tasks share is refused, deleting nothing; more of the id prunes one.
#[test]
fn a_task_name_several_tasks_share_is_refused() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    assert_eq!(
        s.run(&["bundle", "init", "hello1", "--from-bundle", "hello"])
            .code,
        0
    );
    assert_eq!(s.run(&["run", "./hello1"]).code, 0);
    let before = instance_ids(&s);
    for extra in [&[][..], &["--dry-run"][..], &["--keep-last", "0"][..]] {
        let mut args = vec!["task", "prune", "--older-than", "0m", "--task", "hello"];
        args.extend(extra);
        let r = s.run(&args);
        assert_eq!(r.code, 1, "{extra:?}: {}", r.both());
        assert!(
            r.stderr.contains("'hello' names 2 tasks (")
                && r.stderr.contains("/hello1/hello")
                && r.stderr
                    .contains("nothing was deleted; give more of an id, such as @local/"),
            "{}",
            r.stderr
        );
        assert_eq!(instance_ids(&s), before);
    }
    let one = json(
        &s,
        &[
            "task",
            "prune",
            "--older-than",
            "0m",
            "--task",
            "hello1/hello",
            "--json",
        ],
    );
    assert_eq!(one["deleted"], 1, "{one}");
    let left = instance_ids(&s);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(!left[0].contains("/hello1/"), "{left:?}");
}

/// A bundle that selects nothing is said (a warning in JSON); a bundle folder that is not there is
/// an error, as it is to `task list`.
#[test]
fn a_bundle_that_selects_nothing_is_said() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    let none = "None of the 1 recorded task instances matches --bundle nosuch; agent-env task list shows them all.";
    let r = s.run(&["task", "prune", "--older-than", "0m", "--bundle", "nosuch"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stdout
            .starts_with(&format!("{none}\nDeleted 0 task instances")),
        "{}",
        r.both()
    );
    let doc = json(
        &s,
        &[
            "task",
            "prune",
            "--older-than",
            "0m",
            "--bundle",
            "nosuch",
            "--json",
        ],
    );
    assert_eq!(doc["warnings"], serde_json::json!([none]), "{doc}");
    // A filter that selects something says nothing of the kind.
    let doc = json(
        &s,
        &[
            "task",
            "prune",
            "--keep-last",
            "5",
            "--bundle",
            "hello",
            "--json",
        ],
    );
    assert!(doc.get("warnings").is_none(), "{doc}");

    let missing = s.run(&[
        "task",
        "prune",
        "--older-than",
        "0m",
        "--bundle",
        "./nosuch",
    ]);
    assert_eq!(missing.code, 1, "{}", missing.both());
    assert!(
        missing.stderr.contains("--bundle ") && missing.stderr.contains("nothing was deleted"),
        "{}",
        missing.stderr
    );
    assert_eq!(instance_ids(&s).len(), 1);
}

#[test]
fn a_fraction_of_a_unit_asks_for_a_whole_number() {
    let s = Sandboxed::new();
    let r = s.run(&["task", "prune", "--older-than", "1.5h"]);
    assert_eq!(r.code, 2, "{}", r.both());
    assert!(
        r.stderr
            .contains("'1.5h' is not a whole number of hours: an age is a whole number and a unit, such as 90m"),
        "{}",
        r.stderr
    );
}

/// Adds `n` copies of the one recorded instance, each with an id of its own; the copy `running`
/// says it is still running.
fn copy_the_instance(s: &Sandboxed, n: usize, running: usize) {
    let mut db = rusqlite::Connection::open(s.local_db()).unwrap();
    let tx = db.transaction().unwrap();
    for i in 0..n {
        let status = if i == running { "running" } else { "completed" };
        tx.execute(
            "INSERT INTO docs_task_instances (doc) SELECT json_set(doc, '$.instance_id', json_extract(doc, '$.instance_id') || printf('-%04d', ?1), '$.status', ?2) FROM docs_task_instances ORDER BY rowid LIMIT 1",
            rusqlite::params![i as i64, status],
        )
        .unwrap();
    }
    tx.commit().unwrap();
}

/// A prune of many instances deletes every one it chose and says how many, and still keeps the
/// one running among them.
#[test]
fn a_prune_of_many_instances_deletes_them_all_but_the_running_one() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    copy_the_instance(&s, 600, 350);
    assert_eq!(instance_ids(&s).len(), 601);

    let done = json(&s, &["task", "prune", "--older-than", "0m", "--json"]);
    assert_eq!(done["deleted"], 600, "{}", done["kept"]);
    assert_eq!(done["kept_running"], 1, "{}", done["kept"]);
    let left = s.docs("task_instances");
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["status"], "running", "{left:?}");
    assert!(
        left[0]["instance_id"].as_str().unwrap().ends_with("-0350"),
        "{left:?}"
    );
}

/// A prune whose store refuses to delete (another process holds its write lock past the wait) says
/// so in `--json` beside what went (`deleted`, and the instances it chose), exit 1, where it gave
/// only an error document a script would have to parse the sentence of.
#[test]
fn a_refused_prune_says_in_json_what_went_and_why_the_rest_did_not() {
    let s = Sandboxed::new();
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    assert_eq!(s.run(&["run", "hello"]).code, 0);
    let holder = rusqlite::Connection::open(s.local_db()).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let r = s.run(&["task", "prune", "--keep-last", "1", "--json"]);
    holder.execute_batch("ROLLBACK").unwrap();
    assert_eq!(r.code, 1, "{}", r.both());
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["deleted"], 0, "{doc:#}");
    assert_eq!(
        doc["instances"].as_array().map(Vec::len),
        Some(1),
        "{doc:#}"
    );
    assert!(
        doc["error"].as_str().is_some_and(|e| e
            .starts_with("deleted 0 task instances, then the store refused to delete")
            && e.ends_with("run the same command again to delete the rest")),
        "{doc:#}"
    );
    assert_eq!(instance_ids(&s).len(), 2);
}
