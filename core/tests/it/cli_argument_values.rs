//! Values the command line refuses as a usage error (exit 2), saying what to give: an empty model or
//! agent, where a run recorded it; a negative version, age or port, where clap took the number for
//! an option and its tip failed again; a port that is not a whole number; an empty task id. A
//! `--fail-under` of -0 is read as 0.

use crate::support::run::Sandboxed;

fn refused(s: &Sandboxed, args: &[&str], said: &str) {
    let r = s.run(args);
    assert_eq!(r.code, 2, "{args:?}: {}", r.both());
    assert!(r.stderr.contains(said), "{args:?}: {}", r.both());
    assert!(
        !r.stderr.contains("unexpected argument"),
        "{args:?}: {}",
        r.both()
    );
}

#[test]
fn an_empty_model_or_agent_is_refused_before_the_run() {
    let s = Sandboxed::new();
    for option in ["--model", "--user-model", "--judge-model"] {
        for value in ["", " "] {
            refused(
                &s,
                &["run", "hello", option, value],
                "the value is empty; give a model's name, or leave the option out",
            );
        }
    }
    refused(
        &s,
        &["run", "hello", "--agent", ""],
        "the value is empty; give an agent's name, or leave the option out",
    );
    // Nothing ran, so nothing was recorded.
    assert!(!s.local_db().exists() || s.docs("task_instances").is_empty());
}

#[test]
fn a_negative_version_age_or_port_says_what_to_give() {
    let s = Sandboxed::new();
    refused(
        &s,
        &["task", "get", "a/b", "--version", "-1"],
        "a version is a whole number, 1 or more, not '-1'",
    );
    refused(
        &s,
        &["artifact", "get", "a/b", "--version", "-5"],
        "a version is a whole number, 1 or more, not '-5'",
    );
    refused(
        &s,
        &["task", "prune", "--older-than", "-1d"],
        "'-1d' is not an age: give a whole number and a unit",
    );
    for port in ["1.5", "-1", "65536"] {
        refused(
            &s,
            &["up", "--port", port],
            &format!("the port must be a whole number from 1 to 65535 (or 0 to pick a free one), not '{port}'"),
        );
    }
}

/// An empty id is refused before anything is looked up, where the answer suggested putting a task
/// under the empty id, which `task put` refuses.
#[test]
fn task_run_refuses_an_empty_id() {
    let s = Sandboxed::new();
    for id in ["", " "] {
        let run = s.run(&["task", "run", id, "--json"]);
        assert_eq!(run.code, 2, "{}", run.both());
        assert!(
            run.stderr
                .contains("the task id is empty; give the id of a stored task"),
            "{}",
            run.both()
        );
        assert!(!run.both().contains("--id ''"), "{}", run.both());
    }
}

/// `--fail-under -0` is 0, and the --json document says 0, not -0.
#[test]
fn fail_under_minus_zero_is_zero() {
    let s = Sandboxed::new();
    let r = s.run(&["run", "hello", "--dry-run", "--json", "--fail-under", "-0"]);
    assert!(r.stdout.contains("\"fail_under\": 0.0"), "{}", r.both());
    assert!(!r.stdout.contains("-0.0"), "{}", r.both());
}
