//! Trouble in a store a plugin provides, seen from a run: a store plugin that hangs while a plugin
//! step waits on it is named as the culprit (its method, its stderr), not the step's plugin; and what
//! a store plugin writes to stderr as it is shut down at the end of the run is in the run's log.
//!
//! The step is the `fixture-works` plugin's `image_ref` (a `host.store.image.image_ref` call); the
//! image store is a plugin written in `sh` (see [`ShellStore`]).

use crate::run_plugin_ends::newest_log;
use crate::support::run::Sandboxed;
use crate::support::shell_store::ShellStore;
use agent_env_test_support::Ran;

/// The step's plugin: `image_ref` and nothing else.
fn install_step_plugin(s: &Sandboxed) {
    s.install_fixture_works("[provides.task_steps]\nimage_ref = \"ImageRef\"\n");
}

/// The image store plugin `agentenv-depot`, answering `store.image.*` with `on_call`, and the config
/// that makes it the image store; a bundle `./imaged` whose one task asks for an image reference,
/// with `extra` fields in its step.
fn depot_run(s: &Sandboxed, on_call: &str, extra: &str) {
    install_step_plugin(s);
    ShellStore {
        package: "agentenv-depot",
        class: "Depot",
        kind: "image",
        on_open: "",
        on_call,
    }
    .install(&s.plugins(), "depot");
    s.write(
        ".agentenv/config.toml",
        "[stores.image]\nimpl = \"agentenv-depot:Depot\"\n",
    );
    s.write(
        "imaged/tasks/i.json",
        &format!(
            r#"[{{"id": "image", "type": "image_ref", "repository": "envs/p", "tag": "v1"{extra}}}]"#
        ),
    );
}

/// An image store that writes a line to stderr and then hangs in every call but `shutdown`.
const HANGS: &str = r#"case "$line" in
      *'"method":"shutdown"'*) printf '{"jsonrpc":"2.0","id":%s,"result":null}\n' "$id" ;;
      *) echo "depot: waiting for the registry to answer" >&2; sleep 30 ;;
    esac"#;

fn run_with_call_timeout(s: &Sandboxed, seconds: &str) -> Ran {
    Ran::from(
        s.command(&["run", "./imaged"])
            .env("AGENT_ENV_PLUGIN_CALL_TIMEOUT", seconds)
            .output()
            .unwrap(),
    )
}

/// The step's plugin waits on the store plugin, which hangs: the store call fails on its own, naming
/// the store plugin, the method and the end of its stderr, and the step fails with that error (its
/// `host.store` call's), not with a timeout of its own plugin's.
#[test]
fn a_store_plugin_that_hangs_under_a_step_is_named_as_the_culprit() {
    let s = Sandboxed::new();
    depot_run(&s, HANGS, "");
    let r = run_with_call_timeout(&s, "3");
    assert_eq!(r.code, 1, "{}", r.both());
    let out = r.both();
    r.assert_stdout_has("failed at step 'image': ");
    assert!(
        out.contains(
            "plugin agentenv-depot (/bin/sh) did not answer store.image.image_ref within "
        ),
        "{out}"
    );
    assert!(
        out.contains("depot: waiting for the registry to answer"),
        "{out}"
    );
    // The step's plugin answered, with the store's error: it did not time out itself.
    assert!(!out.contains("did not answer execute within"), "{out}");
    assert_eq!(s.docs("task_instances")[0]["status"], "failed");
}

/// A step whose own `timeout_seconds` is shorter than the store plugin's call timeout: the store call
/// it waits on ends by the step's limit (the step's limit holds), and the step fails with the store's
/// error, which names the store plugin and says the step's limit ended the wait.
#[test]
fn a_store_call_under_a_step_ends_by_the_steps_own_limit() {
    let s = Sandboxed::new();
    depot_run(&s, HANGS, r#", "timeout_seconds": 1"#);
    let r = run_with_call_timeout(&s, "600");
    assert_eq!(r.code, 1, "{}", r.both());
    let out = r.both();
    assert!(
        out.contains(
            "plugin agentenv-depot (/bin/sh) did not answer store.image.image_ref within "
        ),
        "{out}"
    );
    assert!(
        out.contains(", all that was left of the timeout_seconds of step 'image' (1 s), so the call was cancelled; raise timeout_seconds in the task if the store is just slow"),
        "{out}"
    );
    assert!(
        out.contains("depot: waiting for the registry to answer"),
        "{out}"
    );
    assert!(!out.contains("AGENT_ENV_PLUGIN_CALL_TIMEOUT"), "{out}");
}

/// What the store plugin writes to stderr as it is shut down at the end of the run reaches the run's
/// log.
#[test]
fn a_store_plugins_last_words_on_shutdown_are_in_the_runs_log() {
    let s = Sandboxed::new();
    depot_run(
        &s,
        r#"case "$line" in
      *'"method":"shutdown"'*) echo "depot: flushing the cache on shutdown" >&2
        printf '{"jsonrpc":"2.0","id":%s,"result":null}\n' "$id" ;;
      *) printf '{"jsonrpc":"2.0","id":%s,"result":{"ref":"depot.example/envs/p:v1"}}\n' "$id" ;;
    esac"#,
        "",
    );
    let r = s.run(&["run", "./imaged"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let log = std::fs::read_to_string(newest_log(&s)).unwrap();
    assert!(
        log.contains("[agentenv-depot] stderr: depot: flushing the cache on shutdown"),
        "{log}"
    );
}

/// A store plugin that writes lines to stdout that are not protocol messages is warned about when the
/// run closes it, as a step plugin is: on the terminal and in the run's log.
#[test]
fn a_store_plugin_that_writes_noise_to_stdout_is_warned_about_by_the_run() {
    let s = Sandboxed::new();
    depot_run(
        &s,
        r#"echo "depot: looking up the tag"
    printf '{"jsonrpc":"2.0","id":%s,"result":{"ref":"depot.example/envs/p:v1"}}\n' "$id""#,
        "",
    );
    let r = s.run(&["run", "./imaged"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let warning = "plugin agentenv-depot wrote";
    assert!(
        r.stderr.contains(warning) && r.stderr.contains("(first: 'depot: looking up the tag')"),
        "{}",
        r.both()
    );
    let log = std::fs::read_to_string(newest_log(&s)).unwrap();
    assert!(log.contains(warning), "{log}");
}

/// A step with time to spare: the store call fails on the store plugin's own call timeout, and the
/// step fails with that error rather than waiting out its own limit.
#[test]
fn a_store_plugin_that_hangs_fails_the_step_on_its_own_call_timeout() {
    let s = Sandboxed::new();
    depot_run(&s, HANGS, r#", "timeout_seconds": 600"#);
    let r = run_with_call_timeout(&s, "2");
    assert_eq!(r.code, 1, "{}", r.both());
    r.assert_stdout_has(
        "failed at step 'image': HostCallError: plugin agentenv-depot (/bin/sh) did not answer store.image.image_ref within 2 s; the call was cancelled (raise AGENT_ENV_PLUGIN_CALL_TIMEOUT if it is just slow); its stderr's last line: 'depot: waiting for the registry to answer'",
    );
    assert!(!r.both().contains("timeout_seconds"), "{}", r.both());
}

/// A step's plugin that does not answer with the store's error (it goes on, and runs out of time):
/// the step's own timeout says which store call got no answer, naming the store plugin.
#[test]
fn a_step_that_runs_out_of_time_says_which_store_call_got_no_answer() {
    let s = Sandboxed::new();
    crate::run_plugins::shell_plugin(
        &s,
        r#"printf '{"jsonrpc":"2.0","id":900,"method":"host.store.image.image_ref","params":{"repository":"envs/p","tag":"v1"}}\n'; sleep 40; exit 3"#,
    );
    ShellStore {
        package: "agentenv-depot",
        class: "Depot",
        kind: "image",
        on_open: "",
        on_call: HANGS,
    }
    .install(&s.plugins(), "depot");
    s.write(
        ".agentenv/config.toml",
        "[stores.image]\nimpl = \"agentenv-depot:Depot\"\n",
    );
    s.write(
        "hang/tasks/h.json",
        r#"[{"id": "wait", "type": "boom", "timeout_seconds": 0.5}]"#,
    );
    let r = Ran::from(
        s.command(&["run", "./hang"])
            .env("AGENT_ENV_PLUGIN_CALL_TIMEOUT", "600")
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 1, "{}", r.both());
    // How long the store call had depends on when it began: the rest is said as written.
    r.assert_stdout_has(
        "failed at step 'wait': PluginError: the boom step of plugin agentenv-crashy did not finish within its timeout_seconds (0.5 s) and was cancelled; raise timeout_seconds in the task if it is just slow; a store call it made got no answer: plugin agentenv-depot (/bin/sh) did not answer store.image.image_ref within ",
    );
    r.assert_stdout_has(
        " s, all that was left of the timeout_seconds of step 'wait' (0.5 s), so the call was cancelled; raise timeout_seconds in the task if the store is just slow; its stderr's last line: 'depot: waiting for the registry to answer'",
    );
}
