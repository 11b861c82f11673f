//! Reading the root of the command line before clap does: where the command word is, and whether the
//! invocation needs the plugins' manifests at all (so `agent-env --version` and core commands never scan
//! for plugins).

use std::ffi::OsString;

use super::tree::PluginCli;

/// The core commands clap knows (agent-env's own subcommands; a test holds the list to clap's).
const CORE_COMMANDS: [&str; 10] = [
    "task",
    "plugin",
    "config",
    "store",
    "run",
    "up",
    "bundle",
    "artifact",
    "completions",
    "man",
];
/// Root flags of the core that take no value.
const CORE_SWITCHES: [&str; 2] = ["-v", "--verbose"];
/// Root flags of the core that take a value (`--color never` or `--color=never`).
pub(crate) const CORE_VALUED: [&str; 1] = ["--color"];

/// Whether this command line can be parsed without reading any manifest: its first word after the
/// core switches is `--version` or a core command.
pub fn is_core_only(args: &[OsString]) -> bool {
    let mut rest = args.iter().skip(1).map(|a| a.to_str());
    loop {
        match rest.next() {
            Some(Some(a)) if CORE_SWITCHES.contains(&a) => continue,
            Some(Some(a)) if CORE_VALUED.contains(&a) => {
                rest.next();
                continue;
            }
            Some(Some(a))
                if CORE_VALUED
                    .iter()
                    .any(|f| a.strip_prefix(f).is_some_and(|r| r.starts_with('='))) =>
            {
                continue
            }
            Some(Some("--version" | "-V")) => return true,
            Some(Some(a)) => return CORE_COMMANDS.contains(&a),
            // No command (help is printed with the plugin commands), or an argument that is not UTF-8.
            _ => return false,
        }
    }
}

/// The index in `args` of the command word: the first argument that is not a root flag or a root
/// flag's value. `None` when there is none (or `--` / an unknown flag comes first; clap reports those).
pub fn command_index(args: &[OsString], plugins: &PluginCli) -> Option<usize> {
    let mut i = 1;
    while i < args.len() {
        let arg = args[i].to_string_lossy();
        if !arg.starts_with('-') || arg == "-" {
            return Some(i);
        }
        if arg == "--" {
            return None;
        }
        let (flag, inline_value) = match arg.split_once('=') {
            Some((flag, _)) => (flag, true),
            None => (arg.as_ref(), false),
        };
        let takes_value = CORE_VALUED.contains(&flag)
            || plugins
                .root_option(flag)
                .map(|o| o.value.is_some())
                .unwrap_or(false);
        i += if takes_value && !inline_value { 2 } else { 1 };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_core_commands_are_the_subcommands_clap_knows() {
        use clap::CommandFactory;
        let mut clap_names: Vec<String> = crate::cli::Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        clap_names.sort();
        let mut ours: Vec<String> = CORE_COMMANDS.iter().map(|c| c.to_string()).collect();
        ours.sort();
        assert_eq!(ours, clap_names);
        // No plugin may claim one of them as its command (`builtin_names::CLI_COMMANDS`).
        for name in &clap_names {
            assert!(
                crate::builtin_names::is_builtin("cli_plugins", name),
                "builtin_names::CLI_COMMANDS lacks '{name}'"
            );
        }
    }

    #[test]
    fn core_commands_and_version_need_no_manifests() {
        assert!(is_core_only(&args(&["agent-env", "--version"])));
        assert!(is_core_only(&args(&["agent-env", "-v", "plugin", "list"])));
        assert!(is_core_only(&args(&["agent-env", "-V"])));
        assert!(is_core_only(&args(&[
            "agent-env",
            "--color",
            "never",
            "run"
        ])));
        assert!(is_core_only(&args(&[
            "agent-env",
            "--color=never",
            "config"
        ])));
        assert!(is_core_only(&args(&["agent-env", "run", "--tenant"])));
        assert!(!is_core_only(&args(&["agent-env"])));
        assert!(!is_core_only(&args(&["agent-env", "--help"])));
        assert!(!is_core_only(&args(&["agent-env", "help"])));
        assert!(!is_core_only(&args(&["agent-env", "tool", "x"])));
        assert!(!is_core_only(&args(&[
            "agent-env",
            "--tenant",
            "acme",
            "config"
        ])));
    }

    #[test]
    fn the_command_word_skips_root_flags_and_their_values() {
        let plugins = PluginCli {
            root_options: vec![super::super::tree::RootOption {
                flag: "--tenant".into(),
                name: "tenant".into(),
                plugin: 0,
                description: None,
                value: Some("NAME".into()),
                always: false,
            }],
            ..PluginCli::default()
        };
        let at = |list: &[&str]| command_index(&args(list), &plugins);
        assert_eq!(at(&["agent-env", "tool", "--tenant"]), Some(1));
        assert_eq!(at(&["agent-env", "--tenant", "acme", "tool"]), Some(3));
        assert_eq!(at(&["agent-env", "--tenant=acme", "-v", "tool"]), Some(3));
        assert_eq!(at(&["agent-env", "--offline", "tool"]), Some(2));
        assert_eq!(at(&["agent-env", "--tenant"]), None);
        assert_eq!(at(&["agent-env", "--", "tool"]), None);
    }
}
