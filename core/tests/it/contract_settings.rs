//! `[plugins.<package>]` tables as the original treats them: a broken table is reported and never stops
//! a run that does not use its plugin, and it fails only its own plugin's read. A reference in it that cannot be resolved is that
//! plugin's failure, naming the table, in `plugin check`, in `plugin show` and in a run that uses it.

use serde_json::Value;

use crate::support::run::{fixture, Sandboxed};

const UNRESOLVED: &str = "ConfigError: [plugins.agentenv-fixture-works]: Unresolved env:AGENT_ENV_TEST_NEVER_SET reference (no value and no default); set the environment variable AGENT_ENV_TEST_NEVER_SET, or give a default: env:AGENT_ENV_TEST_NEVER_SET?DEFAULT";

fn install_works(s: &Sandboxed) {
    s.install_manifest(
        "works",
        &format!(
            "[plugin]\nname = \"agentenv-fixture-works\"\nversion = \"0.3.0\"\nexec = [\"{}\"]\nprotocol = [1, 1]\n\n[provides.task_steps]\necho_step = \"EchoStep\"\n",
            fixture("fixture-works").display()
        ),
    );
}

fn config(s: &Sandboxed, text: &str) {
    s.write(".agentenv/config.toml", text);
}

fn json(s: &Sandboxed, args: &[&str]) -> (i32, Value) {
    let r = s.run(args);
    let doc = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.both()));
    (r.code, doc)
}

fn echo_step(report: &Value) -> &Value {
    report["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "agentenv-fixture-works")
        .and_then(|p| {
            p["contributions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == "echo_step")
        })
        .unwrap_or_else(|| panic!("echo_step in {report}"))
}

#[test]
fn a_broken_plugin_table_never_stops_a_run_and_fails_only_its_own_plugin() {
    let s = Sandboxed::new();
    install_works(&s);
    config(
        &s,
        "[plugins]\nagentenv-absent = 5\n\n[plugins.agentenv_gone]\nurl = \"env:AGENT_ENV_TEST_NEVER_SET\"\n\n[plugins.agentenv-fixture-works]\ngreeting = \"hi\"\n",
    );
    let dry = s.run(&["run", "hello", "--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.both());
    assert!(dry
        .stdout
        .ends_with("Dry run: nothing was written or run.\n"));
    let r = s.run(&["run", "hello"]);
    assert_eq!(r.code, 0, "{}", r.both());
    r.assert_stdout_has("  tasks/hello.json v1: passed (hello: 1), ");

    // The working plugin reads its own table and is in effect; the broken tables are someone else's.
    let (code, report) = json(&s, &["plugin", "check", "--json"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(echo_step(&report)["status"], "active");
    s.write(
        "plugged/tasks/p.json",
        r#"[{"id": "say", "type": "echo_step", "words": "hi"}]"#,
    );
    let r = s.run(&["run", "./plugged"]);
    assert_eq!(r.code, 0, "{}", r.both());

    // `config show` reports each broken table under its owner, and `config check` warns.
    let show = s.run(&["config", "show"]);
    assert_eq!(show.code, 0, "{}", show.both());
    assert!(show.stdout.contains("agentenv-absent (not installed)\n                  (unresolved) [plugins.agentenv-absent]: config.toml [plugins.agentenv-absent] must be a table, got int"), "{}", show.stdout);
    let (code, check) = json(&s, &["config", "check", "--json"]);
    assert_eq!(code, 0, "{check}");
    assert_eq!(check["warnings"].as_array().unwrap().len(), 2, "{check}");
}

#[test]
fn an_unresolvable_reference_is_its_plugins_failure_naming_the_table() {
    let s = Sandboxed::new();
    install_works(&s);
    config(
        &s,
        "[plugins.agentenv-fixture-works]\ntoken = \"env:AGENT_ENV_TEST_NEVER_SET\"\n",
    );
    let reason = format!("failed to load: {UNRESOLVED}");

    let (code, report) = json(&s, &["plugin", "check", "--json"]);
    assert_eq!(code, 1);
    let step = echo_step(&report);
    assert_eq!(step["status"], "failed");
    assert_eq!(step["code"], "load-failed");
    assert_eq!(step["reason"], reason.as_str());
    let text = s.run(&["plugin", "check"]);
    assert!(
        text.stdout.contains(&format!(
            "agentenv-fixture-works 0.3.0: task step echo_step: failed: {reason} [load-failed]\n"
        )),
        "{}",
        text.both()
    );

    // `show` says why the process never started.
    let (code, show) = json(&s, &["plugin", "show", "agentenv-fixture-works", "--json"]);
    assert_eq!(code, 0, "{show}");
    assert_eq!(echo_step(&show)["reason"], reason.as_str());
    assert_eq!(show["process"]["state"], "not-started");
    assert_eq!(show["process"]["failure"]["message"], UNRESOLVED);
    let human = s.run(&["plugin", "show", "agentenv-fixture-works"]);
    assert!(
        human.stdout.contains(&format!(
            "  task step  echo_step  EchoStep  failed: {reason} [load-failed]\n"
        )),
        "{}",
        human.stdout
    );

    // A run that uses it is refused before anything runs, naming the plugin and the table; one
    // that doesn't runs.
    s.write(
        "plugged/tasks/p.json",
        r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
            {"id": "say", "type": "echo_step", "words": "hi"}]"#,
    );
    let r = s.run(&["run", "./plugged"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.stderr.contains(
            "[plugins.agentenv-fixture-works]: Unresolved env:AGENT_ENV_TEST_NEVER_SET reference"
        ),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("step 1/2"), "{}", r.stdout);
    assert!(s.sandboxes_left().is_empty());
    // `config check`, the gate before a run, fails on it too, in the run's words.
    let (code, check) = json(&s, &["config", "check", "--json"]);
    assert_eq!(code, 1, "{check}");
    assert_eq!(check["ok"], false, "{check}");
    let unresolved = UNRESOLVED.trim_start_matches("ConfigError: ");
    assert_eq!(
        check["problems"][0]["message"],
        format!("{unresolved} (agentenv-fixture-works does not start until it is fixed: a run whose tasks use one of its steps refuses to start, and what else it provides fails to load)"),
        "{check}"
    );
    let hello = s.run(&["run", "hello"]);
    assert_eq!(hello.code, 0, "{}", hello.both());

    // With the variable set, the same table resolves and the plugin is in effect.
    let mut cmd = s.command(&["plugin", "check", "--json"]);
    cmd.env("AGENT_ENV_TEST_NEVER_SET", "tok");
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
