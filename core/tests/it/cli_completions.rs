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
    // A bundle folder is still completed as a file after run: zsh is not held to the bundle names.
    let zsh = stdout(&s.run(&["completions", "zsh"]));
    assert!(!zsh.contains(":(hello)"), "{zsh}");
    // After man, the commands whose pages it prints, as after help.
    assert!(
        fish.contains(
            "__fish_agent_env_using_subcommand man; and __fish_seen_subcommand_from plugin\" -f -a \"add\""
        ),
        "{fish}"
    );
    assert!(
        zsh.contains("_agent-env__subcmd__man__subcmd__plugin_commands()"),
        "{zsh}"
    );
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

    // Its subcommands are named as typed, with how to print their pages: agent-env installs no
    // page under another page's name (agent-env-plugin-add(1)) for man to find.
    for (args, typed) in [
        (&["man"][..], "agent\\-env"),
        (&["man", "plugin"][..], "agent\\-env plugin"),
    ] {
        let page = stdout(&s.run(args));
        let listed = page
            .split(".SH SUBCOMMANDS\n")
            .nth(1)
            .and_then(|rest| rest.split("\n.SH ").next())
            .unwrap_or_else(|| panic!("no subcommands: {page}"));
        let man = typed.replacen("agent\\-env", "agent\\-env man", 1);
        assert!(
            listed.contains(&format!("\\fB{man} \\fR\\fICOMMAND\\fR")),
            "{listed}"
        );
        assert!(!listed.contains("(1)"), "a page man cannot find: {listed}");
        assert!(!listed.contains("help"), "{listed}");
    }
    let plugin = stdout(&s.run(&["man", "plugin"]));
    assert!(
        plugin.contains(".TP\n\\fBagent\\-env plugin add\\fR\nInstall plugins"),
        "{plugin}"
    );
    assert!(
        top.contains("\\fBagent\\-env haunt\\fR\nRattle the chains"),
        "{top}"
    );

    let out = s.run(&["man", "nope"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("'agent-env nope' is not a command; agent-env has: plugin, config"),
        "{}",
        text(&out)
    );
}

/// What bash offers for the words of `line`, the last one being completed, with the script
/// `agent-env completions bash` prints, as bash calls it on TAB.
fn bash_completes(script: &std::path::Path, line: &[&str]) -> String {
    let words: Vec<String> = line.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'; COMP_WORDS=(agent-env {}); COMP_CWORD={}; _agent__env agent-env '{}' '{}'; echo \"${{COMPREPLY[*]}}\"",
        script.display(),
        words.join(" "),
        line.len(),
        line[line.len() - 1],
        if line.len() > 1 { line[line.len() - 2] } else { "agent-env" },
    );
    let out = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("run bash");
    assert!(out.status.success(), "{}", text(&out));
    stdout(&out).trim().to_string()
}

#[test]
fn bash_completes_commands_their_subcommands_flags_and_bundles() {
    let s = Sandbox::new();
    with_ghost_command(&s);
    let out = s.run(&["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let script = s.write("agent-env.bash", &stdout(&out));

    assert_eq!(bash_completes(&script, &["pl"]), "plugin");
    assert_eq!(bash_completes(&script, &["ha"]), "haunt");
    assert_eq!(bash_completes(&script, &["plugin", "a"]), "add approve");
    assert_eq!(bash_completes(&script, &["run", "--js"]), "--json");
    assert_eq!(
        bash_completes(&script, &["task", "run", "x", "--ru"]),
        "--runs"
    );
    // After man, the commands whose pages it prints, word by word, the plugins' among them.
    let commands = bash_completes(&script, &["man", ""]);
    for command in ["plugin", "run", "completions", "man", "haunt"] {
        assert!(
            commands.split(' ').any(|c| c == command),
            "{command} is not offered: {commands}"
        );
    }
    assert!(!commands.split(' ').any(|c| c == "help"), "{commands}");
    // Names only: man's --help and the global -v and --color are no page.
    let subcommands = bash_completes(&script, &["man", "plugin", ""]);
    for offered in [&commands, &subcommands] {
        assert!(
            !offered.split(' ').any(|word| word.starts_with('-')),
            "{offered}"
        );
    }
    for subcommand in ["add", "approve", "list"] {
        assert!(
            subcommands.split(' ').any(|c| c == subcommand),
            "{subcommand} is not offered: {subcommands}"
        );
    }
    assert!(
        !subcommands.split(' ').any(|c| c == "help"),
        "{subcommands}"
    );
    assert_eq!(bash_completes(&script, &["man", "-"]), "");
    // Every other command still takes the global options, and completes their values.
    assert_eq!(
        bash_completes(&script, &["plugin", "add", "--col"]),
        "--color"
    );
    assert_eq!(
        bash_completes(&script, &["plugin", "add", "--color", ""]),
        "auto always never"
    );
    assert_eq!(bash_completes(&script, &["run", "--verb"]), "--verbose");
    assert_eq!(bash_completes(&script, &["pl"]), "plugin");
    assert_eq!(bash_completes(&script, &["man", "pl"]), "plugin");
    assert_eq!(
        bash_completes(&script, &["man", "plugin", "a"]),
        "add approve"
    );
    assert_eq!(
        bash_completes(&script, &["man", "-v", "bundle", "i"]),
        "init"
    );
    // The installed bundles are offered where run takes one.
    assert_eq!(bash_completes(&script, &["run", "hel"]), "hello");
    // The command bash completes is agent-env itself.
    assert!(
        stdout(&out).contains(" -o default agent-env\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn man_names_commands_as_typed_and_suggests_one_meant() {
    let s = Sandbox::new();
    let refused = |args: &[&str]| {
        let out = s.run(args);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(stdout(&out).is_empty(), "{}", text(&out));
        stderr(&out)
    };
    let err = refused(&["man", "run", "run"]);
    assert!(
        err.contains("'agent-env run run' is not a command: agent-env run has no subcommands"),
        "{err}"
    );
    let err = refused(&["man", "plugn"]);
    assert!(
        err.contains("'agent-env plugn' is not a command; did you mean 'agent-env plugin'?"),
        "{err}"
    );
    let err = refused(&["man", "plugin", "ad"]);
    assert!(
        err.contains(
            "'agent-env plugin ad' is not a command; did you mean 'agent-env plugin add'?"
        ),
        "{err}"
    );

    // `help` prints a command's help and has no page: refused as any name that is no command, as
    // neither completion nor a page's list of commands offers it.
    let err = refused(&["man", "help"]);
    assert!(
        err.contains("'agent-env help' is not a command; agent-env has: plugin, config"),
        "{err}"
    );
    let err = refused(&["man", "plugin", "help"]);
    assert!(
        err.contains("'agent-env plugin help' is not a command; agent-env plugin has: list, show"),
        "{err}"
    );

    // One argument, as the help writes a command, is its words.
    let out = s.run(&["man", "plugin add"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        stdout(&out).contains(".TH agent-env-plugin-add 1"),
        "{}",
        text(&out)
    );
}

#[test]
fn man_synopsis_shows_values_and_repeats_and_the_examples_keep_their_lines() {
    let s = Sandbox::new();
    let synopsis_of = |page: &str| {
        page.lines()
            .skip_while(|l| *l != ".SH SYNOPSIS")
            .nth(1)
            .unwrap_or_default()
            .to_string()
    };
    let run = synopsis_of(&stdout(&s.run(&["man", "run"])));
    for part in [
        "[\\fB\\-\\-task\\fR \\fINAME\\fR]...",
        "[\\fB\\-\\-fail\\-under\\fR \\fISCORE\\fR]",
        "[\\fB\\-\\-color\\fR \\fIWHEN\\fR]",
        "[\\fB\\-\\-keep\\fR]",
        "[\\fIBUNDLE\\fR]",
    ] {
        assert!(run.contains(part), "{part} is not in {run}");
    }
    let man = synopsis_of(&stdout(&s.run(&["man", "man"])));
    assert!(man.ends_with("[\\fICOMMAND\\fR]..."), "{man}");

    // The install examples stay a line each (no filling), as in --help.
    let page = stdout(&s.run(&["man", "completions"]));
    let extra: Vec<&str> = page
        .lines()
        .skip_while(|l| *l != ".SH EXTRA")
        .skip(1)
        .take_while(|l| !l.starts_with(".SH"))
        .collect();
    assert_eq!(extra.first(), Some(&".nf"), "{page}");
    assert!(
        extra.iter().any(|l| l.trim_start().starts_with("zsh:")),
        "{page}"
    );
}
