//! A run's seed where it lands in a command a shell reads. [`super::substitute_seed`] fills `<key>`
//! tokens by plain replacement, so a seed value put into a `bash_cmd_succeeds` command (its
//! `command`, or the original's `bash_cmd`) is shell text: `x; id` there runs `id`. Whoever takes a
//! seed from outside (the explorer's run routes) asks [`refusals`] first and starts nothing while
//! it finds any.
//!
//! A value that lands in a command may hold only [`ALLOWED`]: letters, digits and
//! `- _ . , : / @ + = %`, which bash reads as plain word text wherever the token stands (in quotes
//! or not). A space is refused as well (it would split the value into several words, so a seed
//! could add arguments: another path for an `rm`), and so is a value starting with `-` (a command
//! would read it as an option), and so is a `..` path segment (`rm -rf /data/<dir>` given `..`
//! would aim higher up), and so is an empty value (`rm -rf /data/<dir>` given nothing aims at all
//! of `/data/`). A value landing anywhere else (a criterion's name, a path a probe
//! reads) is not a command and is not checked here.

use serde_json::{Map, Value};

use super::fill_tokens;
use crate::bundle::step_fields::{step_id, step_type};
use crate::run::builtin_steps::verify_sandbox::{
    command_criteria, CommandCriterion, VerifySandbox,
};
use crate::run::builtin_steps::BuiltinStep;

/// What a seed value that lands in a command may hold, as the refusal says it.
pub const ALLOWED: &str =
    "letters, digits and - _ . , : / @ + = % (at least one of them, no space, no - at its start, and no .. path segment)";

/// The punctuation a seed value in a command may hold beside letters and digits.
const PLAIN_PUNCTUATION: &[char] = &['-', '_', '.', ',', ':', '/', '@', '+', '=', '%'];

/// A seed value refused because of where it lands: a command bash runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "seed <{key}> lands in the {field} of step '{step}', criterion {criterion} (bash_cmd_succeeds), which bash runs, and {problem}; a seed value filled into a command may hold only {ALLOWED}, so that a shell reads it as plain text"
)]
pub struct SeedInShell {
    /// The seed's key (its token is `<key>`).
    pub key: String,
    /// The step's id.
    pub step: String,
    /// The criterion, counted from 1 as the run's messages count them.
    pub criterion: usize,
    /// The criterion's field the command is read from: `command`, or the original's `bash_cmd`.
    pub field: String,
    pub problem: NotPlain,
}

/// What in a seed value a shell would read as more than text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotPlain {
    #[error("its value is empty, which leaves the command without the word its token stood for (a path it names would widen to the folder around it)")]
    Empty,
    #[error("its value holds '{}'", .0.escape_debug())]
    Character(char),
    #[error("its value starts with '-', which a command reads as an option")]
    LeadingDash,
    #[error(
        "its value holds a '..' path segment, which climbs out of the folder the command names"
    )]
    ParentSegment,
    #[error("its value, with the text around its token, makes a '..' path segment, which climbs out of the folder the command names")]
    ParentSegmentAround,
}

/// Every seed value that would land in a command of `step` holding more than plain text: one
/// refusal per key and criterion, naming its first such character. Empty when the step runs no
/// command or the seed fills none.
pub fn refusals(step: &Map<String, Value>, seed: &Map<String, Value>) -> Vec<SeedInShell> {
    if seed.is_empty() {
        return Vec::new();
    }
    // Which criteria run a command is read from the step as the seed leaves it: a seed may fill a
    // criterion's type too.
    let mut filled = step.clone();
    super::substitute_seed(&mut filled, seed);
    let Some(written) = criteria(step) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for CommandCriterion { index, field, .. } in shell_criteria(&filled) {
        let Some(command) = written
            .get(index)
            .and_then(|c| c.get(field))
            .and_then(Value::as_str)
        else {
            continue;
        };
        // Filled as the run fills it, key by key, so a token one value completes is caught too, and
        // so is a `..` that values make together (`<name>.<ext>` given `.` and nothing).
        let mut text = command.to_string();
        let mut climbs = parent_segments(&text);
        fill_tokens(&mut text, seed, |key, value, filled| {
            let now = parent_segments(filled);
            let problem = not_plain(value)
                .or_else(|| (now > climbs).then_some(NotPlain::ParentSegmentAround));
            climbs = now;
            if let Some(problem) = problem {
                found.push(SeedInShell {
                    key: key.to_string(),
                    step: step_id(step).to_string(),
                    criterion: index + 1,
                    field: field.to_string(),
                    problem,
                });
            }
        });
    }
    found
}

/// The commands `step` hands bash, as it reads them: each `bash_cmd_succeeds` criterion's of a
/// `verify_sandbox` step.
pub(super) fn shell_commands(step: &Map<String, Value>) -> Vec<&str> {
    shell_criteria(step)
        .into_iter()
        .filter_map(|c| c.command)
        .collect()
}

/// The criteria of `step` that run a command in bash, as verify_sandbox reads them: none when the
/// step is not a `verify_sandbox` one.
fn shell_criteria(step: &Map<String, Value>) -> Vec<CommandCriterion<'_>> {
    match step_type(step) == VerifySandbox.type_name() {
        true => command_criteria(step),
        false => Vec::new(),
    }
}

fn criteria(step: &Map<String, Value>) -> Option<&Vec<Value>> {
    step.get("criteria").and_then(Value::as_array)
}

/// Why a shell would read `value` as more than one plain word, if it would.
fn not_plain(value: &str) -> Option<NotPlain> {
    if value.is_empty() {
        return Some(NotPlain::Empty);
    }
    if let Some(c) = value
        .chars()
        .find(|c| !c.is_alphanumeric() && !PLAIN_PUNCTUATION.contains(c))
    {
        return Some(NotPlain::Character(c));
    }
    if value.starts_with('-') {
        return Some(NotPlain::LeadingDash);
    }
    value
        .split('/')
        .any(|segment| segment == "..")
        .then_some(NotPlain::ParentSegment)
}

/// How many `..` path segments `command` holds: `..` between the start or end, a `/`, white space, a
/// quote or `=` (as in `--dir=../x`).
fn parent_segments(command: &str) -> usize {
    let bound = |c: Option<char>| {
        c.is_none_or(|c| matches!(c, '/' | '=' | '\'' | '"') || c.is_whitespace())
    };
    command
        .match_indices("..")
        .filter(|(at, _)| {
            bound(command[..*at].chars().next_back()) && bound(command[at + 2..].chars().next())
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn check_step(criteria: Value) -> Map<String, Value> {
        map(
            json!({"id": "check", "type": "verify_sandbox", "sandbox_name": "box",
            "criteria": criteria}),
        )
    }

    #[test]
    fn a_value_a_shell_reads_as_more_than_text_is_refused_where_it_lands_in_a_command() {
        let step = check_step(json!([
            {"type": "probe_file_exists", "path": "/<who>"},
            {"type": "bash_cmd_succeeds", "criterion": "greets <who>", "bash_cmd": "echo hello <who>"}
        ]));
        let found = refusals(&step, &map(json!({"who": "x; id > /tmp/P; echo"})));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].problem, NotPlain::Character(';'));
        assert_eq!(
            found[0].to_string(),
            "seed <who> lands in the bash_cmd of step 'check', criterion 2 (bash_cmd_succeeds), which bash runs, and its value holds ';'; a seed value filled into a command may hold only letters, digits and - _ . , : / @ + = % (at least one of them, no space, no - at its start, and no .. path segment), so that a shell reads it as plain text"
        );
        let found = refusals(&step, &map(json!({"who": "ann lee"})));
        assert_eq!(found[0].problem, NotPlain::Character(' '));
        for bad in [
            "$(id)", "`id`", "a|b", "a&b", "a>b", "a'b", "a\"b", "a\\b", "*", "~", "a\nb",
        ] {
            assert_eq!(
                refusals(&step, &map(json!({"who": bad}))).len(),
                1,
                "{bad:?} is refused"
            );
        }
        assert_eq!(
            refusals(&step, &map(json!({"who": "-rf"})))[0].problem,
            NotPlain::LeadingDash
        );
        // Values that make a `..` only with the text around their tokens, or with each other.
        let paths = check_step(json!([
            {"type": "bash_cmd_succeeds", "criterion": "c", "bash_cmd": "rm -rf /data/<name>.<ext> /data/<a><b>"}
        ]));
        let found = refusals(&paths, &map(json!({"name": ".", "ext": ""})));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            (found[0].key.as_str(), &found[0].problem),
            ("ext", &NotPlain::Empty)
        );
        // The key filled last (the seed's keys in order) is the one that completes it.
        assert_eq!(found[1].key, "name");
        assert_eq!(found[1].problem, NotPlain::ParentSegmentAround);
        let found = refusals(&paths, &map(json!({"a": ".", "b": "."})));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].key, "b");
        let plain = json!({"name": "notes", "ext": "txt", "a": ".", "b": "x"});
        assert!(refusals(&paths, &map(plain)).is_empty());
        for climbing in ["..", "../etc", "a/../../b", "a/.."] {
            assert_eq!(
                refusals(&step, &map(json!({"who": climbing})))[0].problem,
                NotPlain::ParentSegment,
                "{climbing:?}"
            );
        }
    }

    /// An empty value drops the word its token stood for: `rm -rf /data/<dir>` given nothing aims at
    /// all of `/data/`. Outside a command it is only text.
    #[test]
    fn an_empty_value_in_a_command_is_refused_and_elsewhere_taken() {
        let step = check_step(json!([
            {"type": "bash_cmd_succeeds", "criterion": "<note>", "command": "rm -rf /data/<dir>"}
        ]));
        let found = refusals(&step, &map(json!({"dir": "", "note": ""})));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].key.as_str(), &found[0].problem),
            ("dir", &NotPlain::Empty)
        );
        assert!(found[0]
            .to_string()
            .contains("and its value is empty, which"));
    }

    #[test]
    fn plain_values_and_values_outside_commands_pass() {
        let step = check_step(json!([
            {"type": "bash_cmd_succeeds", "criterion": "<note>", "command": "test -f /data/<who>.txt"},
            {"type": "probe_file_contains", "path": "/<note>", "expected": "<note>"}
        ]));
        for ok in ["ann", "Zoë-2", "a/b.c", "k=v,w:x@y+z%", "3"] {
            assert!(
                refusals(&step, &map(json!({"who": ok, "note": "any; text $(here)"}))).is_empty(),
                "{ok}"
            );
        }
        // A number or any other JSON value lands as its JSON text.
        assert_eq!(
            refusals(&step, &map(json!({"who": {"a": 1}})))[0].problem,
            NotPlain::Character('{')
        );
        // A step of another type runs no command of the run's.
        let other = map(json!({"id": "p", "type": "some_plugin_step", "cmd": "echo <who>"}));
        assert!(refusals(&other, &map(json!({"who": "a;b"}))).is_empty());
    }

    #[test]
    fn the_field_the_step_runs_is_the_one_checked_and_named() {
        let step = check_step(json!([
            {"type": "bash_cmd_succeeds", "command": "echo <who>", "bash_cmd": "echo <other>"}
        ]));
        let found = refusals(&step, &map(json!({"who": "a;b", "other": "c;d"})));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].key.as_str(), found[0].field.as_str()),
            ("who", "command")
        );
    }

    /// The command is read from the field verify_sandbox runs: a null `command` is not given, so
    /// the `bash_cmd` beside it is the one run, and the one checked.
    #[test]
    fn a_null_command_leaves_the_bash_cmd_beside_it_checked() {
        let step = check_step(json!([
            {"type": "bash_cmd_succeeds", "command": null, "bash_cmd": "echo <who>"}
        ]));
        let found = refusals(&step, &map(json!({"who": "a;b"})));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].key.as_str(), found[0].field.as_str()),
            ("who", "bash_cmd")
        );
        assert_eq!(shell_commands(&step), ["echo <who>"]);
    }

    #[test]
    fn a_seed_that_makes_a_command_criterion_or_completes_a_token_is_caught() {
        // The criterion's type is a token: the seed makes it run a command.
        let step = check_step(json!([{"type": "<kind>", "bash_cmd": "echo <who>"}]));
        let found = refusals(
            &step,
            &map(json!({"kind": "bash_cmd_succeeds", "who": "a;b"})),
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].key, "who");
        // `<<a>b>` with a empty becomes `<b>`, which the run then fills with b (keys in order).
        let step = check_step(json!([{"type": "bash_cmd_succeeds", "bash_cmd": "echo <<a>b>"}]));
        let found = refusals(&step, &map(json!({"a": "", "b": "x;id"})));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            (found[0].key.as_str(), &found[0].problem),
            ("a", &NotPlain::Empty)
        );
        assert_eq!(found[1].key, "b");
    }
}
