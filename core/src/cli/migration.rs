//! Hints for command lines written for the Python agent-env, and for the names a newcomer guesses
//! (`task show`): when clap refuses one of those commands or options, say what this agent-env does
//! instead, so the user is not left with clap's "unrecognized subcommand" alone.

use std::ffi::OsString;

use super::dynamic::args::CORE_VALUED;

/// What to do instead of a command line the Python agent-env takes and this one does not.
pub fn hint(args: &[OsString]) -> Option<&'static str> {
    let words: Vec<&str> = args.iter().skip(1).filter_map(|a| a.to_str()).collect();
    let commands = command_words(&words);
    let (first, second) = (*commands.first()?, commands.get(1).copied());
    match (first, second) {
        ("plugin", Some("remove")) if words.iter().any(|w| names_option(w, "--installer")) => Some(
            "`agent-env plugin remove PACKAGE` takes no --installer: name the package as `agent-env plugin list` shows it, whichever installer put it there",
        ),
        ("task", Some("create")) => Some(
            "a task here is a JSON file of steps: `agent-env task put FILE --id ID` stores one, and a bundle keeps them as tasks/NAME.json",
        ),
        ("task", Some("run-batch")) => Some(
            "`agent-env task run ID --runs N` runs a stored task N times; `agent-env run BUNDLE` runs a bundle's tasks",
        ),
        ("task" | "artifact", Some("show" | "describe" | "view" | "inspect")) => Some(
            "`agent-env task get ID` shows a stored task, `agent-env task get-instance INSTANCE` one of its runs, and `agent-env artifact get ID` an artifact",
        ),
        ("task", Some("validate")) => Some(
            "`agent-env task put FILE` checks a task's steps before it stores it, and `agent-env run FOLDER --dry-run` checks a whole bundle",
        ),
        ("eval", _) => Some(
            "an eval here is a bundle file, evals/NAME.toml, listing the tasks it runs: `agent-env run BUNDLE --eval NAME` runs it",
        ),
        ("env", _) => Some(
            "this agent-env has no env commands: tasks run in local sandboxes (`deploy_sandbox`), and deploying envs is the Python agent-env's",
        ),
        ("a2a-agent", _) => Some("this agent-env has no A2A agent commands; they are the Python agent-env's"),
        (
            "artifact",
            Some("cli" | "file-artifact-universe" | "environment" | "environment-universe" | "skill"),
        ) => Some(
            "`agent-env artifact put FOLDER --id ID` stores a file, file_artifact_universe or skill artifact, its type given by an artifact.toml in the folder; cli, environment and docker_image artifacts have no counterpart here",
        ),
        _ => None,
    }
}

/// The words of a command line that are not options, leaving out the values of the core's root
/// options (`never` in `--color never`), which are not commands.
fn command_words<'a>(words: &[&'a str]) -> Vec<&'a str> {
    let mut commands = Vec::new();
    let mut rest = words.iter().copied();
    while let Some(word) = rest.next() {
        if CORE_VALUED.contains(&word) {
            rest.next();
        } else if !word.starts_with('-') {
            commands.push(word);
        }
    }
    commands
}

/// Whether `word` is the option `name`, alone or with its value (`--installer=pip`).
fn names_option(word: &str, name: &str) -> bool {
    word.strip_prefix(name)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('='))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint_of(line: &str) -> Option<&'static str> {
        let args: Vec<OsString> = std::iter::once("agent-env")
            .chain(line.split(' '))
            .map(OsString::from)
            .collect();
        hint(&args)
    }

    #[test]
    fn the_python_agent_envs_commands_get_a_hint() {
        assert!(hint_of("task create x.json").is_some_and(|h| h.contains("task put FILE")));
        assert!(hint_of("eval add-tasks e t").is_some_and(|h| h.contains("--eval NAME")));
        assert!(hint_of("artifact skill ./s").is_some_and(|h| h.contains("artifact put")));
        assert!(hint_of("task show t").is_some_and(|h| h.contains("task get ID")));
        assert!(hint_of("plugin remove --installer pip p")
            .is_some_and(|h| h.contains("no --installer")));
        assert!(hint_of("plugin remove p --installer=pip")
            .is_some_and(|h| h.contains("no --installer")));
    }

    #[test]
    fn a_root_options_value_is_not_the_command() {
        assert!(hint_of("--color never task create x.json")
            .is_some_and(|h| h.contains("task put FILE")));
        assert!(hint_of("-v --color=never task create x.json")
            .is_some_and(|h| h.contains("task put FILE")));
    }

    #[test]
    fn other_mistakes_get_none() {
        assert_eq!(hint_of("task lisst"), None);
        assert_eq!(hint_of("up --bogus"), None);
        assert_eq!(hint_of(""), None);
        assert_eq!(hint_of("plugin remove p --dry-run"), None);
        assert_eq!(hint_of("plugin add --installer pipx p"), None);
    }
}
