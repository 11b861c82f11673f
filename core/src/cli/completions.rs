//! `agent-env completions SHELL`: a completion script for bash, zsh, fish, elvish or PowerShell, with
//! the commands and root options of the installed plugins (read from their manifests; no plugin runs),
//! the commands after `man`, and for bash the installed bundles' names after `run`.
//! `agent-env man [COMMAND]...`: the manual page of agent-env or of one of its commands, in roff,
//! built from the same definitions as `--help`: a command's own options first, then the global ones,
//! in its synopsis as in its help.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::dynamic::{tree::PluginCli, with_plugins};
use super::{Cli, Exit, Failure, Terminal};
use crate::bundle::{self, installed::InstalledBundle};
use crate::session::Session;

#[derive(Args)]
#[command(after_help = "Install it, for example:\n  \
    bash:  agent-env completions bash > ~/.local/share/bash-completion/completions/agent-env\n  \
    zsh:   agent-env completions zsh > ~/.zfunc/_agent-env   (with fpath+=~/.zfunc before compinit)\n  \
    fish:  agent-env completions fish > ~/.config/fish/completions/agent-env.fish\n\
    Run it again after installing or removing a plugin that adds commands.")]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Args)]
#[command(after_help = "For example: agent-env man run > agent-env-run.1 && man ./agent-env-run.1")]
pub struct ManArgs {
    /// The command whose page to print (e.g. `plugin add`); none for agent-env's own page.
    pub command: Vec<String>,
}

/// The whole command tree: the core's, with the installed plugins' commands and root options.
fn full_tree(session: &Session) -> (clap::Command, Vec<String>) {
    let plugins = PluginCli::from_discovery(session.shared_discovery().clone());
    let tree = with_plugins(Cli::command(), &plugins);
    (tree, plugins.warnings)
}

pub fn completions(args: CompletionsArgs, session: &Session, term: &Terminal) -> Exit {
    let (tree, warnings) = full_tree(session);
    warnings.iter().for_each(|w| term.warn(w));
    let mut tree = with_man_commands(tree);
    let script = match args.shell {
        Shell::Bash => bash_script(&mut with_bundle_names(
            tree,
            &bundle::installed(&session.manifests()),
        )),
        // Not the bundles' names: zsh and fish would offer them instead of folders, not beside them.
        shell => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut tree, BIN_NAME, &mut script);
            String::from_utf8_lossy(&script).into_owned()
        }
    };
    term.print(&script);
    Ok(0)
}

const BIN_NAME: &str = "agent-env";

/// The bash script, its functions named as one word.
///
/// clap_complete names the states of a hyphenated program inconsistently (`agent__env__subcmd__run`
/// where the command is found, `agent__subcmd__env__subcmd__run` where it is completed, clap#6421),
/// so nothing past the first word completed. The script is made for a name without a hyphen, whose
/// states agree, and the name is then put back: in the function names, spelled as bash allows, and
/// as the command `complete` registers it for.
fn bash_script(tree: &mut clap::Command) -> String {
    const ONE_WORD: &str = "agentenvcompletionroot";
    let mut script = Vec::new();
    clap_complete::generate(Shell::Bash, tree, ONE_WORD, &mut script);
    let script = String::from_utf8_lossy(&script);
    script
        .lines()
        .map(|line| match line.trim_start().starts_with("complete -F ") {
            true => match line.rsplit_once(' ') {
                Some((head, ONE_WORD)) => {
                    format!("{} {BIN_NAME}", head.replace(ONE_WORD, "agent__env"))
                }
                _ => line.replace(ONE_WORD, "agent__env"),
            },
            false => line.replace(ONE_WORD, "agent__env"),
        })
        .fold(String::new(), |mut text, line| {
            text.push_str(&line);
            text.push('\n');
            text
        })
}

/// `tree` with the installed bundles' names offered after `run`, for bash, which still completes a
/// folder as a file when no name matches (zsh and fish would offer the names alone, and no folder).
/// Only the completion script sees them: parsing never uses this tree.
fn with_bundle_names(tree: clap::Command, installed: &[InstalledBundle]) -> clap::Command {
    let names: Vec<String> = installed
        .iter()
        .filter(|b| b.problem.is_none())
        .map(InstalledBundle::run_name)
        .collect();
    tree.mut_subcommand("run", |run| {
        run.mut_arg("bundle", |bundle| {
            bundle.value_parser(clap::builder::PossibleValuesParser::new(names))
        })
    })
}

/// `tree` with the commands offered after `man`, word by word as `agent-env man plugin add` names a
/// page: `man` is given, for completion alone, a copy of every command's name and subcommands, and no
/// options (not its `--help`, nor the global `-v` and `--color`), so `man <TAB>` offers names only, as
/// clap's `help` does.
fn with_man_commands(tree: clap::Command) -> clap::Command {
    let commands: Vec<clap::Command> = listed_subcommands(&tree).map(command_words).collect();
    without_globals_under_man(tree).mut_subcommand("man", |man| {
        man.subcommands(commands)
            .disable_help_subcommand(true)
            .disable_help_flag(true)
    })
}

/// `tree` whose global options reach every command but `man` and its copies: clap gives a global
/// option to every subcommand, so each other top-level command is given them (and hands them on to
/// its own, as clap does), and `agent-env` keeps them as its own.
fn without_globals_under_man(tree: clap::Command) -> clap::Command {
    let globals: Vec<clap::Arg> = tree
        .get_arguments()
        .filter(|arg| arg.is_global_set())
        .cloned()
        .collect();
    let others: Vec<String> = tree
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|name| name != "man")
        .collect();
    let tree = others.iter().fold(tree, |tree, name| {
        tree.mut_subcommand(name, |command| {
            let missing: Vec<clap::Arg> = globals
                .iter()
                .filter(|global| {
                    command
                        .get_arguments()
                        .all(|own| own.get_id() != global.get_id())
                })
                .cloned()
                .collect();
            command.args(missing)
        })
    });
    tree.mut_args(|arg| arg.global(false))
}

/// `cmd`'s name and description, with its subcommands' the same way, and nothing else.
fn command_words(cmd: &clap::Command) -> clap::Command {
    let words = clap::Command::new(cmd.get_name().to_string())
        .disable_help_flag(true)
        .disable_help_subcommand(true)
        .subcommands(listed_subcommands(cmd).map(command_words));
    match cmd.get_about() {
        Some(about) => words.about(about.clone()),
        None => words,
    }
}

/// The subcommands a page lists: not hidden, and not `help`.
fn listed_subcommands(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
}

pub fn man(args: ManArgs, session: &Session, term: &Terminal) -> Exit {
    let (tree, warnings) = full_tree(session);
    warnings.iter().for_each(|w| term.warn(w));
    let mut page = tree;
    // Built, each command carries the global options (`-v`, `--color`) it accepts.
    page.build();
    // The page's name joins the words with `-`; messages name the command as it is typed.
    let mut name = String::from(BIN_NAME);
    let mut typed = String::from(BIN_NAME);
    // `plugin add` as one argument, as the help writes it, is the two words.
    for word in args.command.iter().flat_map(|w| w.split_whitespace()) {
        // `help` prints a command's help and has no page, as no list of commands names it.
        let Some(sub) = page
            .find_subcommand(word)
            .filter(|sub| sub.get_name() != "help")
            .cloned()
        else {
            return Err(Failure::new(not_a_command(&page, &typed, word)).with_code(2));
        };
        name = format!("{name}-{word}");
        typed = format!("{typed} {word}");
        // The version names the page; only agent-env itself takes `--version`.
        page = sub
            .name(name.clone())
            .version(crate::VERSION)
            .disable_version_flag(true);
    }
    let roff = super::man_page::render(globals_last(page), &typed)
        .map_err(|e| Failure::new(format!("cannot write the manual page: {e}")))?;
    term.print(&String::from_utf8_lossy(&roff));
    Ok(0)
}

/// Why `word` after `typed` (`agent-env plugin`) names no page: the command has no subcommands, or
/// the one meant, or the ones it has.
fn not_a_command(page: &clap::Command, typed: &str, word: &str) -> String {
    let known: Vec<&str> = listed_subcommands(page).map(|c| c.get_name()).collect();
    let what = format!("'{typed} {word}' is not a command");
    if known.is_empty() {
        return format!("{what}: {typed} has no subcommands");
    }
    match crate::similar::best_match(
        word,
        known.iter().copied(),
        crate::config::warnings::HINT_CUTOFF,
    ) {
        Some(meant) => format!("{what}; did you mean '{typed} {meant}'?"),
        None => format!("{what}; {typed} has: {}", known.join(", ")),
    }
}

/// `page` with the global options (`-v`, `--color`) ordered after the command's own, so its synopsis
/// lists them last (the page orders its options by their place in the help, where the global ones,
/// numbered in agent-env's own list, would fall among the command's).
fn globals_last(page: clap::Command) -> clap::Command {
    /// Past any place a command's own options take.
    const AFTER_OWN: usize = 1 << 20;
    page.mut_args(|arg| match arg.is_global_set() {
        true => {
            let place = arg.get_display_order();
            arg.display_order(AFTER_OWN.saturating_add(place))
        }
        false => arg,
    })
}
