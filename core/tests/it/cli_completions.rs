//! `agent-env completions SHELL` and `agent-env man [COMMAND]...`: generated from the same command tree
//! as `--help`, the installed plugins' commands included (from manifests; no plugin is started).

use crate::support::cli::{stderr, stdout, text, Sandbox};

fn with_ghost_command(s: &Sandbox) {
    // The executable does not exist: completing its command must not need it.
    s.plugin(
        "agentenv-ghost",
        "[\"/nonexistent/agentenv-ghost\"]",
        "[provides.cli_plugins]\nhaunt = { class = \"Haunt\", description = \"Rattle the chains\" }\n",
    );
}

#[test]
fn completion_scripts_include_core_and_plugin_commands() {
    let s = Sandbox::new();
    with_ghost_command(&s);
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = s.run(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out));
        let script = stdout(&out);
        for word in ["haunt", "plugin", "run", "completions"] {
            assert!(
                script.contains(word),
                "{shell} script lacks {word}:\n{script}"
            );
        }
    }
    let fish = stdout(&s.run(&["completions", "fish"]));
    assert!(fish.contains("Rattle the chains"), "{fish}");
}

#[test]
fn an_unknown_shell_is_refused_with_the_shells_there_are() {
    let s = Sandbox::new();
    let out = s.run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("tcsh") && err.contains("bash") && err.contains("zsh"),
        "{err}"
    );
}

#[test]
fn man_pages_for_agent_env_and_each_command() {
    let s = Sandbox::new();
    with_ghost_command(&s);
    let top = stdout(&s.run(&["man"]));
    assert!(top.contains(".TH agent-env 1"), "{top}");
    assert!(top.contains("haunt"), "{top}");
    let run = s.run(&["man", "run"]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let page = stdout(&run);
    assert!(page.contains(".TH agent-env-run 1"), "{page}");
    assert!(page.contains(env!("CARGO_PKG_VERSION")), "{page}");
    assert!(page.contains("fail\\-under"), "{page}");
    let add = stdout(&s.run(&["man", "plugin", "add"]));
    assert!(add.contains(".TH agent-env-plugin-add 1"), "{add}");
    // A command's page lists the global options it takes, and not agent-env's own --version.
    assert!(add.contains("\\fB\\-\\-verbose\\fR"), "{add}");
    assert!(add.contains("\\fB\\-\\-color\\fR"), "{add}");
    assert!(!add.contains("\\-\\-version"), "{add}");

    // Its synopsis lists the command's own options, then the global ones.
    let init = stdout(&s.run(&["man", "bundle", "init"]));
    let synopsis = init
        .lines()
        .skip_while(|l| *l != ".SH SYNOPSIS")
        .nth(1)
        .unwrap_or_default();
    let at = |option: &str| {
        synopsis
            .find(&format!("[\\fB{option}\\fR"))
            .unwrap_or_else(|| panic!("{option} is not in the synopsis: {synopsis}"))
    };
    let own = [
        "\\-\\-from\\-task",
        "\\-\\-from\\-eval",
        "\\-\\-from\\-bundle",
        "\\-h",
    ];
    let global = ["\\-v", "\\-\\-color"];
    let last_own = own.iter().map(|o| at(o)).max().unwrap();
    let first_global = global.iter().map(|o| at(o)).min().unwrap();
    assert!(last_own < first_global, "{synopsis}");

    let out = s.run(&["man", "nope"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("'agent-env nope' is not a command; agent-env has: plugin, config"),
        "{}",
        text(&out)
    );
}
