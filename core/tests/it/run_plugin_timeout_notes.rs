//! A plugin step's `timeout_seconds` that it cannot be given (a string, 0, below 0, too large) is
//! said before the run (and by a dry run), naming the value and the accepted range: the step gets
//! the host's call timeout instead, as it is then told.

use crate::run_plugins::shell_plugin;
use crate::support::run::Sandboxed;
use agent_env_test_support::Ran;

/// Answers `execute` with the `timeout_ms` it was sent, as the step's metadata.
const REPORT_TIMEOUT: &str = r#"case "$line" in
      *'"timeout_ms":'*) t=${line#*\"timeout_ms\":}; t=${t%%[!0-9]*} ;;
      *) t=null ;;
    esac
    printf '{"jsonrpc":"2.0","id":%s,"result":{"metadata":{"timeout_ms":%s}}}\n' "$id" "$t""#;

fn run(s: &Sandboxed, args: &[&str]) -> Ran {
    Ran::from(
        s.command(args)
            .env("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "7")
            .output()
            .unwrap(),
    )
}

#[test]
fn a_plugin_steps_unusable_timeout_seconds_is_said_before_it_runs() {
    for (value, shown) in [
        (r#""600""#, r#""600""#),
        ("0", "0"),
        ("-1", "-1"),
        ("1e12", "1000000000000.0"),
    ] {
        let s = Sandboxed::new();
        shell_plugin(&s, REPORT_TIMEOUT);
        s.write(
            "told/tasks/t.json",
            &format!(r#"[{{"id": "wait", "type": "boom", "timeout_seconds": {value}}}]"#),
        );
        let said = format!(
            "note: tasks/t.json: step 'wait': 'timeout_seconds' must be a number of seconds above 0 and below 1000000000, got {shown}: the step gets the host's call timeout instead (AGENT_ENV_PLUGIN_CALL_TIMEOUT, 60 s unless set)\n"
        );
        let dry = run(&s, &["run", "--dry-run", "./told"]);
        assert_eq!(dry.code, 0, "{}", dry.both());
        assert!(dry.stderr.contains(&said), "{value}: {}", dry.both());

        let r = run(&s, &["run", "./told"]);
        assert_eq!(r.code, 0, "{}", r.both());
        assert!(r.stderr.contains(&said), "{value}: {}", r.both());
        let instance = &s.docs("task_instances")[0];
        assert_eq!(
            instance["context"]["metadata"]["timeout_ms"], 7_000,
            "{value}: {instance}"
        );
    }
}

#[test]
fn a_plugin_steps_usable_timeout_seconds_is_not_noted() {
    let s = Sandboxed::new();
    shell_plugin(&s, REPORT_TIMEOUT);
    s.write(
        "told/tasks/t.json",
        r#"[{"id": "wait", "type": "boom", "timeout_seconds": 2.5}]"#,
    );
    let r = run(&s, &["run", "./told"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(!r.stderr.contains("'timeout_seconds'"), "{}", r.both());
    let instance = &s.docs("task_instances")[0];
    assert_eq!(instance["context"]["metadata"]["timeout_ms"], 2_500);
}
