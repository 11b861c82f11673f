//! `agent-env completions SHELL`: a completion script for bash, zsh, fish, elvish or PowerShell, with
//! the commands and root options of the installed plugins (read from their manifests; no plugin runs).
//! `agent-env man [COMMAND]...`: the manual page of agent-env or of one of its commands, in roff,
//! built from the same definitions as `--help`: a command's own options first, then the global ones,
//! in its synopsis as in its help.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::dynamic::{tree::PluginCli, with_plugins};
use super::{Cli, Exit, Failure, Terminal};
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
    let (mut tree, warnings) = full_tree(session);
    warnings.iter().for_each(|w| term.warn(w));
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut tree, "agent-env", &mut script);
    term.print(&String::from_utf8_lossy(&script));
    Ok(0)
}

pub fn man(args: ManArgs, session: &Session, term: &Terminal) -> Exit {
    let (tree, warnings) = full_tree(session);
    warnings.iter().for_each(|w| term.warn(w));
    let mut page = tree;
    // Built, each command carries the global options (`-v`, `--color`) it accepts.
    page.build();
    let mut name = String::from("agent-env");
    for word in &args.command {
        let Some(sub) = page.find_subcommand(word).cloned() else {
            let known: Vec<String> = page
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            return Err(Failure::new(format!(
                "'{name} {word}' is not a command; {name} has: {}",
                known.join(", ")
            ))
            .with_code(2));
        };
        name = format!("{name}-{word}");
        // The version names the page; only agent-env itself takes `--version`.
        page = sub
            .name(name.clone())
            .version(crate::VERSION)
            .disable_version_flag(true);
    }
    let mut roff = Vec::new();
    clap_mangen::Man::new(globals_last(page))
        .render(&mut roff)
        .map_err(|e| Failure::new(format!("cannot write the manual page: {e}")))?;
    term.print(&String::from_utf8_lossy(&roff));
    Ok(0)
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
