//! `agent-env run --dry-run` as a pre-flight check: what it sees the run would fail makes it exit as
//! the run would (1), said at its end and, with `--json`, in each task's `would_fail`; what is only
//! worth knowing leaves it at 0.

use serde_json::{json, Value};

use crate::support::run::{Ran, Sandboxed};

fn json_of(ran: &Ran) -> Value {
    serde_json::from_str(&ran.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", ran.both()))
}

/// Each task's path and the ids of the steps its `would_fail` names.
fn would_fail(doc: &Value) -> Vec<(String, Vec<String>)> {
    doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let steps = t["would_fail"]
                .as_array()
                .unwrap_or_else(|| panic!("no would_fail: {t}"))
                .iter()
                .map(|w| w["step_id"].as_str().unwrap().to_string())
                .collect();
            (t["path"].as_str().unwrap().to_string(), steps)
        })
        .collect()
}

/// What the line a dry run ends with says when it sees a task the run would fail.
const CLOSING: &str = "this dry run exits";

#[test]
fn a_clean_dry_run_exits_0_and_names_no_task_that_would_fail() {
    let s = Sandboxed::new();
    s.copy_hello("clean");
    let r = s.run(&["run", "./clean", "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(!r.stderr.contains(CLOSING), "{}", r.both());

    let r = s.run(&["run", "./clean", "--dry-run", "--json"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let doc = json_of(&r);
    assert_eq!(doc["status"], "dry_run");
    assert_eq!(doc["exit_code"], 0);
    assert_eq!(
        would_fail(&doc),
        [("tasks/hello.json".to_string(), Vec::<String>::new())]
    );
}

/// A sandbox deployed again once it is up, and one no step deploys: each fails its step, and the
/// task with it. The dry run says so, ends saying how many tasks would fail, and exits 1, as the run
/// itself then does; a task it sees nothing wrong with is not counted.
#[test]
fn a_dry_run_that_sees_a_sure_failure_exits_as_the_run_would() {
    let s = Sandboxed::new();
    s.write(
        "boxes/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "box2", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "v", "type": "verify_sandbox", "sandbox_name": "bx", "verifier_id": "v",
             "criteria": [{"type": "probe_dir_exists", "paths": ["."]}]}]"#,
    );
    s.write(
        "boxes/tasks/fine.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./boxes"]);
    assert_eq!(r.code, 1, "{}", r.both());
    for said in [
        "note: tasks/t.json: two deploy_sandbox steps deploy the sandbox 'box' ('box', then 'box2'): a task deploys each sandbox once, so step 'box2' fails, and the task with it\n",
        "note: tasks/t.json: step 'v' names the sandbox 'bx', which no deploy_sandbox step of the task deploys: the step fails, and the task with it\n",
    ] {
        assert!(r.stderr.contains(said), "{said}\n{}", r.both());
    }
    let last = r.stderr.lines().last().unwrap_or_default();
    assert_eq!(
        last,
        "1 of 2 tasks would fail (tasks/t.json; the notes above say why): this dry run exits 1, as a real run would",
        "{}",
        r.both()
    );
    // Nothing was written or run.
    assert!(!s.state().exists(), "the state root was created");

    let r = s.run(&["run", "--dry-run", "./boxes", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc = json_of(&r);
    assert_eq!(doc["status"], "dry_run");
    assert_eq!(doc["exit_code"], 1);
    let mut tasks = would_fail(&doc);
    tasks.sort();
    assert_eq!(
        tasks,
        [
            ("tasks/fine.json".to_string(), vec![]),
            (
                "tasks/t.json".to_string(),
                vec!["box2".to_string(), "v".to_string()]
            ),
        ]
    );
    let t = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == "tasks/t.json")
        .unwrap();
    assert_eq!(t["outcome"], "planned");
    assert!(
        t["would_fail"][1]["error"]
            .as_str()
            .unwrap()
            .starts_with("step 'v' names the sandbox 'bx', which no deploy_sandbox step"),
        "{t}"
    );

    // The run itself fails that task, and exits with the code the dry run did.
    let run = s.run(&["run", "./boxes", "--json"]);
    assert_eq!(run.code, 1, "{}", run.both());
    let doc = json_of(&run);
    let outcomes: Vec<(&str, &str)> = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["path"].as_str().unwrap(), t["outcome"].as_str().unwrap()))
        .collect();
    assert!(
        outcomes.contains(&("tasks/t.json", "failed")),
        "{outcomes:?}"
    );
    assert!(
        outcomes.contains(&("tasks/fine.json", "unscored")),
        "{outcomes:?}"
    );
    // A real run's tasks carry no prediction.
    assert!(doc["tasks"][0].get("would_fail").is_none(), "{doc}");
}

/// Steps with no `depends_on` run in order: a step that names a sandbox only a later step deploys
/// runs before it is up. The dry run says the step fails, and the task with it, and exits 1; the
/// run fails that step.
#[test]
fn a_sandbox_deployed_only_by_a_later_step_fails_the_step_that_names_it() {
    let s = Sandboxed::new();
    s.write(
        "late/tasks/t.json",
        r#"[{"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "criteria": [{"type": "probe_dir_exists", "paths": ["."]}]},
            {"id": "a", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );
    let said = "step 'v' names the sandbox 'box', which only a later step deploys ('a', which waits for 'v'): the sandbox is not up when 'v' runs, so the step fails, and the task with it";
    let r = s.run(&["run", "--dry-run", "./late"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr.contains(&format!("note: tasks/t.json: {said}\n")),
        "{}",
        r.both()
    );
    let r = s.run(&["run", "--dry-run", "./late", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert_eq!(
        would_fail(&json_of(&r)),
        [("tasks/t.json".to_string(), vec!["v".to_string()])]
    );

    let run = s.run(&["run", "./late", "--json"]);
    assert_eq!(run.code, 1, "{}", run.both());
    let doc = json_of(&run);
    let task = &doc["tasks"][0];
    assert_eq!(task["outcome"], "failed", "{task}");
    let v = task["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|st| st["step_id"] == "v")
        .unwrap_or_else(|| panic!("no step 'v': {task}"));
    assert_eq!(v["status"], "failed", "{task}");
    assert!(
        v["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Sandbox 'box' not found in context.deployed_sandboxes"),
        "{task}"
    );

    // A step that starts apart from the deploy may find the sandbox up: a note, exit 0.
    s.write(
        "apart/tasks/t.json",
        r#"[{"id": "a", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "depends_on": [],
             "criteria": [{"type": "probe_dir_exists", "paths": ["."]}]}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./apart"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stderr.contains("note: tasks/t.json: step 'v' names the sandbox 'box' but does not wait for the step that deploys it ('a'): the step may fail"),
        "{}",
        r.both()
    );
    assert!(!r.stderr.contains(CLOSING), "{}", r.both());
}

/// What does not fail the task is a notice: a field name that is likely a typo, a step that fails
/// without failing the task, two steps deploying one sandbox that do not wait for each other when
/// only one of them fails the task on error (whether the task fails is left to which starts
/// first). The dry run says each and exits 0.
#[test]
fn a_dry_run_with_only_notices_exits_0() {
    let s = Sandboxed::new();
    s.write(
        "notes/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v", "agregator": "any_pass",
             "criteria": [{"type": "probe_dir_exists", "paths": ["."]}]},
            {"id": "w", "type": "verify_sandbox", "sandbox_name": "bx", "verifier_id": "w",
             "fail_task_on_error": false,
             "criteria": [{"type": "probe_dir_exists", "paths": ["."]}]}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./notes"]);
    assert_eq!(r.code, 0, "{}", r.both());
    for said in [
        "note: tasks/t.json: step 'v': 'agregator' is not a field it reads: did you mean 'aggregator'?\n",
        "note: tasks/t.json: step 'w' names the sandbox 'bx', which no deploy_sandbox step of the task deploys: the step fails, without failing the task (its fail_task_on_error is false)\n",
    ] {
        assert!(r.stderr.contains(said), "{said}\n{}", r.both());
    }
    assert!(!r.stderr.contains(CLOSING), "{}", r.both());
    let r = s.run(&["run", "--dry-run", "./notes", "--json"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let doc = json_of(&r);
    assert_eq!(
        (&doc["status"], &doc["exit_code"]),
        (&json!("dry_run"), &json!(0))
    );
    assert_eq!(would_fail(&doc), [("tasks/t.json".to_string(), vec![])]);
    assert!(
        doc["warnings"].as_array().unwrap().len() >= 2,
        "the notes are the document's warnings: {doc}"
    );
    // The run itself goes on past the step that fails, and exits 0.
    let run = s.run(&["run", "./notes"]);
    assert_eq!(run.code, 0, "{}", run.both());

    s.write(
        "apart/tasks/t.json",
        r#"[{"id": "a", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "b", "type": "deploy_sandbox", "sandbox_name": "box", "depends_on": [],
             "fail_task_on_error": false}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./apart"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        r.stderr.contains("note: tasks/t.json: two deploy_sandbox steps deploy the sandbox 'box' ('a' and 'b') and neither waits for the other: a task deploys each sandbox once, so one of 'a' and 'b' fails, whichever starts second; the task fails with it if that is 'a' (the fail_task_on_error of 'b' is false)\n"),
        "{}",
        r.both()
    );
    assert!(!r.stderr.contains(CLOSING), "{}", r.both());
}

/// Two steps that deploy one sandbox and do not wait for each other both start: whichever claims
/// the name second fails, however close together they start, and the task with it when both fail
/// it on error. The dry run says which (in words: one of the two) and exits 1; the run fails the
/// task at exactly one of them, leaving one sandbox to tear down.
#[test]
fn two_deploys_of_one_sandbox_that_start_apart_fail_the_task_at_one_of_them() {
    let s = Sandboxed::new();
    s.write(
        "apart/tasks/t.json",
        r#"[{"id": "a", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "b", "type": "deploy_sandbox", "sandbox_name": "box", "depends_on": []}]"#,
    );
    let said = "two deploy_sandbox steps deploy the sandbox 'box' ('a' and 'b') and neither waits for the other: a task deploys each sandbox once, so one of 'a' and 'b' fails, whichever starts second, and the task with it";
    let r = s.run(&["run", "--dry-run", "./apart"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr.contains(&format!("note: tasks/t.json: {said}\n")),
        "{}",
        r.both()
    );
    assert_eq!(
        r.stderr.lines().last().unwrap_or_default(),
        "1 of 1 task would fail (tasks/t.json; the notes above say why): this dry run exits 1, as a real run would",
        "{}",
        r.both()
    );

    let r = s.run(&["run", "--dry-run", "./apart", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc = json_of(&r);
    assert_eq!(
        doc["tasks"][0]["would_fail"],
        json!([{"step_id": "b", "error": said, "one_of": ["a", "b"]}])
    );

    // The run: both steps start as soon as the task does; each time, exactly one gets the sandbox.
    for _ in 0..3 {
        let run = s.run(&["run", "./apart", "--json"]);
        assert_eq!(run.code, 1, "{}", run.both());
        let doc = json_of(&run);
        let task = &doc["tasks"][0];
        assert_eq!(task["outcome"], "failed", "{task}");
        let mut ends: Vec<(String, String)> = task["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|st| {
                (
                    st["status"].as_str().unwrap().to_string(),
                    st["error"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        ends.sort();
        assert_eq!(ends.len(), 2, "{task}");
        assert_eq!(ends[0].0, "failed", "{task}");
        assert!(
            ends[0].1.starts_with("Sandbox 'box' is already deployed ")
                && ends[0].1.contains(
                    ": a task deploys each sandbox once, so give this step another sandbox_name"
                ),
            "{task}"
        );
        assert_eq!(ends[1], ("succeeded".to_string(), String::new()), "{task}");
        assert!(
            run.stderr.contains("Tore down 1 sandbox.")
                || run.stdout.contains("Tore down 1 sandbox."),
            "{}",
            run.both()
        );
        assert!(s.sandboxes_left().is_empty(), "{:?}", s.sandboxes_left());
    }
}

/// Weights that add up to 0 score the step 0 whatever its checks find: under `--fail-under` above 0
/// the run exits 3, and so does the dry run, naming the task and the step; without it (or at 0) the
/// score is only worth knowing.
#[test]
fn a_dry_run_holds_a_fixed_score_to_fail_under() {
    let s = Sandboxed::new();
    s.write(
        "zero/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "aggregator": "weighted_average",
             "criteria": [{"type": "probe_dir_exists", "paths": ["."], "weight": 0}]}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./zero", "--fail-under", "0.5"]);
    assert_eq!(r.code, 3, "{}", r.both());
    let tail: Vec<&str> = r.stderr.lines().rev().take(2).collect();
    assert_eq!(
        tail,
        [
            "1 of 1 task would score below --fail-under 0.5 (tasks/t.json; the notes above say why): this dry run exits 3, as a real run would",
            "tasks/t.json: step 'v' would score 0 whatever its checks find, below --fail-under 0.5",
        ],
        "{}",
        r.both()
    );
    let r = s.run(&[
        "run",
        "--dry-run",
        "./zero",
        "--fail-under",
        "0.5",
        "--json",
    ]);
    assert_eq!(r.code, 3, "{}", r.both());
    let doc = json_of(&r);
    assert_eq!(
        (&doc["status"], &doc["exit_code"]),
        (&json!("dry_run"), &json!(3))
    );
    assert_eq!(doc["tasks"][0]["would_score"], json!({"v": 0.0}));
    assert_eq!(doc["tasks"][0]["would_fail"], json!([]));

    for args in [&["--fail-under", "0"][..], &[]] {
        let r = s.run(&[&["run", "--dry-run", "./zero"][..], args].concat());
        assert_eq!(r.code, 0, "{args:?}: {}", r.both());
        assert!(!r.stderr.contains(CLOSING), "{}", r.both());
    }
    // The run itself: 3 above 0, as the dry run said.
    let run = s.run(&["run", "./zero", "--fail-under", "0.5"]);
    assert_eq!(run.code, 3, "{}", run.both());
}

/// A task whose steps are all built in and none of which gives a score ends with none, which
/// `--fail-under` counts as below any score: the run exits 3, and so does the dry run (at 0 too),
/// naming the task; without it the dry run exits 0.
#[test]
fn a_dry_run_holds_a_task_with_no_score_to_fail_under() {
    let s = Sandboxed::new();
    s.write(
        "plain/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
    );
    s.write(
        "plain/tasks/scored.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "criteria": [{"type": "probe_dir_exists", "paths": ["."]}]}]"#,
    );
    for minimum in ["0.5", "0"] {
        let r = s.run(&["run", "--dry-run", "./plain", "--fail-under", minimum]);
        assert_eq!(r.code, 3, "{minimum}: {}", r.both());
        let tail: Vec<&str> = r.stderr.lines().rev().take(2).collect();
        assert_eq!(
            tail,
            [
                format!("1 of 2 tasks would score below --fail-under {minimum} (tasks/t.json; the notes above say why): this dry run exits 3, as a real run would"),
                format!("tasks/t.json: none of its steps gives a score, so it would have none, below --fail-under {minimum} whatever they find"),
            ],
            "{}",
            r.both()
        );
        // The run itself: 3, as the dry run said.
        let run = s.run(&["run", "./plain", "--fail-under", minimum]);
        assert_eq!(run.code, 3, "{minimum}: {}", run.both());
    }
    let r = s.run(&[
        "run",
        "--dry-run",
        "./plain",
        "--fail-under",
        "0.5",
        "--json",
    ]);
    assert_eq!(r.code, 3, "{}", r.both());
    let doc = json_of(&r);
    assert_eq!(
        (&doc["status"], &doc["exit_code"]),
        (&json!("dry_run"), &json!(3))
    );
    let mut unscored: Vec<(&str, &Value, &Value)> = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["path"].as_str().unwrap(),
                &t["would_be_unscored"],
                &t["would_score"],
            )
        })
        .collect();
    unscored.sort_by_key(|(path, ..)| *path);
    assert_eq!(
        unscored,
        [
            ("tasks/scored.json", &json!(false), &json!({})),
            ("tasks/t.json", &json!(true), &json!({})),
        ]
    );

    let r = s.run(&["run", "--dry-run", "./plain"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(!r.stderr.contains(CLOSING), "{}", r.both());
    // A real run's tasks carry no prediction.
    let run = s.run(&["run", "./plain", "--json"]);
    assert_eq!(run.code, 0, "{}", run.both());
    assert!(json_of(&run)["tasks"][0].get("would_be_unscored").is_none());
}

/// A step whose score no check can change: one with no criteria (any_pass scores nothing 0), and one
/// whose only criterion names a path no sandbox has (a run fails it with an evaluator error). The dry
/// run notes each before the run, holds its score to `--fail-under` and exits 3, as the run does.
#[test]
fn a_dry_run_holds_a_step_that_checks_nothing_to_fail_under() {
    let s = Sandboxed::new();
    s.write(
        "fixed/tasks/none.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "v4", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v4",
             "aggregator": "any_pass", "criteria": []}]"#,
    );
    s.write(
        "fixed/tasks/outside.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "criteria": [{"type": "probe_file_exists", "paths": ["/etc/passwd"]},
                          {"type": "probe_wierd"}]}]"#,
    );
    let r = s.run(&["run", "--dry-run", "./fixed", "--fail-under", "1"]);
    assert_eq!(r.code, 3, "{}", r.both());
    for said in [
        "note: tasks/none.json: step 'v4' has no criteria, so it checks nothing, and any_pass scores it 0 whatever the sandbox holds",
        "note: tasks/outside.json: step 'v' criterion 1 can't be checked whatever the sandbox holds: the local sandbox maps only /app (to its work folder), so '/etc/passwd' is outside it; a run fails it with an evaluator error",
        "note: tasks/outside.json: step 'v': every criterion it checks fails whatever the sandbox holds, so all_pass scores it 0",
        "tasks/none.json: step 'v4' would score 0 whatever its checks find, below --fail-under 1",
        "tasks/outside.json: step 'v' would score 0 whatever its checks find, below --fail-under 1",
        "2 of 2 tasks would score below --fail-under 1",
    ] {
        assert!(r.stderr.contains(said), "{said}\n{}", r.both());
    }
    let r = s.run(&["run", "--dry-run", "./fixed", "--fail-under", "1", "--json"]);
    assert_eq!(r.code, 3, "{}", r.both());
    let doc = json_of(&r);
    let mut scores: Vec<(&str, &Value)> = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["path"].as_str().unwrap(), &t["would_score"]))
        .collect();
    scores.sort_by_key(|(path, _)| *path);
    assert_eq!(
        scores,
        [
            ("tasks/none.json", &json!({"v4": 0.0})),
            ("tasks/outside.json", &json!({"v": 0.0})),
        ]
    );
    // Without --fail-under the notes are only worth knowing.
    let r = s.run(&["run", "--dry-run", "./fixed"]);
    assert_eq!(r.code, 0, "{}", r.both());
    // The run itself scores both 0, and exits 3, as the dry run said.
    let run = s.run(&["run", "./fixed", "--fail-under", "1", "--json"]);
    assert_eq!(run.code, 3, "{}", run.both());
    let doc = json_of(&run);
    let mut scores: Vec<(&str, &Value)> = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["path"].as_str().unwrap(), &t["scores"]))
        .collect();
    scores.sort_by_key(|(path, _)| *path);
    assert_eq!(
        scores,
        [
            ("tasks/none.json", &json!({"v4": 0.0})),
            ("tasks/outside.json", &json!({"v": 0.0})),
        ]
    );
    // Each row names its criterion, null when it has none, as the documented rows do.
    let outside = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == "tasks/outside.json")
        .unwrap();
    let rows = outside["verifications"]["v"]["results"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{outside:#}");
    for row in rows {
        assert_eq!(row.get("criterion"), Some(&Value::Null), "{row}");
    }
    assert!(
        rows[0]["justification"]
            .as_str()
            .unwrap()
            .starts_with("evaluator error: the local sandbox maps only /app"),
        "{outside:#}"
    );
}

/// A step with no criteria under all_pass passes whatever the sandbox holds: said before the run, a
/// dry one or not, as the run warns when it scores it.
#[test]
fn a_step_with_no_criteria_is_noted_before_the_run() {
    let s = Sandboxed::new();
    s.write(
        "empty/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "criteria": []}]"#,
    );
    let noted = "note: tasks/t.json: step 'v' has no criteria, so it checks nothing, and all_pass scores it 1 whatever the sandbox holds: its task could pass having checked nothing";
    let dry = s.run(&["run", "--dry-run", "./empty", "--json"]);
    assert_eq!(dry.code, 0, "{}", dry.both());
    assert!(dry.stderr.contains(noted), "{}", dry.both());
    assert_eq!(json_of(&dry)["tasks"][0]["would_score"], json!({"v": 1.0}));
    let run = s.run(&["run", "./empty"]);
    assert_eq!(run.code, 0, "{}", run.both());
    let (Some(noted_at), Some(warned_at)) = (
        run.stderr.find(noted),
        run.stderr
            .find("Warning: step 'v' scored 1 with no criterion checked"),
    ) else {
        panic!("{}", run.both());
    };
    assert!(noted_at < warned_at, "{}", run.both());
}

/// A step's `<key>` token is filled only by a seed, which only the explorer gives a run: a run and a
/// dry run started here say which step holds which token it leaves as written (a note, and a
/// warning in `--json`); a shell's own `<` (a redirection, a here-document) is no token and unsaid.
#[test]
fn a_seed_token_no_seed_fills_is_noted_before_the_run() {
    let s = Sandboxed::new();
    s.write(
        "seedy/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "greet", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "criteria": [{"type": "bash_cmd_succeeds", "command": "echo <who> > who.txt"}]},
            {"id": "shell", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "w",
             "criteria": [{"type": "bash_cmd_succeeds", "command": "echo b > a; sort <a > b; cat <<EOF\nx\nEOF"}]}]"#,
    );
    let noted = "step 'greet': <who> is a seed token, and this run has no seed to fill it, so the step runs with it as written; only a run started from the explorer with a seed fills a step's <key> tokens";
    let dry = s.run(&["run", "--dry-run", "./seedy"]);
    assert_eq!(dry.code, 0, "{}", dry.both());
    assert!(
        dry.stderr
            .contains(&format!("note: tasks/t.json: {noted}\n")),
        "{}",
        dry.both()
    );
    assert_eq!(
        dry.stderr.matches("seed token").count(),
        1,
        "{}",
        dry.both()
    );
    for args in [
        &["run", "./seedy", "--json"][..],
        &["run", "./seedy", "--dry-run", "--json"][..],
    ] {
        let r = s.run(args);
        let doc = json_of(&r);
        let warned: Vec<(&str, &str)> = doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|w| Some((w["path"].as_str()?, w["message"].as_str()?)))
            .filter(|(_, m)| m.contains("seed"))
            .collect();
        assert_eq!(warned, [("tasks/t.json", noted)], "{}", r.both());
    }
}

/// The note on unfilled seed tokens speaks only of a token bash would read as a redirection: one
/// bare (unquoted) in a command a criterion runs, named as a seed key is. HTML and regular
/// expressions in other fields, a quoted `<title>` in a command, or a shell's `<hello.txt>` say
/// nothing, on a run (which passes) and a dry run, nor in `--json`'s warnings.
#[test]
fn angle_brackets_that_are_no_unfilled_seed_token_are_not_noted() {
    let s = Sandboxed::new();
    s.write(
        "html/tasks/t.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
             "criteria": [
               {"type": "bash_cmd_succeeds", "criterion": "writes <b>",
                "bash_cmd": "printf '<title>t</title><b>hello</b>\n' > hello.txt"},
               {"type": "probe_file_contains", "paths": ["hello.txt"], "expected": "<b>hello</b>"},
               {"type": "bash_cmd_succeeds", "bash_cmd": "grep -c '<title>' hello.txt || true"},
               {"type": "bash_cmd_succeeds", "bash_cmd": "sort <hello.txt>out.txt"},
               {"type": "bash_cmd_succeeds", "command": "echo \"<who>\" \\<where> # <what>"},
               {"type": "probe_file_contains", "paths": ["out.txt"], "expected": "<p>|hello"}]}]"#,
    );
    let dry = s.run(&["run", "--dry-run", "./html"]);
    assert_eq!(dry.code, 0, "{}", dry.both());
    let run = s.run(&["run", "./html"]);
    assert_eq!(run.code, 0, "{}", run.both());
    for ran in [&dry, &run] {
        assert!(!ran.stderr.contains("seed"), "{}", ran.both());
    }
    for args in [
        &["run", "./html", "--json"][..],
        &["run", "./html", "--dry-run", "--json"][..],
    ] {
        let r = s.run(args);
        let doc = json_of(&r);
        assert_eq!(doc["warnings"], json!([]), "{}", r.both());
    }
}

/// Task files named with numbers are planned, listed and run in the order of their numbers
/// (`task2` before `task10`), in the dry run's lines and its `--json` alike.
#[test]
fn numbered_task_files_are_planned_in_the_order_of_their_numbers() {
    let s = Sandboxed::new();
    for n in [10, 1, 12, 2, 11, 3] {
        s.write(
            &format!("numbered/tasks/task{n}.json"),
            r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
        );
    }
    let expected: Vec<String> = [1, 2, 3, 10, 11, 12]
        .iter()
        .map(|n| format!("tasks/task{n}.json"))
        .collect();

    let dry = s.run(&["run", "--dry-run", "./numbered", "--json"]);
    assert_eq!(dry.code, 0, "{}", dry.both());
    let planned: Vec<String> = would_fail(&json_of(&dry))
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    assert_eq!(planned, expected, "{}", dry.both());

    let dry = s.run(&["run", "--dry-run", "./numbered"]);
    assert_eq!(dry.code, 0, "{}", dry.both());
    let said = dry.both();
    let would_run: Vec<&str> = said
        .lines()
        .skip_while(|l| *l != "Would run:")
        .skip(1)
        .filter_map(|l| l.trim().strip_suffix(" v1"))
        .collect();
    assert_eq!(would_run, expected, "{said}");
}

/// The local sandbox folder a run would make its sandboxes in cannot be made (a file stands on its
/// path; a folder this user may not write fails the same way): the dry run says each deploy step
/// would fail, naming `AGENT_ENV_LOCAL_SANDBOX_DIR`, which set it, and exits 1, as the run then
/// fails at that step. It makes nothing to find out.
#[test]
fn a_sandbox_folder_that_cannot_be_made_fails_the_dry_run_naming_the_variable() {
    let s = Sandboxed::new();
    s.copy_hello("hello");
    let file = s.write("file.txt", "x");
    let folder = file.join("sbx");
    let run = |args: &[&str]| {
        Ran::from(
            s.command(args)
                .env("AGENT_ENV_LOCAL_SANDBOX_DIR", &folder)
                .output()
                .unwrap(),
        )
    };
    let r = run(&["run", "./hello", "--dry-run", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc = json_of(&r);
    assert_eq!(
        would_fail(&doc),
        [("tasks/hello.json".to_string(), vec!["box".to_string()])]
    );
    let warned = doc["warnings"].as_array().unwrap().iter().any(|w| {
        w["message"].as_str().is_some_and(|m| {
            m.contains(&format!(
                "the local sandbox folder {} (AGENT_ENV_LOCAL_SANDBOX_DIR), where none can be made ({} is a file, not a folder)",
                folder.display(),
                file.display()
            )) && m.contains("set AGENT_ENV_LOCAL_SANDBOX_DIR to a folder you may write")
        })
    });
    assert!(warned, "{doc:#}");
    let r = run(&["run", "./hello", "--dry-run"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(r.stderr.contains(CLOSING), "{}", r.both());
    assert!(!s.state().exists(), "a dry run wrote state");
    let r = run(&["run", "./hello"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.both().contains("can't create the local sandbox folder"),
        "{}",
        r.both()
    );
}

/// A symbolic link to nothing where the local sandbox folder would be made stands in its way as a
/// file does (no folder is made where a link stands): the dry run says each deploy step would fail,
/// naming the link and where it points, and exits 1, as the run then fails at that step.
#[test]
fn a_dangling_link_as_the_sandbox_folder_fails_the_dry_run_naming_it() {
    let s = Sandboxed::new();
    s.copy_hello("hello");
    let link = s.home().join("dangl");
    std::os::unix::fs::symlink("/x/nowhere", &link).unwrap();
    let run = |args: &[&str]| {
        Ran::from(
            s.command(args)
                .env("AGENT_ENV_LOCAL_SANDBOX_DIR", &link)
                .output()
                .unwrap(),
        )
    };
    let r = run(&["run", "./hello", "--dry-run", "--json"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let doc = json_of(&r);
    assert_eq!(
        would_fail(&doc),
        [("tasks/hello.json".to_string(), vec!["box".to_string()])]
    );
    let said = format!(
        "the local sandbox folder {} (AGENT_ENV_LOCAL_SANDBOX_DIR), where none can be made ({} is a symbolic link to /x/nowhere, which does not exist)",
        link.display(),
        link.display()
    );
    let warned = doc["warnings"].as_array().unwrap().iter().any(|w| {
        w["message"]
            .as_str()
            .is_some_and(|m| m.contains(&said) && m.contains("set AGENT_ENV_LOCAL_SANDBOX_DIR"))
    });
    assert!(warned, "{doc:#}");
    let r = run(&["run", "./hello", "--dry-run"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(r.stderr.contains(&said), "{}", r.both());
    let r = run(&["run", "./hello"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.both().contains("can't create the local sandbox folder"),
        "{}",
        r.both()
    );
    // The run says what the dry run said of the link, not that a file stands there.
    let link_said = format!(
        "{} is a symbolic link to /x/nowhere, which does not exist",
        link.display()
    );
    assert!(r.both().contains(&link_said), "{}", r.both());
    assert!(!r.both().contains("a file stands"), "{}", r.both());
}
