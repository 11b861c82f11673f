//! A broken plugin never locks the user out: with a CLI command or root option whose plugin hangs,
//! crashes or has no executable, `--help`, `plugin list` and `plugin check` still work and report it,
//! and using it fails with a message that names the plugin.

use crate::support::cli::{fixture, outcome, stderr, stdout, text, Sandbox};

/// (what is wrong, the `exec` array, the host's code for a command of it)
fn broken_execs() -> Vec<(&'static str, String, &'static str)> {
    let exec = |name: &str| format!("[\"{}\"]", fixture(name).display());
    vec![
        ("hangs", exec("fixture-hang-handshake"), "handshake-timeout"),
        ("crashes", exec("fixture-exit-at-start"), "exited-at-start"),
        (
            "missing",
            "[\"/nonexistent/plugin\"]".to_string(),
            "not-found",
        ),
    ]
}

fn sandbox(exec: &str) -> Sandbox {
    let mut s = Sandbox::new();
    s.set("AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT", "2");
    s.tools("agentenv-good", "[provides.cli_plugins]\ntool = \"Tool\"\n");
    s.plugin(
        "agentenv-broken",
        exec,
        "[provides.cli_plugins]\nbroken = { class = \"Broken\", description = \"It does not work\" }\n[provides.cli_root_options]\nbad = { class = \"Bad\", value = \"X\" }\n",
    );
    s
}

#[test]
fn help_list_and_check_work_and_report_a_broken_command_and_root_option() {
    for (what, exec, code) in broken_execs() {
        let s = sandbox(&exec);
        let out = s.run(&["--help"]);
        assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out));
        assert!(stdout(&out).contains("It does not work"), "{what}");
        assert!(stdout(&out).contains("--bad <X>"), "{what}");

        let out = s.run(&["plugin", "list"]);
        assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out));
        assert!(stdout(&out).contains("agentenv-broken"), "{what}");

        for report in [s.report("list"), s.report("check")] {
            let (status, got, _) = outcome(&report, "agentenv-broken", "cli_plugins", "broken");
            assert_eq!((status.as_str(), got.as_str()), ("failed", code), "{what}");
            let (status, got, reason) =
                outcome(&report, "agentenv-broken", "cli_root_options", "bad");
            assert_eq!(
                (status.as_str(), got.as_str()),
                ("failed", "load-failed"),
                "{what}"
            );
            assert!(
                reason.starts_with(
                    "its callback failed with the flag absent: plugin agentenv-broken"
                ),
                "{what}: {reason}"
            );
            assert_eq!(
                outcome(&report, "agentenv-good", "cli_plugins", "tool").0,
                "active",
                "{what}"
            );
        }
        let out = s.run(&["plugin", "check"]);
        assert_eq!(out.status.code(), Some(1), "{what}: {}", text(&out));

        // Other commands are unaffected; the broken ones fail naming the plugin.
        let out = s.run(&["tool"]);
        assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out));
        let out = s.run(&["broken"]);
        assert_eq!(out.status.code(), Some(1), "{what}: {}", text(&out));
        assert!(
            stderr(&out).contains("agentenv-broken"),
            "{what}: {}",
            text(&out)
        );
        let out = s.run(&["--bad", "1", "tool"]);
        assert_eq!(out.status.code(), Some(1), "{what}: {}", text(&out));
        assert!(
            stderr(&out)
                .starts_with("Error: CLI root option '--bad' from 'agentenv-broken' failed: "),
            "{what}: {}",
            text(&out)
        );
    }
}

#[test]
fn a_root_option_whose_callback_crashes_is_reported_and_never_blocks_other_commands() {
    let mut s = Sandbox::new();
    s.set("AGENT_ENV_PLUGIN_HANDSHAKE_TIMEOUT", "2");
    s.tools(
        "agentenv-tools",
        "[provides.cli_plugins]\ntool = \"Tool\"\n[provides.cli_root_options]\nabort = \"Abort\"\n",
    );
    let (status, code, reason) = outcome(
        &s.report("list"),
        "agentenv-tools",
        "cli_root_options",
        "abort",
    );
    assert_eq!((status.as_str(), code.as_str()), ("failed", "load-failed"));
    assert!(reason.contains("crashed"), "{reason}");
    assert_eq!(s.run(&["tool"]).status.code(), Some(0));
    let out = s.run(&["--abort", "tool"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).starts_with(
            "Error: CLI root option '--abort' from 'agentenv-tools' failed: plugin agentenv-tools"
        ),
        "{}",
        text(&out)
    );
}

#[test]
fn a_command_that_crashes_mid_run_reports_it() {
    let s = Sandbox::new();
    s.tools("agentenv-tools", "[provides.cli_plugins]\ndie = \"Die\"\n");
    let out = s.run(&["die"]);
    assert_eq!(out.status.code(), Some(128 + 6), "{}", text(&out));
    let err = stderr(&out);
    // Its stderr is the terminal's, so its last words come first, then agent-env's verdict.
    assert!(
        err.starts_with("cli_tools: dying in the middle of 'die'\n"),
        "{err}"
    );
    assert!(err.contains("Error: plugin agentenv-tools"), "{err}");
    assert!(err.contains("SIGABRT"), "{err}");
    assert!(err.contains("cli.run"), "{err}");
}

/// A bare `exec` name on no folder of PATH (an interpreter a minimal machine lacks) is said to be not
/// on PATH, with the PATH searched, not said not to exist.
#[test]
fn an_exec_name_not_on_path_is_said_with_the_path_searched() {
    let s = sandbox("[\"agentenv-python-nope\", \"/x/p.py\"]");
    let manifest = s
        .dir()
        .join("plugins/agentenv-broken/agent-env-plugin.toml");
    let out = s.run(&["broken"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains(&format!(
            "plugin agentenv-broken cannot start: its executable agentenv-python-nope is not on PATH ({}); install it or add its folder to PATH, or fix 'exec' in {}",
            s.dir().join("bin").display(),
            manifest.display()
        )),
        "{}",
        text(&out)
    );
    assert!(!stderr(&out).contains("does not exist"), "{}", text(&out));
}
