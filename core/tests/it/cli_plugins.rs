//! `[provides.cli_plugins]`: plugin commands listed in `--help`, run in command mode with the terminal's
//! stdin, stdout and stderr, their exit status and store calls; the clash rules.

use std::process::Stdio;

use crate::support::cli::{outcome, stderr, stdout, text, Sandbox};

const TOOLS: &str = "[provides.cli_plugins]\nask = { class = \"Ask\", description = \"Ask for a name and greet it\" }\ninterleave = \"Interleave\"\nexit = \"Exit\"\nwhoami = \"WhoAmI\"\nput = \"Put\"\n";

#[test]
fn help_lists_plugin_commands_from_manifests_without_starting_them() {
    let s = Sandbox::new();
    // The executable does not exist: listing the command must not need it.
    s.plugin(
        "agentenv-ghost",
        "[\"/nonexistent/agentenv-ghost\"]",
        "[provides.cli_plugins]\nhaunt = { class = \"Haunt\", description = \"Rattle the chains\" }\nboo = \"Boo\"\n",
    );
    let out = s.run(&["--help"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let help = stdout(&out);
    let line = help.lines().find(|l| l.trim_start().starts_with("haunt"));
    assert!(
        line.is_some_and(|l| l.contains("Rattle the chains")),
        "{help}"
    );
    assert!(
        help.lines()
            .any(|l| l.trim_start().starts_with("boo") && l.contains("agentenv-ghost")),
        "{help}"
    );
    // Core commands are still there.
    assert!(help.contains("plugin"), "{help}");
    // Running it is what starts it, and that fails with the host's message.
    let out = s.run(&["haunt"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains("/nonexistent/agentenv-ghost"),
        "{}",
        text(&out)
    );
}

#[test]
fn version_and_core_commands_ignore_plugin_manifests() {
    let s = Sandbox::new();
    s.write("plugins/broken/agent-env-plugin.toml", "this is not toml [");
    s.plugin(
        "agentenv-tools",
        "[\"/nonexistent\"]",
        "[provides.cli_plugins]\nplugin = \"P\"\n",
    );
    for flag in ["--version", "-V"] {
        let out = s.run(&[flag]);
        let text = stdout(&out);
        let lines: Vec<&str> = text.lines().collect();
        // `agent-env 0.1.0 (1a2b3c4d5e6f 2026-12-03; protocol 1)`: one line, the version second (as
        // scripts read it), then the commit it was built from (when the build had git) and the protocol.
        assert_eq!(lines.len(), 1, "{text}");
        assert_eq!(
            text.split_whitespace().nth(1),
            Some(env!("CARGO_PKG_VERSION")),
            "{text}"
        );
        let version = format!("agent-env {} (", env!("CARGO_PKG_VERSION"));
        assert!(lines[0].starts_with(&version), "{text}");
        let head = std::process::Command::new("git")
            .args(["rev-parse", "--short=12", "HEAD"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output();
        if let Some(head) = head.ok().filter(|h| h.status.success()) {
            let hash = String::from_utf8_lossy(&head.stdout).trim().to_string();
            assert!(lines[0].contains(&format!(" ({hash} ")), "{text} vs {hash}");
        }
        assert!(lines[0].ends_with("protocol 1)"), "{text}");
        assert_eq!(stderr(&out), "", "no warning: no manifest was read");
    }
}

#[test]
fn a_command_reads_stdin_and_writes_to_the_terminal() {
    let s = Sandbox::new();
    s.tools("agentenv-tools", TOOLS);
    let out = s.run_with_input(&["ask"], "Ada\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(stdout(&out), "name? hello, Ada\n");
}

#[test]
fn stdout_and_stderr_arrive_in_the_order_written() {
    let s = Sandbox::new();
    s.tools("agentenv-tools", TOOLS);
    let log = s.dir().join("both.log");
    let file = std::fs::File::create(&log).expect("log");
    let status = s
        .command(&["interleave"])
        .stdout(Stdio::from(file.try_clone().expect("clone")))
        .stderr(Stdio::from(file))
        .status()
        .expect("run");
    assert!(status.success());
    assert_eq!(
        std::fs::read_to_string(&log).expect("read"),
        "out-1\nerr-1\nout-2\nerr-2\nout-3\nerr-3\n"
    );
}

/// A command's description with control characters is listed in `--help` with them shown, not
/// obeyed: it could retitle the window or erase a line.
#[test]
fn a_commands_description_reaches_help_escaped() {
    let s = Sandbox::new();
    s.tools(
        "agentenv-tools",
        "[provides.cli_plugins]\nexit = { class = \"Exit\", description = \"says hi \\u001b]0;PWNED\\u0007 \\u001b[2K\\rfake\" }\n",
    );
    let out = s.run(&["--help"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let help = stdout(&out);
    assert!(
        help.contains("says hi \\x1b]0;PWNED\\x07 \\x1b[2K\\rfake"),
        "{help}"
    );
    assert!(!help.contains('\u{1b}'), "{help:?}");
}

#[test]
fn the_plugins_exit_status_is_agent_envs() {
    let s = Sandbox::new();
    s.tools("agentenv-tools", TOOLS);
    for code in [0, 1, 7, 42] {
        let out = s.run(&["exit", &code.to_string()]);
        assert_eq!(out.status.code(), Some(code), "{}", text(&out));
    }
}

/// A command that panics is answered as an error at once (it held agent-env for ever); one that
/// ends with `std::process::exit(N)`, as clap does, gives N, quietly.
#[test]
fn a_command_that_panics_or_exits_ends_agent_env_at_once() {
    let s = Sandbox::new();
    s.tools(
        "agentenv-tools",
        "[provides.cli_plugins]\npanic = \"Panic\"\nquit = \"Quit\"\n",
    );
    let mut child = s
        .command(&["panic"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("a panicking command held agent-env");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    // A panic is a bug in the plugin: the error names it, then what panicked.
    let said = stderr(&out);
    assert!(
        said.contains("Error: plugin agentenv-tools ("),
        "{}",
        text(&out)
    );
    assert!(
        said.contains(") failed while answering cli.run: panic: the panic command panicked"),
        "{}",
        text(&out)
    );
    let out = s.run(&["quit", "2"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!stderr(&out).contains("crashed"), "{}", text(&out));
}

#[test]
fn arguments_after_the_command_are_the_plugins_verbatim() {
    let s = Sandbox::new();
    s.tools("agentenv-tools", TOOLS);
    let out = s.run(&["-v", "whoami", "--help", "-v", "--version", "x y"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        stdout(&out),
        "agentenv-tools argv=[\"--help\", \"-v\", \"--version\", \"x y\"]\n"
    );
}

#[test]
fn a_command_reaches_the_configured_stores() {
    let mut s = Sandbox::new();
    s.tools("agentenv-tools", TOOLS);
    let objects = s.dir().join("my-objects");
    let config = s.write(
        "work/.agentenv/config.toml",
        &format!(
            "[stores.object]\nimpl = \"LocalFilesystemObjectStore\"\nconfig = {{ root = \"{}\" }}\n",
            objects.display()
        ),
    );
    let out = s.run(&["put", "hi there"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stored = objects.join("cli/greeting.txt");
    assert_eq!(
        std::fs::read_to_string(&stored).expect("stored"),
        "hi there"
    );
    assert!(stdout(&out).ends_with(" hi there\n"), "{}", text(&out));
    // A broken config file is a ConfigError before the plugin starts.
    std::fs::write(&config, "[stores.object\n").expect("write");
    s.set("AGENT_ENV_CONFIG", &config.display().to_string());
    let out = s.run(&["put", "x"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(stderr(&out).contains("ConfigError"), "{}", text(&out));
}

#[test]
fn a_plugin_command_on_a_core_name_is_skipped_and_core_wins() {
    let s = Sandbox::new();
    s.tools(
        "agentenv-clash",
        "[provides.cli_plugins]\nplugin = \"Clash\"\nwhoami = \"W\"\n",
    );
    let out = s.run(&["--help"]);
    assert!(
        stderr(&out).contains(
            "Warning: CLI plugin 'plugin' from 'agentenv-clash' clashes with existing command 'plugin' and was skipped\n"
        ),
        "{}",
        text(&out)
    );
    let report = s.report("list");
    assert_eq!(
        outcome(&report, "agentenv-clash", "cli_plugins", "plugin"),
        (
            "skipped".into(),
            "builtin-name".into(),
            "clashes with existing command 'plugin'".into()
        )
    );
    // The core command still works (and the same status shows in check and show).
    let out = s.run(&["plugin", "check", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let show = s.run(&["plugin", "show", "agentenv-clash", "--json"]);
    let show: serde_json::Value = serde_json::from_slice(&show.stdout).expect("json");
    assert_eq!(
        outcome(&show, "agentenv-clash", "cli_plugins", "plugin").1,
        "builtin-name"
    );
    // `agent-env whoami` is the plugin's, in the same package.
    let out = s.run(&["whoami"]);
    assert_eq!(stdout(&out), "agentenv-clash argv=[]\n", "{}", text(&out));
}

#[test]
fn two_plugins_on_one_name_the_first_in_sort_order_wins() {
    let s = Sandbox::new();
    s.tools("agentenv-b", "[provides.cli_plugins]\ntool = \"Tool\"\n");
    s.tools("agentenv-a", "[provides.cli_plugins]\ntool = \"Tool\"\n");
    let out = s.run(&["tool", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(stdout(&out), "agentenv-a argv=[\"go\"]\n");
    assert!(
        stderr(&out).contains("Warning: CLI plugin 'tool' from 'agentenv-b' clashes with existing command 'tool' from plugin 'tool' from 'agentenv-a' and was skipped"),
        "{}",
        text(&out)
    );
    for what in ["list", "check"] {
        let report = s.report(what);
        assert_eq!(
            outcome(&report, "agentenv-a", "cli_plugins", "tool").0,
            "active"
        );
        assert_eq!(
            outcome(&report, "agentenv-b", "cli_plugins", "tool"),
            (
                "skipped".into(),
                "name-conflict".into(),
                "clashes with existing command 'tool' from plugin 'tool' from 'agentenv-a'".into()
            )
        );
        let loser = crate::support::cli::contribution(&report, "agentenv-b", "cli_plugins", "tool");
        assert_eq!(
            loser["conflicts_with"][0]["package"], "agentenv-a",
            "{loser}"
        );
    }
}

#[test]
fn when_the_first_claimant_cannot_start_the_next_one_runs_the_command() {
    let s = Sandbox::new();
    s.plugin(
        "agentenv-a",
        "[\"/nonexistent/agentenv-a\"]",
        "[provides.cli_plugins]\ntool = \"Tool\"\n",
    );
    s.tools("agentenv-b", "[provides.cli_plugins]\ntool = \"Tool\"\n");
    let out = s.run(&["tool"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(stdout(&out), "agentenv-b argv=[]\n");
    assert!(
        stderr(&out).contains("using 'tool' from 'agentenv-b'"),
        "{}",
        text(&out)
    );
    // The report agrees: the first that loads is the command.
    let report = s.report("list");
    assert_eq!(
        outcome(&report, "agentenv-b", "cli_plugins", "tool").0,
        "active"
    );
    assert_eq!(
        outcome(&report, "agentenv-a", "cli_plugins", "tool").0,
        "failed"
    );
}

#[test]
fn a_broken_manifest_does_not_break_help_or_the_other_commands() {
    let s = Sandbox::new();
    s.write("plugins/broken/agent-env-plugin.toml", "[plugin\nname = ");
    s.tools("agentenv-tools", TOOLS);
    let out = s.run(&["--help"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        stdout(&out).contains("Ask for a name and greet it"),
        "{}",
        text(&out)
    );
    let out = s.run(&["help", "ask"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        stdout(&out).contains("Ask for a name and greet it"),
        "{}",
        text(&out)
    );
    let out = s.run(&["exit", "3"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
}

#[test]
fn plugin_show_masks_secrets_in_exec_arguments() {
    let s = Sandbox::new();
    s.plugin(
        "agentenv-args",
        r#"["/bin/true", "--token=LEAK-1", "--password", "LEAK-2", "--dsn=Server=h;Pwd=LEAK-3", "--name", "visible"]"#,
        "[provides.task_steps]\nx_step = \"X\"\n",
    );
    for args in [
        &["plugin", "show", "agentenv-args"][..],
        &["plugin", "show", "agentenv-args", "--json"],
    ] {
        let out = s.run(args);
        let all = text(&out);
        assert!(
            all.contains("visible"),
            "{args:?} shows the arguments: {all}"
        );
        assert!(all.contains("--token=***"), "{all}");
        assert!(!all.contains("LEAK"), "{args:?} printed a secret:\n{all}");
    }
}

/// Every command the core has is its own: `man` and `completions` included.
#[test]
fn the_cores_man_and_completions_commands_are_not_a_plugins() {
    let s = Sandbox::new();
    s.tools(
        "agentenv-clash",
        "[provides.cli_plugins]\nman = \"M\"\ncompletions = \"C\"\n",
    );
    let report = s.report("list");
    for name in ["man", "completions"] {
        assert_eq!(
            outcome(&report, "agentenv-clash", "cli_plugins", name).1,
            "builtin-name",
            "{name}"
        );
    }
    let out = s.run(&["man"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        stdout(&out).starts_with(".ie"),
        "the core's man page: {}",
        text(&out)
    );
}
