//! A step that runs long is said to be still running, so a run is never silent for long (a CI job
//! with an inactivity limit would stop it): each `AGENT_ENV_PROGRESS_SECONDS` (60 s unless set, 0
//! never), with or without `-q`, and on stderr with `--json`, whose stdout stays the document.

use crate::support::run::Sandboxed;
use agent_env_test_support::Ran;

fn write_bundle(s: &Sandboxed) {
    let task = serde_json::json!([
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "v", "type": "verify_sandbox", "sandbox_name": "box", "verifier_id": "v",
         "criteria": [{"type": "bash_cmd_succeeds", "command": "sleep 3"}]}
    ]);
    s.write("long/tasks/l.json", &task.to_string());
}

/// The whole seconds of each `[tasks/l.json] step 2/2 v still running (Ns)` line in `text`.
fn still_running(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("[tasks/l.json] step 2/2 v still running (")?;
            rest.strip_suffix("s)")?.parse().ok()
        })
        .collect()
}

/// Runs `./long` with `args` and the interval `every`, all at once (each takes a few seconds).
fn runs(s: &Sandboxed, cases: &[(&[&str], &str)]) -> Vec<Ran> {
    let children: Vec<_> = cases
        .iter()
        .map(|(args, every)| {
            let mut all = vec!["run", "./long"];
            all.extend_from_slice(args);
            s.command(&all)
                .env("AGENT_ENV_PROGRESS_SECONDS", every)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| Ran::from(c.wait_with_output().unwrap()))
        .collect()
}

#[test]
fn a_long_step_is_said_still_running_on_the_runs_lines_only() {
    let s = Sandboxed::new();
    write_bundle(&s);
    let ran = runs(
        &s,
        &[(&[], "1"), (&["-q"], "1"), (&["--json"], "1"), (&[], "0")],
    );
    let (plain, quiet, json, off) = (&ran[0], &ran[1], &ran[2], &ran[3]);
    for r in &ran {
        assert_eq!(r.code, 0, "{}", r.both());
    }
    // Said once a second or so, each later than the last, between the step's start and end.
    let said = still_running(&plain.stdout);
    assert!(!said.is_empty(), "{}", plain.stdout);
    assert!(
        said.windows(2).all(|w| w[0] < w[1]) && said[0] >= 1,
        "{said:?}"
    );
    let start = plain.stdout.find("step 2/2 v (verify_sandbox)").unwrap();
    let first = plain.stdout.find("still running").unwrap();
    let end = plain.stdout.find("step 2/2 v done in").unwrap();
    assert!(start < first && first < end, "{}", plain.stdout);
    // `-q` leaves out the line per step, not this one.
    assert!(
        !quiet.stdout.contains("step 2/2 v (verify_sandbox)"),
        "{}",
        quiet.stdout
    );
    assert!(!still_running(&quiet.stdout).is_empty(), "{}", quiet.stdout);
    // `--json`: stdout is the document alone; the line goes to stderr with the run's others.
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(doc.is_object(), "{}", json.stdout);
    assert!(!json.stdout.contains("still running"), "{}", json.stdout);
    assert!(!still_running(&json.stderr).is_empty(), "{}", json.stderr);
    // 0: never.
    assert!(!off.both().contains("still running"), "{}", off.both());
}

/// An interval set empty, or below 0.1 s, is not taken as it is, and the run says what it uses.
#[test]
fn an_empty_or_too_short_interval_is_warned_of() {
    let s = Sandboxed::new();
    write_bundle(&s);
    let ran = runs(&s, &[(&[], ""), (&[], "0.05")]);
    let (empty, short) = (&ran[0], &ran[1]);
    for r in &ran {
        assert_eq!(r.code, 0, "{}", r.both());
    }
    empty.assert_stderr_has(
        "AGENT_ENV_PROGRESS_SECONDS is set but empty, so the default, 60 s, is used; set it to a number of seconds, or unset it",
    );
    short.assert_stderr_has(
        "AGENT_ENV_PROGRESS_SECONDS=\"0.05\" is below 0.1 s, the shortest interval a run takes, so 0.1 s is used; set it to 0.1 or more",
    );
    assert!(!still_running(&short.stdout).is_empty(), "{}", short.stdout);
}
