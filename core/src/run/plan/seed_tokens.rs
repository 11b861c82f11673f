//! The `<key>` tokens a step holds, which a run's seed fills in ([`super::substitute_seed`] replaces
//! `<key>` in every string of a step but its `id` and `type`). Only a run the explorer starts with a
//! seed has one: any other run runs a step's tokens as written, so [`unfilled_note`] says before it
//! runs which tokens a run leaves so where that is most likely a mistake: bare in a command bash
//! runs (`echo <who> > who.txt`, a redirection bash refuses; see [`bare_tokens()`]). A token in any
//! other field (a regular expression's `<b>`, a name) or quoted in a command is passed on as
//! written and does no harm, and what is no token stays unsaid: `a <b` and `<<EOF` are a shell's,
//! not a seed's.

mod bare_tokens;

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use self::bare_tokens::bare_tokens;
use super::seed_in_shell::shell_commands;
use crate::bundle::step_fields::step_id;

/// Every `<name>` token in the strings of `step`, in the fields a seed fills in (every one but `id`
/// and `type`): a name is one or more characters, none of them `<`, `>` or white space.
pub fn tokens(step: &Map<String, Value>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (key, value) in step {
        if key != "id" && key != "type" {
            collect(value, &mut found);
        }
    }
    found
}

/// Every token of `steps`, as [`tokens`] finds them in each.
pub fn tokens_of_steps(steps: &[Map<String, Value>]) -> BTreeSet<String> {
    steps.iter().flat_map(tokens).collect()
}

/// The sentence for the tokens `seed` (the run's, when it has one) leaves unfilled where bash reads
/// them as redirections: bare (unquoted) in a command of `step` a shell runs, with a name that looks
/// like a seed's key. The step runs with them as written. `None` when there are none.
pub fn unfilled_note(
    step: &Map<String, Value>,
    seed: Option<&Map<String, Value>>,
) -> Option<String> {
    // The commands as the run hands them to bash, with the seed's tokens filled in.
    let filled = seed.map(|seed| {
        let mut filled = step.clone();
        super::substitute_seed(&mut filled, seed);
        filled
    });
    let unfilled: Vec<String> = shell_commands(filled.as_ref().unwrap_or(step))
        .into_iter()
        .flat_map(bare_tokens)
        .collect::<BTreeSet<String>>()
        .into_iter()
        .map(|token| format!("<{token}>"))
        .collect();
    let (last, first) = unfilled.split_last()?;
    let (named, them, are) = match first.is_empty() {
        true => (last.clone(), "it", "is a seed token"),
        false => (
            format!("{} and {last}", first.join(", ")),
            "them",
            "are seed tokens",
        ),
    };
    let filled_by = match seed {
        Some(_) => format!("this run's seed has no value for {them}"),
        None => format!("this run has no seed to fill {them}"),
    };
    Some(format!(
        "step '{}': {named} {are}, and {filled_by}, so the step runs with {them} as written; only a run started from the explorer with a seed fills a step's <key> tokens",
        step_id(step)
    ))
}

fn collect(value: &Value, found: &mut BTreeSet<String>) {
    match value {
        Value::String(text) => {
            for (start, _) in text.match_indices('<') {
                let rest = &text[start + 1..];
                let Some(end) = rest.find(['<', '>']) else {
                    continue;
                };
                let name = &rest[..end];
                if rest[end..].starts_with('>')
                    && !name.is_empty()
                    && !name.chars().any(char::is_whitespace)
                {
                    found.insert(name.to_string());
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect(i, found)),
        Value::Object(map) => map.values().for_each(|v| collect(v, found)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(v: Value) -> Map<String, Value> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_tokens_are_those_of_the_fields_a_seed_fills_in() {
        let s = step(json!(
            {"id": "<not-this>", "type": "bash", "cmd": "echo <who> <<both>> a < b > c <<EOF",
             "env": {"X": ["<deep>"]}}
        ));
        let found: Vec<String> = tokens(&s).into_iter().collect();
        assert_eq!(found, ["both", "deep", "who"]);
    }

    /// A `verify_sandbox` step whose one criterion runs `command`.
    fn checking(command: &str) -> Map<String, Value> {
        step(
            json!({"id": "greet", "type": "verify_sandbox", "sandbox_name": "box",
            "criteria": [{"type": "bash_cmd_succeeds", "command": command}]}),
        )
    }

    #[test]
    fn a_step_with_shell_redirections_only_has_no_note() {
        let s = checking("sort <in.txt > out; cat <<EOF\nx\nEOF");
        assert_eq!(unfilled_note(&s, None), None);
    }

    #[test]
    fn the_tokens_no_seed_fills_are_named_with_their_step() {
        let s = checking("echo <who> <where> > who.txt");
        assert_eq!(
            unfilled_note(&s, None).unwrap(),
            "step 'greet': <where> and <who> are seed tokens, and this run has no seed to fill them, so the step runs with them as written; only a run started from the explorer with a seed fills a step's <key> tokens"
        );
        let seed = step(json!({"who": "ann"}));
        assert_eq!(
            unfilled_note(&s, Some(&seed)).unwrap(),
            "step 'greet': <where> is a seed token, and this run's seed has no value for it, so the step runs with it as written; only a run started from the explorer with a seed fills a step's <key> tokens"
        );
        let seed = step(json!({"who": "ann", "where": "here"}));
        assert_eq!(unfilled_note(&s, Some(&seed)), None);
    }

    #[test]
    fn only_bare_tokens_in_a_command_bash_runs_are_noted() {
        // Text, regular expressions and HTML elsewhere, and quoted or path-like tokens in commands.
        let quiet = step(
            json!({"id": "v", "type": "verify_sandbox", "sandbox_name": "box",
            "criteria": [
                {"type": "probe_file_contains", "criterion": "<who>", "path": "<b>.txt",
                 "expected": "<b>hello</b>"},
                {"type": "probe_file_contains", "path": "hello.txt", "expected": "<p>|hello"},
                {"type": "bash_cmd_succeeds", "bash_cmd": "grep -c '<title>' hello.txt || true"},
                {"type": "bash_cmd_succeeds", "bash_cmd": "sort <hello.txt>out.txt"},
                {"type": "bash_cmd_succeeds", "command": "echo \"<who>\" # <where>"}
            ]}),
        );
        for seed in [None, Some(step(json!({"other": "x"})))] {
            assert_eq!(unfilled_note(&quiet, seed.as_ref()), None, "{seed:?}");
        }
        // A command field is read only where the criterion runs it: `command` over `bash_cmd`.
        let s = step(
            json!({"id": "v", "type": "verify_sandbox", "sandbox_name": "box",
            "criteria": [{"type": "bash_cmd_succeeds", "command": "true", "bash_cmd": "echo <a>"},
                         {"type": "bash_cmd_succeeds", "bash_cmd": "cat <b>"}]}),
        );
        assert!(unfilled_note(&s, None)
            .unwrap()
            .starts_with("step 'v': <b> is a seed token"));
        // A step of another type hands no command of the run's to bash.
        let other = step(json!({"id": "p", "type": "some_plugin_step", "cmd": "echo <who>"}));
        assert_eq!(unfilled_note(&other, None), None);
    }

    #[test]
    fn a_seed_that_makes_a_criterion_run_a_command_brings_its_tokens_in() {
        let s = step(
            json!({"id": "v", "type": "verify_sandbox", "sandbox_name": "box",
            "criteria": [{"type": "<kind>", "bash_cmd": "echo <who> > f"}]}),
        );
        assert_eq!(unfilled_note(&s, None), None);
        let seed = step(json!({"kind": "bash_cmd_succeeds"}));
        assert!(unfilled_note(&s, Some(&seed)).unwrap().starts_with(
            "step 'v': <who> is a seed token, and this run's seed has no value for it"
        ));
    }
}
