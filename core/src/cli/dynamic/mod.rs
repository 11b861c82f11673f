//! The command line with what plugins add: `[provides.cli_plugins]` commands and
//! `[provides.cli_root_options]` flags, read from manifests only when the invocation needs them
//! (`agent-env --version` and the core commands never look).
//!
//! - [`args`]: where the command word is, and whether manifests are needed at all.
//! - [`tree`]: which plugin commands and flags survive the clash rules.
//! - [`root_options`]: calling the flags' plugins (`cli.root_option`), which may select the config file.
//! - [`command`]: running a plugin command in command mode (`cli.run`).
//! - [`services`]: the configured stores a plugin command reaches.

pub mod args;
pub mod command;
pub mod root_options;
pub mod services;
pub mod tree;

use std::ffi::OsString;

use clap::{Arg, ArgAction, Command, CommandFactory, FromArgMatches};

use super::{Cli, Exit, Failure, Terminal};
use crate::session::Session;
use tree::PluginCli;

/// Parses and runs a command line that may name plugin commands or root options.
pub fn main(args: Vec<OsString>, session: &Session, term: &Terminal) -> Exit {
    let plugins = PluginCli::from_discovery(session.shared_discovery().clone());
    for warning in &plugins.warnings {
        term.warn(warning);
    }
    // A plugin command's own arguments are the plugin's, so clap only sees up to its name.
    let index = args::command_index(&args, &plugins);
    let plugin_command = index.filter(|&i| {
        args[i]
            .to_str()
            .is_some_and(|name| plugins.command(name).is_some())
    });
    let (head, tail) = match plugin_command {
        Some(i) => (args[..=i].to_vec(), args[i + 1..].to_vec()),
        None => (args, Vec::new()),
    };
    let mut command = with_plugins(Cli::command(), &plugins);
    let matches = match command.try_get_matches_from_mut(&head) {
        Ok(m) => m,
        Err(e) => return Ok(super::clap_exit(&e, &head, term)),
    };
    if matches.get_flag("version") {
        term.print(&crate::version_text());
        return Ok(0);
    }
    let warnings = root_options::apply(&plugins, &matches, session).map_err(Failure::new)?;
    warnings.iter().for_each(|w| term.warn(w));
    let verbose = matches.get_flag("verbose");
    match matches.subcommand_name() {
        // Options and no command (`agent-env -v`): the help on stderr, as with nothing at all.
        None => super::missing_command(&mut command, term),
        Some(name) if plugins.command(name).is_some() => {
            let argv = tail
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            command::run(&plugins, name, argv, verbose, session, term)
        }
        Some(_) => match Cli::from_arg_matches(&matches) {
            Ok(cli) => super::dispatch(cli, session, term),
            Err(e) => Ok(super::clap_exit(&e, &head, term)),
        },
    }
}

/// The core command tree with the plugin commands (listed in `--help` with their manifests'
/// descriptions) and root options added.
pub fn with_plugins(mut command: Command, plugins: &PluginCli) -> Command {
    for c in &plugins.commands {
        let package = &plugins.manifest(c.claimants[0]).name;
        // A manifest's words, shown inside agent-env's help: no control character of theirs acts.
        let about = c
            .description
            .as_deref()
            .map(|d| crate::printable::plain(d).into_owned())
            .unwrap_or_else(|| format!("A command of the plugin {package}"));
        command = command.subcommand(
            Command::new(c.name.clone())
                .about(about)
                .disable_help_flag(true)
                .disable_version_flag(true),
        );
    }
    for o in &plugins.root_options {
        let package = &plugins.manifest(o.plugin).name;
        let help = o
            .description
            .as_deref()
            .map(|d| crate::printable::plain(d).into_owned())
            .unwrap_or_else(|| format!("A root option of the plugin {package}"));
        let mut arg = Arg::new(o.flag.clone()).help(help);
        arg = match o.flag.strip_prefix("--") {
            Some(long) => arg.long(long.to_string()),
            None => match o.flag.trim_start_matches('-').chars().next() {
                Some(short) => arg.short(short),
                None => continue,
            },
        };
        arg = match &o.value {
            Some(metavar) => arg.num_args(1).value_name(metavar.clone()),
            None => arg.action(ArgAction::SetTrue),
        };
        command = command.arg(arg);
    }
    command
}
